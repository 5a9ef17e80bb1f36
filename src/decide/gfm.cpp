// GFM, the General F-measure Maximizer (Waegeman et al. 2014, Algorithm 1), for F-beta under any
// joint distribution of the labels, and its parameters counted from weighted label-vector samples.
//
// With p_is = P(y_i = 1, s_y = s) and W[s][k] = (1 + b^2) / (b^2 s + k) (b = beta),
//   Delta[i][k] = sum_s p_is W[s][k] = E[(1 + b^2) y_i / (b^2 s_y + k)],
// and for every prediction h with |h| = k >= 1, E[F_beta(y, h)] = sum_{i in h} Delta[i][k]
// exactly. So the best set of size k is the top k of column k of Delta, and the empty prediction
// scores P(y = 0) F(empty, empty), F(empty, empty) = DecideOptions::empty_score (1 by default).
//
// Cost, with r = the labels whose row of P is not all zero and c = the cardinalities s whose
// column of P is not all zero (r, c <= m):
//   * Delta is formed for the r live rows and the columns k = 1..r at most, O(r c r): a label that
//     is never positive has Delta = 0 in every column, and for k > r the top k holds all live
//     rows, so E[k] = sum_s (sum_i p_is) W[s][k], O(c) per k; and E[k] < E[r] there (Delta
//     falls in k), so the optimum has k <= r.
//   * Each column k <= r is sorted (value desc, index asc) by insertion sort started from the
//     order of column k - 1. Orders change little from one k to the next (two rows swap at most
//     c - 1 times over all k; measured: almost no swaps after column 1 on sampled P), so this
//     costs O(r + swaps) per column, O(r^2) in all in practice.
//   * Without all_k, columns are formed in blocks of 8 and stop at the first k whose bound
//     UB(k) = sum_s (sum_i p_is) W[s][k] >= E[k'] for all k' >= k falls below the best E found:
//     exact, and only the columns up to a few times the likely cardinalities are formed.
//   * decide_gfm reads the m x m matrix once (validation + live rows/columns, O(m^2));
//     decide_gfm_samples never forms it.
// Options: all_k fills expected_by_k (E[k] for k = 0..m); method must be auto or exact;
// early_stop and truncation do not apply and are ignored.
//
// Low numerical rank of W (measured with an SVD at m = 100: rank 17-18 at 1e-15 relative, 15-17
// at 1e-13, for beta^2 = 1, 4, 1/4): Delta = (P U) V^T would cost 2 r m rank instead of r c r.
// The realistic supports (c <= ~20 live cardinalities) are already at or below that rank, so it
// only pays for dense P (c ~ m, ~2.8x fewer flops at m = 100), and it needs a per-(m, beta)
// factorisation with an entrywise error bound. Not implemented: the exact product is kept.
#include <fmt/format.h>

// Single-threaded kernels: decide runs one instance per thread (batch helpers parallelise over
// instances), so Eigen must not start threads of its own inside the product (the build defines
// EIGEN_DONT_PARALLELIZE for the whole library; kept here for this file's sake).
#ifndef EIGEN_DONT_PARALLELIZE
#define EIGEN_DONT_PARALLELIZE
#endif
#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "decide/conventions.hpp"
#include "decide/gfm_internal.hpp"
#include "decide/ties.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {
namespace {

void check_probability(double x, std::string_view what, std::size_t i, std::size_t s) {
  RATEOPT_CHECK(std::isfinite(x) && x >= 0 && x <= 1,
                "decide_gfm: {} at label {}, cardinality {} is {}, expected a probability in "
                "[0, 1]",
                what, i, s, x);
}

void check_gfm_input(const GfmInput& input) {
  const std::size_t m = input.m;
  RATEOPT_CHECK(m == 0 || (input.p.size() % m == 0 && input.p.size() / m == m),
                "decide_gfm: P has {} entries, expected m * m = {} * {}", input.p.size(), m, m);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t s = 0; s < m; ++s) check_probability(input.p[i * m + s], "P", i, s + 1);
  RATEOPT_CHECK(std::isfinite(input.p_zero) && input.p_zero >= 0 && input.p_zero <= 1,
                "decide_gfm: p_zero = P(y = 0) is {}, expected a probability in [0, 1]",
                input.p_zero);
}

void check_method(DecideMethod method, std::string_view who) {
  RATEOPT_CHECK(method == DecideMethod::kAuto || method == DecideMethod::kExact,
                "{}: method '{}' is not available (this setting has one exact method: auto or "
                "exact)",
                who, to_string(method));
}

