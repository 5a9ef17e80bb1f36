// Baselines for the train tables: UncF1 (F1-tuned threshold) and PostShift (group thresholds).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/check.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

namespace {

double weight_of(std::span<const double> w, std::size_t i) {
  return w.empty() ? 1.0 : w[i];
}

std::vector<std::size_t> order_desc(std::span<const double> s) {
  std::vector<std::size_t> o(s.size());
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return s[a] > s[b]; });
  return o;
}

}  // namespace

double f1_threshold(std::span<const double> scores, std::span<const std::int32_t> labels,
                    std::span<const double> weights) {
  const std::size_t n = scores.size();
  RATEOPT_CHECK(labels.size() == n, "f1_threshold: {} labels for {} scores", labels.size(), n);
  RATEOPT_CHECK(weights.empty() || weights.size() == n, "f1_threshold: {} weights for {} scores",
                weights.size(), n);
  RATEOPT_CHECK(n > 0, "f1_threshold: no scores");
  double pos = 0;
  for (std::size_t i = 0; i < n; ++i) {
    RATEOPT_CHECK(labels[i] == 0 || labels[i] == 1, "f1_threshold: label[{}] is {}, expected 0/1",
                  i, labels[i]);
    if (labels[i] == 1) pos += weight_of(weights, i);
  }
  const std::vector<std::size_t> o = order_desc(scores);
  // Predict positive the top k rows (a threshold between distinct scores).
  double tp = 0, fp = 0;
  double best_f1 = pos > 0 ? 0.0 : 1.0;  // predicting nothing: F1 = 0 (1 when no positives)
  double best_t = scores[o[0]];
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = o[k];
    (labels[i] == 1 ? tp : fp) += weight_of(weights, i);
    if (k + 1 < n && scores[o[k + 1]] == scores[i]) continue;
    const double f1 = 2 * tp / (2 * tp + fp + (pos - tp));
    if (f1 > best_f1) {
      best_f1 = f1;
      // Threshold just below this score (midpoint to the next lower score).
      best_t = k + 1 < n ? 0.5 * (scores[i] + scores[o[k + 1]]) : scores[i] - 1;
    }
  }
  return best_t;
}

std::vector<double> group_coverage_thresholds(std::span<const double> scores,
                                              std::span<const std::int32_t> groups,
                                              std::size_t num_groups, double coverage,
                                              std::span<const double> weights) {
  const std::size_t n = scores.size();
  RATEOPT_CHECK(groups.size() == n, "group_coverage_thresholds: {} groups for {} scores",
                groups.size(), n);
  RATEOPT_CHECK(weights.empty() || weights.size() == n,
                "group_coverage_thresholds: {} weights for {} scores", weights.size(), n);
  RATEOPT_CHECK(coverage >= 0 && coverage <= 1,
                "group_coverage_thresholds: coverage must be in [0, 1], got {}", coverage);
  std::vector<double> out(num_groups, 0.0);
  for (std::size_t g = 0; g < num_groups; ++g) {
    std::vector<double> s, w;
    for (std::size_t i = 0; i < n; ++i)
      if (groups[i] == static_cast<std::int32_t>(g)) {
        s.push_back(scores[i]);
        w.push_back(weight_of(weights, i));
      }
    RATEOPT_CHECK(!s.empty(), "group_coverage_thresholds: group {} has no rows", g);
    const std::vector<std::size_t> o = order_desc(s);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    double covered = 0, best_gap = coverage;  // k = 0: nothing predicted positive
    double best_t = s[o[0]];
    for (std::size_t k = 0; k < o.size(); ++k) {
      covered += w[o[k]];
      if (k + 1 < o.size() && s[o[k + 1]] == s[o[k]]) continue;
      const double gap = std::fabs(covered / total - coverage);
      if (gap < best_gap) {
        best_gap = gap;
        best_t = k + 1 < o.size() ? 0.5 * (s[o[k]] + s[o[k + 1]]) : s[o[k]] - 1;
      }
    }
    out[g] = best_t;
  }
  return out;
}

}  // namespace rateopt
