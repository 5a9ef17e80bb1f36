// GFM, the General F-measure Maximizer (Waegeman et al. 2014, Algorithm 1), for F-beta under any
// joint distribution of the labels, and its parameters counted from weighted label-vector samples.
//
// With p_is = P(y_i = 1, s_y = s) and W[s][k] = (1 + b^2) / (b^2 s + k) (b = beta),
//   Delta[i][k] = sum_s p_is W[s][k] = E[(1 + b^2) y_i / (b^2 s_y + k)],
// and for every prediction h with |h| = k >= 1, E[F_beta(y, h)] = sum_{i in h} Delta[i][k]
// exactly. So the best set of size k is the top k of column k of Delta, and the empty prediction
// scores P(y = 0) (F(empty, empty) = 1).
//
// Cost, with r = the labels whose row of P is not all zero and c = the cardinalities s whose
// column of P is not all zero (r, c <= m):
//   * Delta is formed for the r live rows and the columns k = 1..r only, O(r c r): a label that
//     is never positive has Delta = 0 in every column, and for k > r the top k holds all live
//     rows, so E[k] = sum_s (sum_i p_is) W[s][k] is a vector-matrix product, O(c (m - r)).
//     For k > r, E[k] < E[r] (Delta falls in k), so the optimum has k <= r.
//   * Each column k <= r is sorted (value desc, index asc) by insertion sort started from the
//     order of column k - 1. Orders change little from one k to the next (two rows swap at most
//     c - 1 times over all k), so this costs O(r + swaps) per column, O(r^2) worst case.
//
// Low numerical rank of W: W is a Cauchy matrix and has numerical rank ~15-20 at m = 100, so
// Delta = (P U) V^T would cost 2 m^2 rank instead of m^2 c. That only pays when c is well above
// the rank (dense P); see the bench note in bench/bench_gfm.cpp for the measurement and why the
// exact product is kept.
#include <fmt/format.h>

// Single-threaded kernels: decide runs one instance per thread (batch helpers parallelise over
// instances), so Eigen must not start its own OpenMP team inside the product.
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "common/check.hpp"
#include "decide/gfm_internal.hpp"
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
    out.max_card_deficit = std::max(out.max_card_deficit, -p_card);
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

GfmInput gfm_from_samples(LabelSetsView samples, std::span<const double> weights, std::size_t m) {
  const std::size_t n = samples.size();
  RATEOPT_CHECK(n > 0, "gfm_from_samples: no samples");
  RATEOPT_CHECK(samples.indptr.front() == 0, "gfm_from_samples: indptr[0] is {}, expected 0",
                samples.indptr.front());
  RATEOPT_CHECK(samples.indptr.back() >= 0 &&
                    static_cast<std::size_t>(samples.indptr.back()) == samples.indices.size(),
                "gfm_from_samples: indptr ends at {}, expected the number of indices {}",
                samples.indptr.back(), samples.indices.size());
  RATEOPT_CHECK(weights.empty() || weights.size() == n,
                "gfm_from_samples: {} weights for {} samples", weights.size(), n);
  double total = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double w = weights.empty() ? 1.0 : weights[j];
    RATEOPT_CHECK(std::isfinite(w) && w >= 0,
                  "gfm_from_samples: weight {} is {}, expected a finite value >= 0", j, w);
    total += w;
  }
  RATEOPT_CHECK(total > 0 && std::isfinite(total),
                "gfm_from_samples: the weights sum to {}, expected a positive finite total", total);

  GfmInput out;
  out.m = m;
  out.p.assign(m * m, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    const auto begin = samples.indptr[j];
    const auto end = samples.indptr[j + 1];
    RATEOPT_CHECK(begin <= end, "gfm_from_samples: indptr decreases at sample {} ({} > {})", j,
                  begin, end);
    const double w = weights.empty() ? 1.0 : weights[j];
    const auto s = static_cast<std::size_t>(end - begin);
    RATEOPT_CHECK(s <= m, "gfm_from_samples: sample {} holds {} labels, expected at most m = {}", j,
                  s, m);
    if (s == 0) {
      out.p_zero += w;
      continue;
    }
    for (auto t = begin; t < end; ++t) {
      const std::int32_t i = samples.indices[static_cast<std::size_t>(t)];
      RATEOPT_CHECK(i >= 0 && static_cast<std::size_t>(i) < m,
                    "gfm_from_samples: sample {} holds label {}, expected a label in [0, {})", j, i,
                    m);
      RATEOPT_CHECK(t == begin || samples.indices[static_cast<std::size_t>(t - 1)] < i,
                    "gfm_from_samples: the labels of sample {} are not sorted and unique", j);
      out.p[static_cast<std::size_t>(i) * m + s - 1] += w;
    }
  }
  for (double& x : out.p)
    if (x != 0) x /= total;  // only the touched entries (m^2 divisions cost more than the rest)
  out.p_zero /= total;
  return out;
}