// Keeps `order` (row positions) sorted by (value desc, position asc) for the next column of
// Delta: gathers the values in the current order, then insertion-sorts the (value, position)
// pairs, O(n + inversions). `sorted` receives the values in the new order.
void resort_column(std::vector<std::uint32_t>& order, std::vector<double>& sorted,
                   const double* column) {
  const std::size_t n = order.size();
  for (std::size_t t = 0; t < n; ++t) sorted[t] = column[order[t]];
  for (std::size_t t = 1; t < n; ++t) {
    const double x = sorted[t];
    const std::uint32_t xi = order[t];
    std::size_t u = t;
    while (u > 0 && (sorted[u - 1] < x || (sorted[u - 1] == x && order[u - 1] > xi))) {
      sorted[u] = sorted[u - 1];
      order[u] = order[u - 1];
      --u;
    }
    sorted[u] = x;
    order[u] = xi;
  }
}

}  // namespace

namespace detail {

GfmConsistency gfm_consistency(const GfmInput& input) {
  check_gfm_input(input);
  const std::size_t m = input.m;
  GfmConsistency out;
  double p_nonzero = 0;  // sum_s (1/s) sum_i p_is = P(y != 0) for an exact P
  for (std::size_t s = 1; s <= m; ++s) {
    double column = 0;
    for (std::size_t i = 0; i < m; ++i) column += input.p[i * m + s - 1];
    const double p_card = column / static_cast<double>(s);  // P(s_y = s)
    p_nonzero += p_card;
    for (std::size_t i = 0; i < m; ++i)
      out.max_row_above_card = std::max(out.max_row_above_card, input.p[i * m + s - 1] - p_card);
  }
  for (std::size_t i = 0; i < m; ++i) {
    double row = 0;
    for (std::size_t s = 0; s < m; ++s) row += input.p[i * m + s];
    out.max_marginal_above_one = std::max(out.max_marginal_above_one, row - 1);
  }
  if (m > 0) {
    double low = input.p[m - 1];
    double high = low;
    for (std::size_t i = 0; i < m; ++i) {
      low = std::min(low, input.p[i * m + m - 1]);
      high = std::max(high, input.p[i * m + m - 1]);
    }
    out.full_column_spread = high - low;
  }
  out.p_zero_error = std::abs(input.p_zero - (1 - p_nonzero));
  return out;
}

}  // namespace detail

