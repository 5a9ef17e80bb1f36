// Agreement of kExact, kQuadratic and kFast on every k beyond brute-force sizes; the truncation
// and quadrature error bounds; the Poisson-binomial primitives; kAuto's choices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "decide/fast_rule.hpp"
#include "decide/independent_impl.hpp"
#include "decide/independent_test_util.hpp"
#include "decide/poisson_binomial.hpp"
#include "rateopt/decide.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using namespace testing_decide;

using test::sorted_desc;

// ---- Poisson-binomial primitives ------------------------------------------------------------

// P(count = j) by direct enumeration over 2^n outcomes.
std::vector<double> pb_by_enumeration(const std::vector<double>& p) {
  const std::size_t n = p.size();
  std::vector<double> out(n + 1, 0.0);
  for (std::uint32_t y = 0; y < (1u << n); ++y) {
    double prob = 1;
    for (std::size_t i = 0; i < n; ++i) prob *= (y >> i) & 1u ? p[i] : 1 - p[i];
    out[static_cast<std::size_t>(__builtin_popcount(y))] += prob;
  }
  return out;
}

TEST(PoissonBinomial, ExtendMatchesEnumeration) {
  std::mt19937_64 rng(test_seed(1));
  for (int it = 0; it < 50; ++it) {
    const auto p = random_probabilities(rng, 1 + rng() % 12);
    detail::PbRow row = detail::pb_unit_row();
    detail::PbRow next;
    for (const double v : p) {
      detail::pb_extend(row, v, next);
      std::swap(row, next);
    }
    const auto ref = pb_by_enumeration(p);
    double total = 0;
    for (std::size_t j = 0; j < ref.size(); ++j) {
      EXPECT_NEAR(row.at(j), ref[j], 1e-15 + 1e-13 * ref[j]) << j;
      total += row.at(j);
    }
    EXPECT_NEAR(total, 1.0, 1e-14);
    for (const double m : row.mass) EXPECT_GE(m, 0x1p-1022);  // no zeros or subnormals kept
  }
}

TEST(PoissonBinomial, WindowDropsAtMostTheTail) {
  std::mt19937_64 rng(test_seed(2));
  const auto p = uniform_probabilities(rng, 400);
  detail::PbRow row = detail::pb_unit_row();
  detail::PbRow next;
  for (const double v : p) {
    detail::pb_extend(row, v, next);
    std::swap(row, next);
  }
  for (const double tail : {0.0, 1e-16, 1e-10, 1e-3}) {
    const auto w = detail::pb_window(row, tail);
    double left = 0, right = 0;
    for (std::size_t j = row.lo; j < w.first; ++j) left += row.at(j);
    for (std::size_t j = w.last; j < row.end(); ++j) right += row.at(j);
    EXPECT_LE(left, tail);
    EXPECT_LE(right, tail);
    EXPECT_NEAR(w.dropped, left + right, 1e-18);
    // Maximal: one more entry on either side would exceed the tail.
    if (w.first > row.lo) {
      EXPECT_GT(left + row.at(w.first), tail);
    }
    if (w.last < row.end()) {
      EXPECT_GT(right + row.at(w.last - 1), tail);
    }
    if (tail == 0) {
      EXPECT_EQ(w.first, row.lo);
      EXPECT_EQ(w.last, row.end());
    }
  }
}

TEST(PoissonBinomial, ReverseRowsTableAndCheckpointsAreIdentical) {
  std::mt19937_64 rng(test_seed(3));
  const auto p = random_probabilities(rng, 300);
  std::vector<detail::PbRow> forward{detail::pb_unit_row()};
  for (const double v : p) {
    detail::PbRow next;
    detail::pb_extend(forward.back(), v, next);
    forward.push_back(next);
  }
  for (const std::size_t block :
       {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{17}, p.size() + 1}) {
    detail::ReversePbRows rows(p, block);
    for (std::size_t j = p.size() + 1; j-- > 0;) {
      const auto& r = rows.row(j);
      ASSERT_EQ(r.lo, forward[j].lo) << block << " " << j;
      ASSERT_EQ(r.mass, forward[j].mass) << block << " " << j;
    }
  }
}

TEST(PoissonBinomial, LogProbNoSuccess) {
  EXPECT_EQ(detail::log_prob_no_success(std::vector<double>{}), 0.0);
  EXPECT_NEAR(detail::log_prob_no_success(std::vector<double>{0.5, 0.5}), std::log(0.25), 1e-15);
  EXPECT_TRUE(std::isinf(detail::log_prob_no_success(std::vector<double>{0.2, 1.0})));
  const std::vector<double> many(100000, 1e-6);
  EXPECT_NEAR(detail::log_prob_no_success(many), 1e5 * std::log1p(-1e-6), 1e-14);
}

