// The cutting-plane solver for problems linear in rates: Kelley's cutting-plane method on the
// Lagrange dual, which is column generation on the linear program over classifiers.
//
// References: Narasimhan, Cotter & Gupta (2019), Algorithm 1 (a cost-sensitive oracle as the
// model player; the stochastic classifier as a distribution over the oracle's answers); Agarwal
// et al. (2018), "A reductions approach to fair classification" (the same game with
// exponentiated-gradient multipliers, fairlearn's ExponentiatedGradient); Kelley (1960) and
// Wentges (1997) for the cutting-plane method and the smoothing of its dual points.
//
// For a problem min f(h) s.t. g_j(h) <= 0 whose objective and constraints are affine in the
// atoms, a stochastic classifier Q = sum_i w_i h_i over a set of classifiers H has
// f(Q) = sum_i w_i f(h_i) and g_j(Q) = sum_i w_i g_j(h_i), so the best Q over H solves the
// master LP
//     min_{w in simplex, s >= 0}  sum_i w_i f_i + M sum_j s_j   s.t.  sum_i w_i g_ij <= s_j,
// (elastic: a violation costs M = TrainOptions::multiplier_bound per unit, so the LP is always
// feasible and its multipliers mu_j stay in [0, M]). Its value UB is the objective of the
// stochastic classifier (plus the penalty of any violation). For any mu in [0, M]^m the
// Lagrangian D(mu) = min_h f(h) + mu . g(h) is a lower bound on every classifier's penalised
// objective; D(mu) is linear in the per-row predictions, L(h, mu) = const + sum_i c_i(mu) h_i, so
// its minimiser is a cost-sensitive classification problem, answered by the oracle.
//
// Round t:
//   1. solve the master LP over the columns found so far: weights w, value UB, multipliers mu_lp;
//   2. query point mu_q = alpha * mu_center + (1 - alpha) * mu_lp (Wentges smoothing: mu_center is
//      the point with the best lower bound so far; alpha = 0.5, and 0 after a query whose columns
//      could not improve the LP, so that the method cannot stall on a smoothed point);
//   3. the oracle answers mu_q with new columns; LB(mu) = min over all columns of L(h, mu), for
//      every query point so far (recomputed over the current columns: the oracle is not exact,
//      and a later column can undercut an earlier answer); the best is kept with its mu_center;
//   4. certificate: gap = UB - LB_best. Stop when gap <= tolerance.
// The oracle (default): weighted logistic regression on labels 1{c_i < 0} with weights |c_i|
// (normalised to sum to the row count, the reduction of Agarwal et al.), warm-started from its
// previous answer, plus the same weight vector with the exactly best intercept for the 0/1 costs
// (one sort of the scores). LB is a bound on the best classifier *that the oracle can find*: the
// logistic oracle minimises a surrogate of the 0/1 costs, so the gap is "as certified by the
// oracle", the standard of fairlearn's ExponentiatedGradient too.
#include <ClpSimplex.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/distributed.hpp"
#include "common/numeric.hpp"
#include "common/parallel.hpp"
#include "learners/logistic_objective.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/logistic.hpp"
#include "train/class_threshold.hpp"
#include "train/lp_limits.hpp"
#include "train/train_impl.hpp"

namespace rateopt {

namespace {

using detail::kInf;

// One column of the master LP: a classifier and its exact training values. The classifier is a
// linear model, or (prediction oracles) the index of the oracle's answer.
struct MasterColumn {
  std::optional<LinearModel> model;
  std::size_t answer = SIZE_MAX;
  std::vector<double> atoms;
  double f = 0;                 // objective as minimised
  std::vector<double> g;        // constraints (<= 0 feasible)
  std::vector<double> members;  // spread constraints' member rates, all spreads in order
};

// The rows of the master LP. A linear constraint j is one row, sum_i w_i g_ij - s_j <= 0 (s_j >=
// 0, elastic). A spread constraint j (FunctionInfo::spread: max_v r_v - min_v r_v - b <= 0) is
// written with two auxiliary variables, u_j above every member and l_j below: rows
// sum_i w_i r_vi - u_j <= 0 and l_j - sum_i w_i r_vi <= 0 for each member v, and
// u_j - l_j - b - s_j <= 0. That is 2 k + 1 rows for k members, where the pairwise form has
// k (k - 1) gaps; at the LP's optimum u_j - l_j is the mixture's spread. u_j and l_j are bounded
// by the members' range over all classifiers (so the Lagrangian bound stays finite at any
// multipliers). One multiplier per row; without spread constraints the rows are the constraints
// in order, and the LP is the plain one.
struct MasterRows {
  enum class Kind { kLinear, kUpper, kLower, kBound };
  struct Row {
    Kind kind = Kind::kLinear;
    std::size_t constraint = 0;  // j
    std::size_t member = 0;      // kUpper, kLower: index into MasterColumn::members
    std::size_t spread = 0;      // kUpper, kLower, kBound: which spread (its u, l)
  };
  std::vector<Row> rows;
  std::vector<std::size_t> main;         // per constraint: its row, or its spread's bound row
  std::vector<double> bound;             // per spread: b
  std::vector<double> low, high;         // per spread: the range of its members
  std::vector<const AffineForm*> forms;  // per member value: its rate
  [[nodiscard]] bool any_spread() const noexcept { return !bound.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return rows.size(); }

