// class_thresholds (the bucketed exact threshold search of the cutting-plane oracle) against a
// sort of every row, on ties, zero and mixed-sign costs, overlapping searches, scores spread over
// many bucket levels and the extremes of the doubles.
#include "train/class_threshold.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"
#include "rateopt/model.hpp"

namespace rateopt {
namespace {

using detail::ClassThresholdSearch;

// The oracle: every row of the search sorted by decreasing score, F evaluated from the class
// counts (in class order, as the search defines it) at each cut between distinct scores, the
// first smallest kept.
std::optional<double> by_sorting(std::span<const double> scores, const ClassThresholdSearch& s,
                                 std::size_t search) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const auto& in = s.searches_of[s.classes[i]];
    if (std::find(in.begin(), in.end(), search) != in.end()) rows.push_back(i);
  }
  if (rows.empty()) return std::nullopt;
  std::sort(rows.begin(), rows.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<double> counts(s.cost.size(), 0.0);
  const auto value = [&] {
    double f = 0;
    for (std::size_t c = 0; c < counts.size(); ++c) {
      const auto& in = s.searches_of[c];
      if (std::find(in.begin(), in.end(), search) != in.end()) f += counts[c] * s.cost[c];
    }
    return f;
  };
  double best = 0, t = scores[rows.front()] + 1;
  for (std::size_t k = 0; k < rows.size();) {
    const double v = scores[rows[k]];
    while (k < rows.size() && scores[rows[k]] == v) ++counts[s.classes[rows[k++]]];
    const double f = value();
    if (f < best) {
      best = f;
      t = k < rows.size() ? 0.5 * (scores[rows[k]] + v) : v - 1;
    }
  }
  return t;
}

// One feature holding the score (weight 1, bias 0: the score is the value itself).
FeatureMatrix column_of(const std::vector<double>& v) {
  return FeatureMatrix::dense(std::vector<double>(v), v.size(), 1);
}

void expect_matches_sorting(const std::vector<double>& scores, const ClassThresholdSearch& s,
                            const std::string& what) {
  const FeatureMatrix x = column_of(scores);
  const LinearModel m{{1.0}, 0.0};
  const std::vector<std::optional<double>> got = detail::class_thresholds(x, m, s, 1);
  ASSERT_EQ(got.size(), s.searches);
  for (std::size_t k = 0; k < s.searches; ++k) {
    const std::optional<double> want = by_sorting(scores, s, k);
    ASSERT_EQ(got[k].has_value(), want.has_value()) << what << ", search " << k;
    if (want) {
      EXPECT_EQ(*got[k], *want) << what << ", search " << k;
    }
  }
  // Any thread count: the same cuts.
  EXPECT_EQ(detail::class_thresholds(x, m, s, 4), got) << what;
}

TEST(ClassThresholds, MatchSortingEveryRow) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 3000)(rng);
    const std::size_t classes = std::uniform_int_distribution<std::size_t>(1, 7)(rng);
    // Few distinct scores (ties), many, or spread over orders of magnitude.
    const int kind = trial % 3;
    std::vector<double> scores(n);
    std::vector<std::uint8_t> cls(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (kind == 0) {
        scores[i] = std::uniform_int_distribution<int>(-5, 5)(rng) * 0.25;
      } else if (kind == 1) {
        scores[i] = std::normal_distribution<double>(0, 3)(rng);
      } else {
        scores[i] = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                               std::uniform_int_distribution<int>(-60, 60)(rng));
      }
      cls[i] = static_cast<std::uint8_t>(
          std::uniform_int_distribution<std::size_t>(0, classes - 1)(rng));
    }
    ClassThresholdSearch s;
    s.classes = cls;
    std::vector<double> cost(classes);
    for (double& c : cost) {
      const int pick = std::uniform_int_distribution<int>(0, 4)(rng);
      c = pick == 0 ? 0.0 : std::uniform_real_distribution<double>(-1, 1)(rng) / 7;
    }
    s.cost = cost;
    // Search 0 takes every class with a cost; searches 1 and 2 split the classes in two.
    s.searches = 3;
    for (std::size_t c = 0; c < classes; ++c) {
      std::vector<std::size_t> in;
      if (cost[c] != 0) in.push_back(0);
      in.push_back(1 + c % 2);
      s.searches_of.push_back(in);
    }
    expect_matches_sorting(scores, s, "trial " + std::to_string(trial));
  }
}