namespace {

// The live part of a GFM input: `rows` = the labels that are ever positive (ascending), `cards` =
// the cardinalities s (1-based, ascending) with mass, pc(a, b) = P(y_{rows[a]} = 1, s_y =
// cards[b]).
struct LiveGfm {
  std::size_t m = 0;
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> cards;
  Eigen::MatrixXd pc;
  double p_zero = 0;
};

void check_gfm_call(const DecideMetric& metric, const DecideOptions& options,
                    std::string_view who) {
  RATEOPT_CHECK(metric.family() == DecideMetric::Family::kFBeta,
                "{}: GFM maximises F-beta only (metric 'f1' or 'fbeta:B'), got '{}'", who,
                metric.name());
  check_method(options.method, who);
  detail::check_conventions(metric, options, who, false);
}

// empty_score = F(empty prediction, empty truth) (DecideOptions): the empty set scores
// empty_score * P(y = 0).
Decision solve_gfm(const LiveGfm& g, double beta, bool all_k, double empty_score) {
  const std::size_t m = g.m;
  const double b2 = beta * beta;
  const double scale = 1 + b2;
  const auto r = static_cast<Eigen::Index>(g.rows.size());
  const auto c = static_cast<Eigen::Index>(g.cards.size());
  const auto w_entry = [&](Eigen::Index b, std::size_t k) {
    const auto s = static_cast<double>(g.cards[static_cast<std::size_t>(b)]);
    return scale / (b2 * s + static_cast<double>(k));
  };

  // Delta for the live rows and the columns k = 1..r (column-major: column k - 1 contiguous),
  // formed in blocks of columns. Unless every E[k] is wanted (all_k), the blocks stop at the
  // first k whose bound
  //   E[k'] <= sum_i Delta[i][k'] <= UB(k) = sum_s (sum_i p_is) W[s][k]   for every k' >= k
  // (Delta >= 0 falls in k) is below the best E so far: exact, and typically only the columns
  // up to a few times the largest likely cardinality are formed.
  Eigen::MatrixXd delta(r, r);
  Eigen::MatrixXd w_block;
  const Eigen::VectorXd card_mass = g.pc.colwise().sum().transpose();
  const auto upper_bound = [&](std::size_t k) {
    double sum = 0;
    for (Eigen::Index b = 0; b < c; ++b) sum += card_mass(b) * w_entry(b, k);
    return sum;
  };

  std::vector<double> expected(m + 1, 0.0);
  expected[0] = empty_score * g.p_zero;
  std::size_t best = 0;
  std::vector<std::uint32_t> order(g.rows.size());
  std::vector<double> sorted(g.rows.size());
  // A second bound from the sorted column k (in `sorted`): for k' > k, W[s][k'] / W[s][k] =
  // (b^2 s + k) / (b^2 s + k') grows with s, so column k' <= q(k') column k entrywise with
  // q(k') = (b^2 s_max + k) / (b^2 s_max + k'), and E[k'] <= q(k') (top-k' sum of column k).
  const double b2_smax = c > 0 ? b2 * static_cast<double>(g.cards.back()) : 0.0;
  const auto column_bound = [&](std::size_t k) {
    double prefix = 0, bound = 0;
    for (std::size_t t = 0; t < sorted.size(); ++t) {
      prefix += sorted[t];
      if (t + 1 > k)
        bound = std::max(bound, prefix * (b2_smax + static_cast<double>(k)) /
                                    (b2_smax + static_cast<double>(t + 1)));
    }
    return bound;
  };
  std::iota(order.begin(), order.end(), 0U);
  Eigen::Index formed = 0;  // columns 1..formed of Delta are known
  constexpr Eigen::Index kBlock = 8;
  while (formed < r) {
    // Stop when no k > formed can beat the best (a relative margin far above rounding).
    if (!all_k && formed > 0 &&
        std::min(upper_bound(static_cast<std::size_t>(formed) + 1),
                 column_bound(static_cast<std::size_t>(formed))) *
                (1 + 1e-12) <
            expected[best])
      break;
    const Eigen::Index width = std::min(kBlock, r - formed);
    w_block.resize(c, width);
    for (Eigen::Index t = 0; t < width; ++t)
      for (Eigen::Index b = 0; b < c; ++b)
        w_block(b, t) = w_entry(b, static_cast<std::size_t>(formed + t + 1));
    delta.middleCols(formed, width).noalias() = g.pc * w_block;
    if (formed == 0) {  // column 1 is sorted from scratch, later ones from the previous order
      const double* first = delta.data();
      std::sort(order.begin(), order.end(), [first](std::uint32_t a, std::uint32_t b) {
        return first[a] > first[b] || (first[a] == first[b] && a < b);
      });
    }
    for (Eigen::Index k = formed + 1; k <= formed + width; ++k) {
      resort_column(order, sorted, delta.data() + (k - 1) * r);
      double sum = 0;
      for (Eigen::Index t = 0; t < k; ++t) sum += sorted[static_cast<std::size_t>(t)];
      const auto kk = static_cast<std::size_t>(k);
      expected[kk] = sum;
      if (sum > expected[best]) best = kk;
    }
    formed += width;
  }
  // Smallest k among ties (docs/decide.md); k > formed cannot tie (the bound's margin).
  best = detail::argmax_with_ties(
      std::span<const double>(expected).first(static_cast<std::size_t>(formed) + 1));
  // k > r: every live row is in the top k; E[k] = sum_s (sum_i p_is) W[s][k].
  if (all_k)
    for (std::size_t k = static_cast<std::size_t>(r) + 1; k <= m; ++k) expected[k] = upper_bound(k);

  // The optimum has k <= r: for k > r, E[k] = sum_i Delta[i][k] <= E[r] (1 - 1/((1 + b^2) m + 1))
  // (Delta falls strictly in k; the gap is far above rounding), so those k are only reported.

  Decision out;
  out.method = DecideMethod::kExact;
  out.expected = expected[best];
  if (best > 0) {
    // Column `best` of Delta over the live rows, ordered by (Delta desc, label asc).
    std::vector<std::pair<double, std::uint32_t>> column(g.rows.size());
    for (Eigen::Index a = 0; a < r; ++a)
      column[static_cast<std::size_t>(a)] = {delta(a, static_cast<Eigen::Index>(best) - 1),
                                             g.rows[static_cast<std::size_t>(a)]};
    std::partial_sort(column.begin(), column.begin() + static_cast<std::ptrdiff_t>(best),
                      column.end(), [](const auto& x, const auto& y) {
                        return x.first > y.first || (x.first == y.first && x.second < y.second);
                      });
    out.selected.reserve(best);
    for (std::size_t t = 0; t < best; ++t) out.selected.push_back(column[t].second);
  }
  if (all_k) out.expected_by_k = std::move(expected);
  return out;
}

// Validates weighted label-vector samples against m; returns the total weight.
double check_samples(LabelSetsView samples, std::span<const double> weights, std::size_t m,
                     std::string_view who) {
  const std::size_t n = samples.size();
  RATEOPT_CHECK(n > 0, "{}: no samples", who);
  RATEOPT_CHECK(samples.indptr.front() == 0, "{}: indptr[0] is {}, expected 0", who,
                samples.indptr.front());
  RATEOPT_CHECK(samples.indptr.back() >= 0 &&
                    static_cast<std::size_t>(samples.indptr.back()) == samples.indices.size(),
                "{}: indptr ends at {}, expected the number of indices {}", who,
                samples.indptr.back(), samples.indices.size());
  RATEOPT_CHECK(weights.empty() || weights.size() == n, "{}: {} weights for {} samples", who,
                weights.size(), n);
  // Offsets first (with both ends checked, monotone offsets keep every sample inside indices).
  for (std::size_t j = 0; j < n; ++j)
    RATEOPT_CHECK(samples.indptr[j] <= samples.indptr[j + 1],
                  "{}: indptr decreases at sample {} ({} > {})", who, j, samples.indptr[j],
                  samples.indptr[j + 1]);
  double total = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const auto begin = samples.indptr[j];
    const auto end = samples.indptr[j + 1];
    RATEOPT_CHECK(static_cast<std::size_t>(end - begin) <= m,
                  "{}: sample {} holds {} labels, expected at most m = {}", who, j, end - begin, m);
    for (auto t = begin; t < end; ++t) {
      const std::int32_t i = samples.indices[static_cast<std::size_t>(t)];
      RATEOPT_CHECK(i >= 0 && static_cast<std::size_t>(i) < m,
                    "{}: sample {} holds label {}, expected a label in [0, {})", who, j, i, m);
      RATEOPT_CHECK(t == begin || samples.indices[static_cast<std::size_t>(t - 1)] < i,
                    "{}: the labels of sample {} are not sorted and unique", who, j);
    }
    const double w = weights.empty() ? 1.0 : weights[j];
    RATEOPT_CHECK(std::isfinite(w) && w >= 0, "{}: weight {} is {}, expected a finite value >= 0",
                  who, j, w);
    total += w;
  }
  RATEOPT_CHECK(total > 0 && std::isfinite(total),
                "{}: the weights sum to {}, expected a positive finite total", who, total);
  return total;
}

}  // namespace

