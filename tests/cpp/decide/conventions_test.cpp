// The user-chosen conventions of decide (DecideOptions::empty_score and none_item, issue 12 item 4)
// against brute force over all subsets, written from the definitions on sets (not from the
// library's confusion-count code): every method, F-beta and Jaccard; GFM and multiclass under
// empty_score; the tie rule across methods (issue 12 item 5).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "independent_test_util.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"

namespace rateopt {
namespace {

using testing_decide::random_probabilities;
using testing_decide::test_seed;
using testing_decide::uniform_probabilities;

// A prediction or truth over items 0..n-1 (bits) and the None pseudo-item.
struct ItemSet {
  std::uint32_t items = 0;
  bool none = false;
};

int count(const ItemSet& s) {
  return std::popcount(s.items) + (s.none ? 1 : 0);
}

// F-beta or Jaccard of a prediction against a truth, from the sets; `empty` = the value when both
// are empty.
double set_metric(const std::string& name, double beta, const ItemSet& pred, const ItemSet& truth,
                  double empty) {
  const int hit = std::popcount(pred.items & truth.items) + (pred.none && truth.none ? 1 : 0);
  const int np = count(pred);
  const int nt = count(truth);
  if (np + nt == 0) return empty;
  if (name == "jaccard") return double(hit) / double(np + nt - hit);
  const double b2 = beta * beta;
  return (1 + b2) * hit / (b2 * nt + np);
}

// E[metric(pred)] over the 2^n outcomes of independent items; with `none_label` the truth holds
// None iff no item is positive.
double oracle(const std::vector<double>& p, const std::string& name, double beta,
              const ItemSet& pred, double empty, bool none_label) {
  const std::size_t n = p.size();
  double e = 0;
  for (std::uint32_t y = 0; y < (std::uint32_t{1} << n); ++y) {
    double prob = 1;
    for (std::size_t i = 0; i < n; ++i) prob *= (y >> i) & 1u ? p[i] : 1 - p[i];
    if (prob == 0) continue;
    const ItemSet truth{y, none_label && y == 0};
    e += prob * set_metric(name, beta, pred, truth, empty);
  }
  return e;
}

// The library's order: decreasing probability, lower index first.
std::vector<std::size_t> sorted_order(const std::vector<double>& p) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return p[a] > p[b]; });
  return order;
}

std::uint32_t top_k_bits(const std::vector<std::size_t>& order, std::size_t k) {
  std::uint32_t bits = 0;
  for (std::size_t t = 0; t < k; ++t) bits |= std::uint32_t{1} << order[t];
  return bits;
}

std::uint32_t bits_of(const std::vector<std::size_t>& selected) {
  std::uint32_t bits = 0;
  for (const std::size_t i : selected) bits |= std::uint32_t{1} << i;
  return bits;
}

struct Case {
  std::string name;  // metric spec
  std::string family;
  double beta;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c{{"f1", "f", 1.0},
                                   {"fbeta:2", "f", 2.0},
                                   {"fbeta:0.5", "f", 0.5},
                                   {"fbeta:1.7", "f", 1.7},
                                   {"jaccard", "jaccard", 1.0}};
  return c;
}

const DecideMethod kMethods[] = {DecideMethod::kBrute, DecideMethod::kExact,
                                 DecideMethod::kQuadratic, DecideMethod::kFast,
                                 DecideMethod::kAuto};

// empty_score 0 and 1, every method, F-beta and Jaccard: the chosen set is optimal over all 2^n
// subsets, `expected` is its expectation and expected_by_k[k] that of the top-k set.
TEST(DecideConventions, EmptyScoreAgainstAllSubsets) {
  const std::uint64_t seed = test_seed(1201);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int t = 0; t < 160; ++t) {
    const std::size_t n = static_cast<std::size_t>(t % 9);
    std::vector<double> p = t % 5 == 4 ? std::vector<double>(n, 0.02)  // P(y = 0) large
                                       : random_probabilities(rng, n);
    if (t % 7 == 3)
      for (auto& v : p) v *= 0.05;  // few positives: the empty set competes
    const auto order = sorted_order(p);
    for (const Case& c : cases()) {
      const DecideMetric metric = DecideMetric::from_name(c.name);
      for (const double empty : {0.0, 1.0}) {
        double best = -1;
        for (std::uint32_t s = 0; s < (std::uint32_t{1} << n); ++s)
          best = std::max(best, oracle(p, c.family, c.beta, ItemSet{s, false}, empty, false));
        for (const DecideMethod method : kMethods) {
          DecideOptions options;
          options.method = method;
          options.empty_score = empty;
          options.all_k = true;
          SCOPED_TRACE(c.name + " empty " + std::to_string(empty) + " method " +
                       std::string(to_string(method)) + " n " + std::to_string(n) + " t " +
                       std::to_string(t));
          const Decision d = decide_independent(p, metric, options);
          const double tol = 1e-9 + d.error_bound;
          const double got =
              oracle(p, c.family, c.beta, ItemSet{bits_of(d.selected), false}, empty, false);
          EXPECT_NEAR(got, best, tol);
          EXPECT_NEAR(d.expected, best, tol);
          ASSERT_EQ(d.expected_by_k.size(), n + 1);
          for (std::size_t k = 0; k <= n; ++k)
            EXPECT_NEAR(
                d.expected_by_k[k],
                oracle(p, c.family, c.beta, ItemSet{top_k_bits(order, k), false}, empty, false),
                tol)
                << "k " << k;
          EXPECT_FALSE(d.none);
        }
      }
    }
  }
}

