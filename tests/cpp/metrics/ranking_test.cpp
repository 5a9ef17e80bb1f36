// roc_auc and average_precision: hand cases with ties and weights, O(n^2) oracles, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using Labels01 = std::vector<std::int32_t>;
using Doubles = std::vector<double>;
using Mask = std::vector<std::uint8_t>;

TEST(RankingHand, AucWithoutTies) {
  // Positives {0.9, 0.7}, negatives {0.8, 0.6}: 3 of the 4 pairs are ordered.
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{0.9, 0.8, 0.7, 0.6}, Labels01{1, 0, 1, 0}), 3.0 / 4);
  // scikit-learn's documented example: roc_auc_score([0,0,1,1], [0.1,0.4,0.35,0.8]) = 0.75.
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{0.1, 0.4, 0.35, 0.8}, Labels01{0, 0, 1, 1}), 0.75);
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{3, 2, 1}, Labels01{1, 1, 0}), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{1, 2, 3}, Labels01{1, 1, 0}), 0.0);
}

TEST(RankingHand, AucTiesCountHalf) {
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{0.5, 0.5, 0.5, 0.5}, Labels01{1, 0, 1, 0}), 0.5);
  // Pairs (1 vs 0.5) = 1, (1 vs 0) = 1, (0.5 vs 0.5) = 1/2, (0.5 vs 0) = 1 -> 3.5 / 4.
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{1, 0.5, 0.5, 0}, Labels01{1, 1, 0, 0}), 7.0 / 8);
  // Infinite scores sort like any other.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{inf, -inf, inf}, Labels01{1, 0, 0}), 3.0 / 4);
}

TEST(RankingHand, AucWeightedAndMasked) {
  // Positives 0.9 (w 1) and 0.7 (w 3), negative 0.8 (w 2): ordered weight 1*2 out of 4*2.
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{0.9, 0.8, 0.7}, Labels01{1, 0, 1}, Doubles{1, 2, 3}), 1.0 / 4);
  // Integer weights equal repeated rows.
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{0.9, 0.8, 0.7}, Labels01{1, 0, 1}, Doubles{1, 2, 3}),
                   roc_auc(Doubles{0.9, 0.8, 0.8, 0.7, 0.7, 0.7}, Labels01{1, 0, 0, 1, 1, 1}));
  // The mask drops the 0.7 positive: AUC 1.
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{0.9, 0.8, 0.7}, Labels01{1, 0, 1}, {}, Mask{1, 1, 0}), 1.0);
  // Zero weight drops it too.
  EXPECT_DOUBLE_EQ(roc_auc(Doubles{0.9, 0.8, 0.7}, Labels01{1, 0, 1}, Doubles{1, 1, 0}), 1.0);
}

TEST(RankingHand, AveragePrecision) {
  // scikit-learn's documented example: average_precision_score([0,0,1,1],
  // [0.1,0.4,0.35,0.8]) = 0.8333: thresholds 0.8 (R 1/2, P 1), 0.35 (R 1, P 2/3).
  EXPECT_DOUBLE_EQ(average_precision(Doubles{0.1, 0.4, 0.35, 0.8}, Labels01{0, 0, 1, 1}),
                   1.0 / 2 + 1.0 / 3);
  // A tie group is one step: {1: pos} then {0.5: pos, neg} (R 1, P 2/3) then {0: neg}.
  EXPECT_DOUBLE_EQ(average_precision(Doubles{1, 0.5, 0.5, 0}, Labels01{1, 1, 0, 0}),
                   1.0 / 2 + 1.0 / 3);
  // All tied: one step with P = the positive share.
  EXPECT_DOUBLE_EQ(average_precision(Doubles{2, 2, 2, 2}, Labels01{1, 0, 0, 0}), 1.0 / 4);
  // Perfect ranking, and no negatives at all: 1.
  EXPECT_DOUBLE_EQ(average_precision(Doubles{3, 2, 1}, Labels01{1, 1, 0}), 1.0);
  EXPECT_DOUBLE_EQ(average_precision(Doubles{3, 2, 1}, Labels01{1, 1, 1}), 1.0);
  // Weighted: negative 0.9 (w 1), positive 0.8 (w 3), positive 0.1 (w 1):
  //   step 0.8: R = 3/4, P = 3/4; step 0.1: R = 1, P = 4/5 -> 9/16 + 1/5.
  EXPECT_DOUBLE_EQ(average_precision(Doubles{0.9, 0.8, 0.1}, Labels01{0, 1, 1}, Doubles{1, 3, 1}),
                   9.0 / 16 + 1.0 / 5);
  // Masked: only rows 0 and 1 -> R 1 at P 1/2.
  EXPECT_DOUBLE_EQ(average_precision(Doubles{0.9, 0.8, 0.1}, Labels01{0, 1, 1}, {}, Mask{1, 1, 0}),
                   0.5);
}

