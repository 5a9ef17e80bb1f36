// decide_gfm and gfm_from_samples: brute force over all 2^m predictions and outcomes, product
// distributions against the independence expectations, the worked examples and regret witnesses
// of the design notes (decide-notes.md sections 3.2, 4.6, 6 items 3-10), validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "decide/gfm_internal.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"

namespace rateopt {
namespace {

using Mask = std::uint32_t;

// A joint distribution over label vectors {0,1}^m (bit i of a mask = label i), as its support.
struct Joint {
  std::size_t m = 0;
  std::vector<std::pair<Mask, double>> support;

  void add(Mask y, double mass) {
    for (auto& [z, w] : support)
      if (z == y) {
        w += mass;
        return;
      }
    support.emplace_back(y, mass);
  }
};

Mask mask_of(std::initializer_list<int> labels) {
  Mask y = 0;
  for (const int i : labels) y |= Mask{1} << i;
  return y;
}

Mask mask_of(const std::vector<std::size_t>& labels) {
  Mask y = 0;
  for (const std::size_t i : labels) y |= Mask{1} << i;
  return y;
}

// Owning CSR label sets (as LabelSetsView wants them), with the label vectors as masks.
struct Samples {
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<Mask> masks;
  std::size_t m = 0;

  void add(Mask y) {
    for (std::size_t i = 0; i < m; ++i)
      if ((y >> i) & 1U) indices.push_back(static_cast<std::int32_t>(i));
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
    masks.push_back(y);
  }
  [[nodiscard]] LabelSetsView view() const { return LabelSetsView{indptr, indices, m}; }
};

// F-beta of truth y and prediction h, F(empty, empty) = 1.
double fbeta(Mask y, Mask h, double b2) {
  const int sy = std::popcount(y);
  const int sh = std::popcount(h);
  if (sy + sh == 0) return 1.0;
  return (1 + b2) * std::popcount(y & h) / (b2 * sy + sh);
}

double expected_f(const Joint& joint, Mask h, double b2) {
  double e = 0;
  for (const auto& [y, w] : joint.support) e += w * fbeta(y, h, b2);
  return e;
}

// P(y_i = 1, s_y = s) and P(y = 0) of a joint distribution.
GfmInput gfm_input_of(const Joint& joint) {
  GfmInput in;
  in.m = joint.m;
  in.p.assign(joint.m * joint.m, 0.0);
  for (const auto& [y, w] : joint.support) {
    const int s = std::popcount(y);
    if (s == 0) in.p_zero += w;
    for (std::size_t i = 0; i < joint.m; ++i)
      if ((y >> i) & 1U) in.p[i * joint.m + static_cast<std::size_t>(s) - 1] += w;
  }
  return in;
}

// The best expected F over all predictions of each size k, and over all 2^m predictions.
struct Brute {
  std::vector<double> best_by_k;
  double best = -1;
};

Brute brute(const Joint& joint, double b2) {
  Brute out;
  out.best_by_k.assign(joint.m + 1, -1.0);
  for (Mask h = 0; h < (Mask{1} << joint.m); ++h) {
    const double e = expected_f(joint, h, b2);
    auto& slot = out.best_by_k[static_cast<std::size_t>(std::popcount(h))];
    slot = std::max(slot, e);
    out.best = std::max(out.best, e);
  }
  return out;
}

Decision gfm(const GfmInput& in, const std::string& metric) {
  DecideOptions options;
  options.all_k = true;
  return decide_gfm(in, DecideMetric::from_name(metric), options);
}

struct BetaCase {
  std::string metric;
  double b2;
};
const std::vector<BetaCase> kBetas{{"f1", 1.0}, {"fbeta:0.5", 0.25}, {"fbeta:2", 4.0}};

// Random joint distribution: Dirichlet(1) weights on a random part of {0,1}^m, sometimes with
// the all-zero vector, sometimes without; some instances are sparse.
Joint random_joint(std::mt19937_64& rng, std::size_t m) {
  std::exponential_distribution<double> gamma1(1.0);
  std::uniform_real_distribution<double> unit(0, 1);
  const double keep = unit(rng) < 0.5 ? 1.0 : 0.1 + 0.5 * unit(rng);
  const int zero_mode = static_cast<int>(rng() % 3);  // 0: no mass on y = 0, 1: random, 2: heavy
  Joint joint;
  joint.m = m;
  double total = 0;
  for (Mask y = 0; y < (Mask{1} << m); ++y) {
    double w = unit(rng) < keep ? gamma1(rng) : 0.0;
    if (y == 0) w = zero_mode == 0 ? 0.0 : (zero_mode == 2 ? 5 * gamma1(rng) + 1 : gamma1(rng));
    if (w > 0) joint.support.emplace_back(y, w);
    total += w;
  }
  if (total == 0) {
    joint.support.emplace_back(Mask{1}, 1.0);
    total = 1;
  }
  for (auto& yw : joint.support) yw.second /= total;
  return joint;
}

void expect_matches_brute(const Joint& joint, const BetaCase& beta, double tol) {
  const Decision d = gfm(gfm_input_of(joint), beta.metric);
  const Brute b = brute(joint, beta.b2);
  ASSERT_EQ(d.expected_by_k.size(), joint.m + 1);
  for (std::size_t k = 0; k <= joint.m; ++k)
    EXPECT_NEAR(d.expected_by_k[k], b.best_by_k[k], tol) << "k = " << k;
  EXPECT_NEAR(d.expected, b.best, tol);
  // The returned set is a real set of the chosen size and achieves the reported value.
  const Mask h = mask_of(d.selected);
  EXPECT_EQ(static_cast<std::size_t>(std::popcount(h)), d.selected.size());
  EXPECT_NEAR(expected_f(joint, h, beta.b2), d.expected, tol);
  // Smallest k on ties.
  for (std::size_t k = 0; k < d.selected.size(); ++k)
    EXPECT_LT(d.expected_by_k[k], d.expected) << "k = " << k;
  // Without all_k: the same decision, no vector.
  const Decision plain = decide_gfm(gfm_input_of(joint), DecideMetric::from_name(beta.metric));
  EXPECT_EQ(plain.selected, d.selected);
  EXPECT_EQ(plain.expected, d.expected);
  EXPECT_TRUE(plain.expected_by_k.empty());
}

// ---- brute force ------------------------------------------------------------------------------

TEST(GfmBrute, ArbitraryJointDistributions) {
  for (const auto& beta : kBetas) {
    for (std::size_t m = 1; m <= 10; ++m) {
      const int trials = m <= 7 ? 25 : (m <= 9 ? 4 : 2);
      for (int t = 0; t < trials; ++t) {
        const std::uint64_t seed = 1000 * m + static_cast<std::uint64_t>(t);
        SCOPED_TRACE(beta.metric + " m=" + std::to_string(m) + " seed=" + std::to_string(seed));
        std::mt19937_64 rng(seed);
        expect_matches_brute(random_joint(rng, m), beta, 1e-12);
      }
    }
  }
}

TEST(GfmBrute, FewSupportPointsAndPointMasses) {
  // Point masses: the optimum is the truth itself with E = 1.
  for (Mask y : {Mask{0}, mask_of({2}), mask_of({0, 3, 4}), mask_of({0, 1, 2, 3, 4, 5})}) {
    Joint joint{6, {{y, 1.0}}};
    const Decision d = gfm(gfm_input_of(joint), "f1");
    EXPECT_DOUBLE_EQ(d.expected, 1.0);
    EXPECT_EQ(mask_of(d.selected), y);
  }
  std::mt19937_64 rng(77);
  for (int t = 0; t < 200; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    Joint joint;
    joint.m = 1 + rng() % 9;
    const int points = 1 + static_cast<int>(rng() % 4);
    for (int u = 0; u < points; ++u)
      joint.add(static_cast<Mask>(rng() % (Mask{1} << joint.m)), 1.0 / points);
    expect_matches_brute(joint, kBetas[rng() % kBetas.size()], 1e-12);
  }
}

// The selected labels come by decreasing Delta, ties by lower index (notes A14).
TEST(GfmBrute, SelectedOrderAndTies) {
  const double third = 0.7 / 3;
  const Joint joint{
      5,
      {{mask_of({3}), 0.3}, {mask_of({2}), third}, {mask_of({0}), third}, {mask_of({1}), third}}};
  const Decision d = gfm(gfm_input_of(joint), "f1");
  EXPECT_EQ(d.selected, (std::vector<std::size_t>{3, 0, 1, 2}));
  EXPECT_NEAR(d.expected, 0.4, 1e-15);
  Samples smp;
  smp.m = 5;
  std::vector<double> w;
  for (const auto& [y, mass] : joint.support) {
    smp.add(y);
    w.push_back(mass);
  }
  EXPECT_EQ(decide_gfm_samples(smp.view(), w, 5, DecideMetric::from_name("f1")).selected,
            (std::vector<std::size_t>{3, 0, 1, 2}));
}

// Inconsistent P (notes A17): any entries in [0, 1] run, and E[k] is the top-k sum of column k
// of Delta = P W, computed here naively with full sorts.
TEST(GfmFormula, ArbitraryMatrixMatchesNaiveDelta) {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int t = 0; t < 300; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    const std::size_t m = 1 + rng() % 30;
    const double row_keep = unit(rng);
    const double col_keep = unit(rng);
    std::vector<char> row_live(m);
    std::vector<char> col_live(m);
    for (auto& x : row_live) x = unit(rng) < row_keep;
    for (auto& x : col_live) x = unit(rng) < col_keep;
    GfmInput in;
    in.m = m;
    in.p.assign(m * m, 0.0);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t s = 0; s < m; ++s)
        if (row_live[i] && col_live[s] && unit(rng) < 0.7)
          in.p[i * m + s] = unit(rng) < 0.1 ? 1.0 : unit(rng) / static_cast<double>(m);
    in.p_zero = unit(rng) < 0.3 ? 0.0 : unit(rng) * 0.5;
    const auto& beta = kBetas[static_cast<std::size_t>(t) % kBetas.size()];
    const Decision d = gfm(in, beta.metric);
    std::vector<double> want(m + 1);
    want[0] = in.p_zero;
    std::vector<std::vector<double>> delta(m + 1, std::vector<double>(m, 0.0));
    for (std::size_t k = 1; k <= m; ++k) {
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t s = 1; s <= m; ++s)
          delta[k][i] += in.p[i * m + s - 1] * (1 + beta.b2) /
                         (beta.b2 * static_cast<double>(s) + static_cast<double>(k));
      std::vector<double> col = delta[k];
      std::sort(col.begin(), col.end(), std::greater<>());
      want[k] = std::accumulate(col.begin(), col.begin() + static_cast<std::ptrdiff_t>(k), 0.0);
    }
    const auto best = static_cast<std::size_t>(std::max_element(want.begin(), want.end()) -
                                               want.begin());  // first maximum
    for (std::size_t k = 0; k <= m; ++k) EXPECT_NEAR(d.expected_by_k[k], want[k], 1e-13);
    EXPECT_NEAR(d.expected, want[best], 1e-13);
    ASSERT_EQ(d.selected.size(), best);
    // Selected: by decreasing Delta in column k*, ties lower index first.
    double sum = 0;
    for (std::size_t u = 0; u < d.selected.size(); ++u) {
      sum += delta[best][d.selected[u]];
      if (u > 0) {
        const double a = delta[best][d.selected[u - 1]];
        const double b = delta[best][d.selected[u]];
        EXPECT_TRUE(a > b || (a == b && d.selected[u - 1] < d.selected[u]));
      }
    }
    EXPECT_NEAR(best == 0 ? in.p_zero : sum, d.expected, 1e-13);
  }
}