GfmInput gfm_from_samples(LabelSetsView samples, std::span<const double> weights, std::size_t m) {
  const double total = check_samples(samples, weights, m, "gfm_from_samples");
  GfmInput out;
  out.m = m;
  out.p.assign(m * m, 0.0);
  for (std::size_t j = 0; j < samples.size(); ++j) {
    const double w = weights.empty() ? 1.0 : weights[j];
    const auto begin = static_cast<std::size_t>(samples.indptr[j]);
    const auto end = static_cast<std::size_t>(samples.indptr[j + 1]);
    if (begin == end) out.p_zero += w;
    for (std::size_t t = begin; t < end; ++t)
      out.p[static_cast<std::size_t>(samples.indices[t]) * m + (end - begin) - 1] += w;
  }
  for (double& x : out.p)
    if (x != 0) x /= total;  // only the touched entries (m^2 divisions cost more than the rest)
  out.p_zero /= total;
  return out;
}

Decision decide_gfm(const GfmInput& input, const DecideMetric& metric,
                    const DecideOptions& options) {
  check_gfm_call(metric, options, "decide_gfm");
  const std::size_t m = input.m;
  RATEOPT_CHECK(m == 0 || (input.p.size() % m == 0 && input.p.size() / m == m),
                "decide_gfm: P has {} entries, expected m * m = {} * {}", input.p.size(), m, m);

  LiveGfm g;
  g.m = m;
  g.p_zero = input.p_zero;
  // Two passes written so that the compiler vectorises them (the scan is most of the cost at
  // realistic sparsity). 1: range check; NaN fails both comparisons. 2: live rows and columns by
  // OR-ing the bit patterns (entries are >= 0 now, so a pattern is 0 exactly for +0.0; a -0.0
  // entry marks its row and column live, which only adds a zero row or column to the product).
  // (An integer OR, not a floating-point sum: a sum is a reduction the compiler may not reorder.)
  unsigned bad = !(input.p_zero >= 0) || !(input.p_zero <= 1) ? 1U : 0U;
  const double* p = input.p.data();
  for (std::size_t k = 0; k < m * m; ++k) bad |= (p[k] >= 0.0 && p[k] <= 1.0) ? 0U : 1U;
  if (bad != 0) check_gfm_input(input);  // throws, naming the first offending entry
  std::vector<std::uint64_t> column_bits(m, 0);
  for (std::size_t i = 0; i < m; ++i) {
    const double* row = p + i * m;
    std::uint64_t row_bits = 0;
    for (std::size_t s = 0; s < m; ++s) {
      const auto u = std::bit_cast<std::uint64_t>(row[s]);
      row_bits |= u;
      column_bits[s] |= u;
    }
    if (row_bits != 0) g.rows.push_back(static_cast<std::uint32_t>(i));
  }
  for (std::size_t s = 0; s < m; ++s)
    if (column_bits[s] != 0) g.cards.push_back(static_cast<std::uint32_t>(s + 1));
  g.pc.resize(static_cast<Eigen::Index>(g.rows.size()), static_cast<Eigen::Index>(g.cards.size()));
  for (std::size_t a = 0; a < g.rows.size(); ++a)
    for (std::size_t b = 0; b < g.cards.size(); ++b)
      g.pc(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) =
          input.p[g.rows[a] * m + g.cards[b] - 1];
  return solve_gfm(g, metric.beta(), options.all_k, options.empty_score);
}