// Integer costs: F is exact, so the cut is also the one a running sum in score order finds (an
// oracle that does not share the search's definition of F).
TEST(ClassThresholds, IntegerCostsGiveTheRunningSumCut) {
  std::mt19937 rng(5);
  const std::size_t n = 20000;
  std::vector<double> scores(n);
  std::vector<std::uint8_t> cls(n);
  for (std::size_t i = 0; i < n; ++i) {
    scores[i] = std::round(std::normal_distribution<double>(0, 50)(rng)) / 8;
    cls[i] = static_cast<std::uint8_t>(i % 3);
  }
  const std::vector<double> cost{-3, 2, 1};
  ClassThresholdSearch s;
  s.classes = cls;
  s.cost = cost;
  s.searches = 1;
  s.searches_of = {{0}, {0}, {0}};
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  double run = 0, best = 0, t = scores[order[0]] + 1;
  for (std::size_t k = 0; k < n;) {
    const double v = scores[order[k]];
    while (k < n && scores[order[k]] == v) run += cost[cls[order[k++]]];
    if (run < best) {
      best = run;
      t = k < n ? 0.5 * (scores[order[k]] + v) : v - 1;
    }
  }
  const FeatureMatrix x = column_of(scores);
  const std::vector<std::optional<double>> got =
      detail::class_thresholds(x, LinearModel{{1.0}, 0.0}, s, 2);
  ASSERT_TRUE(got[0].has_value());
  EXPECT_EQ(*got[0], t);
  EXPECT_LT(best, 0);  // the data has a cut better than none
}

TEST(ClassThresholds, EdgeCases) {
  // Every cost zero: no row above; all rows negative-cost: every row above; extremes of the
  // doubles (a range wider than the largest double); a search no class takes part in.
  const std::vector<double> scores{1e308, -1e308, 0.0, 5e-324, -5e-324, 1e308, 3.0};
  const std::vector<std::uint8_t> cls{0, 1, 2, 0, 1, 2, 0};
  for (const std::vector<double>& cost : std::vector<std::vector<double>>{
           {0, 0, 0}, {-1, -1, -1}, {1, -1, 0.5}, {-1, 1, -0.5}, {1, 1, 1}}) {
    ClassThresholdSearch s;
    s.classes = cls;
    s.cost = cost;
    s.searches = 3;
    s.searches_of = {{0, 1}, {0}, {1}};
    expect_matches_sorting(scores, s, "costs " + std::to_string(cost[0]));
    EXPECT_FALSE(detail::class_thresholds(column_of(scores), LinearModel{{1.0}, 0.0}, s, 1)[2]);
  }
  // Bad input: a row class without a cost, a search out of range.
  ClassThresholdSearch bad;
  const std::vector<std::uint8_t> one{3};
  const std::vector<double> cost{1.0};
  bad.classes = one;
  bad.cost = cost;
  bad.searches = 1;
  bad.searches_of = {{0}};
  EXPECT_THROW((void)detail::class_thresholds(column_of({1.0}), LinearModel{{1.0}, 0.0}, bad, 1),
               InvalidArgument);
  const std::vector<std::uint8_t> zero{0};
  bad.classes = zero;
  bad.searches_of = {{1}};
  EXPECT_THROW((void)detail::class_thresholds(column_of({1.0}), LinearModel{{1.0}, 0.0}, bad, 1),
               InvalidArgument);
}

}  // namespace
}  // namespace rateopt
