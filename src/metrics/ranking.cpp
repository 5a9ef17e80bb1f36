// Exact weighted ROC AUC and average precision from scores (rateopt/metrics.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/check.hpp"
#include "metrics/metrics_impl.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {

namespace {

// One threshold step: the weight of positives and negatives sharing one distinct score.
struct Step {
  double pos = 0;
  double neg = 0;
};

// Validates the inputs and groups the selected, nonzero-weight rows by distinct score in
// decreasing order. Sorting by (score desc, row asc) makes the sums order-deterministic.
std::vector<Step> threshold_steps(std::string_view metric, std::span<const double> scores,
                                  std::span<const std::int32_t> labels,
                                  std::span<const double> weights,
                                  std::span<const std::uint8_t> mask, double& pos_total,
                                  double& neg_total) {
  const std::size_t n = scores.size();
  metrics_impl::check_binary_labels(labels, n);
  metrics_impl::check_weights(weights, n);
  metrics_impl::check_mask(mask, n);
  std::vector<std::size_t> rows;
  rows.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    RATEOPT_CHECK(!std::isnan(scores[i]), "{}: scores[{}] is NaN", metric, i);
    if (metrics_impl::selected(mask, i) && metrics_impl::weight_of(weights, i) > 0)
      rows.push_back(i);
  }
  std::sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  std::vector<Step> steps;
  pos_total = 0;
  neg_total = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const std::size_t i = rows[k];
    if (k == 0 || scores[i] != scores[rows[k - 1]]) steps.emplace_back();
    const double w = metrics_impl::weight_of(weights, i);
    if (labels[i] == 1) {
      steps.back().pos += w;
      pos_total += w;
    } else {
      steps.back().neg += w;
      neg_total += w;
    }
  }
  return steps;
}

}  // namespace

double roc_auc(std::span<const double> scores, std::span<const std::int32_t> labels,
               std::span<const double> weights, std::span<const std::uint8_t> mask) {
  double pos = 0, neg = 0;
  const auto steps = threshold_steps("roc_auc", scores, labels, weights, mask, pos, neg);
  RATEOPT_CHECK(pos > 0,
                "roc_auc is undefined for this slice: it has no positive examples "
                "(positive weight 0)");
  RATEOPT_CHECK(neg > 0,
                "roc_auc is undefined for this slice: it has no negative examples "
                "(negative weight 0)");
  // Trapezoid over distinct thresholds: each negative is outranked by the positives above it
  // and ties with the positives of its own step count half.
  double area = 0, pos_above = 0;
  for (const Step& s : steps) {
    area += s.neg * (pos_above + s.pos / 2);
    pos_above += s.pos;
  }
  return std::clamp(area / (pos * neg), 0.0, 1.0);
}

double average_precision(std::span<const double> scores, std::span<const std::int32_t> labels,
                         std::span<const double> weights, std::span<const std::uint8_t> mask) {
  double pos = 0, neg = 0;
  const auto steps = threshold_steps("average_precision", scores, labels, weights, mask, pos, neg);
  RATEOPT_CHECK(pos > 0,
                "average_precision is undefined for this slice: it has no positive "
                "examples (positive weight 0)");
  // sum_k (R_k - R_{k-1}) P_k, with R_k = tp_k / pos and P_k = tp_k / (tp_k + fp_k).
  double ap = 0, tp = 0, fp = 0;
  for (const Step& s : steps) {
    tp += s.pos;
    fp += s.neg;
    if (s.pos > 0) ap += (s.pos / pos) * (tp / (tp + fp));
  }
  return std::clamp(ap, 0.0, 1.0);
}

}  // namespace rateopt