Decision decide_gfm_samples(LabelSetsView samples, std::span<const double> weights, std::size_t m,
                            const DecideMetric& metric, const DecideOptions& options) {
  check_gfm_call(metric, options, "decide_gfm_samples");
  const double total = check_samples(samples, weights, m, "decide_gfm_samples");
  const std::size_t n = samples.size();
  const auto weight = [&](std::size_t j) { return weights.empty() ? 1.0 : weights[j]; };
  // Live rows and cardinalities: those of the samples with positive weight (exactly the
  // non-zero rows and columns of gfm_from_samples' P), numbered in ascending order.
  constexpr auto kDead = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> row_of(m, kDead);
  std::vector<std::uint32_t> card_of(m + 1, kDead);
  for (std::size_t j = 0; j < n; ++j) {
    if (!(weight(j) > 0)) continue;
    const auto begin = static_cast<std::size_t>(samples.indptr[j]);
    const auto end = static_cast<std::size_t>(samples.indptr[j + 1]);
    if (begin == end) continue;
    card_of[end - begin] = 0;
    for (std::size_t t = begin; t < end; ++t)
      row_of[static_cast<std::size_t>(samples.indices[t])] = 0;
  }
  LiveGfm g;
  g.m = m;
  for (std::size_t i = 0; i < m; ++i)
    if (row_of[i] != kDead) {
      row_of[i] = static_cast<std::uint32_t>(g.rows.size());
      g.rows.push_back(static_cast<std::uint32_t>(i));
    }
  for (std::size_t s = 1; s <= m; ++s)
    if (card_of[s] != kDead) {
      card_of[s] = static_cast<std::uint32_t>(g.cards.size());
      g.cards.push_back(static_cast<std::uint32_t>(s));
    }
  // The same sums, in the same order, as gfm_from_samples: identical P entries.
  g.pc.setZero(static_cast<Eigen::Index>(g.rows.size()), static_cast<Eigen::Index>(g.cards.size()));
  for (std::size_t j = 0; j < n; ++j) {
    const double w = weight(j);
    const auto begin = static_cast<std::size_t>(samples.indptr[j]);
    const auto end = static_cast<std::size_t>(samples.indptr[j + 1]);
    if (begin == end) g.p_zero += w;
    if (!(w > 0)) continue;
    for (std::size_t t = begin; t < end; ++t)
      g.pc(row_of[static_cast<std::size_t>(samples.indices[t])], card_of[end - begin]) += w;
  }
  for (Eigen::Index a = 0; a < g.pc.size(); ++a)
    if (g.pc.data()[a] != 0) g.pc.data()[a] /= total;
  g.p_zero /= total;
  return solve_gfm(g, metric.beta(), options.all_k, options.empty_score);
}

}  // namespace rateopt