// ---- the quadrature rule -------------------------------------------------------------------

TEST(FastRule, RelativeErrorWithinBound) {
  struct Case {
    double lo, hi, abs, tol;
  };
  const Case cases[] = {{1, 1e6, 1e6, 1e-12}, {1, 10, 10, 1e-12},  {5e5, 1.5e6, 2e6, 1e-12},
                        {1, 1e3, 1e3, 1e-6},  {2, 1e4, 1e5, 1e-9}, {3.5, 3.5, 10, 1e-12}};
  for (const auto& c : cases) {
    const auto rule = detail::make_exp_sum_rule(c.lo, c.hi, c.abs, c.tol);
    EXPECT_LE(rule.rel_error(), c.tol);
    double worst = 0;
    const int steps = 4000;
    for (int i = 0; i <= steps; ++i) {
      const double lambda = c.lo * std::pow(c.hi / c.lo, double(i) / steps);
      worst = std::max(worst, std::abs(lambda * rule.apply(lambda) - 1));
    }
    EXPECT_LE(worst, rule.rel_error()) << c.lo << " " << c.hi << " " << c.tol;
    // The bound is not vacuous: over a wide range the achieved error is within 100x of it.
    if (c.hi / c.lo > 100) {
      EXPECT_GE(worst, rule.rel_error() / 100);
    }
    // Outside the range (below lambda_min, above lambda_max up to lambda_abs): k_out.
    for (int i = 0; i <= 200; ++i) {
      const double below = c.lo * std::pow(1e-3, double(i) / 200);
      const double above = c.hi * std::pow(c.abs / c.hi, double(i) / 200);
      EXPECT_LE(std::abs(below * rule.apply(below) - 1), rule.k_out);
      EXPECT_LE(std::abs(above * rule.apply(above) - 1), rule.k_out);
    }
  }
}

TEST(FastRule, DiscretisationErrorIsMonotone) {
  double prev = 0;
  for (double h = 0.1; h < 1.5; h += 0.05) {
    const double e = detail::trapezoid_discretisation_error(h);
    EXPECT_GT(e, prev);
    prev = e;
  }
  // h = 0.3: 2 sqrt(2 z e^{-z}) with z = 2 pi^2 / 0.3 ~ 65.8 -> about 1.2e-13.
  EXPECT_NEAR(detail::trapezoid_discretisation_error(0.3), 1.18e-13, 0.05e-13);
}

// ---- agreement of the methods ---------------------------------------------------------------

const char* const kFractional[] = {"f1", "fbeta:0.5", "fbeta:2", "jaccard", "balanced_accuracy"};

TEST(IndependentMethods, ExactQuadraticFastAgreeOnEveryK) {
  std::mt19937_64 rng(test_seed(4));
  for (const std::size_t n : {25, 60, 150, 300}) {
    for (int rep = 0; rep < 2; ++rep) {
      const auto p =
          sorted_desc(rep == 0 ? random_probabilities(rng, n) : uniform_probabilities(rng, n));
      for (const char* name : kFractional) {
        SCOPED_TRACE(::testing::Message() << name << " n " << n << " rep " << rep);
        const DecideMetric metric = DecideMetric::from_name(name);
        const auto exact = detail::expected_exact(p, metric);
        const auto quad = detail::expected_quadratic(p, metric);
        const auto fast = detail::expected_fast(p, metric, 1e-12);
        ASSERT_TRUE(quad && fast);
        EXPECT_EQ(exact.error_bound, 0.0);
        EXPECT_LE(fast->error_bound, 1e-12);
        for (std::size_t k = 0; k <= n; ++k) {
          const double ref = exact.expected[k];
          ASSERT_NEAR(quad->expected[k], ref, 1e-12 * std::max(1.0, std::abs(ref))) << k;
          ASSERT_NEAR(fast->expected[k], ref, fast->error_bound) << k;
        }
      }
    }
  }
}

TEST(IndependentMethods, FastMatchesQuadraticAtTenThousand) {
  std::mt19937_64 rng(test_seed(5));
  const auto p = sorted_desc(uniform_probabilities(rng, 10000));
  for (const char* name : {"f1", "jaccard", "balanced_accuracy"}) {
    const DecideMetric metric = DecideMetric::from_name(name);
    const auto quad = detail::expected_quadratic(p, metric);
    const auto fast = detail::expected_fast(p, metric, 1e-12);
    ASSERT_TRUE(quad && fast) << name;
    double worst = 0;
    for (std::size_t k = 0; k <= p.size(); ++k)
      worst = std::max(worst, std::abs(fast->expected[k] - quad->expected[k]));
    EXPECT_LE(worst, fast->error_bound) << name;
    EXPECT_LE(worst, 1e-12) << name;
  }
}