using test::expect_invalid;

TEST(RankingErrors, UndefinedCasesAndBadInput) {
  expect_invalid([] { (void)roc_auc(Doubles{1, 2}, Labels01{0, 0}); }, "no positive");
  expect_invalid([] { (void)roc_auc(Doubles{1, 2}, Labels01{1, 1}); }, "no negative");
  expect_invalid([] { (void)roc_auc({}, {}); }, "no positive");
  expect_invalid([] { (void)average_precision(Doubles{1, 2}, Labels01{0, 0}); }, "no positive");
  // Positives only with zero weight, or masked out.
  expect_invalid(
      [] {
        (void)roc_auc(Doubles{1, 2}, Labels01{1, 0}, Doubles{0, 1});
      },
      "no positive");
  expect_invalid(
      [] {
        (void)average_precision(Doubles{1, 2}, Labels01{1, 0}, {}, Mask{0, 1});
      },
      "no positive");
  expect_invalid([] { (void)roc_auc(Doubles{1, std::nan("")}, Labels01{1, 0}); }, "scores[1]");
  expect_invalid([] { (void)average_precision(Doubles{std::nan("")}, Labels01{1}); }, "NaN");
  expect_invalid([] { (void)roc_auc(Doubles{1, 2}, Labels01{1}); }, "labels have 1 entries");
  expect_invalid([] { (void)roc_auc(Doubles{1, 2}, Labels01{1, 3}); }, "labels[1] is 3");
  expect_invalid([] { (void)roc_auc(Doubles{1, 2}, Labels01{1, 0}, Doubles{1}); }, "weights");
  expect_invalid(
      [] {
        (void)roc_auc(Doubles{1, 2}, Labels01{1, 0}, Doubles{1, -2});
      },
      "weights[1]");
  expect_invalid(
      [] {
        (void)average_precision(Doubles{1, 2}, Labels01{1, 0}, {}, Mask{1});
      },
      "mask");
}

// ---- oracles ---------------------------------------------------------------------------------

struct Instance {
  Doubles scores, weights;
  Labels01 labels;
  Mask mask;
};

Instance random_instance(std::mt19937_64& rng, std::size_t n) {
  Instance x;
  const int levels = 1 + static_cast<int>(rng() % 8);  // few levels -> many ties
  for (std::size_t i = 0; i < n; ++i) {
    x.scores.push_back(static_cast<double>(rng() % static_cast<std::uint64_t>(levels)) / 3.0);
    x.labels.push_back(static_cast<std::int32_t>(rng() % 2));
    x.weights.push_back(rng() % 6 == 0 ? 0.0 : 0.25 * static_cast<double>(1 + rng() % 8));
    x.mask.push_back(rng() % 5 == 0 ? 0 : 1);
  }
  // Ensure both classes are present with positive weight.
  x.labels[0] = 1;
  x.labels[1] = 0;
  x.weights[0] = x.weights[1] = 1;
  x.mask[0] = x.mask[1] = 1;
  return x;
}