TEST(GfmFormula, DegenerateInputs) {
  // m = 0: only the empty prediction.
  GfmInput empty;
  empty.p_zero = 1;
  const Decision d0 = gfm(empty, "f1");
  EXPECT_TRUE(d0.selected.empty());
  EXPECT_EQ(d0.expected, 1.0);
  EXPECT_EQ(d0.expected_by_k, std::vector<double>{1.0});
  // P = 0: every non-empty prediction scores 0; the empty one wins even with p_zero = 0 (ties ->
  // smallest k).
  for (const double p0 : {0.0, 0.3, 1.0}) {
    GfmInput in;
    in.m = 5;
    in.p.assign(25, 0.0);
    in.p_zero = p0;
    const Decision d = gfm(in, "fbeta:2");
    EXPECT_TRUE(d.selected.empty());
    EXPECT_EQ(d.expected, p0);
    EXPECT_EQ(d.expected_by_k, (std::vector<double>{p0, 0, 0, 0, 0, 0}));
  }
  // One live label among many: {label 3} alone.
  GfmInput one;
  one.m = 6;
  one.p.assign(36, 0.0);
  one.p[3 * 6 + 0] = 0.9;
  one.p_zero = 0.1;
  const Decision d1 = gfm(one, "f1");
  EXPECT_EQ(d1.selected, std::vector<std::size_t>{3});
  EXPECT_DOUBLE_EQ(d1.expected, 0.9);
  // expected_by_k only with all_k.
  EXPECT_TRUE(decide_gfm(one, DecideMetric::from_name("f1")).expected_by_k.empty());
}

