// decide_independent against brute force (kBrute, the oracle over all 2^n subsets): every method,
// every metric, random instances with exact 0/1, ties and tiny values; brute force itself
// (outcome enumeration vs Poisson-binomial split, Theorem 1); conventions and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "decide/independent_impl.hpp"
#include "decide/independent_test_util.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using namespace testing_decide;

using test::sorted_desc;

std::uint64_t name_hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

// Largest gap between the best E_k and any other k (0 if n = 0).
double runner_up_gap(const std::vector<double>& e) {
  const std::size_t best =
      static_cast<std::size_t>(std::max_element(e.begin(), e.end()) - e.begin());
  double gap = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < e.size(); ++k)
    if (k != best) gap = std::min(gap, e[best] - e[k]);
  return gap;
}

class IndependentVsBrute : public ::testing::TestWithParam<std::string> {};

TEST_P(IndependentVsBrute, RandomInstancesMatchBruteForce) {
  const std::string name = GetParam();
  const DecideMetric metric = metric_by_name(name);
  const std::uint64_t seed = test_seed(7321) ^ name_hash(name);
  SCOPED_TRACE(::testing::Message() << "metric " << name << ", seed " << seed);
  std::mt19937_64 rng(seed);
  constexpr int kInstances = 600;
  const DecideMethod methods[] = {DecideMethod::kExact, DecideMethod::kQuadratic,
                                  DecideMethod::kFast, DecideMethod::kAuto};
  for (int it = 0; it < kInstances; ++it) {
    // Mostly n <= 8 (brute force enumerates all outcomes), every 20th instance n in 9..14
    // (brute force splits each subset into Poisson-binomial counts).
    const std::size_t n = it % 20 == 19 ? 9 + static_cast<std::size_t>(it / 20) % 6
                                        : 1 + static_cast<std::size_t>(rng() % 8);
    const std::vector<double> p = random_probabilities(rng, n);
    SCOPED_TRACE(::testing::Message() << "instance " << it << ", n " << n);
    const Decision brute = decide_independent(p, metric, options_for(DecideMethod::kBrute));
    ASSERT_EQ(brute.expected_by_k.size(), n + 1);
    EXPECT_EQ(brute.method, DecideMethod::kBrute);

    // Theorem 1: the best subset of each size is attained by the top-k set.
    const auto raw =
        detail::expected_brute(sorted_desc(p), metric, n <= detail::kMaxOutcomeEnumeration);
    for (std::size_t k = 0; k <= n; ++k) {
      EXPECT_NEAR(raw.top_k[k], raw.best_by_k[k], 1e-12) << "k " << k;
      EXPECT_EQ(raw.best_by_k[k], brute.expected_by_k[k]);
    }
    const double gap = runner_up_gap(brute.expected_by_k);

    for (const DecideMethod method : methods) {
      SCOPED_TRACE(::testing::Message() << "method " << to_string(method));
      const Decision d = decide_independent(p, metric, options_for(method));
      ASSERT_EQ(d.expected_by_k.size(), n + 1);
      EXPECT_LE(d.error_bound, 1e-12);
      const double tol = 1e-12 + d.error_bound;
      for (std::size_t k = 0; k <= n; ++k)
        EXPECT_NEAR(d.expected_by_k[k], raw.top_k[k], tol) << "k " << k;
      EXPECT_NEAR(d.expected, brute.expected, tol);
      if (gap > 1e-9) {
        EXPECT_EQ(d.selected, brute.selected);
      }
    }
  }
}

std::vector<std::string> all_metric_names() {
  std::vector<std::string> names = builtin_metric_names();
  names.push_back("weighted_accuracy");
  return names;
}