  // Row r's entry for a column (its value at the column's classifier).
  [[nodiscard]] double value(std::size_t r, const MasterColumn& c) const {
    const Row& row = rows[r];
    switch (row.kind) {
      case Kind::kLinear:
        return c.g[row.constraint];
      case Kind::kUpper:
        return c.members[row.member];
      case Kind::kLower:
        return -c.members[row.member];
      case Kind::kBound:
        return -bound[row.spread];
    }
    return 0;
  }
  // Row r's coefficients on its spread's u and l.
  [[nodiscard]] std::pair<double, double> aux(std::size_t r) const {
    switch (rows[r].kind) {
      case Kind::kUpper:
        return {-1.0, 0.0};
      case Kind::kLower:
        return {0.0, 1.0};
      case Kind::kBound:
        return {1.0, -1.0};
      case Kind::kLinear:
        break;
    }
    return {0.0, 0.0};
  }
  [[nodiscard]] bool elastic(std::size_t r) const {
    return rows[r].kind == Kind::kLinear || rows[r].kind == Kind::kBound;
  }
};

// The range of an affine form of atoms, each atom between 0 and its capacity.
std::pair<double, double> form_range(const AffineForm& form, std::span<const Atom> atoms) {
  double lo = form.constant, hi = form.constant;
  for (const AtomTerm& t : form.terms) {
    const double v = t.coef * atoms[t.atom].capacity;
    lo += std::min(0.0, v);
    hi += std::max(0.0, v);
  }
  return {lo, hi};
}

MasterRows master_rows(const RateProblem& problem) {
  MasterRows out;
  const std::span<const FunctionInfo> cons = problem.constraints();
  for (std::size_t j = 0; j < cons.size(); ++j) {
    if (!cons[j].spread) {
      out.main.push_back(out.rows.size());
      out.rows.push_back({MasterRows::Kind::kLinear, j, 0, 0});
      continue;
    }
    const FunctionInfo::Spread& sp = *cons[j].spread;
    const std::size_t k = out.bound.size();
    double lo = kInf, hi = -kInf;
    for (const AffineForm& form : sp.members) {
      const auto [a, b] = form_range(form, problem.atoms());
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
    out.bound.push_back(sp.bound);
    out.low.push_back(lo);
    out.high.push_back(hi);
    const std::size_t first = out.forms.size();
    for (const AffineForm& form : sp.members) out.forms.push_back(&form);
    for (std::size_t v = 0; v < sp.members.size(); ++v)
      out.rows.push_back({MasterRows::Kind::kUpper, j, first + v, k});
    for (std::size_t v = 0; v < sp.members.size(); ++v)
      out.rows.push_back({MasterRows::Kind::kLower, j, first + v, k});
    out.main.push_back(out.rows.size());
    out.rows.push_back({MasterRows::Kind::kBound, j, 0, k});
  }
  return out;
}

struct Master {
  std::vector<double> weights;  // one per column
  std::vector<double> mu;       // one per row of MasterRows, in [0, M]
  double value = 0;             // sum w f + M sum s
  double slack = 0;             // sum s: the violation the penalty M bought
};

// The master LP over the columns: the elastic one (violations cost big_m a unit), or with
// `budget` every violation at most the budget and no slack. Columns: candidates, then (elastic)
// one slack per constraint, then u and l of each spread.
void load_master(ClpSimplex& lp, const std::vector<MasterColumn>& cols, const MasterRows& mr,
                 std::size_t m, double big_m, std::optional<double> budget) {
  const std::size_t n = cols.size();
  const std::size_t slacks = budget ? 0 : m;
  const std::size_t nc = n + slacks + 2 * mr.bound.size();
  const std::size_t rows = mr.size() + 1;
  std::vector<CoinBigIndex> start(nc + 1, 0);
  std::vector<int> index;
  std::vector<double> value;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t r = 0; r < mr.size(); ++r) {
      const double v = mr.value(r, cols[i]);
      if (std::fabs(v) > 1e-13) {
        index.push_back(static_cast<int>(r));
        value.push_back(v);
      }
    }
    index.push_back(static_cast<int>(mr.size()));
    value.push_back(1.0);
    start[i + 1] = static_cast<CoinBigIndex>(index.size());
  }
  for (std::size_t j = 0; j < slacks; ++j) {
    index.push_back(static_cast<int>(mr.main[j]));
    value.push_back(-1.0);
    start[n + j + 1] = static_cast<CoinBigIndex>(index.size());
  }
  // u and l of each spread: their rows in order.
  std::vector<std::vector<std::pair<int, double>>> aux(2 * mr.bound.size());
  for (std::size_t r = 0; r < mr.size(); ++r) {
    const auto [cu, cl] = mr.aux(r);
    const std::size_t k = mr.rows[r].spread;
    if (cu != 0) aux[2 * k].emplace_back(static_cast<int>(r), cu);
    if (cl != 0) aux[2 * k + 1].emplace_back(static_cast<int>(r), cl);
  }
  for (std::size_t a = 0; a < aux.size(); ++a) {
    for (const auto& [r, c] : aux[a]) {
      index.push_back(r);
      value.push_back(c);
    }
    start[n + slacks + a + 1] = static_cast<CoinBigIndex>(index.size());
  }
  std::vector<double> col_lo(nc, 0.0), col_hi(nc, COIN_DBL_MAX), cost(nc, big_m);
  for (std::size_t i = 0; i < n; ++i) cost[i] = cols[i].f;
  for (std::size_t a = 0; a < aux.size(); ++a) {
    col_lo[n + slacks + a] = mr.low[a / 2];
    col_hi[n + slacks + a] = mr.high[a / 2];
    cost[n + slacks + a] = 0;
  }
  std::vector<double> row_lo(rows, -COIN_DBL_MAX), row_hi(rows, 0.0);
  if (budget)
    for (std::size_t r = 0; r < mr.size(); ++r)
      if (mr.elastic(r)) row_hi[r] = *budget;
  row_lo[mr.size()] = row_hi[mr.size()] = 1.0;
  lp.setLogLevel(0);
  lp.scaling(0);  // see shrink.cpp: rates are of order one
  lp.loadProblem(static_cast<int>(nc), static_cast<int>(rows), start.data(), index.data(),
                 value.data(), col_lo.data(), col_hi.data(), cost.data(), row_lo.data(),
                 row_hi.data());
  limit_lp(lp);
}

// The elastic master LP, solved by CLP's dual simplex.
Master solve_master(const std::vector<MasterColumn>& cols, const MasterRows& mr, std::size_t m,
                    double big_m) {
  const std::size_t n = cols.size();
  ClpSimplex lp;
  load_master(lp, cols, mr, m, big_m, std::nullopt);
  lp.dual();
  if (!lp.isProvenOptimal()) lp.primal();
  RATEOPT_CHECK(lp.isProvenOptimal(), "cutting-plane solver: the master LP failed (CLP status {})",
                lp.status());
  Master r;
  const double* x = lp.getColSolution();
  r.weights.assign(x, x + n);
  for (std::size_t j = 0; j < m; ++j) r.slack += x[n + j];
  const double* y = lp.getRowPrice();
  r.mu.resize(mr.size());
  // Minimisation with rows ... <= 0: their prices are <= 0; mu = -price.
  for (std::size_t j = 0; j < mr.size(); ++j) r.mu[j] = std::clamp(-y[j], 0.0, big_m);
  r.value = lp.getObjValue();
  return r;
}

// The LP over the columns with every violation at most `budget` (no slack): the weights, or
// nothing when infeasible.
std::optional<std::vector<double>> solve_within(const std::vector<MasterColumn>& cols,
                                                const MasterRows& mr, std::size_t m,
                                                double budget) {
  ClpSimplex lp;
  load_master(lp, cols, mr, m, 0, budget);
  lp.primal();
  if (!lp.isProvenOptimal()) return std::nullopt;
  const double* x = lp.getColSolution();
  return std::vector<double>(x, x + cols.size());
}

// shrink_candidates for a problem with spread constraints: the LP over the columns with their
// rows (MasterRows) at violation budget 0, else at the smallest budget a bisection finds (each
// column alone meets its own largest violation). Weights below 1e-12 are dropped.
ShrinkResult shrink_spread(const std::vector<MasterColumn>& cols, const MasterRows& mr,
                           std::size_t m, double tolerance) {
  std::optional<std::vector<double>> w = solve_within(cols, mr, m, 0.0);
  ShrinkResult r;
  r.feasible = w.has_value();
  if (!w) {
    double lo = 0, hi = kInf;
    for (const MasterColumn& c : cols) {
      double worst = 0;
      for (const double v : c.g) worst = std::max(worst, v);
      hi = std::min(hi, worst);
    }
    // A little above the column's own violation: the LP's rows round differently.
    hi += 1e-9;
    w = solve_within(cols, mr, m, hi);
    RATEOPT_CHECK(w.has_value(), "cutting-plane solver: the LP at the largest violation failed");
    while (hi - lo > tolerance) {
      const double mid = 0.5 * (lo + hi);
      if (std::optional<std::vector<double>> x = solve_within(cols, mr, m, mid)) {
        w = std::move(x);
        hi = mid;
      } else {
        lo = mid;
      }
    }
  }
  for (double& v : *w)
    if (!(v > 1e-12)) v = 0;
  const double sum = std::accumulate(w->begin(), w->end(), 0.0);
  for (double& v : *w) v /= sum;
  r.weights = std::move(*w);
  for (std::size_t i = 0; i < cols.size(); ++i) r.objective += r.weights[i] * cols[i].f;
  return r;
}

// Over several ranks the LPs are solved on rank 0 and their answers broadcast, so that every
// rank goes on from the same bits (CLP's time limit could end a solve differently elsewhere):
// solve() on rank 0, packed as `length` doubles, on every rank.
std::vector<double> solved_on_first_rank(std::size_t length, const char* what,
                                         const std::function<std::vector<double>()>& solve) {
  std::vector<double> packed;
  if (process_group().rank() == 0) packed = solve();
  broadcast_from(0, packed);
  RATEOPT_CHECK(packed.size() == length,
                "cutting-plane solver: the {} LP's answer has {} values, expected {}", what,
                packed.size(), length);
  return packed;
}

Master solve_master_on_root(const std::vector<MasterColumn>& cols, const MasterRows& mr,
                            std::size_t m, double big_m) {
  if (!is_distributed()) return solve_master(cols, mr, m, big_m);
  const std::size_t n = cols.size();
  const std::size_t rows = mr.size();
  const std::vector<double> packed = solved_on_first_rank(n + rows + 2, "master", [&] {
    const Master r = solve_master(cols, mr, m, big_m);
    std::vector<double> out = r.weights;
    out.insert(out.end(), r.mu.begin(), r.mu.end());
    out.push_back(r.value);
    out.push_back(r.slack);
    return out;
  });
  Master r;
  r.weights.assign(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(n));
  r.mu.assign(packed.begin() + static_cast<std::ptrdiff_t>(n),
              packed.begin() + static_cast<std::ptrdiff_t>(n + rows));
  r.value = packed[n + rows];
  r.slack = packed[n + rows + 1];
  return r;
}

// shrink() (over n columns) on rank 0 over several ranks, its answer on every rank.
template <typename Shrink>
ShrinkResult shrink_on_root(std::size_t n, const Shrink& shrink) {
  if (!is_distributed()) return shrink();
  const std::vector<double> packed = solved_on_first_rank(n + 3, "shrinking", [&] {
    const ShrinkResult r = shrink();
    std::vector<double> out = r.weights;
    out.push_back(r.objective);
    out.push_back(r.max_violation);
    out.push_back(r.feasible ? 1 : 0);
    return out;
  });
  ShrinkResult r;
  r.weights.assign(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(n));
  r.objective = packed[n];
  r.max_violation = packed[n + 1];
  r.feasible = packed[n + 2] != 0;
  return r;
}

// A row of a threshold search: its score, its cost when predicted positive, and its index among
// every rank's rows (ties in score keep the lower index first).
struct ScoredRow {
  double score = 0;
  double cost = 0;
  double index = 0;
};

// The shift of the threshold (on the rows' scores) that minimises the sum of the costs of the
// rows predicted positive (score above it); nothing when there are no rows. Only boundaries
// between distinct scores are achievable.
std::optional<double> best_cut(std::vector<ScoredRow>& rows) {
  const std::size_t n = rows.size();
  if (n == 0) return std::nullopt;
  std::sort(rows.begin(), rows.end(), [](const ScoredRow& a, const ScoredRow& b) {
    return a.score > b.score || (a.score == b.score && a.index < b.index);
  });
  // Predicting the top k rows positive costs the prefix sum up to k.
  double run = 0, best = 0;
  std::size_t best_k = 0;
  for (std::size_t k = 0; k < n; ++k) {
    run += rows[k].cost;
    const bool boundary = k + 1 == n || rows[k + 1].score < rows[k].score;
    if (boundary && run < best) {
      best = run;
      best_k = k + 1;
    }
  }
  if (best_k == 0) return rows[0].score + 1;
  if (best_k == n) return rows[n - 1].score - 1;
  return 0.5 * (rows[best_k - 1].score + rows[best_k].score);
}

constexpr std::size_t kScoreBlock = 4096;  // rows per task when a column's rows are scored

// L(h, mu) = f + sum_r mu_r row_r(h), minimised over each spread's u and l in their range (a
// lower bound on every classifier's penalised objective at any mu >= 0, and exact at the LP's
// multipliers, where the coefficients of u and l cancel).
double lagrangian(const MasterColumn& c, std::span<const double> mu, const MasterRows& mr) {
  double v = c.f;
  std::vector<double> coef(2 * mr.bound.size(), 0.0);
  for (std::size_t r = 0; r < mu.size(); ++r) {
    if (mu[r] == 0) continue;
    v += mu[r] * mr.value(r, c);
    if (mr.rows[r].kind == MasterRows::Kind::kLinear) continue;
    const auto [cu, cl] = mr.aux(r);
    coef[2 * mr.rows[r].spread] += mu[r] * cu;
    coef[2 * mr.rows[r].spread + 1] += mu[r] * cl;
  }
  for (std::size_t a = 0; a < coef.size(); ++a)
    v += std::min(coef[a] * mr.low[a / 2], coef[a] * mr.high[a / 2]);
  return v;
}

// All datasets' rows stacked in one CSR matrix (the oracle's training set). One dense dataset:
// its CSR copy as it is (no second copy).
FeatureMatrix stack_rows(const RateProblem::Impl& p) {
  if (p.data.size() == 1 && p.data[0].data->num_features() == p.num_features)
    if (std::optional<FeatureMatrix> sparse = sparse_copy(p.data[0].data->features(), 1.0))
      return std::move(*sparse);
  std::size_t rows = 0;
  for (const TrainingData& td : p.data) rows += td.data->num_rows();
  std::vector<std::int64_t> indptr{0};
  indptr.reserve(rows + 1);
  std::vector<std::int32_t> indices;
  std::vector<double> values;
  for (const TrainingData& td : p.data) {
    const FeatureMatrix& x = td.data->features();
    std::optional<FeatureMatrix> sparse = sparse_copy(x, 1.0);
    const FeatureMatrix& s = sparse ? *sparse : x;
    const CsrView v = s.csr_view();
    for (std::size_t i = 0; i < v.rows; ++i) {
      for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
        indices.push_back(v.indices[static_cast<std::size_t>(k)]);
        values.push_back(v.values[static_cast<std::size_t>(k)]);
      }
      indptr.push_back(static_cast<std::int64_t>(indices.size()));
    }
  }
  return FeatureMatrix::csr(std::move(indptr), std::move(indices), std::move(values),
                            p.num_features);
}