// ---- independence -----------------------------------------------------------------------------

// P(S = s) of the independent Bernoulli(eta_j), j != skip.
std::vector<double> poisson_binomial(const std::vector<double>& eta, std::size_t skip) {
  std::vector<double> pb{1.0};
  for (std::size_t j = 0; j < eta.size(); ++j) {
    if (j == skip) continue;
    std::vector<double> next(pb.size() + 1, 0.0);
    for (std::size_t a = 0; a < pb.size(); ++a) {
      next[a] += (1 - eta[j]) * pb[a];
      next[a + 1] += eta[j] * pb[a];
    }
    pb = std::move(next);
  }
  return pb;
}

// p_is = eta_i P(S_{-i} = s - 1), p_zero = prod (1 - eta_i).
GfmInput product_input(const std::vector<double>& eta) {
  const std::size_t m = eta.size();
  GfmInput in;
  in.m = m;
  in.p.assign(m * m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const auto pb = poisson_binomial(eta, i);
    for (std::size_t s = 1; s <= m; ++s) in.p[i * m + s - 1] = eta[i] * pb[s - 1];
  }
  in.p_zero = 1;
  for (const double e : eta) in.p_zero *= 1 - e;
  return in;
}

Joint product_joint(const std::vector<double>& eta) {
  Joint joint;
  joint.m = eta.size();
  for (Mask y = 0; y < (Mask{1} << joint.m); ++y) {
    double w = 1;
    for (std::size_t i = 0; i < joint.m; ++i) w *= ((y >> i) & 1U) ? eta[i] : 1 - eta[i];
    if (w > 0) joint.support.emplace_back(y, w);
  }
  return joint;
}

// E[F(top-k by eta)] for k = 0..m by enumerating the 2^m outcomes (ties: lower index first).
std::vector<double> independence_expectations(const std::vector<double>& eta, double b2) {
  const Joint joint = product_joint(eta);
  std::vector<std::size_t> order(eta.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return eta[a] > eta[b]; });
  std::vector<double> e(eta.size() + 1);
  Mask h = 0;
  for (std::size_t k = 0; k <= eta.size(); ++k) {
    if (k > 0) h |= Mask{1} << order[k - 1];
    e[k] = expected_f(joint, h, b2);
  }
  return e;
}

TEST(GfmIndependence, ProductDistributionsEqualIndependenceExpectations) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int t = 0; t < 240; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    const std::size_t m = 1 + static_cast<std::size_t>(t) % 10;
    const bool special = t % 4 == 3;  // exact 0, 1, ties, tiny values
    std::vector<double> eta(m);
    for (auto& e : eta) {
      e = unit(rng);
      if (special) {
        const auto pick = rng() % 6;
        e = pick == 0 ? 0.0 : pick == 1 ? 1.0 : pick == 2 ? 0.5 : pick == 3 ? 1e-9 : e;
      }
    }
    const auto& beta = kBetas[static_cast<std::size_t>(t) % kBetas.size()];
    const Decision d = gfm(product_input(eta), beta.metric);
    const auto want = independence_expectations(eta, beta.b2);
    for (std::size_t k = 0; k <= m; ++k) EXPECT_NEAR(d.expected_by_k[k], want[k], 1e-12);
    const double best = *std::max_element(want.begin(), want.end());
    EXPECT_NEAR(d.expected, best, 1e-12);
    // Column-wise top-k = top-k by eta: without ties the set is the top-k* by eta.
    if (!special) {
      std::vector<std::size_t> order(m);
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return eta[a] > eta[b]; });
      order.resize(d.selected.size());
      EXPECT_EQ(d.selected, order);
    }
  }
}

// ---- samples ----------------------------------------------------------------------------------

Decision gfm_samples(const Samples& smp, const std::vector<double>& weights,
                     const std::string& metric, std::size_t m = 0) {
  DecideOptions options;
  options.all_k = true;
  return decide_gfm_samples(smp.view(), weights, m == 0 ? smp.m : m,
                            DecideMetric::from_name(metric), options);
}

// decide_gfm_samples promises the same decision bit for bit.
void expect_same_decision(const Decision& got, const Decision& want) {
  EXPECT_EQ(got.selected, want.selected);
  EXPECT_EQ(got.expected, want.expected);
  EXPECT_EQ(got.expected_by_k, want.expected_by_k);
  EXPECT_EQ(got.method, want.method);
}