// With empty_score 0 the empty set scores 0, so with few positives a non-empty set wins where the
// default picks the empty set.
TEST(DecideConventions, EmptyScoreZeroChangesTheDecision) {
  const std::vector<double> p{0.1, 0.05, 0.02};
  const DecideMetric f1 = DecideMetric::from_name("f1");
  DecideOptions options;
  options.all_k = true;
  const Decision one = decide_independent(p, f1, options);
  EXPECT_TRUE(one.selected.empty());
  EXPECT_NEAR(one.expected, 0.9 * 0.95 * 0.98, 1e-15);
  options.empty_score = 0;
  const Decision zero = decide_independent(p, f1, options);
  EXPECT_EQ(zero.selected, (std::vector<std::size_t>{0, 1}));  // 0.097847 vs 0.097683 for {0}
  EXPECT_EQ(zero.expected_by_k[0], 0.0);
  for (std::size_t k = 1; k <= 3; ++k) EXPECT_EQ(zero.expected_by_k[k], one.expected_by_k[k]);
  // n = 0: the empty prediction against the empty truth.
  EXPECT_EQ(decide_independent({}, f1, options).expected, 0.0);
  options.empty_score = 1;
  EXPECT_EQ(decide_independent({}, f1, options).expected, 1.0);
}

// The None pseudo-item: every subset of items + {None} enumerated; every method, F-beta and
// Jaccard; the chosen (set, None) is optimal; expected_by_k / expected_by_k_none are the top-k
// sets without / with None.
TEST(DecideConventions, NoneItemAgainstAllSubsets) {
  const std::uint64_t seed = test_seed(1202);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int t = 0; t < 160; ++t) {
    const std::size_t n = static_cast<std::size_t>(t % 9);
    std::vector<double> p = random_probabilities(rng, n);
    if (t % 3 == 1)
      for (auto& v : p) v *= 0.2;  // P(y = 0) large: None competes
    const auto order = sorted_order(p);
    for (const Case& c : cases()) {
      const DecideMetric metric = DecideMetric::from_name(c.name);
      double best = -1;
      for (std::uint32_t s = 0; s < (std::uint32_t{1} << n); ++s)
        for (const bool none : {false, true})
          best = std::max(best, oracle(p, c.family, c.beta, ItemSet{s, none}, 1.0, true));
      for (const DecideMethod method : kMethods) {
        for (const double empty : {0.0, 1.0}) {  // does not apply: the truth is never empty
          DecideOptions options;
          options.method = method;
          options.none_item = true;
          options.empty_score = empty;
          options.all_k = true;
          SCOPED_TRACE(c.name + " method " + std::string(to_string(method)) + " n " +
                       std::to_string(n) + " t " + std::to_string(t));
          const Decision d = decide_independent(p, metric, options);
          const double tol = 1e-9 + d.error_bound;
          const double got =
              oracle(p, c.family, c.beta, ItemSet{bits_of(d.selected), d.none}, 1.0, true);
          EXPECT_NEAR(got, best, tol);
          EXPECT_NEAR(d.expected, best, tol);
          ASSERT_EQ(d.expected_by_k.size(), n + 1);
          ASSERT_EQ(d.expected_by_k_none.size(), n + 1);
          for (std::size_t k = 0; k <= n; ++k) {
            const std::uint32_t top = top_k_bits(order, k);
            EXPECT_NEAR(d.expected_by_k[k],
                        oracle(p, c.family, c.beta, ItemSet{top, false}, 1, true), tol)
                << "k " << k;
            EXPECT_NEAR(d.expected_by_k_none[k],
                        oracle(p, c.family, c.beta, ItemSet{top, true}, 1, true), tol)
                << "k " << k;
          }
        }
      }
    }
  }
}

