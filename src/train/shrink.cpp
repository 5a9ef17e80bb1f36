// Candidate post-processing: LP shrinking (COIN-OR CLP) and the best-iterate rule.
#include <ClpSimplex.hpp>
#include <CoinHelperFunctions.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

#include "common/check.hpp"
#include "common/numeric.hpp"
#include "rateopt/train.hpp"
#include "train/lp_limits.hpp"

namespace rateopt {

namespace {

using detail::kInf;

// min c.x s.t. rows (column-major dense a, m_rows x n) in [lo, hi], x >= 0. Returns the basic
// primal solution or nothing when infeasible.
std::optional<std::vector<double>> solve_lp(std::size_t n, std::size_t rows,
                                            const std::vector<double>& a,
                                            const std::vector<double>& c,
                                            const std::vector<double>& lo,
                                            const std::vector<double>& hi) {
  std::vector<CoinBigIndex> start(n + 1, 0);
  std::vector<int> index;
  std::vector<double> value;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t r = 0; r < rows; ++r) {
      // Rounding dust (a rate difference of 1e-16) would make CLP's scaling blow the column up.
      const double v = a[i * rows + r];
      if (std::fabs(v) > 1e-13) {
        index.push_back(static_cast<int>(r));
        value.push_back(v);
      }
    }
    start[i + 1] = static_cast<CoinBigIndex>(index.size());
  }
  std::vector<double> col_lo(n, 0.0), col_hi(n, COIN_DBL_MAX);
  std::vector<double> row_lo(lo), row_hi(hi);
  for (double& v : row_lo)
    if (v == -kInf) v = -COIN_DBL_MAX;
  for (double& v : row_hi)
    if (v == kInf) v = COIN_DBL_MAX;
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.loadProblem(static_cast<int>(n), static_cast<int>(rows), start.data(), index.data(),
                 value.data(), col_lo.data(), col_hi.data(), c.data(), row_lo.data(),
                 row_hi.data());
  // No scaling: rates are all of order one, and CLP's geometric scaling of columns with entries
  // of very different sizes returned a vertex 0.003 above the optimum of a 1,202-column pool LP
  // (PoolTest.CuttingPlaneExactOracleCertifiesTheLpOptimum found it; HiGHS agreed with the
  // unscaled solve).
  lp.scaling(0);
  limit_lp(lp);
  lp.primal();
  if (!lp.isProvenOptimal()) return std::nullopt;
  const double* x = lp.getColSolution();
  return std::vector<double>(x, x + n);
}

void check_sizes(std::size_t n, std::span<const double> g, std::size_t m, const char* what) {
  RATEOPT_CHECK(n > 0, "{}: no candidates", what);
  RATEOPT_CHECK(g.size() == n * m, "{}: g has {} entries, expected {} candidates x {} constraints",
                what, g.size(), n, m);
  for (std::size_t i = 0; i < g.size(); ++i)
    RATEOPT_CHECK(std::isfinite(g[i]), "{}: g[{}] is {}, expected a finite value", what, i, g[i]);
}

// Normalises weights (drops numerical dust) and fills the summary.
ShrinkResult finish(std::vector<double> w, std::span<const double> g, std::size_t m) {
  for (double& v : w)
    if (!(v > 1e-12)) v = 0;
  const double s = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& v : w) v /= s;
  ShrinkResult r;
  r.weights = std::move(w);
  r.max_violation = m > 0 ? -kInf : 0;
  for (std::size_t j = 0; j < m; ++j) {
    double v = 0;
    for (std::size_t i = 0; i < r.weights.size(); ++i) v += r.weights[i] * g[i * m + j];
    r.max_violation = std::max(r.max_violation, v);
  }
  return r;
}