TEST(GfmSamples, InvariantsAndEmpiricalMeans) {
  std::mt19937_64 rng(5150);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int t = 0; t < 60; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    Samples smp;
    smp.m = 1 + static_cast<std::size_t>(t) % 9;
    const std::size_t n = 1 + rng() % 60;
    const double density = unit(rng);
    for (std::size_t j = 0; j < n; ++j) {
      Mask y = 0;
      for (std::size_t i = 0; i < smp.m; ++i)
        if (unit(rng) < density) y |= Mask{1} << i;
      smp.add(y);
    }
    std::vector<double> weights;
    if (t % 3 == 1)
      for (std::size_t j = 0; j < n; ++j) weights.push_back(unit(rng) < 0.2 ? 0.0 : unit(rng));
    if (t % 3 == 2)
      for (std::size_t j = 0; j < n; ++j) weights.push_back(static_cast<double>(1 + rng() % 5));
    if (!weights.empty() && std::accumulate(weights.begin(), weights.end(), 0.0) == 0)
      weights[0] = 1;
    const GfmInput in = gfm_from_samples(smp.view(), weights, smp.m);
    const std::size_t m = smp.m;
    ASSERT_EQ(in.p.size(), m * m);
    const auto w = [&](std::size_t j) { return weights.empty() ? 1.0 : weights[j]; };
    double total = 0;
    for (std::size_t j = 0; j < n; ++j) total += w(j);

    // The empirical joint, for the invariants and the empirical means.
    Joint joint;
    joint.m = m;
    for (std::size_t j = 0; j < n; ++j) joint.add(smp.masks[j], w(j) / total);
    // 1. row sums are the marginals; 2. column sums are s P(s_y = s); 3. column m constant;
    // 4. p_zero = 1 - sum_s (1/s) sum_i p_is; 5. entries in [0, 1], row sums <= 1.
    double p_nonzero = 0;
    for (std::size_t i = 0; i < m; ++i) {
      double marginal = 0;
      for (const auto& [y, mass] : joint.support)
        if ((y >> i) & 1U) marginal += mass;
      double row = 0;
      for (std::size_t s = 0; s < m; ++s) {
        EXPECT_GE(in.p[i * m + s], 0.0);
        row += in.p[i * m + s];
      }
      EXPECT_NEAR(row, marginal, 1e-14);
      EXPECT_LE(row, 1 + 1e-15);
      EXPECT_NEAR(in.p[i * m + m - 1], in.p[m - 1], 1e-15);
    }
    for (std::size_t s = 1; s <= m; ++s) {
      double card = 0;
      for (const auto& [y, mass] : joint.support)
        if (static_cast<std::size_t>(std::popcount(y)) == s) card += mass;
      double column = 0;
      for (std::size_t i = 0; i < m; ++i) column += in.p[i * m + s - 1];
      EXPECT_NEAR(column, static_cast<double>(s) * card, 1e-14);
      p_nonzero += column / static_cast<double>(s);
    }
    EXPECT_NEAR(in.p_zero, 1 - p_nonzero, 1e-14);
    EXPECT_LE(detail::gfm_consistency(in).max_violation(), 1e-14);

    // E_k equals the best empirical mean of F(y^j, h) over |h| = k; the chosen set achieves it.
    for (const auto& beta : kBetas) {
      expect_matches_brute(joint, beta, 1e-13);
      const Decision d = gfm(in, beta.metric);
      expect_same_decision(gfm_samples(smp, weights, beta.metric), d);
      const Mask h = mask_of(d.selected);
      double mean = 0;
      for (std::size_t j = 0; j < n; ++j) mean += w(j) * fbeta(smp.masks[j], h, beta.b2);
      EXPECT_NEAR(d.expected, mean / total, 1e-13);
    }
  }
}

// Few samples in a large label space (the kNN case): most labels and cardinalities are dead.
TEST(GfmSamples, DirectPathEqualsMatrixPath) {
  std::mt19937_64 rng(8128);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int t = 0; t < 40; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    Samples smp;
    smp.m = 1 + rng() % 300;
    std::vector<double> weights;
    const std::size_t n = 1 + rng() % 50;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t s = std::min<std::size_t>(smp.m, rng() % 7);
      std::vector<std::int32_t> labels;
      while (labels.size() < s) {
        const auto i = static_cast<std::int32_t>(rng() % smp.m);
        if (std::find(labels.begin(), labels.end(), i) == labels.end()) labels.push_back(i);
      }
      std::sort(labels.begin(), labels.end());
      smp.indices.insert(smp.indices.end(), labels.begin(), labels.end());
      smp.indptr.push_back(static_cast<std::int64_t>(smp.indices.size()));
      weights.push_back(t % 2 == 0 ? 1.0 : (unit(rng) < 0.2 ? 0.0 : unit(rng)));
    }
    if (std::accumulate(weights.begin(), weights.end(), 0.0) == 0) weights[0] = 1;
    for (const auto& beta : kBetas) {
      const GfmInput in = gfm_from_samples(smp.view(), weights, smp.m);
      const Decision want = gfm(in, beta.metric);
      expect_same_decision(gfm_samples(smp, weights, beta.metric), want);
      const Decision plain =
          decide_gfm_samples(smp.view(), weights, smp.m, DecideMetric::from_name(beta.metric));
      EXPECT_EQ(plain.selected, want.selected);
      EXPECT_EQ(plain.expected, want.expected);
    }
  }
}

