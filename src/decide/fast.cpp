// kFast: E[metric(top-k)] for every k at once by a quadrature on shared nodes (docs/decide.md).
//
// Let A = #positives among the top k items, B = among the rest, S = A + B, and G_k, H_k their
// probability generating functions (G_k H_k = G, the same polynomial for every k). For c >= 0,
//   E[A / (S + c); A >= 1] = int_0^inf e^{-c x} E[A e^{-S x}] dx,
//   E[A e^{-S x}] = G(t) R_k(t),  t = e^{-x},  R_k(t) = sum_{i<=k} p_i t / (1 - p_i + p_i t),
// since t G_k'(t) / G_k(t) = R_k(t). The integral is evaluated with an ExpSumRule (fast_rule.hpp)
// whose nodes are shared by every k: G(t_j) is computed once per node, R_k(t_j) is a prefix sum,
// so all n + 1 expectations cost O(n * nodes).
//   F-beta (k >= 1):  F = (1 + g) A / (S + g k), g = 1 / beta^2.
//   recall:           E[tpr_k] = P(S = 0) + E[A / S; A >= 1]  (c = 0);
//   balanced accuracy: (E[tpr_k](p) + E[tpr_{n-k}](reverse(1 - p))) / 2.
//   Jaccard (k >= 1): J = A / (k + B), E[J] = E[A] E[1 / (k + B)],
//                     E[1 / (k + B)] = int e^{-k x} H_k(e^{-x}) dx, H_k = G / G_k.
// The error bound: the rule's relative error on the range of lambda = S + c that carries all but
// 2 e^{-L} of the probability (Bernstein's inequality for S), k_out times that excluded mass, and
// a first-order allowance for floating-point rounding. Numerics: G(t_j) in log space from power
// sums (Taylor series of log(1 - p d) for p d <= 1/4) or products of factors >= 1/16 away from 1;
// the prefix products G_k keep the exact rounding error of 1 - p d (Fast2Sum) as a correction;
// long sums and products are blocked (64 / 4096) so rounding grows like 64 + 64 + n/4096 steps.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "common/compensated_sum.hpp"
#include "decide/fast_rule.hpp"
#include "decide/independent_impl.hpp"
#include "decide/poisson_binomial.hpp"

