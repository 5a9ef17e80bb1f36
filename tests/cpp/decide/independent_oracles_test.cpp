// The worked oracles of decide-notes section 6 (items 12-15, 17, 19) for every method.
// The notes give LOSSES (1 - utility) for items 12, 13, 14a and 15, utilities for item 14b.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "decide/independent_impl.hpp"
#include "decide/independent_test_util.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {
namespace {

using namespace testing_decide;

// The methods that are meant to be exact (or within 1e-12) for `metric`.
std::vector<DecideMethod> methods_for(const std::string& name, std::size_t n) {
  std::vector<DecideMethod> m{DecideMethod::kExact, DecideMethod::kAuto, DecideMethod::kQuadratic,
                              DecideMethod::kFast};
  if (n <= 14) m.push_back(DecideMethod::kBrute);
  (void)name;
  return m;
}

std::vector<std::size_t> iota_vec(std::size_t k) {
  std::vector<std::size_t> v(k);
  std::iota(v.begin(), v.end(), std::size_t{0});
  return v;
}

struct LossRow {
  const char* metric;
  std::vector<double> losses;  // L_0 .. L_n
  std::size_t k_star;
};

// Item 12: eta = (0.9, 0.6, 0.3, 0.1), conventions V (zero-denominator rates = 1).
TEST(IndependentOracles, Item12SmallExample) {
  const std::vector<double> eta{0.9, 0.6, 0.3, 0.1};
  const std::vector<LossRow> rows{
      {"f1", {0.9748, 0.36112, 0.24928, 0.29389429, 0.38154857}, 2},
      {"fbeta:2", {0.9748, 0.43666606, 0.22325714, 0.18482351, 0.2224875}, 3},
      {"jaccard", {0.9748, 0.47305, 0.34625, 0.415, 0.525}, 2},
      {"balanced_accuracy", {0.4874, 0.24194167, 0.17948333, 0.276025, 0.4919}, 2},
      {"gtppr", {0.9748, 0.32575551, 0.23479172, 0.26471288, 0.33240471}, 2},
      {"gmean", {0.9748, 0.30393167, 0.19317201, 0.34782449, 0.9838}, 2},
      {"hmean", {0.9748, 0.33952, 0.20224, 0.39013429, 0.9838}, 2},
  };
  for (const auto& row : rows) {
    const DecideMetric metric = DecideMetric::from_name(row.metric);
    for (const DecideMethod m : methods_for(row.metric, eta.size())) {
      SCOPED_TRACE(::testing::Message() << row.metric << " " << to_string(m));
      const Decision d = decide_independent(eta, metric, options_for(m));
      ASSERT_EQ(d.expected_by_k.size(), 5u);
      for (std::size_t k = 0; k < 5; ++k)
        EXPECT_NEAR(1 - d.expected_by_k[k], row.losses[k], 6e-9) << "k " << k;
      EXPECT_EQ(d.selected, iota_vec(row.k_star));
    }
  }
}

// Item 13: the empty prediction is a candidate with F(empty, empty) = 1.
TEST(IndependentOracles, Item13EmptySetConvention) {
  const std::vector<double> eta{0.01, 0.01};
  const DecideMetric f1 = DecideMetric::from_name("f1");
  const std::vector<double> losses{0.0199, 0.990033, 0.9867};
  for (const DecideMethod m : methods_for("f1", 2)) {
    const Decision d = decide_independent(eta, f1, options_for(m));
    for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(1 - d.expected_by_k[k], losses[k], 5e-7);
    EXPECT_TRUE(d.selected.empty()) << to_string(m);
    EXPECT_NEAR(d.expected, 1 - 0.0199, 1e-12);
  }
}

// Item 14a: eta_i = (21 - i) / 21, i = 1..20 (losses).
TEST(IndependentOracles, Item14LinearEta) {
  std::vector<double> eta(20);
  for (std::size_t i = 0; i < 20; ++i) eta[i] = double(20 - i) / 21;
  struct Row {
    const char* metric;
    std::size_t k_star;
    double loss;
  };
  const Row rows[] = {{"f1", 12, 0.250777966278},      {"fbeta:2", 17, 0.153530514563},
                      {"jaccard", 12, 0.391882656672}, {"balanced_accuracy", 10, 0.253375098939},
                      {"gtppr", 13, 0.240932615143},   {"gmean", 10, 0.254887449669},
                      {"hmean", 10, 0.256389095989}};
  for (const auto& row : rows) {
    const DecideMetric metric = DecideMetric::from_name(row.metric);
    for (const DecideMethod m : methods_for(row.metric, eta.size())) {
      SCOPED_TRACE(::testing::Message() << row.metric << " " << to_string(m));
      const Decision d = decide_independent(eta, metric, options_for(m));
      EXPECT_EQ(d.selected, iota_vec(row.k_star));
      EXPECT_NEAR(1 - d.expected, row.loss, 1e-11);
      if (std::string(row.metric) == "jaccard") {
        EXPECT_NEAR(1 - d.expected_by_k[20], 0.5, 1e-13 + d.error_bound);
      }
    }
  }
}

// Item 14b: eta_i = 0.5^(i/10), i = 1..100 (utilities).
TEST(IndependentOracles, Item14GeometricEta) {
  std::vector<double> eta(100);
  for (std::size_t i = 0; i < 100; ++i) eta[i] = std::pow(0.5, double(i + 1) / 10);
  struct Row {
    const char* metric;
    std::size_t k_star;
    double utility;
  };
  const Row rows[] = {{"f1", 16, 0.621531287098},
                      {"fbeta:2", 27, 0.709387786622},
                      {"fbeta:0.5", 9, 0.646148217528},
                      {"jaccard", 16, 0.457711246982}};
  for (const auto& row : rows) {
    const DecideMetric metric = DecideMetric::from_name(row.metric);
    for (const DecideMethod m : methods_for(row.metric, eta.size())) {
      SCOPED_TRACE(::testing::Message() << row.metric << " " << to_string(m));
      const Decision d = decide_independent(eta, metric, options_for(m));
      EXPECT_EQ(d.selected, iota_vec(row.k_star));
      EXPECT_NEAR(d.expected, row.utility, 1e-11);
      EXPECT_NEAR(d.expected_by_k[0], 4.780e-10, 0.001e-10);  // prod (1 - eta)
    }
  }
}

// Item 15: Natarajan's early stopping is not exact (regression test of the known failure).
TEST(IndependentOracles, Item15EarlyStoppingPicksTheWrongK) {
  struct Case {
    const char* metric;
    std::vector<double> eta;
    std::vector<double> losses;
    std::size_t exact_k;
    std::size_t heuristic_k;
  };
  const Case cases[] = {
      {"f1",
       {0.85, 0.38, 0.32, 0.32, 0.31, 0.02},
       {0.970921, 0.447676, 0.426478, 0.426852, 0.423593, 0.422178, 0.486216},
       5,
       2},
      {"jaccard",
       {0.84, 0.39, 0.37, 0.13, 0.12, 0.06},
       {0.955749, 0.508092, 0.510246, 0.506393, 0.582862, 0.633700, 0.681667},
       3,
       1},
  };
  for (const auto& c : cases) {
    const DecideMetric metric = DecideMetric::from_name(c.metric);
    for (const DecideMethod m : methods_for(c.metric, c.eta.size())) {
      SCOPED_TRACE(::testing::Message() << c.metric << " " << to_string(m));
      DecideOptions o = options_for(m);
      const Decision exact = decide_independent(c.eta, metric, o);
      for (std::size_t k = 0; k < c.losses.size(); ++k)
        EXPECT_NEAR(1 - exact.expected_by_k[k], c.losses[k], 5e-7) << "k " << k;
      EXPECT_EQ(exact.selected, iota_vec(c.exact_k));
      o.early_stop = true;
      const Decision heuristic = decide_independent(c.eta, metric, o);
      EXPECT_EQ(heuristic.selected, iota_vec(c.heuristic_k));
      EXPECT_NEAR(1 - heuristic.expected, c.losses[c.heuristic_k], 5e-7);
    }
  }
  // kExact really stops: nothing beyond heuristic_k + 1 is evaluated.
  DecideOptions o = options_for(DecideMethod::kExact);
  o.early_stop = true;
  const Decision d = decide_independent(cases[1].eta, DecideMetric::from_name("jaccard"), o);
  EXPECT_FALSE(std::isnan(d.expected_by_k[2]));
  EXPECT_TRUE(std::isnan(d.expected_by_k[3]));
}

// Item 17: invariance and edge cases.
TEST(IndependentOracles, Item17PermutationInvariance) {
  std::mt19937_64 rng(test_seed(17));
  for (const std::string& name : builtin_metric_names()) {
    const DecideMetric metric = DecideMetric::from_name(name);
    for (int it = 0; it < 5; ++it) {
      const std::size_t n = 30;
      const std::vector<double> p = uniform_probabilities(rng, n);  // distinct almost surely
      std::vector<std::size_t> perm = iota_vec(n);
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<double> q(n);
      for (std::size_t i = 0; i < n; ++i) q[i] = p[perm[i]];
      for (const DecideMethod m : {DecideMethod::kAuto, DecideMethod::kExact}) {
        const Decision a = decide_independent(p, metric, options_for(m));
        const Decision b = decide_independent(q, metric, options_for(m));
        EXPECT_EQ(a.expected_by_k, b.expected_by_k) << name;
        std::vector<std::size_t> mapped;
        for (const std::size_t i : b.selected) mapped.push_back(perm[i]);
        EXPECT_EQ(mapped, a.selected) << name;
      }
    }
  }
}

TEST(IndependentOracles, Item17TiesAndEdgeCases) {
  const DecideMetric f1 = DecideMetric::from_name("f1");
  for (const DecideMethod m : methods_for("f1", 5)) {
    SCOPED_TRACE(to_string(m));
    // Ties: lower index first, and the same E for any order of the tied items.
    const std::vector<double> tied{0.5, 0.3, 0.5, 0.3, 0.5};
    const Decision d = decide_independent(tied, f1, options_for(m));
    const std::vector<std::size_t> order{0, 2, 4, 1, 3};
    EXPECT_TRUE(std::equal(d.selected.begin(), d.selected.end(), order.begin()));
    const std::vector<double> tied2{0.3, 0.5, 0.5, 0.5, 0.3};
    const Decision d2 = decide_independent(tied2, f1, options_for(m));
    for (std::size_t k = 0; k <= 5; ++k)
      EXPECT_NEAR(d.expected_by_k[k], d2.expected_by_k[k], 1e-15);
    // n = 1 (kFast is within its reported bound, the others exact).
    const Decision one = decide_independent(std::vector<double>{0.7}, f1, options_for(m));
    EXPECT_EQ(one.selected, (std::vector<std::size_t>{0}));
    EXPECT_NEAR(one.expected, 0.7, 1e-15 + one.error_bound);
    EXPECT_NEAR(one.expected_by_k[0], 0.3, 1e-15);
    const Decision low = decide_independent(std::vector<double>{0.3}, f1, options_for(m));
    EXPECT_TRUE(low.selected.empty());
    EXPECT_NEAR(low.expected, 0.7, 1e-15);
    // All zero: the empty set is perfect; all one: everything.
    const Decision zeros = decide_independent(std::vector<double>(6, 0.0), f1, options_for(m));
    EXPECT_TRUE(zeros.selected.empty());
    EXPECT_EQ(zeros.expected, 1.0);
    const Decision ones = decide_independent(std::vector<double>(6, 1.0), f1, options_for(m));
    EXPECT_EQ(ones.selected, iota_vec(6));
    EXPECT_NEAR(ones.expected, 1.0, 1e-15 + ones.error_bound);
  }
}

// Large inputs take another sorting path (radix sort): ties still go by lower index first, and
// -0.0 counts as 0.
TEST(IndependentOracles, Item17TiesInLargeInputs) {
  std::mt19937_64 rng(test_seed(171));
  const double values[] = {0.9, 0.5, 0.1, 0.0, -0.0, 1.0, 0.7};
  std::vector<double> p(5000);
  for (auto& v : p) v = values[rng() % 7];
  std::vector<std::size_t> order = iota_vec(p.size());
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
  for (const char* name : {"f1", "gmean", "accuracy"}) {
    const Decision d = decide_independent(p, DecideMetric::from_name(name), {});
    ASSERT_FALSE(d.selected.empty()) << name;
    EXPECT_TRUE(std::equal(d.selected.begin(), d.selected.end(), order.begin())) << name;
  }
}

// Item 19: n = 2000 uniform: full tables and checkpointing agree (both multiply only).
TEST(IndependentOracles, Item19TablesVersusCheckpointing) {
  std::mt19937_64 rng(test_seed(19));
  const std::vector<double> p = [&] {
    auto v = uniform_probabilities(rng, 2000);
    std::sort(v.begin(), v.end(), std::greater<>());
    return v;
  }();
  const DecideMetric f1 = DecideMetric::from_name("f1");
  const auto table = detail::expected_quadratic(p, f1, p.size() + 1);
  const auto check = detail::expected_quadratic(p, f1, 45);
  ASSERT_TRUE(table && check);
  for (std::size_t k = 0; k <= p.size(); ++k)
    ASSERT_NEAR(table->expected[k], check->expected[k], 1e-12) << k;
  // And against the quadrature and the exact Algorithm 1 (truncated at 1e-15 for speed).
  const auto fast = detail::expected_fast(p, f1, 1e-12);
  ASSERT_TRUE(fast);
  detail::ExactConfig config;
  config.truncation = 1e-15;
  config.block = 45;
  const auto exact = detail::expected_exact(p, f1, config);
  for (std::size_t k = 0; k <= p.size(); ++k) {
    ASSERT_NEAR(fast->expected[k], table->expected[k], fast->error_bound) << k;
    ASSERT_NEAR(exact.expected[k], table->expected[k], 1e-12 + exact.error_bound) << k;
  }
}

}  // namespace
}  // namespace rateopt