// Pairwise definition: sum over (positive i, negative j) of w_i w_j ([s_i > s_j] + [s_i = s_j]/2).
double naive_auc(const Instance& x) {
  double num = 0, pos = 0, neg = 0;
  for (std::size_t i = 0; i < x.scores.size(); ++i) {
    if (!x.mask[i]) continue;
    (x.labels[i] == 1 ? pos : neg) += x.weights[i];
    if (x.labels[i] != 1) continue;
    for (std::size_t j = 0; j < x.scores.size(); ++j) {
      if (!x.mask[j] || x.labels[j] != 0) continue;
      const double order = x.scores[i] > x.scores[j] ? 1.0 : x.scores[i] == x.scores[j] ? 0.5 : 0.0;
      num += x.weights[i] * x.weights[j] * order;
    }
  }
  return num / (pos * neg);
}

// Step definition: for every distinct threshold t (descending), tp(t) and fp(t) over s >= t;
// sum (R_k - R_{k-1}) P_k.
double naive_ap(const Instance& x) {
  Doubles thresholds;
  double pos = 0;
  for (std::size_t i = 0; i < x.scores.size(); ++i) {
    if (!x.mask[i]) continue;
    thresholds.push_back(x.scores[i]);
    if (x.labels[i] == 1) pos += x.weights[i];
  }
  std::sort(thresholds.rbegin(), thresholds.rend());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  double ap = 0, prev_recall = 0;
  for (double t : thresholds) {
    double tp = 0, fp = 0;
    for (std::size_t i = 0; i < x.scores.size(); ++i) {
      if (!x.mask[i] || x.scores[i] < t) continue;
      (x.labels[i] == 1 ? tp : fp) += x.weights[i];
    }
    const double recall = tp / pos;
    if (tp + fp > 0) ap += (recall - prev_recall) * tp / (tp + fp);
    prev_recall = recall;
  }
  return ap;
}

TEST(RankingOracle, AucMatchesPairwiseDefinition) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const Instance x = random_instance(rng, 2 + rng() % 60);
    EXPECT_NEAR(roc_auc(x.scores, x.labels, x.weights, x.mask), naive_auc(x), 1e-12);
  }
}

TEST(RankingOracle, ApMatchesStepDefinition) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed + 1000);
    const Instance x = random_instance(rng, 2 + rng() % 60);
    EXPECT_NEAR(average_precision(x.scores, x.labels, x.weights, x.mask), naive_ap(x), 1e-12);
  }
}

TEST(RankingOracle, InvariantToMonotoneTransformsAndRowOrder) {
  std::mt19937_64 rng(99);
  Instance x = random_instance(rng, 80);
  const double auc = roc_auc(x.scores, x.labels, x.weights, x.mask);
  const double ap = average_precision(x.scores, x.labels, x.weights, x.mask);
  Instance y = x;
  for (auto& s : y.scores) s = std::exp(3 * s) - 7;  // strictly increasing
  EXPECT_NEAR(roc_auc(y.scores, y.labels, y.weights, y.mask), auc, 1e-12);
  EXPECT_NEAR(average_precision(y.scores, y.labels, y.weights, y.mask), ap, 1e-12);
  // Reversing the rows changes nothing.
  std::reverse(y.scores.begin(), y.scores.end());
  std::reverse(y.labels.begin(), y.labels.end());
  std::reverse(y.weights.begin(), y.weights.end());
  std::reverse(y.mask.begin(), y.mask.end());
  EXPECT_NEAR(roc_auc(y.scores, y.labels, y.weights, y.mask), auc, 1e-12);
  EXPECT_NEAR(average_precision(y.scores, y.labels, y.weights, y.mask), ap, 1e-12);
  // Negated scores give 1 - AUC.
  for (auto& s : x.scores) s = -s;
  EXPECT_NEAR(roc_auc(x.scores, x.labels, x.weights, x.mask), 1 - auc, 1e-12);
}

}  // namespace
}  // namespace rateopt