TEST(IndependentMethods, FastMatchesQuadraticOnSkewedInputs) {
  // Few expected positives (nodes far from t = 1, direct products), almost-certain positives,
  // and a mixture with exact zeros and ones.
  std::mt19937_64 rng(test_seed(55));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::vector<double>> inputs(3, std::vector<double>(3000));
  for (std::size_t i = 0; i < 3000; ++i) {
    inputs[0][i] = i < 5 ? unit(rng) : 1e-4 * unit(rng);
    inputs[1][i] = 1 - 1e-3 * unit(rng);
    inputs[2][i] = i % 3 == 0 ? 0.0 : (i % 3 == 1 ? 1.0 : unit(rng));
  }
  for (auto& p : inputs) {
    p = sorted_desc(p);
    for (const char* name : kFractional) {
      const DecideMetric metric = DecideMetric::from_name(name);
      const auto quad = detail::expected_quadratic(p, metric);
      const auto fast = detail::expected_fast(p, metric, 1e-12);
      ASSERT_TRUE(quad && fast) << name;
      for (std::size_t k = 0; k <= p.size(); ++k)
        ASSERT_NEAR(fast->expected[k], quad->expected[k], fast->error_bound) << name << " " << k;
    }
  }
}

TEST(FastBound, HoldsForLooseTolerances) {
  // With a loose tolerance the rule is coarse; the reported bound must still cover the error.
  std::mt19937_64 rng(test_seed(6));
  for (const std::size_t n : {40, 500}) {
    const auto p = sorted_desc(random_probabilities(rng, n));
    for (const char* name : kFractional) {
      const DecideMetric metric = DecideMetric::from_name(name);
      const auto quad = detail::expected_quadratic(p, metric);
      ASSERT_TRUE(quad);
      for (const double tol : {1e-3, 1e-5, 1e-7, 1e-9, 1e-11}) {
        const auto fast = detail::expected_fast(p, metric, tol);
        ASSERT_TRUE(fast) << name << " " << tol;
        EXPECT_LE(fast->error_bound, tol);
        double worst = 0;
        for (std::size_t k = 0; k <= n; ++k)
          worst = std::max(worst, std::abs(fast->expected[k] - quad->expected[k]));
        EXPECT_LE(worst, fast->error_bound) << name << " n " << n << " tol " << tol;
      }
    }
  }
}

// Issue 10: a tolerance below the rounding floor used to send the fast path to the O(n^2) one
// (above 6.4 million items at the default 1e-12: minutes); it is raised to the floor instead.
TEST(FastBound, ToleranceBelowTheRoundingFloorIsRaised) {
  const std::vector<double> p{0.9, 0.5, 0.4, 0.1};
  DecideOptions o = options_for(DecideMethod::kFast);
  o.fast_tolerance = 1e-18;  // below the rounding allowance
  const auto fast = detail::expected_fast(p, DecideMetric::from_name("f1"), 1e-18);
  ASSERT_TRUE(fast);
  EXPECT_GT(fast->error_bound, 1e-18);
  EXPECT_LE(fast->error_bound, detail::fast_tolerance_floor(p.size()));
  const auto quad = detail::expected_quadratic(p, DecideMetric::from_name("f1"));
  ASSERT_TRUE(quad);
  for (std::size_t k = 0; k <= p.size(); ++k)
    EXPECT_NEAR(fast->expected[k], quad->expected[k], fast->error_bound);
  const auto d = decide_independent(p, DecideMetric::from_name("f1"), o);
  EXPECT_EQ(d.method, DecideMethod::kFast);
  EXPECT_EQ(d.selected, decide_independent(p, DecideMetric::from_name("f1"),
                                           options_for(DecideMethod::kQuadratic))
                            .selected);
  // The floor grows with n; the default 1e-12 is kept up to about 1.7 million items.
  EXPECT_LT(detail::fast_tolerance_floor(1'000'000), 2e-12);
  EXPECT_GT(detail::fast_tolerance_floor(10'000'000), 1e-12);
  EXPECT_LT(detail::fast_tolerance_floor(10'000'000), 1e-11);
  // No fast path for G-mean: kExact runs.
  EXPECT_EQ(decide_independent(p, DecideMetric::from_name("gmean"), o).method,
            DecideMethod::kExact);
  // No rational beta^2 with a small denominator: kQuadratic falls back to kExact.
  EXPECT_EQ(decide_independent(p, DecideMetric::from_name("fbeta:1.7"),
                               options_for(DecideMethod::kQuadratic))
                .method,
            DecideMethod::kExact);
}