// Expectations equal up to rounding tie, and the smaller k wins (docs/decide.md): here E[2] and
// E[3] are both 2/5 but round 1 ulp apart (found by the Waegeman reproduction on scene).
TEST(GfmTies, RoundingTiesPickTheSmallerSet) {
  Samples smp;
  smp.m = 6;
  for (int label : {2, 0, 3, 0, 0, 2, 3, 5, 4, 3}) smp.add(mask_of({label}));
  DecideOptions all;
  all.all_k = true;
  const Decision d = decide_gfm_samples(smp.view(), {}, 6, DecideMetric::from_name("f1"), all);
  ASSERT_EQ(d.expected_by_k.size(), 7u);
  EXPECT_NEAR(d.expected_by_k[2], 0.4, 1e-15);
  EXPECT_NEAR(d.expected_by_k[3], 0.4, 1e-15);
  EXPECT_EQ(d.selected, (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(decide_gfm(gfm_from_samples(smp.view(), {}, 6), DecideMetric::from_name("f1")).selected,
            (std::vector<std::size_t>{0, 3}));
}

// Without all_k, GFM stops forming columns of Delta once a bound proves that no larger k can win;
// the decision must equal the one from every column.
TEST(GfmTies, BoundedColumnsGiveTheFullDecision) {
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int t = 0; t < 60; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    Samples smp;
    smp.m = 1 + rng() % 150;
    const std::size_t n = 1 + rng() % 80;
    const std::size_t max_card = 1 + rng() % std::min<std::size_t>(smp.m, 40);
    std::vector<double> weights;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t s = rng() % (max_card + 1);
      std::vector<std::int32_t> labels;
      while (labels.size() < s) {
        const auto i = static_cast<std::int32_t>(rng() % smp.m);
        if (std::find(labels.begin(), labels.end(), i) == labels.end()) labels.push_back(i);
      }
      std::sort(labels.begin(), labels.end());
      smp.indices.insert(smp.indices.end(), labels.begin(), labels.end());
      smp.indptr.push_back(static_cast<std::int64_t>(smp.indices.size()));
      weights.push_back(0.1 + unit(rng));
    }
    for (const auto& beta : kBetas) {
      const auto metric = DecideMetric::from_name(beta.metric);
      DecideOptions all;
      all.all_k = true;
      const Decision full = decide_gfm_samples(smp.view(), weights, smp.m, metric, all);
      const Decision bounded = decide_gfm_samples(smp.view(), weights, smp.m, metric);
      EXPECT_EQ(bounded.selected, full.selected);
      EXPECT_EQ(bounded.expected, full.expected);
      // and the chosen k is the smallest within 8 ulp of the best of every E[k]
      const double top = *std::max_element(full.expected_by_k.begin(), full.expected_by_k.end());
      for (std::size_t k = 0; k < full.selected.size(); ++k)
        EXPECT_LT(full.expected_by_k[k], top - 8 * DBL_EPSILON * top);
    }
  }
}

TEST(GfmSamples, CountsAreExactFractions) {
  Samples smp;
  smp.m = 3;
  for (const Mask y :
       {mask_of({}), mask_of({0}), mask_of({0, 2}), mask_of({0, 2}), mask_of({0, 1, 2})})
    smp.add(y);
  const GfmInput in = gfm_from_samples(smp.view(), {}, 3);
  EXPECT_DOUBLE_EQ(in.p_zero, 0.2);
  const std::vector<double> want{0.2, 0.4, 0.2,   // label 0: s = 1, 2, 3
                                 0.0, 0.0, 0.2,   // label 1
                                 0.0, 0.4, 0.2};  // label 2
  for (std::size_t u = 0; u < 9; ++u) EXPECT_DOUBLE_EQ(in.p[u], want[u]) << u;
  const GfmInput weighted = gfm_from_samples(smp.view(), std::vector<double>{2, 0, 1, 1, 0}, 3);
  EXPECT_DOUBLE_EQ(weighted.p_zero, 0.5);
  EXPECT_DOUBLE_EQ(weighted.p[0 * 3 + 1], 0.5);
  EXPECT_DOUBLE_EQ(weighted.p[2 * 3 + 1], 0.5);
  EXPECT_DOUBLE_EQ(weighted.p[0 * 3 + 0], 0.0);
}

TEST(GfmConsistency, DetectsViolations) {
  Samples smp;
  smp.m = 3;
  for (const Mask y : {mask_of({}), mask_of({1}), mask_of({0, 2}), mask_of({0, 1, 2})}) smp.add(y);
  const GfmInput exact = gfm_from_samples(smp.view(), {}, 3);
  EXPECT_LE(detail::gfm_consistency(exact).max_violation(), 1e-15);
  GfmInput bad = exact;
  bad.p_zero = 0.5;  // should be 0.25
  EXPECT_NEAR(detail::gfm_consistency(bad).p_zero_error, 0.25, 1e-15);
  bad = exact;
  bad.p[1 * 3 + 2] = 0;  // P(y = 111) differs between labels
  EXPECT_NEAR(detail::gfm_consistency(bad).full_column_spread, 0.25, 1e-15);
  bad = exact;
  bad.p[0 * 3 + 0] = 0.3;  // label 0 with s = 1 although s = 1 has mass 0.25 + 0.3 over 1 label
  EXPECT_GT(detail::gfm_consistency(bad).max_violation(), 0.2);
  // decide_gfm does not require consistency.
  EXPECT_NO_THROW((void)gfm(bad, "f1"));
}

// ---- worked examples (notes 4.6 and 3.2) ------------------------------------------------------

// Distribution A = {0001: .1, 0010: .2, 0100: .2, 1000: .5} (first character = label 0),
// B = {0000: .5, 1001: .1, 1010: .2, 1100: .2}; both have marginals (.5, .2, .2, .1).
Joint distribution_a() {
  return Joint{
      4, {{mask_of({3}), 0.1}, {mask_of({2}), 0.2}, {mask_of({1}), 0.2}, {mask_of({0}), 0.5}}};
}
Joint distribution_b() {
  return Joint{
      4,
      {{mask_of({}), 0.5}, {mask_of({0, 3}), 0.1}, {mask_of({0, 2}), 0.2}, {mask_of({0, 1}), 0.2}}};
}

void expect_values(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], tol) << "k = " << k;
}

TEST(GfmWorked, DistributionsAAndB) {
  // P given directly as in the notes.
  GfmInput a;
  a.m = 4;
  a.p = {0.5, 0, 0, 0, 0.2, 0, 0, 0, 0.2, 0, 0, 0, 0.1, 0, 0, 0};
  a.p_zero = 0;
  const Decision da = gfm(a, "f1");
  expect_values(da.expected_by_k, {0, 1.0 / 2, 7.0 / 15, 9.0 / 20, 2.0 / 5}, 1e-15);
  EXPECT_EQ(da.selected, std::vector<std::size_t>{0});
  EXPECT_NEAR(da.expected, 0.5, 1e-15);

  GfmInput b;
  b.m = 4;
  b.p = {0, 0.5, 0, 0, 0, 0.2, 0, 0, 0, 0.2, 0, 0, 0, 0.1, 0, 0};
  b.p_zero = 0.5;
  const Decision db = gfm(b, "f1");
  expect_values(db.expected_by_k, {1.0 / 2, 1.0 / 3, 7.0 / 20, 9.0 / 25, 1.0 / 3}, 1e-15);
  EXPECT_TRUE(db.selected.empty());
  EXPECT_NEAR(db.expected, 0.5, 1e-15);

  // The same from the joints and from weighted samples.
  for (const auto& [joint, want] : {std::pair{distribution_a(), da.expected_by_k},
                                    std::pair{distribution_b(), db.expected_by_k}}) {
    expect_values(gfm(gfm_input_of(joint), "f1").expected_by_k, want, 1e-15);
    Samples smp;
    smp.m = 4;
    std::vector<double> w;
    for (const auto& [y, mass] : joint.support) {
      smp.add(y);
      w.push_back(mass);
    }
    expect_values(gfm(gfm_from_samples(smp.view(), w, 4), "f1").expected_by_k, want, 1e-15);
  }
}