// The parts of the stacked rows (Dataset::row_parts of each dataset in turn); empty when no
// dataset has parts (one part).
std::vector<std::size_t> stacked_parts(const RateProblem::Impl& p) {
  std::vector<std::size_t> out;
  bool any = false;
  for (const TrainingData& td : p.data) {
    const std::span<const std::size_t> parts = td.data->row_parts();
    any = any || !parts.empty();
    if (parts.empty()) {
      out.push_back(td.data->num_rows());
    } else {
      out.insert(out.end(), parts.begin(), parts.end());
    }
  }
  return any ? out : std::vector<std::size_t>{};
}

// The reduction's cost-sensitive step (Agarwal et al. 2018): weighted logistic regression on
// labels 1{c_i < 0} with weights |c_i| normalised to sum to the number of rows that carry a
// cost (rows of zero weight carry none, so dropping them changes nothing), warm-started.
// `cost` is per row, or per class when `classes` (one per row) is given: row i's is then
// cost[classes[i]], and the fit takes its labels and weights per class (the same bits).
// Returns nothing when no row carries a cost.
std::optional<LogisticRegressionResult> cost_sensitive_fit(
    const FeatureMatrix& x, std::span<const double> cost, std::span<const std::uint8_t> classes,
    double c, bool fit_intercept, int n_threads, const std::optional<LinearModel>& warm,
    std::span<const std::size_t> parts) {
  const std::size_t rows = classes.empty() ? cost.size() : classes.size();
  // [sum |c_i|, rows with a cost] over every part and rank.
  const std::vector<double> sums = sum_over_parts(
      parts, rows, 2, [&](std::size_t begin, std::size_t end, std::span<double> out) {
        for (std::size_t i = begin; i < end; ++i) {
          const double ci = classes.empty() ? cost[i] : cost[classes[i]];
          out[0] += std::fabs(ci);
          out[1] += ci != 0 ? 1 : 0;
        }
      });
  const double total = sums[0];
  const auto costed = static_cast<std::size_t>(sums[1]);
  if (!(total > 0)) return std::nullopt;
  std::vector<std::int32_t> labels(cost.size());
  std::vector<double> weights(cost.size());
  const double scale = static_cast<double>(costed) / total;
  for (std::size_t i = 0; i < cost.size(); ++i) {
    labels[i] = cost[i] < 0 ? 1 : 0;
    weights[i] = std::fabs(cost[i]) * scale;
  }
  LogisticRegressionOptions lo;
  lo.c = c;
  lo.fit_intercept = fit_intercept;
  lo.n_threads = n_threads;
  lo.tol = 1e-3;
  lo.initial = warm;
  lo.row_parts.assign(parts.begin(), parts.end());
  if (classes.empty()) return fit_logistic_regression(x, labels, weights, lo);
  // Above 2^22 rows in this process, the curvature is computed again in each Hessian product (8
  // bytes a row less; these fits stop at tol 1e-3, after few products).
  lo.curvature_rows_limit = std::size_t{1} << 22;
  return detail::fit_logistic_regression_by_class(x, classes, labels, weights, lo);
}