namespace rateopt::detail {

// ---- the rule ---------------------------------------------------------------------------------

double trapezoid_discretisation_error(double h) noexcept {
  constexpr double kPi = std::numbers::pi;
  double sum = 0;
  for (int m = 1; m <= 32; ++m) {
    const double z = 2 * kPi * kPi * m / h;  // pi * y_m with y_m = 2 pi m / h
    const double term = std::sqrt(2 * z * std::exp(-z) / -std::expm1(-2 * z));
    sum += term;
    if (term <= 1e-20 * sum) break;
  }
  return 2 * sum;
}

std::size_t ExpSumRule::nodes_for(double lambda_low) const noexcept {
  const double x_needed = log_right / lambda_low;
  std::size_t j = 0;
  while (j < x.size() && x[j] < x_needed) ++j;
  return std::min(x.size(), j + 2);
}

double ExpSumRule::apply(double lambda) const noexcept {
  double s = 0;
  for (std::size_t j = 0; j < x.size(); ++j) s += w[j] * std::exp(-lambda * x[j]);
  return s + tail1 - lambda * tail2;
}

ExpSumRule make_exp_sum_rule(double lambda_min, double lambda_max, double lambda_abs,
                             double tolerance) {
  ExpSumRule rule;
  const double part = tolerance / 3;
  double lo = 0.02;
  double hi = 2.0;
  for (int it = 0; it < 60; ++it) {
    const double mid = (lo + hi) / 2;
    (trapezoid_discretisation_error(mid) <= part ? lo : hi) = mid;
  }
  const double h = lo;
  rule.h = h;
  rule.disc = trapezoid_discretisation_error(h);
  rule.lambda_min = lambda_min;
  rule.lambda_max = lambda_max;
  rule.lambda_abs = std::max(lambda_abs, lambda_max);
  rule.log_right = std::log(1 / part);
  const double rho = std::min(0.5, std::cbrt(part * 2 * std::expm1(3 * h) / h));
  rule.x_lo = rho / lambda_max;
  const double x_hi = rule.log_right / lambda_min;
  const auto last =
      static_cast<std::size_t>(std::max(1.0, std::ceil(std::log(x_hi / rule.x_lo) / h)));
  rule.x.resize(last + 1);
  rule.w.resize(last + 1);
  for (std::size_t j = 0; j <= last; ++j) {
    rule.x[j] = rule.x_lo * std::exp(double(j) * h);
    rule.w[j] = h * rule.x[j];
  }
  rule.tail1 = h * rule.x_lo / std::expm1(h);
  rule.tail2 = h * rule.x_lo * rule.x_lo / std::expm1(2 * h);
  rule.right = std::exp(-lambda_min * rule.x.back());
  rule.left = h * rho * rho * rho / (2 * std::expm1(3 * h));
  rule.k_out =
      1 + rule.disc + rule.lambda_abs * rule.tail1 + rule.lambda_abs * rule.lambda_abs * rule.tail2;
  return rule;
}

namespace {

using Family = DecideMetric::Family;

constexpr double kUnit = 0x1p-53;  // unit roundoff
constexpr double kFlush = 1e-280;  // smaller weights are set to 0 (no subnormal arithmetic)
constexpr std::size_t kBlock1 = 64;
constexpr std::size_t kBlock2 = 4096;
constexpr std::size_t kAnchor = 64;  // exp(-c x) recomputed every kAnchor steps of k
constexpr int kMaxTerms = 40;
constexpr double kTaylorLimit = 0.25;  // Taylor series of log(1 - p d) where p d <= 1/4

// First-order allowance for rounding, relative to expectations <= 1: blocked sums and products
// (64 + 64 + n/4096 steps), anchored exponentials (64), power sums (66), node sums and the
// rest. Not a proof; see docs/decide.md.
double rounding_allowance(std::size_t n, std::size_t nodes) {
  const std::size_t full_blocks2 = n / kBlock2;  // whole blocks only: the division truncates
  return 4 * kUnit * (double(2 * kBlock1 + full_blocks2 + nodes + kAnchor) + 256.0);
}

}  // namespace

double fast_tolerance_floor(std::size_t n) {
  return 4 * rounding_allowance(n, 256);
}

namespace {

// Bernstein: P(|S - E S| >= r) <= 2 exp(-L) for r = L/3 + sqrt(L^2/9 + 2 L var).
double bernstein_radius(double log_inv, double var) {
  return log_inv / 3 + std::sqrt(log_inv * log_inv / 9 + 2 * log_inv * std::max(var, 0.0));
}

double sum4(const double* v, std::size_t m) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t j = 0;
  for (; j + 4 <= m; j += 4) {
    s0 += v[j];
    s1 += v[j + 1];
    s2 += v[j + 2];
    s3 += v[j + 3];
  }
  for (; j < m; ++j) s0 += v[j];
  return (s0 + s1) + (s2 + s3);
}

// Prefix means and variances of the counts: mean[k] = sum_{i<=k} p_i, var[k] = sum p_i (1-p_i).
struct PrefixMoments {
  std::vector<double> mean;
  std::vector<double> var;
  explicit PrefixMoments(std::span<const double> p) : mean(p.size() + 1), var(p.size() + 1) {
    CompensatedSum m;
    CompensatedSum v;
    for (std::size_t i = 0; i < p.size(); ++i) {
      m.add(p[i]);
      v.add(p[i] * (1 - p[i]));
      mean[i + 1] = m.value();
      var[i + 1] = v.value();
    }
  }
};

// The nodes in the forms the passes need, and G(t_j) = prod_i (1 - p_i d_j).
struct Nodes {
  std::vector<double> d;    // 1 - t_j = -expm1(-x_j)
  std::vector<double> t;    // e^{-x_j}
  std::vector<double> gen;  // G(t_j), flushed to 0 below kFlush
};

Nodes make_nodes(std::span<const double> p, const ExpSumRule& rule) {
  const std::size_t m = rule.x.size();
  Nodes nodes;
  nodes.d.resize(m);
  nodes.t.resize(m);
  nodes.gen.resize(m);
  double d_taylor = 0;
  bool direct = false;
  for (std::size_t j = 0; j < m; ++j) {
    nodes.d[j] = -std::expm1(-rule.x[j]);
    nodes.t[j] = std::exp(-rule.x[j]);
    if (nodes.d[j] <= kTaylorLimit)
      d_taylor = std::max(d_taylor, nodes.d[j]);
    else
      direct = true;
  }
  // Items with p > 1/4 ("large") enter the Taylor series only at nodes with d <= 1/4 (where
  // p d <= 1/4) and direct products at the other nodes; small items always use the series.
  const std::size_t n = p.size();
  const double p_max = n > 0 ? *std::max_element(p.begin(), p.end()) : 0.0;
  const double ratio = std::max(d_taylor * p_max, direct ? kTaylorLimit : 0.0);
  int terms = 1;
  if (ratio > 0)
    terms = std::clamp(
        static_cast<int>(std::ceil((std::log(double(n) + 1) + 41) / -std::log(ratio))) + 1, 1,
        kMaxTerms);
  // Power sums M_m = sum p_i^m (m = 1..terms) of the small and the large items: blocks of 64
  // items summed plainly, the blocks with Neumaier's compensation.
  std::vector<CompensatedSum> small_sum(terms), large_sum(terms);
  std::vector<double> small_block(terms, 0.0), large_block(terms, 0.0);
  std::vector<double> large_items;
  const auto flush = [&](std::vector<double>& block, std::vector<CompensatedSum>& out) {
    for (int m1 = 0; m1 < terms; ++m1) out[m1].add(block[m1]);
    std::fill(block.begin(), block.end(), 0.0);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double pi = p[i];
    const bool is_large = pi > kTaylorLimit;
    if (is_large) large_items.push_back(pi);
    double* block = is_large ? large_block.data() : small_block.data();
    double pw = pi;
    for (int m1 = 0; m1 < terms && pw > 0; ++m1) {
      block[m1] += pw;
      pw *= pi;
      if (pw < 1e-300) pw = 0;
    }
    if (i % kBlock1 == kBlock1 - 1) {
      flush(small_block, small_sum);
      flush(large_block, large_sum);
    }
  }
  flush(small_block, small_sum);
  flush(large_block, large_sum);
  std::vector<double> series(terms);
  for (std::size_t j = 0; j < m; ++j) {
    const double dj = nodes.d[j];
    const bool taylor_all = dj <= kTaylorLimit;
    // -log G = sum_m d^m M_m / m, summed from the smallest term.
    double dm = 1;
    for (int m1 = 0; m1 < terms; ++m1) {
      dm *= dj;
      const double pm = small_sum[m1].value() + (taylor_all ? large_sum[m1].value() : 0.0);
      series[m1] = dm * pm / double(m1 + 1);
    }
    double neg_log = 0;
    for (int m1 = terms; m1-- > 0;) neg_log += series[m1];
    double log_direct = 0;
    if (!taylor_all) {
      double prod = 1;
      for (const double pi : large_items) {
        const double eps = pi * dj;
        prod *= eps <= 0.5 ? 1 - eps : (1 - pi) + pi * nodes.t[j];
        if (prod < 0x1p-900) {
          prod *= 0x1p900;
          log_direct -= 900 * std::numbers::ln2;
        }
      }
      log_direct += std::log(prod);
    }
    const double g = std::exp(log_direct - neg_log);
    nodes.gen[j] = g < kFlush ? 0.0 : g;
  }
  return nodes;
}

// Shrinks the active node count m to what lambda >= lambda_low needs (ExpSumRule::nodes_for,
// incrementally: lambda_low must not decrease with k).
void shrink_active(const ExpSumRule& rule, double lambda_low, std::size_t& m) {
  const double x_needed = rule.log_right / lambda_low;
  while (m > 2 && rule.x[m - 3] >= x_needed) --m;
}

// q[k] = sum_{j < m(k)} w_j G(t_j) e^{-gamma k x_j} R_k(t_j), k = 1..n, with
// R_k(t) = sum_{i<=k} p_i t / (1 - p_i + p_i t); m(k) = nodes for lambda >= lambda_low(k).
// The weights follow e^{-gamma k x} by multiplication, re-anchored with exp every kAnchor steps.
template <typename LambdaLow>
std::vector<double> ratio_pass(std::span<const double> p, const ExpSumRule& rule,
                               const Nodes& nodes, double gamma, LambdaLow lambda_low) {
  const std::size_t n = p.size();
  std::size_t m = rule.x.size();
  std::vector<double> q(n + 1, 0.0);
  std::vector<double> local(m, 0.0), mid(m, 0.0), base(m, 0.0), weight(m, 0.0), decay(m), term(m);
  for (std::size_t j = 0; j < m; ++j) decay[j] = std::exp(-gamma * rule.x[j]);
  const double* t = nodes.t.data();
  for (std::size_t k = 1; k <= n; ++k) {
    shrink_active(rule, lambda_low(k), m);
    const double pk = p[k - 1];
    const double qk = 1.0 - pk;
    if ((k - 1) % kAnchor == 0)  // weight = w G e^{-gamma (k-1) x}; the loop below steps to k
      for (std::size_t j = 0; j < m; ++j)
        weight[j] = rule.w[j] * nodes.gen[j] * std::exp(-gamma * double(k - 1) * rule.x[j]);
    double* wt = weight.data();
    double* loc = local.data();
    double* out = term.data();
    const double* mi = mid.data();
    const double* ba = base.data();
    const double* de = decay.data();
    for (std::size_t j = 0; j < m; ++j) {
      const double v = wt[j] * de[j];
      const double wv = v < kFlush ? 0.0 : v;
      wt[j] = wv;
      const double pt = pk * t[j];
      const double r = loc[j] + pt / (qk + pt);
      loc[j] = r;
      out[j] = wv * (ba[j] + (mi[j] + r));
    }
    q[k] = sum4(out, m);
    if (k % kBlock1 == 0) {
      for (std::size_t j = 0; j < m; ++j) {
        mid[j] += local[j];
        local[j] = 0;
      }
      if (k % kBlock2 == 0)
        for (std::size_t j = 0; j < m; ++j) {
          base[j] += mid[j];
          mid[j] = 0;
        }
    }
  }
  return q;
}

// q[k] = sum_{j < m(k)} w_j e^{-k x_j} G(t_j) / G_k(t_j), k = 1..n, with the prefix
// products G_k(t) = prod_{i<=k} (1 - p_i d); m(k) as in ratio_pass.
// Factors: at nodes with d <= 1/2 (then p d <= 1/2) as 1 - p d = hi + lo exactly (Fast2Sum; the
// product of p d only perturbs log G relatively), lo / hi summed in `corr`; at nodes with d > 1/2
// as (1 - p) + p t (no cancellation; such nodes are only active for k + B <~ 2 log_right, so few
// factors accumulate there).
template <typename LambdaLow>
std::vector<double> rest_pass(std::span<const double> p, const ExpSumRule& rule, const Nodes& nodes,
                              LambdaLow lambda_low) {
  const std::size_t n = p.size();
  std::size_t m = rule.x.size();
  std::vector<double> q(n + 1, 0.0);
  std::vector<double> local(m, 1.0), mid(m, 1.0), base(m, 1.0), corr(m, 0.0), weight(m, 0.0),
      decay(m), term(m);
  for (std::size_t j = 0; j < m; ++j) decay[j] = std::exp(-rule.x[j]);
  std::size_t half = 0;  // nodes [0, half) have d <= 1/2
  while (half < m && nodes.d[half] <= 0.5) ++half;
  const double* d = nodes.d.data();
  const double* t = nodes.t.data();
  const double* gen = nodes.gen.data();
  for (std::size_t k = 1; k <= n; ++k) {
    shrink_active(rule, lambda_low(k), m);
    const double pk = p[k - 1];
    const double qk = 1.0 - pk;
    if ((k - 1) % kAnchor == 0)  // weight = w e^{-(k-1) x}; the loops below step to k
      for (std::size_t j = 0; j < m; ++j)
        weight[j] = rule.w[j] * std::exp(-double(k - 1) * rule.x[j]);
    double* wt = weight.data();
    double* loc = local.data();
    double* co = corr.data();
    double* out = term.data();
    const double* mi = mid.data();
    const double* ba = base.data();
    const double* de = decay.data();
    const std::size_t near = std::min(half, m);
    for (std::size_t j = 0; j < near; ++j) {
      const double v = wt[j] * de[j];
      const double wv = v < kFlush ? 0.0 : v;
      wt[j] = wv;
      const double eps = pk * d[j];
      const double hi = 1.0 - eps;
      const double lo = (1.0 - hi) - eps;
      const double c = co[j] + lo * (1.0 + eps * (1.0 + eps * (1.0 + eps)));  // ~ lo / hi
      co[j] = c;
      const double g = loc[j] * hi;
      loc[j] = g;
      out[j] = wv * gen[j] / ((ba[j] * (mi[j] * g)) * (1.0 + c));
    }
    for (std::size_t j = near; j < m; ++j) {
      const double v = wt[j] * de[j];
      const double wv = v < kFlush ? 0.0 : v;
      wt[j] = wv;
      const double g = loc[j] * (qk + pk * t[j]);
      loc[j] = g;
      out[j] = wv * gen[j] / ((ba[j] * (mi[j] * g)) * (1.0 + co[j]));
    }
    q[k] = sum4(out, m);
    if (k % kBlock1 == 0) {
      for (std::size_t j = 0; j < m; ++j) {
        mid[j] *= local[j];
        local[j] = 1;
      }
      if (k % kBlock2 == 0)
        for (std::size_t j = 0; j < m; ++j) {
          base[j] *= mid[j];
          mid[j] = 1;
        }
    }
  }
  return q;
}

struct FastPart {
  std::vector<double> expected;
  double bound = 0;  // quadrature + excluded mass (no rounding)
  std::size_t nodes = 0;
};

// Builds the rule for a lambda range that depends on the Bernstein level L: the excluded mass
// costs k_out * 2 e^{-L} <= budget / 4.
template <typename Range>
ExpSumRule rule_for(double budget, Range range, double& log_inv) {
  double k_out = 2;
  ExpSumRule rule;
  for (int it = 0; it < 4; ++it) {
    log_inv = std::log(8 * k_out / budget);
    const auto [lo, hi, lambda_abs] = range(log_inv);
    rule = make_exp_sum_rule(lo, hi, lambda_abs, budget / 2);
    if (rule.k_out <= k_out) break;
    k_out = rule.k_out * 1.01;
  }
  return rule;
}

struct LambdaRange {
  double lo, hi, abs;
};

FastPart fbeta_fast(std::span<const double> p, double beta, double budget) {
  const std::size_t n = p.size();
  const auto nd = double(n);
  const double gamma = 1 / (beta * beta);
  const PrefixMoments mom(p);
  const double mu = mom.mean[n];
  double log_inv = 0;
  double s0 = 1;
  const ExpSumRule rule = rule_for(
      budget,
      [&](double level) {
        const double r = bernstein_radius(level, mom.var[n]);
        s0 = std::max(1.0, mu - r);
        const double s1 = std::clamp(mu + r, s0, nd);
        return LambdaRange{s0 + gamma, s1 + gamma * nd, nd * (1 + gamma)};
      },
      log_inv);
  const Nodes nodes = make_nodes(p, rule);
  const auto q =
      ratio_pass(p, rule, nodes, gamma, [&](std::size_t k) { return s0 + gamma * double(k); });
  FastPart out;
  out.nodes = rule.x.size();
  out.expected.resize(n + 1);
  out.expected[0] = std::exp(log_prob_no_success(p));
  double emax = out.expected[0];
  for (std::size_t k = 1; k <= n; ++k) {
    const double ma = mom.mean[k];
    const double ea2 = mom.var[k] + ma * ma;
    const double mixed = ea2 + ma * (mu - ma) + gamma * double(k) * ma;  // E[A (S + c)]
    out.expected[k] = (1 + gamma) * (q[k] + ma * rule.tail1 - mixed * rule.tail2);
    emax = std::max(emax, out.expected[k]);
  }
  out.bound = rule.rel_error() * std::max(emax, 1.0) + rule.k_out * 2 * std::exp(-log_inv);
  return out;
}

// E[recall of the first k items], k = 0..n.
FastPart recall_fast(std::span<const double> p, double budget) {
  const std::size_t n = p.size();
  const auto nd = double(n);
  const PrefixMoments mom(p);
  const double mu = mom.mean[n];
  double log_inv = 0;
  const ExpSumRule rule = rule_for(
      budget,
      [&](double level) {
        const double r = bernstein_radius(level, mom.var[n]);
        const double s0 = std::max(1.0, mu - r);
        return LambdaRange{s0, std::clamp(mu + r, s0, nd), nd};
      },
      log_inv);
  const Nodes nodes = make_nodes(p, rule);
  const double lambda_min = rule.lambda_min;
  const auto q = ratio_pass(p, rule, nodes, 0.0, [&](std::size_t) { return lambda_min; });
  FastPart out;
  out.nodes = rule.x.size();
  out.expected.resize(n + 1);
  const double none = std::exp(log_prob_no_success(p));
  out.expected[0] = none;
  for (std::size_t k = 1; k < n; ++k) {
    const double ma = mom.mean[k];
    const double mixed = mom.var[k] + ma * ma + ma * (mu - ma);  // E[A S]
    out.expected[k] = none + q[k] + ma * rule.tail1 - mixed * rule.tail2;
  }
  out.expected[n] = 1.0;  // all items predicted: recall is 1 (or 1 by convention)
  out.bound = rule.rel_error() + rule.k_out * 2 * std::exp(-log_inv);
  return out;
}

FastPart jaccard_fast(std::span<const double> p, double budget) {
  const std::size_t n = p.size();
  const auto nd = double(n);
  const PrefixMoments mom(p);
  const double mu = mom.mean[n];
  const double var = mom.var[n];
  std::vector<double> low(n + 1, 0.0);
  double log_inv = 0;
  const ExpSumRule rule = rule_for(
      budget,
      [&](double level) {
        double lo = nd;
        double hi = 1;
        for (std::size_t k = 1; k <= n; ++k) {
          const double mb = std::max(0.0, mu - mom.mean[k]);
          const double r = bernstein_radius(level, var - mom.var[k]);
          low[k] = double(k) + std::max(0.0, mb - r);
          lo = std::min(lo, low[k]);
          hi = std::max(hi, double(k) + std::min(nd - double(k), mb + r));
        }
        return LambdaRange{lo, std::max(hi, lo), nd};
      },
      log_inv);
  const Nodes nodes = make_nodes(p, rule);
  const auto q = rest_pass(p, rule, nodes, [&](std::size_t k) { return low[k]; });
  FastPart out;
  out.nodes = rule.x.size();
  out.expected.resize(n + 1);
  out.expected[0] = std::exp(log_prob_no_success(p));
  double emax = out.expected[0];
  for (std::size_t k = 1; k <= n; ++k) {
    const double ma = mom.mean[k];
    const double inv = q[k] + rule.tail1 - (double(k) + (mu - ma)) * rule.tail2;  // E[1/(k+B)]
    out.expected[k] = ma * inv;
    emax = std::max(emax, out.expected[k]);
  }
  out.bound = rule.rel_error() * std::max(emax, 1.0) + rule.k_out * 2 * std::exp(-log_inv);
  return out;
}

}  // namespace