// Notes 6 item 6: the independence methods see only the marginals (.5, .2, .2, .1).
TEST(GfmWorked, IndependenceFails) {
  const std::vector<double> eta{0.5, 0.2, 0.2, 0.1};
  const Decision ye = gfm(product_input(eta), "f1");
  expect_values(ye.expected_by_k,
                {36.0 / 125, 6347.0 / 15000, 6047.0 / 15000, 6939.0 / 17500, 6273.0 / 17500},
                1e-15);
  EXPECT_EQ(ye.selected, std::vector<std::size_t>{0});
  EXPECT_NEAR(ye.expected, 6347.0 / 15000, 1e-15);

  const Decision ga = gfm(gfm_input_of(distribution_a()), "f1");
  const Decision gb = gfm(gfm_input_of(distribution_b()), "f1");
  EXPECT_EQ(ga.selected, std::vector<std::size_t>{0});
  EXPECT_TRUE(gb.selected.empty());
  // Regret of the independence choice {label 0}: 0 under A, 1/2 - 1/3 = 1/6 under B.
  const Mask ye_set = mask_of(ye.selected);
  EXPECT_NEAR(ga.expected - expected_f(distribution_a(), ye_set, 1), 0.0, 1e-15);
  EXPECT_NEAR(gb.expected - expected_f(distribution_b(), ye_set, 1), 1.0 / 6, 1e-15);
}

// Thresholding the marginals with the true joint choosing the threshold (notes 4.8): candidates
// h(theta) = {i : p_i >= theta}, theta in {1, p_1..p_m}. Returns the best expected F.
double best_threshold_value(const Joint& joint, double b2, Mask* best_set = nullptr) {
  std::vector<double> marginal(joint.m, 0.0);
  for (const auto& [y, w] : joint.support)
    for (std::size_t i = 0; i < joint.m; ++i)
      if ((y >> i) & 1U) marginal[i] += w;
  std::vector<double> thetas{1.0};
  thetas.insert(thetas.end(), marginal.begin(), marginal.end());
  double best = -1;
  for (const double theta : thetas) {
    const Mask h = mask_of(select_threshold(marginal, theta));
    const double e = expected_f(joint, h, b2);
    if (e > best) {
      best = e;
      if (best_set != nullptr) *best_set = h;
    }
  }
  return best;
}

// Notes 3.2 / 6 item 7: P(0) = .21, P(e_1) = .39, P(011111100000) = .20, P(010000011111) = .20.
TEST(GfmWorked, ThresholdingFailsTwelveLabels) {
  const Joint joint{12,
                    {{mask_of({}), 0.21},
                     {mask_of({0}), 0.39},
                     {mask_of({1, 2, 3, 4, 5, 6}), 0.20},
                     {mask_of({1, 7, 8, 9, 10, 11}), 0.20}}};
  const Decision d = gfm(gfm_input_of(joint), "f1");
  EXPECT_EQ(d.selected, std::vector<std::size_t>{0});
  EXPECT_NEAR(d.expected, 0.39, 1e-15);
  EXPECT_NEAR(d.expected, brute(joint, 1).best, 1e-15);
  // The threshold candidates: empty 0.21, {2} 4/35, {1,2} 9/25, all 49/150.
  EXPECT_NEAR(expected_f(joint, mask_of({}), 1), 0.21, 1e-15);
  EXPECT_NEAR(expected_f(joint, mask_of({1}), 1), 4.0 / 35, 1e-15);
  EXPECT_NEAR(expected_f(joint, mask_of({0, 1}), 1), 9.0 / 25, 1e-15);
  EXPECT_NEAR(expected_f(joint, (Mask{1} << 12) - 1, 1), 49.0 / 150, 1e-15);
  Mask best_set = 0;
  const double thresholded = best_threshold_value(joint, 1, &best_set);
  EXPECT_EQ(best_set, mask_of({0, 1}));
  EXPECT_NEAR(thresholded, 9.0 / 25, 1e-15);
  EXPECT_NEAR(d.expected - thresholded, 3.0 / 100, 1e-15);
}

// Theorem 7 family (notes 3.2, A13), m even: P(e_1) = 1/2 - eps; mass (1/2 + eps)/2 on each of
// {2} + labels 3..m/2+1 and {2} + labels m/2+2..m (1-based). Regret -> max(0, 1/6 - 2/(m+4)).
TEST(GfmRegret, TheoremSevenThresholdingFamily) {
  const double eps = 1e-9;
  for (const std::size_t m : {4, 6, 8, 10, 12, 14}) {
    SCOPED_TRACE("m = " + std::to_string(m));
    Mask first = mask_of({1});
    Mask second = mask_of({1});
    for (std::size_t l = 3; l <= m / 2 + 1; ++l) first |= Mask{1} << (l - 1);
    for (std::size_t l = m / 2 + 2; l <= m; ++l) second |= Mask{1} << (l - 1);
    ASSERT_EQ(std::popcount(first), static_cast<int>(m / 2));
    ASSERT_EQ(std::popcount(second), static_cast<int>(m / 2));
    const Joint joint{
        m, {{mask_of({0}), 0.5 - eps}, {first, (0.5 + eps) / 2}, {second, (0.5 + eps) / 2}}};
    const Decision d = gfm(gfm_input_of(joint), "f1");
    EXPECT_NEAR(d.expected, brute(joint, 1).best, 1e-15);
    if (m >= 10) {  // below, {1, 2} (a threshold set) is the F-maximiser
      EXPECT_EQ(d.selected, std::vector<std::size_t>{0});
      EXPECT_NEAR(d.expected, 0.5 - eps, 1e-15);
    }
    const double regret = d.expected - best_threshold_value(joint, 1);
    const double md = static_cast<double>(m);
    EXPECT_NEAR(regret, std::max(0.0, 1.0 / 6 - 2 / (md + 4)), 1e-8);
  }
}

