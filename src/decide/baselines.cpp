// Baselines for the decide experiments: thresholding, top-k, and the EUM plug-in rule (one global
// threshold tuned on a labelled validation set, Koyejo et al. 2014).
//
// Conventions:
//   * probabilities / scores may be any finite values (scores such as logits work too); NaN and
//     infinities throw InvalidArgument; the threshold may be +-infinity but not NaN;
//   * outputs are ordered by decreasing value, ties by lower index;
//   * tune_threshold's candidates are the distinct scores and +infinity (the empty prediction);
//     "positive when score >= threshold"; among candidates with equal metric the LARGEST
//     threshold wins (the smallest predicted set, as decide's "smaller k on ties").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "common/check.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {
namespace {

void check_finite(std::span<const double> values, std::string_view who, std::string_view what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    RATEOPT_CHECK(std::isfinite(values[i]), "{}: {} {} is {}, expected a finite value", who, what,
                  i, values[i]);
}

// Indices ordered by (value desc, index asc).
auto by_value_desc(std::span<const double> values) {
  return [values](std::size_t a, std::size_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  };
}

}  // namespace

std::vector<std::size_t> select_threshold(std::span<const double> probabilities, double threshold) {
  check_finite(probabilities, "select_threshold", "probability");
  RATEOPT_CHECK(!std::isnan(threshold), "select_threshold: the threshold is NaN");
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < probabilities.size(); ++i)
    if (probabilities[i] >= threshold) out.push_back(i);
  std::sort(out.begin(), out.end(), by_value_desc(probabilities));
  return out;
}

std::vector<std::size_t> select_top_k(std::span<const double> probabilities, std::size_t k) {
  check_finite(probabilities, "select_top_k", "probability");
  RATEOPT_CHECK(k <= probabilities.size(), "select_top_k: k = {} exceeds the {} probabilities", k,
                probabilities.size());
  std::vector<std::size_t> order(probabilities.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    by_value_desc(probabilities));
  order.resize(k);
  return order;
}

double tune_threshold(std::span<const double> scores, std::span<const std::int32_t> labels,
                      const DecideMetric& metric, std::span<const double> weights) {
  const std::size_t n = scores.size();
  RATEOPT_CHECK(n > 0, "tune_threshold: no scores");
  RATEOPT_CHECK(labels.size() == n, "tune_threshold: {} labels for {} scores", labels.size(), n);
  RATEOPT_CHECK(weights.empty() || weights.size() == n, "tune_threshold: {} weights for {} scores",
                weights.size(), n);
  check_finite(scores, "tune_threshold", "score");
  for (std::size_t i = 0; i < n; ++i) {
    RATEOPT_CHECK(labels[i] == 0 || labels[i] == 1,
                  "tune_threshold: label {} is {}, expected 0 or 1", i, labels[i]);
    if (!weights.empty())
      RATEOPT_CHECK(std::isfinite(weights[i]) && weights[i] >= 0,
                    "tune_threshold: weight {} is {}, expected a finite value >= 0", i, weights[i]);
  }
  const auto weight = [&](std::size_t i) { return weights.empty() ? 1.0 : weights[i]; };
  const auto utility = [&](double tp, double fp, double fn, double tn) {
    const double u = metric.utility(tp, fp, fn, tn);
    RATEOPT_CHECK(!std::isnan(u), "tune_threshold: metric '{}' is NaN at tp={} fp={} fn={} tn={}",
                  metric.name(), tp, fp, fn, tn);
    return u;
  };

  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  // Totals summed in sweep order, so that fn and tn are exactly 0 at the last candidate.
  double positives = 0;
  double negatives = 0;
  for (const std::size_t i : order) (labels[i] == 1 ? positives : negatives) += weight(i);

  double best_threshold = std::numeric_limits<double>::infinity();
  double best = utility(0, 0, positives, negatives);
  double tp = 0;
  double fp = 0;
  for (std::size_t t = 0; t < n;) {
    const double score = scores[order[t]];
    for (; t < n && scores[order[t]] == score; ++t)
      (labels[order[t]] == 1 ? tp : fp) += weight(order[t]);
    const double u = utility(tp, fp, positives - tp, negatives - fp);
    if (u > best) {
      best = u;
      best_threshold = score;
    }
  }
  return best_threshold;
}

}  // namespace rateopt