INSTANTIATE_TEST_SUITE_P(IndependentMetrics, IndependentVsBrute,
                         ::testing::ValuesIn(all_metric_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

TEST(IndependentBrute, OutcomeEnumerationEqualsPoissonSplit) {
  std::mt19937_64 rng(test_seed(99));
  for (const std::string& name : all_metric_names()) {
    const DecideMetric metric = metric_by_name(name);
    for (int it = 0; it < 15; ++it) {
      const std::size_t n = 1 + static_cast<std::size_t>(rng() % 10);
      const auto p = sorted_desc(random_probabilities(rng, n));
      const auto a = detail::expected_brute(p, metric, true);
      const auto b = detail::expected_brute(p, metric, false);
      for (std::size_t k = 0; k <= n; ++k) {
        EXPECT_NEAR(a.best_by_k[k], b.best_by_k[k], 1e-13) << name << " k " << k;
        EXPECT_NEAR(a.top_k[k], b.top_k[k], 1e-13) << name << " k " << k;
      }
    }
  }
}

TEST(IndependentBrute, HandComputedF1) {
  // p = (0.5, 0.5): E_0 = P(no positive) = 1/4; E_1 = 0.5 * 2/(1+1)... by cases:
  // top-1 = {0}: y = 11 -> F = 2/3, y = 10 -> 1, y = 01 -> 0, y = 00 -> 0: E = (2/3 + 1) / 4.
  // top-2: y = 11 -> 1, 10 / 01 -> 2/3, 00 -> 0: E = (1 + 4/3) / 4.
  const std::vector<double> p{0.5, 0.5};
  const auto d =
      decide_independent(p, DecideMetric::from_name("f1"), options_for(DecideMethod::kBrute));
  ASSERT_EQ(d.expected_by_k.size(), 3u);
  EXPECT_NEAR(d.expected_by_k[0], 0.25, 1e-15);
  EXPECT_NEAR(d.expected_by_k[1], (2.0 / 3 + 1) / 4, 1e-15);
  EXPECT_NEAR(d.expected_by_k[2], (1 + 4.0 / 3) / 4, 1e-15);
  EXPECT_EQ(d.selected, (std::vector<std::size_t>{0, 1}));
}

TEST(IndependentBrute, NonMonotoneCustomMetricGetsTheTrueOptimum) {
  // U = fp - tp rewards predicting negatives: E(s) = sum_{i in s} (1 - 2 p_i). The optimum is the
  // low-probability item, which no top-k set contains; brute force finds it, the other methods
  // (valid for TP-monotone metrics only) return the best top-k set.
  const auto metric = DecideMetric::custom(
      "fp_minus_tp", [](double tp, double fp, double, double) { return fp - tp; });
  const std::vector<double> p{0.9, 0.2, 0.6};
  const auto brute = decide_independent(p, metric, options_for(DecideMethod::kBrute));
  EXPECT_EQ(brute.selected, (std::vector<std::size_t>{1}));
  EXPECT_NEAR(brute.expected, 0.6, 1e-15);
  EXPECT_NEAR(brute.expected_by_k[1], 0.6, 1e-15);
  const auto exact = decide_independent(p, metric, options_for(DecideMethod::kExact));
  EXPECT_TRUE(exact.selected.empty());
  EXPECT_NEAR(exact.expected_by_k[1], -0.8, 1e-15);
}

TEST(IndependentDecide, EmptyInputIsTheEmptySet) {
  for (const DecideMethod m : {DecideMethod::kAuto, DecideMethod::kBrute, DecideMethod::kExact,
                               DecideMethod::kQuadratic, DecideMethod::kFast}) {
    const auto f1 = decide_independent({}, DecideMetric::from_name("f1"), options_for(m));
    EXPECT_TRUE(f1.selected.empty());
    EXPECT_EQ(f1.expected, 1.0);  // F(empty, empty) = 1
    EXPECT_EQ(f1.expected_by_k, (std::vector<double>{1.0}));
    const auto acc = decide_independent({}, DecideMetric::from_name("accuracy"), options_for(m));
    EXPECT_EQ(acc.expected, 0.0);  // accuracy of an empty set of items: 0
  }
}

using test::expect_invalid;

TEST(IndependentDecide, BadInputThrows) {
  const DecideMetric f1 = DecideMetric::from_name("f1");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const DecideMethod m : {DecideMethod::kAuto, DecideMethod::kBrute, DecideMethod::kExact,
                               DecideMethod::kQuadratic, DecideMethod::kFast}) {
    for (const double bad : {nan, inf, -inf, -0.1, 1.1, -1e-300}) {
      const std::vector<double> p{0.5, bad, 0.2};
      expect_invalid([&] { (void)decide_independent(p, f1, options_for(m)); }, "probabilities[1]");
    }
  }
  const std::vector<double> big(21, 0.5);
  expect_invalid([&] { (void)decide_independent(big, f1, options_for(DecideMethod::kBrute)); },
                 "at most 20");
  const std::vector<double> ok(20, 0.5);
  EXPECT_NO_THROW((void)decide_independent(std::vector<double>(12, 0.5), f1,
                                           options_for(DecideMethod::kBrute)));
  DecideOptions o;
  o.truncation = -1;
  expect_invalid([&] { (void)decide_independent(ok, f1, o); }, "truncation");
  o.truncation = nan;
  expect_invalid([&] { (void)decide_independent(ok, f1, o); }, "truncation");
  o = {};
  o.fast_tolerance = 0;
  expect_invalid([&] { (void)decide_independent(ok, f1, o); }, "fast_tolerance");
}

}  // namespace
}  // namespace rateopt
