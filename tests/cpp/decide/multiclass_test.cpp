// decide_multiclass: the worked example of the notes (section 6 item 11), GFM with only the
// cardinality-1 column, brute force over all 2^n class subsets for every built-in metric,
// validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"

namespace rateopt {
namespace {

Decision multiclass(const std::vector<double>& q, const std::string& metric) {
  DecideOptions options;
  options.all_k = true;
  return decide_multiclass(q, DecideMetric::from_name(metric), options);
}

const std::vector<std::string> kMetrics{
    "f1",    "fbeta:0.5", "fbeta:2", "jaccard", "balanced_accuracy",
    "gmean", "hmean",     "gtppr",   "accuracy"};

// Notes 6 item 11: p = (0.5, 0.3, 0.2), losses = 1 - utility for k = 0..3.
TEST(DecideMulticlass, NotesExample) {
  const std::vector<double> q{0.3, 0.5, 0.2};  // permuted: class 1 is the most probable
  struct Case {
    std::string metric;
    std::vector<double> loss;
    std::size_t k;
  };
  const std::vector<Case> cases{
      {"f1", {1, 0.5, 7.0 / 15, 0.5}, 2},
      {"jaccard", {1, 0.5, 0.6, 2.0 / 3}, 1},
      {"balanced_accuracy", {0.5, 0.375, 0.4, 0.5}, 1},
      {"gtppr", {1, 0.5, 1 - 0.8 / std::sqrt(2.0), 1 - 1 / std::sqrt(3.0)}, 3},
  };
  const std::vector<std::size_t> order{1, 0, 2};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.metric);
    const Decision d = multiclass(q, c.metric);
    ASSERT_EQ(d.expected_by_k.size(), 4U);
    for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(1 - d.expected_by_k[k], c.loss[k], 1e-15);
    EXPECT_EQ(d.selected, std::vector<std::size_t>(order.begin(), order.begin() + c.k));
    EXPECT_NEAR(1 - d.expected, c.loss[c.k], 1e-15);
  }
  // The quoted 6-digit values.
  EXPECT_NEAR(1 - multiclass(q, "gtppr").expected_by_k[2], 0.434315, 5e-7);
  EXPECT_NEAR(1 - multiclass(q, "gtppr").expected_by_k[3], 0.422650, 5e-7);
}

// True when the best expectation beats every other k by more than rounding.
bool clear_winner(const std::vector<double>& e) {
  const auto best = std::max_element(e.begin(), e.end());
  for (auto it = e.begin(); it != e.end(); ++it)
    if (it != best && *it > *best - 1e-12) return false;
  return true;
}

// del Coz: F1-optimal k is the first k with sum_{j<=k} p_j >= (k+1) p_{k+1}; E_k = 2 Q_k/(1+k).
// GFM with only column s = 1 (p_i1 = q_i, p0 = 0) is the same problem (also for F-beta).
TEST(DecideMulticlass, EqualsGfmWithCardinalityOne) {
  std::mt19937_64 rng(404);
  std::exponential_distribution<double> gamma1(1.0);
  for (int t = 0; t < 300; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    const std::size_t n = 1 + rng() % 40;
    std::vector<double> q(n);
    for (auto& x : q) x = (rng() % 5 == 0) ? 0.0 : gamma1(rng);
    if (t % 7 == 0)
      for (auto& x : q) x = std::round(x);  // ties
    if (std::accumulate(q.begin(), q.end(), 0.0) == 0) q[0] = 1;
    const double total = std::accumulate(q.begin(), q.end(), 0.0);
    for (auto& x : q) x /= total;
    GfmInput in;
    in.m = n;
    in.p.assign(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i) in.p[i * n] = q[i];
    for (const std::string metric : {"f1", "fbeta:2", "fbeta:0.5"}) {
      const Decision mc = multiclass(q, metric);
      DecideOptions options;
      options.all_k = true;
      const Decision g = decide_gfm(in, DecideMetric::from_name(metric), options);
      for (std::size_t k = 0; k <= n; ++k)
        EXPECT_NEAR(mc.expected_by_k[k], g.expected_by_k[k], 1e-14) << metric << " k=" << k;
      if (clear_winner(mc.expected_by_k)) {
        EXPECT_EQ(mc.selected.size(), g.selected.size()) << metric;
      }
      EXPECT_NEAR(mc.expected, g.expected, 1e-14) << metric;
    }
    // F1 values and the del Coz stopping rule.
    const Decision f1 = multiclass(q, "f1");
    std::vector<double> sorted = q;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    double prefix = 0;
    for (std::size_t k = 1; k <= n; ++k) {
      prefix += sorted[k - 1];
      EXPECT_NEAR(f1.expected_by_k[k], 2 * prefix / static_cast<double>(1 + k), 1e-14);
    }
    std::size_t del_coz = n;
    prefix = 0;
    for (std::size_t k = 1; k < n; ++k) {
      prefix += sorted[k - 1];
      if (prefix >= static_cast<double>(k + 1) * sorted[k]) {
        del_coz = k;
        break;
      }
    }
    EXPECT_NEAR(f1.expected, f1.expected_by_k[del_coz], 1e-14);
    if (clear_winner(f1.expected_by_k)) {
      EXPECT_EQ(f1.selected.size(), del_coz);
    }
  }
}

// E over the truth c ~ q of the metric of prediction h (bit i = class i), counts taken directly.
double expected_of_subset(const std::vector<double>& q, std::uint32_t h, const DecideMetric& m) {
  const auto n = static_cast<double>(q.size());
  const auto k = static_cast<double>(std::popcount(h));
  double e = 0;
  for (std::size_t c = 0; c < q.size(); ++c) {
    const double tp = ((h >> c) & 1U) ? 1 : 0;
    const double fn = 1 - tp;
    const double fp = k - tp;
    const double tn = n - tp - fp - fn;
    e += q[c] * m.utility(tp, fp, fn, tn);
  }
  return e;
}