// Notes 3.2 Theorem 2 / 6 item 8: uniform mass 2/(m^2+m+4) on {0_m} and {y : s_y >= m-2}, with
// the eps-perturbation that makes 0_m the unique joint mode (the subset 0/1 minimiser).
TEST(GfmRegret, SubsetZeroOneWorstCase) {
  const double eps = 1e-10;
  for (const std::size_t m : {3, 4, 5, 6}) {
    SCOPED_TRACE("m = " + std::to_string(m));
    const double md = static_cast<double>(m);
    const double z = md * md + md + 4;
    Joint joint;
    joint.m = m;
    for (Mask y = 0; y < (Mask{1} << m); ++y) {
      const auto s = static_cast<std::size_t>(std::popcount(y));
      if (y == 0)
        joint.add(y, 2 / z + (z - 2) / z * eps);
      else if (s + 2 >= m)
        joint.add(y, 2 / z * (1 - eps));
    }
    ASSERT_EQ(joint.support.size(), (m * m + m + 4) / 2);
    const Decision d = gfm(gfm_input_of(joint), "f1");
    EXPECT_EQ(d.selected.size(), m);  // h_F = 1_m
    EXPECT_NEAR(d.expected, brute(joint, 1).best, 1e-15);
    const double regret = d.expected - expected_f(joint, 0, 1);
    EXPECT_NEAR(regret, md * (2 * md * md - md - 2) / ((2 * md - 1) * z), 1e-9);
    if (m == 4) {
      EXPECT_NEAR(d.expected, 59.0 / 84, 1e-9);
      EXPECT_NEAR(expected_f(joint, 0, 1), 1.0 / 12, 1e-9);
      EXPECT_NEAR(regret, 13.0 / 21, 1e-9);  // the paper's 13/24 is a typo (notes A6)
    }
  }
}

// Notes 3.2 Theorem 1 / 6 item 9 (Hamming as a surrogate): the marginal modes are 0_m, which
// scores 0; the F-maximiser does not. The paper's 0.5 is not the supremum (notes A5).
TEST(GfmRegret, HammingWitnesses) {
  const double eps = 1e-9;
  // P(010) = P(001) = 1/2 - eps, P(100) = 2 eps: regret (1 - 2 eps) 2/3 with h_F = {2, 3}.
  const Joint simple{
      3, {{mask_of({1}), 0.5 - eps}, {mask_of({2}), 0.5 - eps}, {mask_of({0}), 2 * eps}}};
  const Decision d = gfm(gfm_input_of(simple), "f1");
  EXPECT_EQ(mask_of(d.selected), mask_of({1, 2}));
  EXPECT_NEAR(d.expected - expected_f(simple, 0, 1), (1 - 2 * eps) * 2 / 3, 1e-15);
  // The paper's construction, a = 1, b = c = 0, d = m - 1: P(e_1) = 1/2 - eps,
  // P(0 1..1) = 1/2 - (2d - 1) eps, 2 eps on the d vectors with one of labels 2..m off.
  // Its regret: 0.650, 0.6286, 0.6111, 0.5974, 0.5865 for m = 3..7 (= E[F(1_m)]).
  const std::vector<double> want{0.650, 0.6286, 0.6111, 0.5974, 0.5865};
  for (std::size_t m = 3; m <= 7; ++m) {
    SCOPED_TRACE("m = " + std::to_string(m));
    const double dd = static_cast<double>(m - 1);
    const Mask rest = ((Mask{1} << m) - 1) & ~Mask{1};
    Joint joint{m, {{mask_of({0}), 0.5 - eps}, {rest, 0.5 - (2 * dd - 1) * eps}}};
    for (std::size_t l = 1; l < m; ++l) joint.add(rest & ~(Mask{1} << l), 2 * eps);
    for (std::size_t i = 0; i < m; ++i) {  // every marginal < 1/2: marginal modes = 0_m
      double marginal = 0;
      for (const auto& [y, w] : joint.support)
        if ((y >> i) & 1U) marginal += w;
      EXPECT_LT(marginal, 0.5);
    }
    const Decision g = gfm(gfm_input_of(joint), "f1");
    EXPECT_NEAR(g.expected, brute(joint, 1).best, 1e-15);
    EXPECT_EQ(g.selected.size(), m);  // 1_m beats y_A
    const double regret = g.expected - expected_f(joint, 0, 1);
    EXPECT_NEAR(regret, 1 / (dd + 2) + dd / (2 * dd + 1), 1e-8);
    EXPECT_NEAR(regret, want[m - 3], 5e-5);
    EXPECT_GT(regret, 0.5);
  }
  // The non-unique m = 4 example: P(1000) = P(0111) = 1/2; 1110 scores 1/4 + 1/3.
  const Joint side{4, {{mask_of({0}), 0.5}, {mask_of({1, 2, 3}), 0.5}}};
  EXPECT_NEAR(expected_f(side, mask_of({0, 1, 2}), 1), 0.25 + 1.0 / 3, 1e-15);
  EXPECT_GE(gfm(gfm_input_of(side), "f1").expected, 0.25 + 1.0 / 3);
}