// Rows in classes (unweighted data): the rows of one class share their dataset, their group (of
// the group indicator features) and the atoms holding them, hence their cost at any multipliers,
// the same bits as summing the atoms' coefficients row by row. One byte a row instead of the 8 of
// a cost, the 12 of the fit's labels and weights, and the threshold searches' 24-40.
struct RowClasses {
  struct Class {
    std::size_t group = 0;           // index into the group features; their count for none
    std::vector<std::size_t> atoms;  // increasing
  };
  std::vector<std::uint8_t> of_row;  // per stacked row
  std::vector<Class> classes;        // in the same order on every rank
};

// The classes of the stacked rows, or nothing when the data is weighted or has more than 255
// classes (over every rank). group_of_row(i): the group of stacked row i.
template <typename GroupOf>
std::optional<RowClasses> row_classes(const RateProblem::Impl& p,
                                      std::span<const std::size_t> offsets, std::size_t rows,
                                      std::size_t groups, GroupOf&& group_of_row) {
  constexpr std::size_t kMax = 255;
  bool ok =
      std::all_of(p.atoms.begin(), p.atoms.end(), [](const Atom& a) { return a.coef.empty(); });
  RowClasses rc;
  std::vector<RowClasses::Class> local;  // by first appearance on this rank
  std::vector<std::size_t> dataset_of;   // of each local class
  if (ok) {
    rc.of_row.assign(rows, 0);
    // Start: one class per (dataset, group); then every atom in turn moves its rows to the
    // class with that atom added.
    std::vector<std::size_t> start(p.data.size() * (groups + 1), SIZE_MAX);
    for (std::size_t d = 0; d < p.data.size() && ok; ++d)
      for (std::size_t i = offsets[d]; i < offsets[d] + p.data[d].data->num_rows(); ++i) {
        std::size_t& id = start[d * (groups + 1) + group_of_row(i)];
        if (id == SIZE_MAX) {
          ok = local.size() < kMax;
          if (!ok) break;
          id = local.size();
          local.push_back({group_of_row(i), {}});
          dataset_of.push_back(d);
        }
        rc.of_row[i] = static_cast<std::uint8_t>(id);
      }
    for (std::size_t k = 0; k < p.atoms.size() && ok; ++k) {
      const Atom& a = p.atoms[k];
      const std::size_t off = offsets[a.dataset];
      std::vector<std::size_t> moved(local.size(), SIZE_MAX);
      a.rows.for_each([&](std::size_t /*position*/, std::uint32_t row) {
        if (!ok) return;
        std::uint8_t& id = rc.of_row[off + row];
        std::size_t& to = moved[id];
        if (to == SIZE_MAX) {
          ok = local.size() < kMax;
          if (!ok) return;
          to = local.size();
          RowClasses::Class c = local[id];
          c.atoms.push_back(k);
          local.push_back(std::move(c));
          dataset_of.push_back(a.dataset);
        }
        id = static_cast<std::uint8_t>(to);
      });
    }
  }
  // The classes that hold rows, named "dataset|group|atoms", ordered by name over every rank.
  std::vector<std::string> names;
  std::vector<std::size_t> index(local.size(), SIZE_MAX);
  if (ok) {
    std::vector<bool> used(local.size(), false);
    for (const std::uint8_t id : rc.of_row) used[id] = true;
    for (std::size_t c = 0; c < local.size(); ++c) {
      if (!used[c]) continue;
      std::string name = fmt::format("{:08d}|{:08d}|", dataset_of[c], local[c].group);
      for (const std::size_t k : local[c].atoms) name += fmt::format("{:08d},", k);
      index[c] = names.size();
      names.push_back(std::move(name));
    }
  }
  if (is_distributed()) {
    std::array<double, 1> bad{ok ? 0.0 : 1.0};
    sum_over_ranks(bad);
    ok = bad[0] == 0;
  }
  if (!ok) return std::nullopt;
  std::vector<std::string> sorted = is_distributed() ? union_over_ranks(names) : names;
  if (sorted.size() > kMax) return std::nullopt;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint8_t> to_global(local.size(), 0);
  for (std::size_t c = 0; c < local.size(); ++c)
    if (index[c] != SIZE_MAX)
      to_global[c] = static_cast<std::uint8_t>(
          std::lower_bound(sorted.begin(), sorted.end(), names[index[c]]) - sorted.begin());
  // Each class's group and atoms from its name (some classes may be on other ranks only).
  rc.classes.resize(sorted.size());
  for (std::size_t g = 0; g < sorted.size(); ++g) {
    const std::string& name = sorted[g];
    rc.classes[g].group = static_cast<std::size_t>(std::stoul(name.substr(9, 8)));
    for (std::size_t at = 18; at + 9 <= name.size(); at += 9)
      rc.classes[g].atoms.push_back(static_cast<std::size_t>(std::stoul(name.substr(at, 8))));
  }
  for (std::uint8_t& id : rc.of_row) id = to_global[id];
  return rc;
}