// Worked example: one item, p = 0.3. {0}: 0.3; {None}: 0.7; {0, None}: 0.3 * 2/3 + 0.7 * 2/3 =
// 2/3. None alone wins; with p = 0.6: {0} 0.6, {None} 0.4, {0, None} 2/3 wins.
TEST(DecideConventions, NoneItemWorkedExample) {
  const DecideMetric f1 = DecideMetric::from_name("f1");
  DecideOptions options;
  options.none_item = true;
  const Decision low = decide_independent(std::vector<double>{0.3}, f1, options);
  EXPECT_TRUE(low.selected.empty());
  EXPECT_TRUE(low.none);
  EXPECT_NEAR(low.expected, 0.7, 1e-15);
  const Decision high = decide_independent(std::vector<double>{0.6}, f1, options);
  EXPECT_EQ(high.selected, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(high.none);
  EXPECT_NEAR(high.expected, 2.0 / 3, 1e-15);
  const Decision sure = decide_independent(std::vector<double>{0.99, 0.98}, f1, options);
  EXPECT_EQ(sure.selected, (std::vector<std::size_t>{0, 1}));
  EXPECT_FALSE(sure.none);
  const Decision nothing = decide_independent({}, f1, options);  // n = 0: {None} is right
  EXPECT_TRUE(nothing.none);
  EXPECT_EQ(nothing.expected, 1.0);
}

// Larger n: exact, quadratic and fast agree under both conventions (within the fast bound), and
// pick the same set.
TEST(DecideConventions, MethodsAgreeAtLargerN) {
  std::mt19937_64 rng(test_seed(1203));
  for (const std::size_t n : {std::size_t{60}, std::size_t{400}, std::size_t{3000}}) {
    std::vector<double> p = uniform_probabilities(rng, n);
    for (auto& v : p) v = std::pow(v, 6.0) * 0.5;  // mostly small: P(y = 0) not negligible
    for (const char* name : {"f1", "jaccard", "fbeta:2"}) {
      const DecideMetric metric = DecideMetric::from_name(name);
      for (const bool none : {false, true}) {
        for (const double empty : {0.0, 1.0}) {
          DecideOptions base;
          base.none_item = none;
          base.empty_score = empty;
          base.all_k = true;
          std::vector<Decision> ds;
          for (const DecideMethod m :
               {DecideMethod::kQuadratic, DecideMethod::kFast, DecideMethod::kExact}) {
            if (m == DecideMethod::kExact && n > 400) continue;
            DecideOptions o = base;
            o.method = m;
            ds.push_back(decide_independent(p, metric, o));
          }
          SCOPED_TRACE(std::string(name) + " n " + std::to_string(n) + " none " +
                       std::to_string(none) + " empty " + std::to_string(empty));
          for (std::size_t i = 1; i < ds.size(); ++i) {
            const double tol = 1e-11 + ds[i].error_bound + ds[0].error_bound;
            EXPECT_EQ(ds[i].selected, ds[0].selected);
            EXPECT_EQ(ds[i].none, ds[0].none);
            for (std::size_t k = 0; k <= n; ++k) {
              EXPECT_NEAR(ds[i].expected_by_k[k], ds[0].expected_by_k[k], tol);
              if (none) {
                EXPECT_NEAR(ds[i].expected_by_k_none[k], ds[0].expected_by_k_none[k], tol);
              }
            }
          }
        }
      }
    }
  }
}

// GFM: the empty set scores empty_score * P(y = 0); brute force over all 2^m predictions of an
// arbitrary joint distribution (a few support points), P and samples paths.
TEST(DecideConventions, GfmEmptyScoreAgainstAllPredictions) {
  std::mt19937_64 rng(test_seed(1204));
  std::uniform_real_distribution<double> unit(0, 1);
  for (int t = 0; t < 200; ++t) {
    const std::size_t m = 1 + static_cast<std::size_t>(t % 6);
    const std::size_t support = 1 + static_cast<std::size_t>(t % 5);
    std::vector<std::int64_t> indptr{0};
    std::vector<std::int32_t> indices;
    std::vector<double> weights;
    std::vector<std::uint32_t> vectors;
    for (std::size_t j = 0; j < support; ++j) {
      std::uint32_t y = 0;
      if (unit(rng) > 0.35)  // the empty vector often
        for (std::size_t i = 0; i < m; ++i)
          if (unit(rng) < 0.4) y |= std::uint32_t{1} << i;
      vectors.push_back(y);
      for (std::size_t i = 0; i < m; ++i)
        if ((y >> i) & 1u) indices.push_back(static_cast<std::int32_t>(i));
      indptr.push_back(static_cast<std::int64_t>(indices.size()));
      weights.push_back(0.1 + unit(rng));
    }
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    const LabelSetsView view{indptr, indices, m};
    for (const char* name : {"f1", "fbeta:2"}) {
      const DecideMetric metric = DecideMetric::from_name(name);
      const double beta = metric.beta();
      for (const double empty : {0.0, 1.0}) {
        double best = -1;
        for (std::uint32_t h = 0; h < (std::uint32_t{1} << m); ++h) {
          double e = 0;
          for (std::size_t j = 0; j < support; ++j)
            e += weights[j] / total *
                 set_metric("f", beta, ItemSet{h, false}, ItemSet{vectors[j], false}, empty);
          best = std::max(best, e);
        }
        DecideOptions options;
        options.empty_score = empty;
        options.all_k = true;
        const Decision a = decide_gfm(gfm_from_samples(view, weights, m), metric, options);
        const Decision b = decide_gfm_samples(view, weights, m, metric, options);
        double got = 0;
        for (std::size_t j = 0; j < support; ++j)
          got += weights[j] / total *
                 set_metric("f", beta, ItemSet{bits_of(a.selected), false},
                            ItemSet{vectors[j], false}, empty);
        SCOPED_TRACE(std::string(name) + " t " + std::to_string(t) + " empty " +
                     std::to_string(empty));
        EXPECT_NEAR(a.expected, best, 1e-12);
        EXPECT_NEAR(got, best, 1e-12);
        EXPECT_EQ(a.selected, b.selected);
        EXPECT_EQ(a.expected, b.expected);
      }
    }
  }
}

// Multiclass: the truth is never empty, so empty_score changes nothing; none_item is refused.
TEST(DecideConventions, MulticlassAndBadOptions) {
  const std::vector<double> q{0.5, 0.3, 0.2};
  const DecideMetric f1 = DecideMetric::from_name("f1");
  DecideOptions zero;
  zero.empty_score = 0;
  zero.all_k = true;
  DecideOptions one = zero;
  one.empty_score = 1;
  EXPECT_EQ(decide_multiclass(q, f1, zero).expected_by_k,
            decide_multiclass(q, f1, one).expected_by_k);

  const std::vector<double> p{0.5, 0.2};
  DecideOptions bad;
  bad.empty_score = 0;
  EXPECT_THROW((void)decide_independent(p, DecideMetric::from_name("balanced_accuracy"), bad),
               InvalidArgument);
  bad.empty_score = 1.5;
  EXPECT_THROW((void)decide_independent(p, f1, bad), InvalidArgument);
  DecideOptions none;
  none.none_item = true;
  EXPECT_THROW((void)decide_multiclass(q, f1, none), InvalidArgument);
  EXPECT_THROW((void)decide_independent(p, DecideMetric::from_name("gmean"), none),
               InvalidArgument);
  none.early_stop = true;
  EXPECT_THROW((void)decide_independent(p, f1, none), InvalidArgument);
  GfmInput g;
  g.m = 1;
  g.p = {0.5};
  g.p_zero = 0.5;
  none.early_stop = false;
  EXPECT_THROW((void)decide_gfm(g, f1, none), InvalidArgument);
}

// Ties (issue 12 item 5): balanced accuracy of items that are all 1/2 has the same expectation
// for every k (exactly, algebraically); every method returns the smallest k, 0, at sizes where
// the O(n^2) methods' rounding exceeds 8 ulp and the fast path's error bound is ~5e-13.
TEST(DecideConventions, ExactTiesResolveTheSameWayAcrossMethods) {
  const DecideMetric ba = DecideMetric::from_name("balanced_accuracy");
  for (const std::size_t n : {std::size_t{50}, std::size_t{1000}, std::size_t{20000}}) {
    const std::vector<double> p(n, 0.5);
    for (const DecideMethod m : {DecideMethod::kExact, DecideMethod::kQuadratic,
                                 DecideMethod::kFast, DecideMethod::kAuto}) {
      if (m == DecideMethod::kExact && n > 1000) continue;
      DecideOptions o;
      o.method = m;
      o.all_k = true;
      const Decision d = decide_independent(p, ba, o);
      SCOPED_TRACE("n " + std::to_string(n) + " method " + std::string(to_string(m)));
      EXPECT_TRUE(d.selected.empty());
      const auto [lo, hi] = std::minmax_element(d.expected_by_k.begin(), d.expected_by_k.end());
      EXPECT_LE(*hi - *lo, 2 * d.error_bound + 1e-11);  // all tied up to the method's error
    }
  }
  // A real difference above the tolerance still wins: one item at 0.5 + 1e-6 among 1/2's.
  std::vector<double> p(1000, 0.5);
  p[7] = 0.5 + 1e-6;
  for (const DecideMethod m : {DecideMethod::kQuadratic, DecideMethod::kFast}) {
    DecideOptions o;
    o.method = m;
    const Decision d = decide_independent(p, ba, o);
    EXPECT_EQ(d.selected, (std::vector<std::size_t>{7})) << to_string(m);
  }
}

}  // namespace
}  // namespace rateopt