std::optional<IndependentExpectations> expected_fast(std::span<const double> sorted,
                                                     const DecideMetric& metric, double tolerance) {
  const Family family = metric.family();
  if (family != Family::kFBeta && family != Family::kJaccard && family != Family::kBalancedAccuracy)
    return std::nullopt;
  const std::size_t n = sorted.size();
  if (n == 0 || !(tolerance > 0)) return std::nullopt;
  // The rounding allowance grows with n (past 1e-12 near 6.4 million items): a tolerance too
  // close to it is raised to the floor, so the O(n log n) path never gives way to the O(n^2)
  // one for want of digits (Decision::error_bound reports the bound reached). Below about 1.7
  // million items the default 1e-12 is kept as it is.
  if (tolerance < 2 * rounding_allowance(n, 256)) tolerance = fast_tolerance_floor(n);
  const double budget = tolerance - rounding_allowance(n, 256);
  if (!(budget > 0)) return std::nullopt;
  IndependentExpectations out;
  out.method = DecideMethod::kFast;
  std::size_t nodes = 0;
  switch (family) {
    case Family::kFBeta: {
      FastPart part = fbeta_fast(sorted, metric.beta(), budget);
      out.expected = std::move(part.expected);
      out.error_bound = part.bound;
      nodes = part.nodes;
      break;
    }
    case Family::kJaccard: {
      FastPart part = jaccard_fast(sorted, budget);
      out.expected = std::move(part.expected);
      out.error_bound = part.bound;
      nodes = part.nodes;
      break;
    }
    default: {
      std::vector<double> complement(n);
      for (std::size_t i = 0; i < n; ++i) complement[i] = 1.0 - sorted[n - 1 - i];
      const FastPart tpr = recall_fast(sorted, budget);
      const FastPart tnr = recall_fast(complement, budget);
      out.expected.resize(n + 1);
      for (std::size_t k = 0; k <= n; ++k)
        out.expected[k] = (tpr.expected[k] + tnr.expected[n - k]) / 2;
      out.error_bound = (tpr.bound + tnr.bound) / 2;
      nodes = std::max(tpr.nodes, tnr.nodes);
      break;
    }
  }
  out.error_bound += rounding_allowance(n, nodes);
  if (!(out.error_bound <= tolerance)) return std::nullopt;
  return out;
}

}  // namespace rateopt::detail