class CuttingPlane {
 public:
  // With `predict`, the columns are the prediction oracle's answers (one per query) and the
  // features are never read.
  CuttingPlane(const RateProblem& problem, const TrainOptions& options,
               const PredictionOracle* predict = nullptr)
      : problem_(problem),
        p_(problem.impl()),
        o_(options),
        predict_(predict),
        parts_(stacked_parts(p_)),
        master_rows_(master_rows(problem)) {
    if (is_distributed()) {
      // Every rank holds its rows of the one dataset; the multipliers and LPs are shared.
      RATEOPT_CHECK(p_.data.size() == 1,
                    "over several ranks the cutting-plane solver takes one dataset, got {}",
                    p_.data.size());
      RATEOPT_CHECK(predict_ == nullptr && !o_.oracle,
                    "over several ranks the cutting-plane solver needs its own logistic oracle "
                    "(a user or prediction oracle sees one rank's rows only)");
    }
    for (const TrainingData& td : p_.data) {
      offsets_.push_back(rows_);
      rows_ += td.data->num_rows();
    }
    if (!predict_) {
      // One sparse dataset is its own stack (no copy).
      if (p_.data.size() == 1 && p_.data[0].data->features().is_sparse()) {
        x_ = &p_.data[0].data->features();
      } else {
        stacked_ = stack_rows(p_);
        x_ = &*stacked_;
      }
      group_features_ = group_indicator_features();
      if (!o_.oracle) {
        const CsrView v = x_->csr_view();
        const std::size_t none = group_features_.size();
        classes_ = row_classes(p_, offsets_, rows_, none, [&](std::size_t i) {
          for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
            const auto j = static_cast<std::size_t>(v.indices[static_cast<std::size_t>(k)]);
            if (v.values[static_cast<std::size_t>(k)] == 0) continue;
            for (std::size_t g = 0; g < none; ++g)
              if (group_features_[g] == j) return g;
          }
          return none;
        });
      }
    }
    // The stacked row index of this rank's first row over every rank (threshold searches break
    // ties by it, as one process holding every row would).
    if (is_distributed()) {
      (void)fold_over_ranks({0.0}, [&](std::vector<double>& v) {
        first_row_ = static_cast<std::size_t>(v[0]);
        v[0] += static_cast<double>(rows_);
      });
    }
  }

  TrainResult run();

  // After run(): the LP's weights over the columns and the deterministic pick (column indices;
  // with a prediction oracle, column i is answer i).
  [[nodiscard]] const std::vector<double>& weights() const { return weights_; }
  [[nodiscard]] std::size_t best() const { return best_; }
  [[nodiscard]] const std::vector<std::size_t>& answers() const { return answers_; }

  // The Lagrangian bound for candidates found by another solver (values f, g only): the master
  // LP's multipliers over them, one oracle call there, the smallest Lagrangian over the
  // candidates and the oracle's answers.
  double bound_for(std::span<const double> f, std::span<const double> g, std::size_t m) {
    std::vector<MasterColumn> cols(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
      cols[i].f = f[i];
      cols[i].g.assign(g.begin() + static_cast<std::ptrdiff_t>(i * m),
                       g.begin() + static_cast<std::ptrdiff_t>((i + 1) * m));
    }
    RATEOPT_CHECK(!master_rows_.any_spread(),
                  "the Lagrangian bound of other solvers' candidates takes linear constraints");
    const Master master = solve_master_on_root(cols, master_rows_, m, o_.multiplier_bound);
    for (MasterColumn& c : columns_at(master.mu)) cols.push_back(std::move(c));
    double lb = kInf;
    for (const MasterColumn& c : cols) lb = std::min(lb, lagrangian(c, master.mu, master_rows_));
    return lb;
  }

 private:
  // TrainOptions::should_stop; over several ranks rank 0's answer, so that every rank stops at
  // the same round.
  [[nodiscard]] bool stop_requested() const {
    std::vector<double> stop{o_.should_stop && o_.should_stop() ? 1.0 : 0.0};
    if (is_distributed()) broadcast_from(0, stop);
    return stop[0] != 0;
  }

  // The spread constraints' member rates at the atoms (MasterColumn::members).
  [[nodiscard]] std::vector<double> member_values(std::span<const double> atoms) const {
    std::vector<double> out;
    out.reserve(master_rows_.forms.size());
    for (const AffineForm* form : master_rows_.forms) {
      double v = form->constant;
      for (const AtomTerm& t : form->terms) v += t.coef * atoms[t.atom];
      out.push_back(v);
    }
    return out;
  }

  // The cost of each atom in L(h, mu).
  [[nodiscard]] std::vector<double> atom_costs(std::span<const double> mu) const {
    std::vector<double> beta(p_.atoms.size(), 0.0);
    const auto add = [&](const AffineForm& form, double c) {
      for (const AtomTerm& t : form.terms) beta[t.atom] += c * t.coef;
    };
    add(*p_.objective.info.linear, 1.0);
    for (std::size_t r = 0; r < mu.size(); ++r) {
      if (mu[r] == 0) continue;
      const MasterRows::Row& row = master_rows_.rows[r];
      switch (row.kind) {
        case MasterRows::Kind::kLinear:
          add(*p_.constraints[row.constraint].info.linear, mu[r]);
          break;
        case MasterRows::Kind::kUpper:
          add(*master_rows_.forms[row.member], mu[r]);
          break;
        case MasterRows::Kind::kLower:
          add(*master_rows_.forms[row.member], -mu[r]);
          break;
        case MasterRows::Kind::kBound:
          break;
      }
    }
    return beta;
  }

  // Per-row costs of L(h, mu) (stacked rows).
  [[nodiscard]] std::vector<double> row_costs(std::span<const double> mu) const {
    const std::vector<double> beta = atom_costs(mu);
    std::vector<double> c(rows_, 0.0);
    for (std::size_t k = 0; k < p_.atoms.size(); ++k) {
      if (beta[k] == 0) continue;
      const Atom& a = p_.atoms[k];
      const std::size_t off = offsets_[a.dataset];
      a.rows.for_each(
          [&](std::size_t r, std::uint32_t row) { c[off + row] += beta[k] * a.coef_at(r); });
    }
    return c;
  }

  // The columns of the oracle's answers at mu.
  std::vector<MasterColumn> columns_at(std::span<const double> mu) {
    std::vector<MasterColumn> fresh;
    if (predict_) {
      fresh.push_back(evaluate_answer(mu));
      return fresh;
    }
    for (LinearModel& model : oracle(mu)) fresh.push_back(evaluate(std::move(model)));
    return fresh;
  }

  // The prediction oracle's answer at mu, checked and evaluated.
  MasterColumn evaluate_answer(std::span<const double> mu) {
    const std::vector<double> cost = row_costs(mu);
    std::vector<std::vector<double>> per(p_.data.size());
    for (std::size_t d = 0; d < p_.data.size(); ++d)
      per[d].assign(
          cost.begin() + static_cast<std::ptrdiff_t>(offsets_[d]),
          cost.begin() + static_cast<std::ptrdiff_t>(offsets_[d] + p_.data[d].data->num_rows()));
    std::vector<std::vector<double>> pred = (*predict_)(OracleCosts{per, {}});
    check_predictions(problem_, pred, oracle_calls_);
    MasterColumn c;
    c.atoms = problem_.atom_values(pred);
    const ProblemValues v = problem_.evaluate(c.atoms);
    c.f = p_.objective_sign * v.objective;
    c.g = v.constraints;
    c.members = member_values(c.atoms);
    c.answer = static_cast<std::size_t>(oracle_calls_++);
    return c;
  }

  [[nodiscard]] MasterColumn evaluate(LinearModel model) const {
    MasterColumn c;
    // Hard predictions, 1 byte a row, scored a block of rows at a time.
    std::vector<std::vector<std::uint8_t>> pred(p_.data.size());
    for (std::size_t d = 0; d < p_.data.size(); ++d) {
      const FeatureMatrix& x = p_.data[d].data->features();
      pred[d].resize(x.rows());
      const std::span<const double> w(model.weights);
      const auto used = w.first(std::min(x.cols(), w.size()));
      detail::parallel_for((x.rows() + kScoreBlock - 1) / kScoreBlock, o_.n_threads,
                           [&](std::size_t b) {
                             for (std::size_t i = b * kScoreBlock;
                                  i < std::min(x.rows(), (b + 1) * kScoreBlock); ++i)
                               pred[d][i] = x.row_dot(i, used) + model.bias > 0 ? 1 : 0;
                           });
    }
    c.atoms = problem_.atom_values(pred);
    const ProblemValues v = problem_.evaluate(c.atoms);
    c.f = p_.objective_sign * v.objective;
    c.g = v.constraints;
    c.members = member_values(c.atoms);
    c.model = std::move(model);
    return c;
  }

  // The model with its intercept moved to the exact minimiser of sum_i c_i 1{score_i > 0}.
  [[nodiscard]] LinearModel best_intercept(const LinearModel& m,
                                           std::span<const double> cost) const {
    std::vector<double> s(rows_);
    m.scores(*x_, s, o_.n_threads);
    // Rows without cost do not matter (nor move the cut: zero-weight rows change nothing).
    std::vector<ScoredRow> rows;
    rows.reserve(static_cast<std::size_t>(
        std::count_if(cost.begin(), cost.end(), [](double c) { return c != 0; })));
    for (std::size_t i = 0; i < rows_; ++i)
      if (cost[i] != 0) rows.push_back({s[i], cost[i], static_cast<double>(first_row_ + i)});
    std::vector<double>().swap(s);  // memory: the search holds the rows only
    LinearModel out = m;
    if (!is_distributed()) {
      if (const std::optional<double> cut = best_cut(rows)) out.bias -= *cut;
      return out;
    }
    // Over several ranks: one sort of every rank's costed rows on rank 0 (24 bytes a row), the
    // cut broadcast.
    std::vector<ScoredRow> all = detail::gather_to_first_rank(std::move(rows));
    std::vector<double> cut;
    if (process_group().rank() == 0)
      if (const std::optional<double> c = best_cut(all)) cut.push_back(*c);
    broadcast_from(0, cut);
    if (!cut.empty()) out.bias -= cut[0];
    return out;
  }

  // The one-hot features of the first slice column that is also a feature ("sex=Female",
  // "sex=Male", ...), when every row of the stacked data has at most one of them set to 1 (and the
  // others 0): then per-group thresholds of a score are linear models. Empty otherwise.
  [[nodiscard]] std::vector<std::size_t> group_indicator_features() const {
    const std::vector<std::string>& names = p_.data[0].data->encoding().feature_names;
    std::vector<std::string> columns;
    for (const Leaf& leaf : p_.leaves)
      for (const Condition& c : leaf.ref.slice.conditions)
        if (std::find(columns.begin(), columns.end(), c.column) == columns.end())
          columns.push_back(c.column);
    for (const std::string& col : columns) {
      std::vector<std::size_t> feats;
      for (std::size_t f = 0; f < names.size() && f < p_.num_features; ++f)
        if (names[f].size() > col.size() + 1 && names[f].compare(0, col.size(), col) == 0 &&
            names[f][col.size()] == '=')
          feats.push_back(f);
      if (feats.size() < 2) continue;
      std::vector<std::uint8_t> set(rows_, 0);
      bool ok = true;
      const CsrView v = x_->csr_view();
      for (std::size_t i = 0; i < v.rows && ok; ++i)
        for (auto k = v.indptr[i]; k < v.indptr[i + 1] && ok; ++k) {
          const auto j = static_cast<std::size_t>(v.indices[static_cast<std::size_t>(k)]);
          if (std::find(feats.begin(), feats.end(), j) == feats.end()) continue;
          const double val = v.values[static_cast<std::size_t>(k)];
          ok = val == 0 || (val == 1 && ++set[i] == 1);
        }
      if (is_distributed()) {  // on every rank's rows
        std::array<double, 1> bad{ok ? 0.0 : 1.0};
        sum_over_ranks(bad);
        ok = bad[0] == 0;
      }
      if (ok) return feats;
    }
    return {};
  }

  // The oracle's fit, counted and kept as the next fit's warm start; nothing when no row had a
  // cost.
  std::optional<LinearModel> accept_fit(std::optional<LogisticRegressionResult> result) {
    if (!result) return std::nullopt;
    lr_iterations_ += result->iterations;
    ++oracle_calls_;
    warm_ = result->model;
    return std::move(result->model);
  }

  // Per class: the cost of each of its rows at mu (the sum row_costs makes, in its order).
  [[nodiscard]] std::vector<double> class_costs(std::span<const double> mu) const {
    const std::vector<double> beta = atom_costs(mu);
    std::vector<double> out(classes_->classes.size(), 0.0);
    for (std::size_t c = 0; c < out.size(); ++c)
      for (const std::size_t k : classes_->classes[c].atoms)
        if (beta[k] != 0) out[c] += beta[k] * p_.atoms[k].unit_coef;
    return out;
  }

  // The oracle's answers at mu for rows in classes: the same as oracle's, with the threshold
  // searches by class (class_threshold.hpp) instead of sorts.
  std::vector<LinearModel> oracle_by_class(std::span<const double> mu) {
    const std::vector<double> cost = class_costs(mu);
    const std::optional<LinearModel> fit = accept_fit(cost_sensitive_fit(
        *x_, cost, classes_->of_row, o_.c, o_.fit_intercept, o_.n_threads, warm_, parts_));
    if (!fit) return {LinearModel{std::vector<double>(p_.num_features, 0.0), -1}};
    std::vector<LinearModel> out{*fit};
    if (!o_.fit_intercept) return out;
    // Search 0: the intercept (rows with a cost); searches 1.. : the group thresholds (every
    // row of the group, as group_threshold_oracle takes them), the last for rows of no group.
    const bool groups = !group_features_.empty();
    detail::ClassThresholdSearch search;
    search.classes = classes_->of_row;
    search.cost = cost;
    search.searches = groups ? group_features_.size() + 2 : 1;
    for (std::size_t c = 0; c < cost.size(); ++c) {
      std::vector<std::size_t> in;
      if (cost[c] != 0) in.push_back(0);
      if (groups) in.push_back(1 + classes_->classes[c].group);
      search.searches_of.push_back(std::move(in));
    }
    const std::vector<std::optional<double>> t =
        detail::class_thresholds(*x_, *fit, search, o_.n_threads);
    LinearModel shifted = *fit;
    if (t[0]) shifted.bias -= *t[0];
    out.push_back(std::move(shifted));
    if (groups) {
      LinearModel m = *fit;
      m.weights.resize(p_.num_features, 0.0);
      const std::size_t ng = group_features_.size();
      const double t0 = t[1 + ng].value_or(0.0);
      for (std::size_t g = 0; g < ng; ++g)
        m.weights[group_features_[g]] -= t[1 + g].value_or(0.0) - t0;
      m.bias -= t0;
      out.push_back(std::move(m));
    }
    return out;
  }

  // The oracle's answers at mu (one or two models).
  std::vector<LinearModel> oracle(std::span<const double> mu) {
    if (classes_) return oracle_by_class(mu);
    std::vector<double> cost = row_costs(mu);
    if (o_.oracle) {
      // A user oracle gets per-dataset row costs.
      std::vector<std::vector<double>> per(p_.data.size());
      for (std::size_t d = 0; d < p_.data.size(); ++d)
        per[d].assign(
            cost.begin() + static_cast<std::ptrdiff_t>(offsets_[d]),
            cost.begin() + static_cast<std::ptrdiff_t>(offsets_[d] + p_.data[d].data->num_rows()));
      std::vector<double> beta;  // atoms' costs are not needed by the stacked form
      return {o_.oracle(problem_, OracleCosts{per, beta})};
    }
    const std::optional<LinearModel> fit = accept_fit(
        cost_sensitive_fit(*x_, cost, {}, o_.c, o_.fit_intercept, o_.n_threads, warm_, parts_));
    if (!fit) return {LinearModel{std::vector<double>(p_.num_features, 0.0), -1}};
    std::vector<LinearModel> out{*fit};
    if (o_.fit_intercept) out.push_back(best_intercept(*fit, cost));
    if (!group_features_.empty() && o_.fit_intercept) {
      // The exact best per-group thresholds of the same score (group_threshold_oracle with the
      // true-label costs): the best member of a richer class for the 0/1 costs.
      GroupThresholdOracleOptions go;
      go.probability_model = *fit;
      go.group_features = group_features_;
      go.plugin = false;
      go.n_threads = o_.n_threads;
      // The costs split by dataset (one dataset: the costs themselves, not a copy; they are not
      // needed after this step).
      std::vector<std::vector<double>> per(p_.data.size());
      if (p_.data.size() == 1) {
        per[0] = std::move(cost);
      } else {
        for (std::size_t d = 0; d < p_.data.size(); ++d)
          per[d].assign(cost.begin() + static_cast<std::ptrdiff_t>(offsets_[d]),
                        cost.begin() +
                            static_cast<std::ptrdiff_t>(offsets_[d] + p_.data[d].data->num_rows()));
      }
      out.push_back(group_threshold_oracle(go)(problem_, OracleCosts{per, {}}));
    }
    return out;
  }

  const RateProblem& problem_;
  const RateProblem::Impl& p_;
  const TrainOptions& o_;
  const PredictionOracle* predict_ = nullptr;
  std::vector<std::size_t> parts_;  // stacked_parts
  MasterRows master_rows_;          // the master LP's rows (spread constraints lifted)
  std::optional<FeatureMatrix> stacked_;
  const FeatureMatrix* x_ = nullptr;  // the oracle's rows: stacked_, or the one sparse dataset
  std::size_t first_row_ = 0;         // over several ranks: rows on the ranks before this one
  std::vector<std::size_t> offsets_;
  std::size_t rows_ = 0;
  std::vector<std::size_t> group_features_;
  std::optional<RowClasses> classes_;  // the stacked rows' classes, when they have them
  std::optional<LinearModel> warm_;
  long lr_iterations_ = 0;
  int oracle_calls_ = 0;
  std::vector<double> weights_;
  std::size_t best_ = 0;
  std::vector<std::size_t> answers_;
};