TEST(DecideMulticlass, BruteForceEveryMetric) {
  std::mt19937_64 rng(8080);
  std::exponential_distribution<double> gamma1(1.0);
  for (int t = 0; t < 120; ++t) {
    const std::size_t n = 1 + static_cast<std::size_t>(t) % 12;
    std::vector<double> q(n);
    for (auto& x : q) x = (rng() % 4 == 0) ? 0.0 : gamma1(rng);
    if (t % 5 == 0)
      for (auto& x : q) x = std::round(2 * x);  // ties
    if (t % 11 == 3) {
      q.assign(n, 0.0);
      q[rng() % n] = 1;  // a certain class
    }
    if (std::accumulate(q.begin(), q.end(), 0.0) == 0) q[0] = 1;
    const double total = std::accumulate(q.begin(), q.end(), 0.0);
    for (auto& x : q) x /= total;
    for (const auto& name : kMetrics) {
      SCOPED_TRACE("trial " + std::to_string(t) + " " + name);
      const auto metric = DecideMetric::from_name(name);
      std::vector<double> best_by_k(n + 1, -1e300);
      double best = -1e300;
      for (std::uint32_t h = 0; h < (1U << n); ++h) {
        const double e = expected_of_subset(q, h, metric);
        auto& slot = best_by_k[static_cast<std::size_t>(std::popcount(h))];
        slot = std::max(slot, e);
        best = std::max(best, e);
      }
      const Decision d = multiclass(q, name);
      for (std::size_t k = 0; k <= n; ++k) EXPECT_NEAR(d.expected_by_k[k], best_by_k[k], 1e-14);
      EXPECT_NEAR(d.expected, best, 1e-14);
      std::uint32_t h = 0;
      for (const std::size_t i : d.selected) h |= 1U << i;
      EXPECT_EQ(static_cast<std::size_t>(std::popcount(h)), d.selected.size());
      EXPECT_NEAR(expected_of_subset(q, h, metric), d.expected, 1e-14);
      for (std::size_t k = 0; k < d.selected.size(); ++k)
        EXPECT_LT(d.expected_by_k[k], d.expected);           // smallest k on ties
      for (std::size_t u = 1; u < d.selected.size(); ++u) {  // by decreasing q, ties lower index
        const std::size_t a = d.selected[u - 1];
        const std::size_t b = d.selected[u];
        EXPECT_TRUE(q[a] > q[b] || (q[a] == q[b] && a < b));
      }
    }
  }
}

TEST(DecideMulticlass, CustomMetricAndSmallCases) {
  // A custom utility sees the same counts: here tp - 0.1 fp.
  const auto custom = DecideMetric::custom(
      "tp_minus", [](double tp, double fp, double, double) { return tp - 0.1 * fp; });
  DecideOptions options;
  options.all_k = true;
  const Decision d = decide_multiclass(std::vector<double>{0.6, 0.05, 0.35}, custom, options);
  // E[k] = Q_k - 0.1 (k - Q_k): 0, 0.6, 0.95 - 0.1 * 1.05, 1 - 0.2.
  EXPECT_NEAR(d.expected_by_k[0], 0.0, 1e-15);
  EXPECT_NEAR(d.expected_by_k[1], 0.56, 1e-15);
  EXPECT_NEAR(d.expected_by_k[2], 0.95 - 0.105, 1e-15);
  EXPECT_NEAR(d.expected_by_k[3], 0.8, 1e-15);
  EXPECT_EQ(d.selected, (std::vector<std::size_t>{0, 2}));
  // n = 1: the only class is certain; F1 of {0} is 1.
  const Decision one = multiclass({1.0}, "f1");
  EXPECT_EQ(one.selected, std::vector<std::size_t>{0});
  EXPECT_EQ(one.expected, 1.0);
  EXPECT_EQ(one.expected_by_k, (std::vector<double>{0.0, 1.0}));
  // Sums within 1e-6 of 1 are accepted and normalised.
  const Decision near = multiclass({0.5 + 4e-7, 0.5}, "f1");
  EXPECT_NEAR(near.expected_by_k[2], 2.0 / 3, 1e-15);
  // Without all_k the vector stays empty.
  EXPECT_TRUE(decide_multiclass(std::vector<double>{0.5, 0.5}, DecideMetric::from_name("f1"))
                  .expected_by_k.empty());
}

TEST(DecideMulticlass, BadInputThrows) {
  const auto f1 = DecideMetric::from_name("f1");
  const auto run = [&](std::vector<double> q) { return decide_multiclass(q, f1); };
  EXPECT_THROW((void)run({}), InvalidArgument);
  EXPECT_THROW((void)run({0.5, std::nan("")}), InvalidArgument);
  EXPECT_THROW((void)run({1.2, -0.2}), InvalidArgument);
  EXPECT_THROW((void)run({0.5, 0.4}), InvalidArgument);
  EXPECT_THROW((void)run({0.5, 0.5 + 2e-6}), InvalidArgument);
  EXPECT_THROW((void)run({std::numeric_limits<double>::infinity(), 0.0}), InvalidArgument);
  DecideOptions brute;
  brute.method = DecideMethod::kBrute;
  EXPECT_THROW((void)decide_multiclass(std::vector<double>{0.5, 0.5}, f1, brute), InvalidArgument);
  const auto nan_metric =
      DecideMetric::custom("nan", [](double, double, double, double) { return std::nan(""); });
  EXPECT_THROW((void)decide_multiclass(std::vector<double>{0.5, 0.5}, nan_metric), InvalidArgument);
}

}  // namespace
}  // namespace rateopt