Decision decide_gfm(const GfmInput& input, const DecideMetric& metric,
                    const DecideOptions& options) {
  RATEOPT_CHECK(metric.family() == DecideMetric::Family::kFBeta,
                "decide_gfm: GFM maximises F-beta only (metric 'f1' or 'fbeta:B'), got '{}'",
                metric.name());
  check_method(options.method, "decide_gfm");
  const std::size_t m = input.m;
  RATEOPT_CHECK(m == 0 || (input.p.size() % m == 0 && input.p.size() / m == m),
                "decide_gfm: P has {} entries, expected m * m = {} * {}", input.p.size(), m, m);
  const double b2 = metric.beta() * metric.beta();
  const double scale = 1 + b2;

  // One pass: validation (NaN fails both comparisons) and the live rows (labels that are ever
  // positive) and live cardinalities (columns s of P).
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> cards;  // s - 1
  std::vector<unsigned char> card_live(m, 0);
  bool in_range = input.p_zero >= 0 && input.p_zero <= 1;
  for (std::size_t i = 0; i < m; ++i) {
    const double* row = input.p.data() + i * m;
    bool live = false;
    for (std::size_t s = 0; s < m; ++s) {
      const double x = row[s];
      in_range &= x >= 0 && x <= 1;
      live |= x != 0;
      card_live[s] |= static_cast<unsigned char>(x != 0);
    }
    if (live) rows.push_back(static_cast<std::uint32_t>(i));
  }
  if (!in_range) check_gfm_input(input);  // throws with the first offending entry
  for (std::size_t s = 0; s < m; ++s)
    if (card_live[s] != 0) cards.push_back(static_cast<std::uint32_t>(s));
  const auto r = static_cast<Eigen::Index>(rows.size());
  const auto c = static_cast<Eigen::Index>(cards.size());

  // Delta for the live rows and the columns k = 1..r (column-major: column k - 1 contiguous).
  Eigen::MatrixXd pc(r, c);
  for (Eigen::Index a = 0; a < r; ++a)
    for (Eigen::Index b = 0; b < c; ++b)
      pc(a, b) =
          input.p[rows[static_cast<std::size_t>(a)] * m + cards[static_cast<std::size_t>(b)]];
  const auto w_entry = [&](Eigen::Index b, std::size_t k) {
    const double s = static_cast<double>(cards[static_cast<std::size_t>(b)] + 1);
    return scale / (b2 * s + static_cast<double>(k));
  };
  Eigen::MatrixXd w(c, r);
  for (Eigen::Index k = 0; k < r; ++k)
    for (Eigen::Index b = 0; b < c; ++b) w(b, k) = w_entry(b, static_cast<std::size_t>(k + 1));
  Eigen::MatrixXd delta(r, r);
  delta.noalias() = pc * w;

  std::vector<double> expected(m + 1, 0.0);
  expected[0] = input.p_zero;
  // Column 1 is sorted from scratch; later columns start from the previous order, which is
  // nearly right (measured: almost no swaps after column 1 on sampled P).
  std::vector<std::uint32_t> order(rows.size());
  std::vector<double> sorted(rows.size());
  std::iota(order.begin(), order.end(), 0U);
  if (r > 0) {
    const double* first = delta.data();
    std::sort(order.begin(), order.end(), [first](std::uint32_t a, std::uint32_t b) {
      return first[a] > first[b] || (first[a] == first[b] && a < b);
    });
  }
  for (Eigen::Index k = 1; k <= r; ++k) {
    resort_column(order, sorted, delta.data() + (k - 1) * r);
    double sum = 0;
    for (Eigen::Index t = 0; t < k; ++t) sum += sorted[static_cast<std::size_t>(t)];
    expected[static_cast<std::size_t>(k)] = sum;
  }
  // k > r: every live row is in the top k; E[k] = sum_s (sum_i p_is) W[s][k].
  if (static_cast<std::size_t>(r) < m) {
    const Eigen::VectorXd card_mass = pc.colwise().sum().transpose();
    for (std::size_t k = static_cast<std::size_t>(r) + 1; k <= m; ++k) {
      double sum = 0;
      for (Eigen::Index b = 0; b < c; ++b) sum += card_mass(b) * w_entry(b, k);
      expected[k] = sum;
    }
  }

  std::size_t best = 0;
  for (std::size_t k = 1; k <= m; ++k)
    if (expected[k] > expected[best]) best = k;

  Decision out;
  out.method = DecideMethod::kExact;
  out.expected = expected[best];
  if (best > 0) {
    // Column `best` over all m labels (labels that are never positive have Delta = 0), ordered
    // by (Delta desc, index asc).
    std::vector<double> value(m, 0.0);
    if (best <= static_cast<std::size_t>(r)) {
      const double* column = delta.data() + (static_cast<Eigen::Index>(best) - 1) * r;
      for (Eigen::Index a = 0; a < r; ++a) value[rows[static_cast<std::size_t>(a)]] = column[a];
    } else {
      for (Eigen::Index a = 0; a < r; ++a) {
        double sum = 0;
        for (Eigen::Index b = 0; b < c; ++b) sum += pc(a, b) * w_entry(b, best);
        value[rows[static_cast<std::size_t>(a)]] = sum;
      }
    }
    std::vector<std::size_t> all(m);
    std::iota(all.begin(), all.end(), std::size_t{0});
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(best), all.end(),
                      [&](std::size_t a, std::size_t b) {
                        return value[a] > value[b] || (value[a] == value[b] && a < b);
                      });
    out.selected.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(best));
  }
  if (options.all_k) out.expected_by_k = std::move(expected);
  return out;
}

}  // namespace rateopt