TrainResult CuttingPlane::run() {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const std::size_t m = p_.constraints.size();
  // The penalty per unit of violation; raised tenfold (to 1e6 at most) whenever the LP would
  // rather pay it than meet the constraints, since the bound then certifies the penalised
  // problem only.
  double big_m = o_.multiplier_bound;
  const double tol = o_.tolerance;
  if (o_.initial) warm_ = *o_.initial;

  std::vector<MasterColumn> cols;
  const auto add_columns = [&](std::span<const double> mu) { return columns_at(mu); };

  const MasterRows& mr = master_rows_;
  std::vector<double> mu_center(mr.size(), 0.0), mu_q(mr.size(), 0.0);
  std::vector<std::vector<double>> queries;
  double lb_best = -kInf;
  const auto lower_bound = [&mr](const std::vector<MasterColumn>& cs, std::span<const double> mu) {
    double lb = kInf;
    for (const MasterColumn& c : cs) lb = std::min(lb, lagrangian(c, mu, mr));
    return lb;
  };
  double alpha = 0;
  TrainResult result;
  result.solver = TrainSolver::kCuttingPlane;
  Master master;
  double gap = kInf;
  int rounds = 0;
  bool interrupted = false;  // TrainOptions::should_stop
  // Rounds until the certificate holds (or the round budget is spent); resumable.
  int t = 0;
  const auto rounds_until_certified = [&] {
    for (; t < o_.iterations; ++t) {
      rounds = t + 1;
      std::vector<MasterColumn> fresh = add_columns(mu_q);
      for (MasterColumn& c : fresh) cols.push_back(std::move(c));
      queries.push_back(mu_q);
      // Lower bounds at every query point so far, over every column so far (a later column can
      // undercut an earlier answer: the oracle is not exact), so that the bound never exceeds the
      // LP over the same columns.
      lb_best = -kInf;
      for (const std::vector<double>& mu : queries) {
        const double lb = lower_bound(cols, mu);
        if (lb > lb_best) {
          lb_best = lb;
          mu_center = mu;
        }
      }
      // clang-tidy 14 takes an infinite constant in ?: for a narrowing conversion.
      // NOLINTNEXTLINE(bugprone-narrowing-conversions)
      const double previous = t > 0 ? master.value : kInf;
      master = solve_master_on_root(cols, mr, m, big_m);
      gap = master.value - lb_best;
      const bool improved = master.value < previous - 1e-12;
      if (o_.progress && (t % std::max(1, o_.progress_every) == 0 || gap <= tol)) {
        IterationRecord rec;
        rec.iteration = t;
        double f = 0;
        std::vector<double> g(m, 0.0);
        for (std::size_t i = 0; i < cols.size(); ++i) {
          f += master.weights[i] * cols[i].f;
          for (std::size_t j = 0; j < m; ++j) g[j] += master.weights[i] * cols[i].g[j];
        }
        rec.objective = p_.objective_sign * f;
        if (mr.any_spread()) {
          // The mixture's spread is not the mixture of its columns' spreads: from its atoms.
          std::vector<double> mix(p_.atoms.size(), 0.0);
          for (std::size_t i = 0; i < cols.size(); ++i)
            for (std::size_t a = 0; a < mix.size(); ++a)
              mix[a] += master.weights[i] * cols[i].atoms[a];
          g = problem_.evaluate(mix).constraints;
        }
        for (double v : g) rec.max_violation = std::max(rec.max_violation, v);
        rec.lagrangian = lb_best;
        rec.gap = gap;
        rec.seconds = elapsed();
        result.history.push_back(rec);
        o_.progress(rec);
      }
      if (gap <= tol && master.slack > 1e-9 && big_m < 1e6) {
        big_m = std::min(1e6, 10 * big_m);
        master = solve_master_on_root(cols, mr, m, big_m);
        gap = kInf;
      }
      if (gap <= tol) {
        ++t;
        break;
      }
      if (stop_requested()) {
        interrupted = true;
        ++t;
        break;
      }
      // Wentges smoothing; a query whose columns did not improve the LP is followed by one at the
      // LP's own multipliers.
      alpha = (t > 0 && !improved) ? 0.0 : 0.5;
      for (std::size_t r = 0; r < mr.size(); ++r)
        mu_q[r] = alpha * mu_center[r] + (1 - alpha) * master.mu[r];
    }
  };
  rounds_until_certified();

  // A deterministic feasible model: the LP's optimum mixes columns on both sides of the active
  // constraints, and none of them need be feasible alone. Scaling the multipliers along the ray
  // s * mu makes the active constraints costlier as s grows: a bracket [lo, hi] is found whose
  // lo answer still violates an active constraint and whose hi answer does not (s doubled from 2
  // while they stay violated and each doubling comes closer to meeting them; when s = 2 already
  // meets them, which says nothing of the LP's own multipliers, s halved from 1 until they are
  // violated), then bisected until an answer is feasible. The answer at hi may overshoot into
  // violating another constraint (e.g. the other side of a parity); the bisection assumes each
  // constraint moves monotonically in s, so a constraint violated at both ends is violated
  // throughout the bracket and the search stops. Every probe's columns also join the LP.
  const auto max_violation = [](const MasterColumn& c) {
    double v = 0;
    for (double x : c.g) v = std::max(v, x);
    return v;
  };
  const auto any_feasible = [&](const std::vector<MasterColumn>& cs) {
    return std::ranges::any_of(cs, [&](const MasterColumn& c) { return max_violation(c) <= tol; });
  };
  int search_calls = 0;
  if (m > 0 && !interrupted && !any_feasible(cols)) {
    std::vector<double> base = master.mu;
    if (std::all_of(base.begin(), base.end(), [](double v) { return v <= 0; }))
      base.assign(mr.size(), 1.0);
    // One probe's outcome: whether an active constraint is still violated by every answer, the
    // smallest over the answers of their largest active constraint value, and each constraint's
    // smallest value over the answers.
    struct Probe {
      bool active_violated = true;
      double active_value = kInf;
      std::vector<double> g;
    };
    bool found = false;  // any answer feasible
    const auto probe = [&](double s) {
      std::vector<double> mu(mr.size());
      for (std::size_t r = 0; r < mr.size(); ++r) mu[r] = s * base[r];
      std::vector<MasterColumn> fresh = add_columns(mu);
      ++search_calls;
      interrupted = interrupted || stop_requested();
      found = found || any_feasible(fresh);
      Probe out{true, kInf, std::vector<double>(m, kInf)};
      for (const MasterColumn& c : fresh) {
        bool v = false;
        double active = -kInf;
        for (std::size_t j = 0; j < m; ++j) {
          if (base[mr.main[j]] > 0) {
            v = v || c.g[j] > tol;
            active = std::max(active, c.g[j]);
          }
          out.g[j] = std::min(out.g[j], c.g[j]);
        }
        out.active_violated = out.active_violated && v;
        out.active_value = std::min(out.active_value, active);
      }
      for (MasterColumn& c : fresh) cols.push_back(std::move(c));
      return out;
    };
    // The bracket: lo's answers violate an active constraint, hi's do not (0: not found yet).
    double lo = 0, hi = 0;
    Probe at_lo, at_hi;
    const auto place = [&](double s, Probe p) {
      (p.active_violated ? lo : hi) = s;
      (p.active_violated ? at_lo : at_hi) = std::move(p);
    };
    for (double s = 2; s <= 256 && hi == 0 && !found && !interrupted; s *= 2) {
      Probe p = probe(s);
      // Still violated, and no closer to met than at s / 2: the answers do not move toward the
      // active constraints along the ray (saturated, or overshooting through another rate).
      if (p.active_violated && lo > 0 && p.active_value >= at_lo.active_value) break;
      place(s, std::move(p));
    }
    const bool down = lo == 0 && hi == 2;
    for (double s = 1; down && lo == 0 && s >= 1.0 / 256 && !found && !interrupted; s /= 2)
      place(s, probe(s));
    const auto bracket_open = [&] {
      for (std::size_t j = 0; j < m; ++j)
        if (std::min(at_lo.g[j], at_hi.g[j]) > tol) return false;
      return true;
    };
    for (int step = 0; lo > 0 && hi > 0 && !found && step < 8 && !interrupted && bracket_open();
         ++step) {
      const double mid = std::sqrt(lo * hi);
      place(mid, probe(mid));
    }
  }

  // The ray search's columns can undercut the bound at earlier query points (the oracle is not
  // exact): when the certificate no longer holds over all columns, resume the rounds from the
  // LP's multipliers over all of them.
  if (search_calls > 0 && t < o_.iterations && !interrupted) {
    master = solve_master_on_root(cols, mr, m, big_m);
    lb_best = -kInf;
    for (const std::vector<double>& mu : queries)
      lb_best = std::max(lb_best, lower_bound(cols, mu));
    if (master.value - lb_best > tol) {
      mu_q = master.mu;
      rounds_until_certified();
    }
  }

  // The stochastic model: the LP over every column (the same shrinking as the other solvers:
  // LP(0) when feasible, else the smallest violation); the deterministic one: the best column.
  const std::size_t n = cols.size();
  std::vector<double> f(n), g(n * m);
  for (std::size_t i = 0; i < n; ++i) {
    f[i] = cols[i].f;
    for (std::size_t j = 0; j < m; ++j) g[i * m + j] = cols[i].g[j];
  }
  // With spread constraints the mixture's spread is not the mixture of the columns' spreads: the
  // LP over the lifted rows.
  const ShrinkResult sr = mr.any_spread()
                              ? shrink_on_root(n, [&] { return shrink_spread(cols, mr, m, 1e-7); })
                              : shrink_on_root(n, [&] { return shrink_candidates(f, g, m); });
  std::vector<double> mix(p_.atoms.size(), 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t a = 0; a < mix.size(); ++a) mix[a] += sr.weights[i] * cols[i].atoms[a];
  result.stochastic = problem_.evaluate(mix);
  const std::size_t best = best_candidate(f, g, m, tol);
  result.deterministic = problem_.evaluate(cols[best].atoms);

  weights_ = sr.weights;
  best_ = best;
  for (const MasterColumn& c : cols) answers_.push_back(c.answer);
  Classifier& clf = result.classifier;
  clf.kind = "rate_constrained";
  clf.link = Link::kThreshold;
  clf.encoding = p_.data[0].data->encoding();
  for (std::size_t i = 0; i < n && !predict_; ++i) {
    if (sr.weights[i] > 0 || i == best) {
      if (i == best) clf.best = clf.components.size();
      clf.components.emplace_back(*cols[i].model);
      clf.mixture.push_back(sr.weights[i]);
    }
  }
  result.num_candidates = n;
  for (const MasterColumn& c : cols) result.candidates.push_back(problem_.evaluate(c.atoms));
  result.iterations = rounds + search_calls;
  result.oracle_calls = oracle_calls_;
  result.oracle_iterations = lr_iterations_;
  result.seconds = elapsed();
  // The ray search added columns: the bound over the final set.
  lb_best = -kInf;
  for (const std::vector<double>& mu : queries) lb_best = std::max(lb_best, lower_bound(cols, mu));
  result.lower_bound = lb_best;
  result.gap = sr.objective - lb_best;
  const bool feasible = result.stochastic.max_violation() <= tol;
  result.status = interrupted         ? Termination::kInterrupted
                  : !feasible         ? Termination::kInfeasible
                  : result.gap <= tol ? Termination::kConverged
                                      : Termination::kFeasible;
  // Every option of the table (train_options.hpp), then the problem and the solver that ran.
  nlohmann::json opts = nlohmann::json::parse(train_options_json(o_, TrainOptionsJson::kModel));
  opts.update({{"learner", "rate_constrained"},
               {"solver", std::string(to_string(result.solver))},
               {"objective", p_.spec.objective},
               {"maximize", p_.spec.maximize},
               {"constraints", p_.spec.constraints}});
  clf.options_json = opts.dump();
  return result;
}

}  // namespace