// Bisection on the violation budget v >= 0: solve(v) returns weights or nothing.
template <typename Solve>
ShrinkResult shrink_with(std::size_t n, std::span<const double> g, std::size_t m, double tolerance,
                         Solve solve) {
  if (auto w = solve(0.0)) {
    ShrinkResult r = finish(std::move(*w), g, m);
    r.feasible = true;
    return r;
  }
  double hi = kInf;
  for (std::size_t i = 0; i < n; ++i) {
    double worst = 0;
    for (std::size_t j = 0; j < m; ++j) worst = std::max(worst, g[i * m + j]);
    hi = std::min(hi, worst);
  }
  double lo = 0;
  auto best = solve(hi);
  RATEOPT_CHECK(best.has_value(), "shrink_candidates: the LP at the largest violation failed");
  while (hi - lo > tolerance) {
    const double mid = 0.5 * (lo + hi);
    if (auto w = solve(mid)) {
      best = std::move(w);
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return finish(std::move(*best), g, m);
}

}  // namespace

ShrinkResult shrink_candidates(std::span<const double> f, std::span<const double> g, std::size_t m,
                               double tolerance) {
  const std::size_t n = f.size();
  check_sizes(n, g, m, "shrink_candidates");
  for (std::size_t i = 0; i < n; ++i)
    RATEOPT_CHECK(std::isfinite(f[i]), "shrink_candidates: f[{}] is {}, expected a finite value", i,
                  f[i]);
  const std::size_t rows = m + 1;
  std::vector<double> a(n * rows);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < m; ++j) a[i * rows + j] = g[i * m + j];
    a[i * rows + m] = 1;
  }
  const std::vector<double> c(f.begin(), f.end());
  ShrinkResult r = shrink_with(n, g, m, tolerance, [&](double v) {
    std::vector<double> lo(rows, -kInf), hi(rows, v);
    lo[m] = hi[m] = 1;
    return solve_lp(n, rows, a, c, lo, hi);
  });
  r.objective = 0;
  for (std::size_t i = 0; i < n; ++i) r.objective += r.weights[i] * f[i];
  return r;
}

ShrinkResult shrink_candidates_ratio(std::span<const double> num, std::span<const double> den,
                                     std::span<const double> g, std::size_t m, double tolerance) {
  const std::size_t n = num.size();
  check_sizes(n, g, m, "shrink_candidates_ratio");
  RATEOPT_CHECK(den.size() == n, "shrink_candidates_ratio: {} denominators for {} candidates",
                den.size(), n);
  for (double d : den)
    RATEOPT_CHECK(d > 0, "shrink_candidates_ratio: denominators must be > 0, got {}", d);
  // Charnes-Cooper: y = w / (sum w den); min sum y num s.t. sum y den = 1,
  // sum y (g_j - v) <= 0, y >= 0.
  const std::size_t rows = m + 1;
  const std::vector<double> c(num.begin(), num.end());
  ShrinkResult r = shrink_with(n, g, m, tolerance, [&](double v) {
    std::vector<double> a(n * rows);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < m; ++j) a[i * rows + j] = g[i * m + j] - v;
      a[i * rows + m] = den[i];
    }
    std::vector<double> lo(rows, -kInf), hi(rows, 0.0);
    lo[m] = hi[m] = 1;
    return solve_lp(n, rows, a, c, lo, hi);
  });
  double sn = 0, sd = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sn += r.weights[i] * num[i];
    sd += r.weights[i] * den[i];
  }
  r.objective = sn / sd;
  return r;
}

std::size_t best_candidate(std::span<const double> f, std::span<const double> g, std::size_t m,
                           double tolerance) {
  const std::size_t n = f.size();
  check_sizes(n, g, m, "best_candidate");
  std::vector<double> viol(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) viol[i] = std::max(viol[i], g[i * m + j] - tolerance);
  // A feasible candidate exists: the best feasible one.
  std::size_t best_feasible = n;
  for (std::size_t i = 0; i < n; ++i)
    if (viol[i] <= 0 && (best_feasible == n || f[i] < f[best_feasible])) best_feasible = i;
  if (best_feasible < n) return best_feasible;
  // None is feasible: the smallest violation, ties by objective.
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (viol[i] < viol[best] || (viol[i] == viol[best] && f[i] < f[best])) best = i;
  return best;
}

}  // namespace rateopt