TEST(IndependentMethods, RationalBeta) {
  EXPECT_EQ(detail::rational_beta2(1.0), (std::pair<int, int>{1, 1}));
  EXPECT_EQ(detail::rational_beta2(2.0), (std::pair<int, int>{4, 1}));
  EXPECT_EQ(detail::rational_beta2(0.5), (std::pair<int, int>{1, 4}));
  EXPECT_EQ(detail::rational_beta2(std::sqrt(2.0)), (std::pair<int, int>{2, 1}));
  EXPECT_EQ(detail::rational_beta2(0.1), (std::pair<int, int>{1, 100}));
  EXPECT_FALSE(detail::rational_beta2(1.7));  // 289/100: q + r too large
  EXPECT_FALSE(detail::rational_beta2(std::sqrt(3.14159)));
}

TEST(IndependentExact, TruncationBoundHolds) {
  std::mt19937_64 rng(test_seed(7));
  const auto p = sorted_desc(uniform_probabilities(rng, 200));
  for (const char* name : {"gmean", "hmean", "gtppr", "balanced_accuracy", "f1"}) {
    const DecideMetric metric = DecideMetric::from_name(name);
    const auto full = detail::expected_exact(p, metric);
    for (const double tau : {1e-4, 1e-8, 1e-12}) {
      detail::ExactConfig config;
      config.truncation = tau;
      const auto cut = detail::expected_exact(p, metric, config);
      EXPECT_GT(cut.error_bound, 0.0) << name << " " << tau;
      EXPECT_LE(cut.error_bound, tau);
      for (std::size_t k = 0; k <= p.size(); ++k)
        ASSERT_NEAR(cut.expected[k], full.expected[k], cut.error_bound + 1e-14) << name << k;
    }
  }
  // Through the public API: the bound is reported.
  DecideOptions o = options_for(DecideMethod::kExact);
  o.truncation = 1e-6;
  const auto d = decide_independent(p, DecideMetric::from_name("gmean"), o);
  EXPECT_GT(d.error_bound, 0.0);
  EXPECT_LE(d.error_bound, 1e-6);
}

TEST(IndependentMethods, AutoChoices) {
  std::mt19937_64 rng(test_seed(8));
  const auto small = uniform_probabilities(rng, 100);
  const auto large = uniform_probabilities(rng, 5000);
  const auto method = [](const std::vector<double>& p, const char* name) {
    return decide_independent(p, DecideMetric::from_name(name), options_for(DecideMethod::kAuto))
        .method;
  };
  EXPECT_EQ(method(small, "f1"), DecideMethod::kQuadratic);
  EXPECT_EQ(method(small, "jaccard"), DecideMethod::kQuadratic);
  EXPECT_EQ(method(small, "balanced_accuracy"), DecideMethod::kQuadratic);
  EXPECT_EQ(method(large, "f1"), DecideMethod::kFast);
  EXPECT_EQ(method(large, "jaccard"), DecideMethod::kFast);
  EXPECT_EQ(method(small, "gmean"), DecideMethod::kExact);
  EXPECT_EQ(method(small, "accuracy"), DecideMethod::kExact);
  const auto g =
      decide_independent(small, DecideMetric::from_name("gmean"), options_for(DecideMethod::kAuto));
  EXPECT_LE(g.error_bound, 1e-15);
  const auto f =
      decide_independent(large, DecideMetric::from_name("f1"), options_for(DecideMethod::kAuto));
  EXPECT_GT(f.error_bound, 0.0);
  EXPECT_LE(f.error_bound, 1e-12);
}

}  // namespace
}  // namespace rateopt

namespace rateopt {
namespace {

// Issue 10: fbeta:1e160 squared to inf and gave NaN expectations and the empty set. Beyond 1e100
// beta is capped: F_beta is recall to double precision, whose expectation over the top-k sets
// is 1 - P(no positive) at k = n, the best set. Checked on every method and on GFM.
TEST(DecideFbeta, HugeBetaIsRecallNotNan) {
  const std::vector<double> p = {0.9, 0.6, 0.3, 0.1};
  const double recall_all = 1 - 0.1 * 0.4 * 0.7 * 0.9;
  for (const char* spec : {"fbeta:1e160", "fbeta:1e300", "fbeta:1e100"}) {
    const DecideMetric metric = DecideMetric::from_name(spec);
    EXPECT_EQ(metric.beta(), 1e100);
    for (DecideMethod method :
         {DecideMethod::kBrute, DecideMethod::kExact, DecideMethod::kFast, DecideMethod::kAuto}) {
      DecideOptions options;
      options.method = method;
      options.all_k = true;
      const Decision d = decide_independent(p, metric, options);
      EXPECT_EQ(d.selected.size(), 4u) << spec << " " << to_string(method);
      EXPECT_NEAR(d.expected, recall_all, 1e-9) << spec << " " << to_string(method);
      for (double v : d.expected_by_k) EXPECT_TRUE(std::isfinite(v)) << spec;
    }
  }
}

}  // namespace
}  // namespace rateopt