CostSensitiveOracle weighted_logistic_oracle(double c, int n_threads) {
  RATEOPT_CHECK(c > 0, "weighted_logistic_oracle: c must be > 0, got {}", c);
  // State shared by the copies of the oracle: the rows of the last problem seen, stacked into
  // one CSR matrix once, and the last answer (the warm start of the next call).
  struct State {
    const RateProblem::Impl* problem = nullptr;
    std::vector<const Dataset*> data;  // with the address: the key of the cached rows
    std::optional<FeatureMatrix> x;
    std::optional<LinearModel> warm;
  };
  auto state = std::make_shared<State>();
  return [c, n_threads, state](const RateProblem& problem, const OracleCosts& oc) -> LinearModel {
    std::vector<const Dataset*> data;
    for (const TrainingData& td : problem.data()) data.push_back(td.data);
    if (state->problem != &problem.impl() || state->data != data) {
      state->problem = &problem.impl();
      state->data = std::move(data);
      state->x = stack_rows(problem.impl());
      state->warm.reset();
    }
    std::vector<double> cost;
    for (const std::vector<double>& d : oc.rows) cost.insert(cost.end(), d.begin(), d.end());
    RATEOPT_CHECK(cost.size() == state->x->rows(),
                  "weighted_logistic_oracle: {} row costs for {} rows", cost.size(),
                  state->x->rows());
    std::optional<LogisticRegressionResult> fit =
        cost_sensitive_fit(*state->x, cost, {}, c, true, n_threads, state->warm, {});
    if (!fit) return LinearModel{std::vector<double>(problem.num_features(), 0.0), -1};
    state->warm = fit->model;
    return fit->model;
  };
}