// Notes 3.2 Theorem 5 / 6 item 10: P_A independent with all marginals 1 - q, P_B = q on 0_m and
// 1 - q on 1_m (same marginals). Just below q*(m) the independence method returns 1_m while the
// optimum under P_B is 0_m (regret 2q - 1); just above q*, both return 0_m.
TEST(GfmRegret, TheoremFiveIndependenceWorstCase) {
  const std::vector<std::pair<std::size_t, double>> q_star{
      {2, 0.651388}, {3, 0.720695}, {4, 0.762438}, {5, 0.791057}, {10, 0.862121}};
  for (const auto& [m, qs] : q_star) {
    SCOPED_TRACE("m = " + std::to_string(m));
    for (const double q : {qs - 1e-5, qs + 1e-5}) {
      const Decision indep = gfm(product_input(std::vector<double>(m, 1 - q)), "f1");
      const Joint pb{m, {{0, q}, {(Mask{1} << m) - 1, 1 - q}}};
      const Decision opt = gfm(gfm_input_of(pb), "f1");
      EXPECT_TRUE(opt.selected.empty());
      EXPECT_NEAR(opt.expected, q, 1e-15);
      if (q < qs) {
        EXPECT_EQ(indep.selected.size(), m);
        const double regret = opt.expected - expected_f(pb, mask_of(indep.selected), 1);
        EXPECT_NEAR(regret, 2 * q - 1, 1e-15);
      } else {
        EXPECT_TRUE(indep.selected.empty());
      }
    }
  }
  // The Ye DP values quoted for m = 3, q = 0.72: E = (0.37325, 0.23139, 0.32399, 0.37516).
  const Decision d = gfm(product_input(std::vector<double>(3, 0.28)), "f1");
  expect_values(d.expected_by_k, {0.37325, 0.23139, 0.32399, 0.37516}, 5e-6);
  EXPECT_EQ(d.selected.size(), 3U);
}

// ---- validation -------------------------------------------------------------------------------

TEST(GfmValidation, BadInputThrows) {
  const auto f1 = DecideMetric::from_name("f1");
  GfmInput good;
  good.m = 2;
  good.p = {0.2, 0.1, 0.3, 0.1};
  good.p_zero = 0.4;
  EXPECT_NO_THROW((void)decide_gfm(good, f1));
  auto bad = good;
  bad.p.pop_back();
  EXPECT_THROW((void)decide_gfm(bad, f1), InvalidArgument);
  bad = good;
  bad.p.push_back(0);
  EXPECT_THROW((void)decide_gfm(bad, f1), InvalidArgument);
  for (const double x : {std::nan(""), -0.1, 1.5, std::numeric_limits<double>::infinity()}) {
    bad = good;
    bad.p[2] = x;
    EXPECT_THROW((void)decide_gfm(bad, f1), InvalidArgument) << x;
    bad = good;
    bad.p_zero = x;
    EXPECT_THROW((void)decide_gfm(bad, f1), InvalidArgument) << x;
  }
  for (const char* name : {"jaccard", "balanced_accuracy", "gmean", "accuracy"})
    EXPECT_THROW((void)decide_gfm(good, DecideMetric::from_name(name)), InvalidArgument) << name;
  try {
    (void)decide_gfm(good, DecideMetric::from_name("jaccard"));
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("F-beta only"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)decide_gfm(good, DecideMetric::custom(
                                          "c", [](double, double, double, double) { return 0.0; })),
               InvalidArgument);
  DecideOptions fast;
  fast.method = DecideMethod::kFast;
  EXPECT_THROW((void)decide_gfm(good, f1, fast), InvalidArgument);
}

TEST(GfmValidation, BadSamplesThrow) {
  Samples smp;
  smp.m = 3;
  smp.add(mask_of({0, 2}));
  smp.add(mask_of({}));
  EXPECT_NO_THROW((void)gfm_from_samples(smp.view(), {}, 3));
  EXPECT_THROW((void)gfm_from_samples(smp.view(), {}, 2), InvalidArgument);  // label 2 >= m
  EXPECT_THROW((void)gfm_from_samples(smp.view(), std::vector<double>{1}, 3), InvalidArgument);
  EXPECT_THROW((void)gfm_from_samples(smp.view(), std::vector<double>{1, -1}, 3), InvalidArgument);
  EXPECT_THROW((void)gfm_from_samples(smp.view(), std::vector<double>{1, std::nan("")}, 3),
               InvalidArgument);
  EXPECT_THROW((void)gfm_from_samples(smp.view(), std::vector<double>{0, 0}, 3), InvalidArgument);
  Samples none;
  none.m = 3;
  EXPECT_THROW((void)gfm_from_samples(none.view(), {}, 3), InvalidArgument);
  const std::vector<std::int64_t> indptr{0, 2};
  const std::vector<std::int32_t> unsorted{2, 0};
  EXPECT_THROW((void)gfm_from_samples(LabelSetsView{indptr, unsorted, 3}, {}, 3), InvalidArgument);
  const std::vector<std::int32_t> duplicate{1, 1};
  EXPECT_THROW((void)gfm_from_samples(LabelSetsView{indptr, duplicate, 3}, {}, 3), InvalidArgument);
  const std::vector<std::int32_t> negative{-1, 1};
  EXPECT_THROW((void)gfm_from_samples(LabelSetsView{indptr, negative, 3}, {}, 3), InvalidArgument);
  const std::vector<std::int64_t> short_indptr{0, 3};
  EXPECT_THROW((void)gfm_from_samples(LabelSetsView{short_indptr, duplicate, 3}, {}, 3),
               InvalidArgument);
  const std::vector<std::int64_t> long_indptr{0, 4};
  const std::vector<std::int32_t> four{0, 1, 2, 3};
  EXPECT_THROW((void)gfm_from_samples(LabelSetsView{long_indptr, four, 3}, {}, 3),
               InvalidArgument);  // more labels than m
  // The direct path validates the same way, and the metric and method too.
  const auto f1 = DecideMetric::from_name("f1");
  EXPECT_NO_THROW((void)decide_gfm_samples(smp.view(), {}, 3, f1));
  EXPECT_THROW((void)decide_gfm_samples(smp.view(), {}, 2, f1), InvalidArgument);
  EXPECT_THROW((void)decide_gfm_samples(LabelSetsView{indptr, unsorted, 3}, {}, 3, f1),
               InvalidArgument);
  EXPECT_THROW((void)decide_gfm_samples(smp.view(), std::vector<double>{0, 0}, 3, f1),
               InvalidArgument);
  EXPECT_THROW((void)decide_gfm_samples(none.view(), {}, 3, f1), InvalidArgument);
  EXPECT_THROW((void)decide_gfm_samples(smp.view(), {}, 3, DecideMetric::from_name("jaccard")),
               InvalidArgument);
}

}  // namespace
}  // namespace rateopt