double lagrangian_lower_bound(const RateProblem& problem, const TrainOptions& options,
                              std::span<const double> f, std::span<const double> g, std::size_t m) {
  TrainOptions o = options;
  o.initial.reset();
  CuttingPlane solver(problem, o);
  return solver.bound_for(f, g, m);
}

TrainResult train_cutting_plane(const RateProblem& problem, const TrainOptions& options) {
  CuttingPlane solver(problem, options);
  return solver.run();
}

PredictionOracleResult train_cutting_plane_predictions(const RateProblem& problem,
                                                       const TrainOptions& options,
                                                       const PredictionOracle& oracle) {
  CuttingPlane solver(problem, options, &oracle);
  TrainResult r = solver.run();
  PredictionOracleResult out;
  out.solver = TrainSolver::kCuttingPlane;
  out.status = r.status;
  out.iterations = r.iterations;
  out.seconds = r.seconds;
  out.oracle_calls = r.oracle_calls;
  const auto calls = static_cast<std::size_t>(r.oracle_calls);
  out.mixture.assign(calls, 0.0);
  out.answers.resize(calls);
  const std::vector<std::size_t>& answer = solver.answers();
  for (std::size_t i = 0; i < answer.size(); ++i) {
    RATEOPT_CHECK(answer[i] < calls, "cutting-plane solver: column {} has no answer", i);
    out.mixture[answer[i]] += solver.weights()[i];
    out.answers[answer[i]] = r.candidates[i];
  }
  out.best = answer[solver.best()];
  out.stochastic = std::move(r.stochastic);
  out.deterministic = std::move(r.deterministic);
  out.lower_bound = r.lower_bound;
  out.gap = r.gap;
  out.history = std::move(r.history);
  return out;
}

}  // namespace rateopt
