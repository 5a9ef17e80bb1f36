// Ramp-loss training with dataset constraints (include/rateopt/ramp.hpp; Goh et al. 2016).
//
// Internals. Every combination c (0: objective, 1..m: constraints) is compiled to one signed
// coefficient per row of the concatenated datasets plus a constant: a row with coefficient
// k > 0 contributes k * P(positive), k < 0 contributes |k| * P(negative). Problem 3 at the current
// scores s' bounds P(positive) = ramp(s) by h+(s) = max(0, 1 + s)/2 when s' <= 1 (else by 1) and
// P(negative) by h-(s) = max(0, 1 - s)/2 when s' >= -1 (else by 1). For multipliers v the
// Lagrangian is a weighted SVM: row r adds an example with label -1 and weight A_r/2 (positive
// side) and one with label +1 and weight B_r/2 (negative side), A_r / B_r the v-weighted sums of
// the positive / negative parts of its coefficients; constant-bounded sides go to K(v).
#include "rateopt/ramp.hpp"

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/check.hpp"
#include "common/numeric.hpp"
#include "common/parallel.hpp"
#include "rateopt/error.hpp"
#include "rateopt/sdca.hpp"
#include "train/lp_limits.hpp"

namespace rateopt {
namespace {

using detail::kInf;
// Problem-3 feasibility of a candidate: its bound values exceed the bounds by at most this (in
// the constraints' units), which absorbs the rounding of convex combinations of models.
constexpr double kStrict = 1e-12;
// Infinite LP bounds for CLP (which treats >= 1e27 as infinite; DBL_MAX bounds can overflow its
// scaling and end a solve "optimal" at a wrong point).
constexpr double kLpInf = 1e30;

struct Compiled {
  std::vector<const FeatureMatrix*> matrices;
  std::vector<std::uint32_t> row_matrix;  // global row -> matrix
  std::vector<std::size_t> row_index;     // global row -> row in its matrix
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<std::vector<double>> coef;  // (1 + m) x rows
  std::vector<double> constant;           // 1 + m
  std::vector<double> bound;              // 1 + m (bound[0] unused)
  [[nodiscard]] std::size_t m() const { return coef.size() - 1; }
};

void check_options(const RampOptions& o) {
  RATEOPT_CHECK(std::isfinite(o.lambda) && o.lambda > 0, "lambda is {}, expected > 0", o.lambda);
  RATEOPT_CHECK(std::isfinite(o.bias_feature) && o.bias_feature >= 0,
                "bias_feature is {}, expected >= 0", o.bias_feature);
  RATEOPT_CHECK(o.max_mm_iterations > 0, "max_mm_iterations is {}, expected > 0",
                o.max_mm_iterations);
  RATEOPT_CHECK(o.mm_tol >= 0, "mm_tol is {}, expected >= 0", o.mm_tol);
  RATEOPT_CHECK(o.feasibility_tol > 0, "feasibility_tol is {}, expected > 0", o.feasibility_tol);
  RATEOPT_CHECK(o.outer_tol > 0, "outer_tol is {}, expected > 0", o.outer_tol);
  RATEOPT_CHECK(o.inexact_mm >= 0 && o.inexact_mm < 1, "inexact_mm is {}, expected in [0, 1)",
                o.inexact_mm);
  RATEOPT_CHECK(o.max_outer_iterations > 0, "max_outer_iterations is {}, expected > 0",
                o.max_outer_iterations);
  RATEOPT_CHECK(o.max_multiplier > 0, "max_multiplier is {}, expected > 0", o.max_multiplier);
  RATEOPT_CHECK(o.inner_gap_rel > 0 && o.inner_gap_min > 0,
                "inner_gap_rel = {} and inner_gap_min = {}: expected both > 0", o.inner_gap_rel,
                o.inner_gap_min);
  RATEOPT_CHECK(o.max_epochs > 0, "max_epochs is {}, expected > 0", o.max_epochs);
  RATEOPT_CHECK(o.phase1_iterations >= 0, "phase1_iterations is {}, expected >= 0",
                o.phase1_iterations);
}

void add_combination(const RateCombination& comb, std::string_view what,
                     std::span<const NamedDataset> datasets,
                     const std::unordered_map<std::string, std::size_t>& index,
                     const std::vector<std::size_t>& offset, std::vector<double>& coef,
                     double& constant) {
  RATEOPT_CHECK(std::isfinite(comb.constant), "{}: constant is {}, expected finite", what,
                comb.constant);
  constant += comb.constant;
  std::vector<double> neg(coef.size(), 0.0);  // sn coefficients
  for (std::size_t t = 0; t < comb.terms.size(); ++t) {
    const RateTerm& term = comb.terms[t];
    RATEOPT_CHECK(std::isfinite(term.coefficient),
                  "{}: terms[{}].coefficient is {}, expected finite", what, t, term.coefficient);
    const auto it = index.find(term.dataset);
    if (it == index.end()) {
      std::string names;
      for (const auto& d : datasets) names += (names.empty() ? "" : ", ") + d.name;
      throw NotFound(fmt::format("{}: terms[{}] names dataset '{}', expected one of: {}", what, t,
                                 term.dataset, names));
    }
    const Dataset& ds = *datasets[it->second].data;
    const std::size_t off = offset[it->second];
    const auto mask = slice_mask(ds, term.slice);
    double den = 1;
    if (!term.count) {
      const auto per = term.per ? slice_mask(ds, *term.per) : mask;
      den = 0;
      for (std::size_t i = 0; i < ds.num_rows(); ++i)
        if (per[i] != 0) den += ds.weight(i);
    }
    if (den == 0 || term.coefficient == 0) continue;  // a rate of an empty set is 0
    auto& target = term.prediction == RatePrediction::kPositive ? coef : neg;
    for (std::size_t i = 0; i < ds.num_rows(); ++i)
      if (mask[i] != 0) target[off + i] += term.coefficient * ds.weight(i) / den;
  }
  // a sp + c sn = k sp + c with k = a - c; for k < 0 this is |k| sn + c + k. The row keeps the
  // signed k (k > 0: a positive-side weight, k < 0: a negative-side weight |k|).
  for (std::size_t r = 0; r < coef.size(); ++r) {
    const double k = coef[r] - neg[r];
    constant += neg[r] + std::min(0.0, k);
    coef[r] = k;
  }
}

// The row layout of the concatenated datasets; `offset` gets each dataset's first global row.
Compiled layout(std::span<const NamedDataset> datasets,
                std::unordered_map<std::string, std::size_t>& index,
                std::vector<std::size_t>& offset) {
  RATEOPT_CHECK(!datasets.empty(), "datasets is empty, expected at least one named dataset");
  Compiled c;
  for (std::size_t k = 0; k < datasets.size(); ++k) {
    RATEOPT_CHECK(datasets[k].data != nullptr, "datasets[{}] ('{}') has no data", k,
                  datasets[k].name);
    RATEOPT_CHECK(index.emplace(datasets[k].name, k).second, "dataset name '{}' appears twice",
                  datasets[k].name);
    const Dataset& ds = *datasets[k].data;
    RATEOPT_CHECK(ds.num_features() == datasets[0].data->num_features(),
                  "dataset '{}' has {} features, expected {} (as '{}')", datasets[k].name,
                  ds.num_features(), datasets[0].data->num_features(), datasets[0].name);
    offset.push_back(c.rows);
    c.matrices.push_back(&ds.features());
    for (std::size_t i = 0; i < ds.num_rows(); ++i) {
      c.row_matrix.push_back(static_cast<std::uint32_t>(k));
      c.row_index.push_back(i);
    }
    c.rows += ds.num_rows();
  }
  c.cols = datasets[0].data->num_features();
  return c;
}

Compiled compile(const RampProblem& problem, std::span<const NamedDataset> datasets) {
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::size_t> offset;
  Compiled c = layout(datasets, index, offset);
  const std::size_t m = problem.constraints.size();
  c.coef.assign(1 + m, std::vector<double>(c.rows, 0.0));
  c.constant.assign(1 + m, 0.0);
  c.bound.assign(1 + m, 0.0);
  add_combination(problem.objective, "objective", datasets, index, offset, c.coef[0],
                  c.constant[0]);
  for (std::size_t j = 0; j < m; ++j) {
    const std::string what = fmt::format("constraints[{}]", j);
    RATEOPT_CHECK(std::isfinite(problem.constraints[j].bound), "{}: bound is {}, expected finite",
                  what, problem.constraints[j].bound);
    add_combination(problem.constraints[j].lhs, what, datasets, index, offset, c.coef[1 + j],
                    c.constant[1 + j]);
    c.bound[1 + j] = problem.constraints[j].bound;
  }
  return c;
}

// Per-row form: k P(positive) with k < 0 is |k| P(negative) + k (the signed-row convention).
void add_row_combination(const RowCombination& comb, std::string_view what,
                         std::span<const NamedDataset> datasets,
                         const std::vector<std::size_t>& offset, std::vector<double>& coef,
                         double& constant) {
  RATEOPT_CHECK(std::isfinite(comb.constant), "{}: constant is {}, expected finite", what,
                comb.constant);
  RATEOPT_CHECK(comb.coef.size() <= datasets.size(),
                "{}: coef has {} vectors, expected at most {} (one per dataset)", what,
                comb.coef.size(), datasets.size());
  constant += comb.constant;
  for (std::size_t d = 0; d < comb.coef.size(); ++d) {
    const auto& v = comb.coef[d];
    const std::size_t n = datasets[d].data->num_rows();
    RATEOPT_CHECK(v.empty() || v.size() == n,
                  "{}: coef[{}] ('{}') has {} entries, expected 0 or {} (one per row)", what, d,
                  datasets[d].name, v.size(), n);
    for (std::size_t i = 0; i < v.size(); ++i) {
      RATEOPT_CHECK(std::isfinite(v[i]), "{}: coef[{}][{}] is {}, expected finite", what, d, i,
                    v[i]);
      coef[offset[d] + i] += v[i];
    }
  }
  for (const double k : coef) constant += std::min(0.0, k);
}

Compiled compile(const RowRampProblem& problem, std::span<const NamedDataset> datasets) {
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::size_t> offset;
  Compiled c = layout(datasets, index, offset);
  const std::size_t m = problem.constraints.size();
  c.coef.assign(1 + m, std::vector<double>(c.rows, 0.0));
  c.constant.assign(1 + m, 0.0);
  c.bound.assign(1 + m, 0.0);
  add_row_combination(problem.objective, "objective", datasets, offset, c.coef[0], c.constant[0]);
  for (std::size_t j = 0; j < m; ++j) {
    const std::string what = fmt::format("constraints[{}]", j);
    RATEOPT_CHECK(std::isfinite(problem.constraints[j].bound), "{}: bound is {}, expected finite",
                  what, problem.constraints[j].bound);
    add_row_combination(problem.constraints[j].lhs, what, datasets, offset, c.coef[1 + j],
                        c.constant[1 + j]);
    c.bound[1 + j] = problem.constraints[j].bound;
  }
  return c;
}

// Scores of every global row.
std::vector<double> all_scores(const Compiled& c, const LinearModel& model, int n_threads) {
  std::vector<double> s(c.rows);
  std::size_t off = 0;
  for (const FeatureMatrix* x : c.matrices) {
    model.scores(*x, std::span<double>(s).subspan(off, x->rows()), n_threads);
    off += x->rows();
  }
  return s;
}

double ramp(double s) {
  return std::clamp((1.0 + s) / 2.0, 0.0, 1.0);
}

enum class Valuation { kRamp, kThreshold, kBound };

// Values of all combinations (constants included, bounds not subtracted). kBound uses the
// Problem-3 bounds at the reference scores `ref`.
std::vector<double> values(const Compiled& c, std::span<const double> s, Valuation how,
                           std::span<const double> ref, int n_threads) {
  const std::size_t k = c.coef.size();
  auto sums = detail::block_reduce<std::vector<double>>(
      c.rows, n_threads,
      [&](std::size_t begin, std::size_t end) {
        std::vector<double> part(k, 0.0);
        for (std::size_t r = begin; r < end; ++r) {
          double p = 0, n = 0;
          switch (how) {
            case Valuation::kRamp:
              p = ramp(s[r]);
              n = 1.0 - p;
              break;
            case Valuation::kThreshold:
              p = s[r] > 0 ? 1.0 : 0.0;
              n = 1.0 - p;
              break;
            case Valuation::kBound:
              p = ref[r] <= 1 ? 0.5 * std::max(0.0, 1.0 + s[r]) : 1.0;
              n = ref[r] >= -1 ? 0.5 * std::max(0.0, 1.0 - s[r]) : 1.0;
              break;
          }
          for (std::size_t j = 0; j < k; ++j) {
            const double a = c.coef[j][r];
            if (a > 0) {
              part[j] += a * p;
            } else if (a < 0) {
              part[j] -= a * n;
            }
          }
        }
        return part;
      },
      [](std::vector<double>& total, const std::vector<double>& part) {
        if (total.empty()) total.assign(part.size(), 0.0);
        for (std::size_t j = 0; j < part.size(); ++j) total[j] += part[j];
      });
  if (sums.empty()) sums.assign(k, 0.0);
  for (std::size_t j = 0; j < k; ++j) sums[j] += c.constant[j];
  return sums;
}

double regulariser(const LinearModel& w, double lambda, double beta) {
  double n2 = 0;
  for (double x : w.weights) n2 += x * x;
  if (beta > 0) n2 += (w.bias / beta) * (w.bias / beta);
  return 0.5 * lambda * n2;
}

double max_violation(const Compiled& c, const std::vector<double>& v) {
  double worst = -kInf;
  for (std::size_t j = 1; j < v.size(); ++j) worst = std::max(worst, v[j] - c.bound[j]);
  return c.m() == 0 ? 0.0 : worst;
}

// ---- Problem 3 at reference scores, by its Lagrangian ------------------------------------------

struct Candidate {
  LinearModel model;
  double f0 = 0;          // bound objective + regulariser
  std::vector<double> f;  // bound constraint values - bounds (m)
  [[nodiscard]] double violation() const {
    double w = f.empty() ? 0.0 : -kInf;
    for (double x : f) w = std::max(w, x);
    return w;
  }
  // Psi(w, v) = f0 + <v, f>: a valid upper cut on zeta(v).
  [[nodiscard]] double psi(std::span<const double> v) const {
    double s = f0;
    for (std::size_t j = 0; j < f.size(); ++j) s += v[j] * f[j];
    return s;
  }
};

struct Outer {
  Candidate best;  // best candidate (strictly feasible if any, else within the tolerance)
  bool strict = false;
  double last_gap = kInf;  // bound gap at the last 10% improvement
  int stall = 0;
  double upper = kInf, lower = -kInf;
  std::vector<double> v;  // multipliers of the last evaluation that produced `best` or the last
  std::vector<LinearModel> solutions;  // several constraints: the SVM solutions (w(v_t))
  int solves = 0;
  long long epochs = 0;
  Termination status = Termination::kMaxIterations;
};

class Problem3 {
 public:
  Problem3(const Compiled& c, const RampOptions& o, std::span<const double> ref,
           std::vector<double>& warm)
      : c_(c), o_(o), ref_(ref), warm_(warm) {
    warm_.resize(2 * c.rows, 0.0);
  }

  // Constraint j of Problem 3 becomes bound value - bound <= shift[j] (a start that exceeds a
  // bound within the feasibility tolerance is held at its value).
  void set_shift(std::vector<double> shift) { shift_ = std::move(shift); }

  [[nodiscard]] Candidate evaluate(const LinearModel& w) const {
    const auto s = all_scores(c_, w, o_.n_threads);
    const auto val = values(c_, s, Valuation::kBound, ref_, o_.n_threads);
    Candidate cand;
    cand.model = w;
    cand.f0 = val[0] + regulariser(w, o_.lambda, o_.bias_feature);
    for (std::size_t j = 1; j < val.size(); ++j)
      cand.f.push_back(val[j] - c_.bound[j] - (shift_.empty() ? 0.0 : shift_[j - 1]));
    return cand;
  }

  // Solves the SVM of multipliers v to an absolute gap eps; returns the candidate and l(v).
  Candidate solve(std::span<const double> v, double eps, double& lower, Outer& out) {
    std::vector<SvmExample> ex;
    std::vector<std::size_t> slot;
    std::vector<double> alpha0;
    ex.reserve(c_.rows + c_.rows / 2);
    double k = c_.constant[0];
    for (std::size_t j = 0; j < v.size(); ++j)
      k += v[j] * (c_.constant[1 + j] - c_.bound[1 + j] - (shift_.empty() ? 0.0 : shift_[j]));
    for (std::size_t r = 0; r < c_.rows; ++r) {
      double a = std::max(0.0, c_.coef[0][r]), b = std::max(0.0, -c_.coef[0][r]);
      for (std::size_t j = 0; j < v.size(); ++j) {
        const double x = c_.coef[1 + j][r];
        if (x > 0) {
          a += v[j] * x;
        } else {
          b -= v[j] * x;
        }
      }
      if (a > 0) {
        if (ref_[r] <= 1) {
          ex.push_back({c_.row_matrix[r], c_.row_index[r], -1.0, 0.5 * a});
          slot.push_back(2 * r);
        } else {
          k += a;
        }
      }
      if (b > 0) {
        if (ref_[r] >= -1) {
          ex.push_back({c_.row_matrix[r], c_.row_index[r], 1.0, 0.5 * b});
          slot.push_back(2 * r + 1);
        } else {
          k += b;
        }
      }
    }
    alpha0.resize(ex.size());
    for (std::size_t i = 0; i < ex.size(); ++i) alpha0[i] = warm_[slot[i]];
    WeightedSvmOptions so;
    so.lambda = o_.lambda;
    so.bias_feature = o_.bias_feature;
    so.gap_abs = eps;
    so.gap_rel = 0;
    so.max_epochs = o_.max_epochs;
    so.seed = o_.seed + static_cast<std::uint64_t>(out.solves);
    so.n_threads = o_.n_threads;
    WeightedSvmResult fit;
    if (ex.empty()) {
      fit.model.weights.assign(c_.cols, 0.0);
    } else {
      fit = fit_weighted_svm(c_.matrices, ex, so, {}, alpha0);
      for (std::size_t i = 0; i < ex.size(); ++i) warm_[slot[i]] = fit.alpha[i];
    }
    ++out.solves;
    out.epochs += fit.epochs;
    lower = fit.dual + k;
    return evaluate(fit.model);
  }

 private:
  const Compiled& c_;
  const RampOptions& o_;
  std::span<const double> ref_;
  std::vector<double>& warm_;
  std::vector<double> shift_;
};

// The upper bound uses candidates feasible for Problem 3 (violation <= 0); candidates within
// the feasibility tolerance are kept as a fallback for when no strictly feasible one improves.
void consider(Outer& out, const Candidate& cand, double lower, std::span<const double> v,
              double tol) {
  out.lower = std::max(out.lower, lower);
  if (cand.violation() <= kStrict && cand.f0 < out.upper) {
    out.best = cand;
    out.upper = cand.f0;
    out.v.assign(v.begin(), v.end());
    out.strict = true;
  } else if (!out.strict && cand.violation() <= tol && cand.f0 < out.best.f0) {
    out.best = cand;
    out.v.assign(v.begin(), v.end());
  }
}

void init_outer(Outer& out, const Candidate& start, std::size_t m) {
  out.best = start;
  out.strict = start.violation() <= kStrict;
  if (out.strict) out.upper = start.f0;
  out.v.assign(m, 0.0);
}

// Shallow cuts: the SVM gap asked for is a quarter of the current bound gap (at most
// inner_gap_rel relative), halved for every evaluation that did not shrink the bound gap by 10%.
double inner_eps(Outer& out, const RampOptions& o) {
  const double gap = out.upper - out.lower;
  if (std::isfinite(gap)) {
    if (gap < 0.9 * out.last_gap) {
      out.last_gap = gap;
      out.stall = 0;
    } else {
      ++out.stall;
    }
  }
  const double loose = o.inner_gap_rel * std::max(1e-12, std::abs(out.best.f0));
  double eps = loose;
  if (std::isfinite(gap)) eps = std::min(eps, 0.25 * gap * std::ldexp(1.0, -out.stall));
  return std::max(o.inner_gap_min, eps);
}

// One constraint: the constraint value f(v) at w(v) is non-increasing in v. Bracket the sign
// change starting from `v0` (the previous MM step's multiplier), then shrink the bracket with the
// intersection of the two bracketing cuts Psi(w_lo, v) and Psi(w_hi, v) (the maximiser of the
// 1-D cutting-plane model), safeguarded to the middle 80% of the bracket (else bisection).
Outer solve_bisection(Problem3& p3, const Candidate& start, const RampOptions& o, double v0) {
  Outer out;
  init_outer(out, start, 1);
  out.v.assign(1, std::clamp(v0, 0.0, o.max_multiplier));  // kept when the start stays best
  double lo = 0, hi = kInf;
  Candidate c_lo, c_hi;
  bool has_lo = false;
  double v = std::clamp(v0, 0.0, o.max_multiplier);
  // Bracketing steps from a warm multiplier start small (x1.25) and square (1.56, 2.44, ...).
  double factor = v > 0 ? 1.25 : 2.0;
  for (int it = 0; it < o.max_outer_iterations; ++it) {
    double lower = -kInf;
    const double vv[] = {v};
    const Candidate cand = p3.solve(vv, inner_eps(out, o), lower, out);
    consider(out, cand, lower, vv, o.feasibility_tol);
    if (out.upper - out.lower <= o.outer_tol) {
      out.status = Termination::kConverged;
      break;
    }
    if (cand.f[0] > 0) {
      lo = v;
      c_lo = cand;
      has_lo = true;
    } else {
      hi = v;
      c_hi = cand;
    }
    if (has_lo && std::isfinite(hi) && out.upper - out.lower > o.outer_tol) {
      // Convexity: theta w_lo + (1 - theta) w_hi with theta f_lo + (1 - theta) f_hi = 0 is
      // feasible and no worse than the interpolated objective -- a primal point at v*.
      const double theta = -c_hi.f[0] / (c_lo.f[0] - c_hi.f[0]);
      LinearModel mix = c_hi.model;
      for (std::size_t j = 0; j < mix.weights.size(); ++j)
        mix.weights[j] = theta * c_lo.model.weights[j] + (1 - theta) * c_hi.model.weights[j];
      mix.bias = theta * c_lo.model.bias + (1 - theta) * c_hi.model.bias;
      // Its multiplier: where the two cuts Psi(w_lo, .) and Psi(w_hi, .) meet (the next MM
      // step's starting guess), clamped to the bracket.
      const double slope = c_lo.f[0] - c_hi.f[0];
      const double vmix[] = {slope > 0 ? std::clamp((c_hi.f0 - c_lo.f0) / slope, lo, hi)
                                       : 0.5 * (lo + hi)};
      consider(out, p3.evaluate(mix), -kInf, vmix, o.feasibility_tol);
      if (out.upper - out.lower <= o.outer_tol) {
        out.status = Termination::kConverged;
        break;
      }
    }
    if (hi == 0) continue;  // the constraint is inactive: re-solve at v = 0 more tightly
    if (!std::isfinite(hi)) {
      if (v >= o.max_multiplier) break;
      v = v == 0 ? 1.0 : std::min(factor * v, o.max_multiplier);
      factor *= factor;
    } else if (!has_lo) {
      v = hi < 1e-9 ? 0.0 : hi / factor;
      factor *= factor;
    } else {
      const double slope = c_lo.f[0] - c_hi.f[0];
      double next = slope > 0 ? (c_hi.f0 - c_lo.f0) / slope : 0.5 * (lo + hi);
      const double margin = 0.1 * (hi - lo);
      if (!(next >= lo + margin && next <= hi - margin)) next = 0.5 * (lo + hi);
      v = next;
      if (hi - lo <= 1e-12 * std::max(1.0, hi)) break;
    }
  }
  return out;
}

// A constraint value as an LP coefficient: rounding noise (a tight constraint's value is often
// +-1e-16) becomes an exact zero, which CLP's scaling cannot handle next to values of order one.
double lp_coefficient(double f) {
  return std::abs(f) < 1e-13 ? 0.0 : f;
}

// Kelley's point in a trust region: the largest z with z <= f0_s + <f_s, v> for every cut s,
// v in [centre - radius, centre + radius] and in [0, vmax]^m. A small l1 pull towards `centre`
// (objective units per unit of multiplier) keeps v at the centre in directions where the model
// is flat -- e.g. a constraint that is tight at every cut, whose multiplier the cuts cannot pin.
// Columns: p (m), q (m), z with v = centre + p - q.
bool kelley_lp(const std::vector<Candidate>& cuts, std::span<const double> centre, double radius,
               double vmax, double pull, std::vector<double>& v_out, double& z_out) {
  const int m = static_cast<int>(centre.size());
  const int z_col = 2 * m;  // the last column
  const int cols = z_col + 1;
  const double big = kLpInf;
  std::vector<double> obj(cols, pull), lb(cols, 0.0), ub(cols, 0.0);
  for (int j = 0; j < m; ++j) {
    const double c = centre[static_cast<std::size_t>(j)];
    ub[j] = std::max(0.0, std::min(radius, vmax - c));
    ub[m + j] = std::max(0.0, std::min(radius, c));
  }
  obj[z_col] = -1;
  lb[z_col] = -big;
  ub[z_col] = big;
  CoinPackedMatrix a(false, 0, 0);
  a.setDimensions(0, cols);
  std::vector<double> rlb, rub;
  std::vector<int> idx;
  std::vector<double> val;
  for (const Candidate& cand : cuts) {
    // z - <f, p - q> <= f0 + <f, centre>.
    double rhs = cand.f0;
    idx.clear();
    val.clear();
    for (int j = 0; j < m; ++j) {
      const double f = lp_coefficient(cand.f[static_cast<std::size_t>(j)]);
      rhs += f * centre[static_cast<std::size_t>(j)];
      if (f == 0) continue;
      idx.insert(idx.end(), {j, m + j});
      val.insert(val.end(), {-f, f});
    }
    idx.push_back(z_col);
    val.push_back(1);
    a.appendRow(static_cast<int>(idx.size()), idx.data(), val.data());
    rlb.push_back(-big);
    rub.push_back(rhs);
  }
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.loadProblem(a, lb.data(), ub.data(), obj.data(), rlb.data(), rub.data());
  limit_lp(lp);
  lp.dual();
  if (!lp.isProvenOptimal()) return false;
  const double* x = lp.primalColumnSolution();
  v_out.resize(centre.size());
  for (int j = 0; j < m; ++j)
    v_out[static_cast<std::size_t>(j)] =
        std::clamp(centre[static_cast<std::size_t>(j)] + x[j] - x[m + j], 0.0, vmax);
  // The model value at the rounded point (the LP's z up to its tolerances).
  z_out = kInf;
  for (const Candidate& cand : cuts) z_out = std::min(z_out, cand.psi(v_out));
  return true;
}

// Primal recovery: the convex combination of the cut models with the smallest combined objective
// whose combined constraint values are <= 0 (the LP dual of maximising the cut model over v >= 0).
// Problem 3 is convex in the model, so the mixed model is feasible and no worse than that
// combination. Returns false when the LP fails or picks a single candidate (nothing new).
bool mixture(const std::vector<Candidate>& cuts, std::size_t m, LinearModel& mix) {
  const int n = static_cast<int>(cuts.size());
  if (n < 2) return false;
  CoinPackedMatrix a(true, 0, 0);  // column-ordered: one column per cut
  a.setDimensions(static_cast<int>(m) + 1, 0);
  std::vector<double> obj, lb(static_cast<std::size_t>(n), 0.0),
      ub(static_cast<std::size_t>(n), 1.0);
  std::vector<int> idx;
  std::vector<double> val;
  for (const Candidate& cand : cuts) {
    idx.assign(1, 0);
    val.assign(1, 1.0);
    for (std::size_t j = 0; j < m; ++j) {
      const double f = lp_coefficient(cand.f[j]);
      if (f == 0) continue;
      idx.push_back(static_cast<int>(j + 1));
      val.push_back(f);
    }
    a.appendCol(static_cast<int>(idx.size()), idx.data(), val.data());
    obj.push_back(cand.f0);
  }
  std::vector<double> rlb(m + 1, -kLpInf), rub(m + 1, 0.0);
  rlb[0] = rub[0] = 1;  // sum theta = 1
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.loadProblem(a, lb.data(), ub.data(), obj.data(), rlb.data(), rub.data());
  limit_lp(lp);
  lp.dual();
  if (!lp.isProvenOptimal()) return false;
  const double* x = lp.primalColumnSolution();
  std::vector<double> theta(x, x + n);
  double sum = 0;
  for (double& t : theta) sum += (t = std::clamp(t, 0.0, 1.0));
  if (!(sum > 0)) return false;
  for (double& t : theta) t /= sum;
  // The LP holds its rows to a tolerance: shift weight to the start (cut 0, f <= 0) until the
  // combined constraint values are <= 0 exactly.
  double tau = 0;
  for (std::size_t j = 0; j < m; ++j) {
    double comb = 0;
    for (int s = 0; s < n; ++s) comb += theta[static_cast<std::size_t>(s)] * cuts[s].f[j];
    if (comb > 0) {
      const double f_start = cuts[0].f[j];
      tau = std::max(tau, f_start < comb ? comb / (comb - f_start) : 1.0);
    }
  }
  for (double& t : theta) t *= 1 - tau;
  theta[0] += tau;
  if (*std::max_element(theta.begin(), theta.end()) >= 1 - 1e-12) return false;
  mix = cuts[0].model;
  std::fill(mix.weights.begin(), mix.weights.end(), 0.0);
  mix.bias = 0;
  for (int s = 0; s < n; ++s) {
    const double t = theta[static_cast<std::size_t>(s)];
    if (t == 0) continue;
    for (std::size_t j = 0; j < mix.weights.size(); ++j)
      mix.weights[j] += t * cuts[s].model.weights[j];
    mix.bias += t * cuts[s].model.bias;
  }
  return true;
}

// Several constraints: a trust-region cutting-plane (bundle) method on the concave dual
// zeta(v), with primal recovery. Goh's Algorithm 2 as first implemented took upper bounds only
// from SVM solutions that happened to be feasible; with a binding constraint w(v) is infeasible
// for every v below v* and the solves are inexact, so with two or more constraints (a parity's
// two sides, equalized odds) that almost never happened and the bound gap did not close: every
// MM step spent its max_outer_iterations solves (Chebyshev centres in [0, max_multiplier]^m,
// far from v*, are also costly SVMs) and MM stopped near its start. Here:
//   * every SVM solve at v_t gives a cut Psi(w_t, v) >= zeta(v) and a lower bound l(v_t);
//   * the upper bound comes from the best feasible convex combination of all cut models
//     (`mixture`), the multi-dimensional form of the bisection's two-point interpolation;
//   * the next query is Kelley's point of the cuts inside a box of half-width `radius` around
//     the centre (the best lower bound's multipliers), started at the previous MM step's
//     multipliers; the box doubles after a good step that reached its edge and halves after a
//     query worse than the centre;
//   * the previous MM step's SVM solutions, re-evaluated on this step's bounds, seed the cuts;
//   * an inexact step must also close its gap to inexact_mm x the decrease it has made.
Outer solve_bundle(Problem3& p3, const Candidate& start, std::size_t m, const RampOptions& o,
                   const std::vector<double>& v0, const std::vector<LinearModel>& carried,
                   double exact_tol) {
  Outer out;
  init_outer(out, start, m);
  std::vector<Candidate> cuts{start};  // Psi(w', v) >= zeta(v) for all v
  // The previous MM step's SVM solutions, re-evaluated on this step's bounds, are valid cuts
  // (and mixture components) for free: one scoring pass each instead of an SVM solve.
  for (const LinearModel& w : carried) cuts.push_back(p3.evaluate(w));
  std::vector<double> centre(m, 0.0);
  if (v0.size() == m)
    for (std::size_t j = 0; j < m; ++j) centre[j] = std::clamp(v0[j], 0.0, o.max_multiplier);
  out.v = centre;
  const double vmax_centre = *std::max_element(centre.begin(), centre.end());
  double radius = vmax_centre > 0 ? 0.25 * vmax_centre : 1.0;
  double centre_lower = -kInf;
  std::vector<double> v = centre;
  double predicted = kInf;  // the cut model at v before its solve
  const double pull = 1e-6 * std::max(1e-12, std::abs(start.f0));
  for (int it = 0; it < o.max_outer_iterations; ++it) {
    double lower = -kInf;
    const Candidate cand = p3.solve(v, inner_eps(out, o), lower, out);
    consider(out, cand, lower, v, o.feasibility_tol);
    out.solutions.push_back(cand.model);
    if (out.solutions.size() > 2 * (m + 1)) out.solutions.erase(out.solutions.begin());
    cuts.push_back(cand);
    // Trust region: a serious step moves the centre.
    const double step = [&] {
      double s = 0;
      for (std::size_t j = 0; j < m; ++j) s = std::max(s, std::abs(v[j] - centre[j]));
      return s;
    }();
    if (it == 0 || lower > centre_lower) {
      const double gain = std::isfinite(predicted) && predicted > centre_lower
                              ? (lower - centre_lower) / (predicted - centre_lower)
                              : 0.0;
      if (it > 0 && gain > 0.5 && step >= 0.99 * radius) radius *= 2;
      centre = v;
      centre_lower = lower;
    } else if (step > 0) {
      radius = std::max(0.5 * radius, 1e-12 * std::max(1.0, o.max_multiplier));
    }
    LinearModel mix;
    if (mixture(cuts, m, mix)) {
      Candidate mc = p3.evaluate(mix);
      consider(out, mc, -kInf, centre, o.feasibility_tol);
      cuts.push_back(std::move(mc));
    }
    // An inexact step (o.outer_tol above exact_tol) also needs the bound gap to be at most
    // inexact_mm x the decrease it has made: a mixture with the start can close a loose gap
    // while keeping most of the start, and MM would then crawl.
    const double gap = out.upper - out.lower;
    if (gap <= o.outer_tol && (gap <= exact_tol || gap <= o.inexact_mm * (start.f0 - out.upper))) {
      out.status = Termination::kConverged;
      break;
    }
    if (!kelley_lp(cuts, centre, radius, o.max_multiplier, pull, v, predicted)) {
      v = centre;  // re-solve at the centre (more tightly: inner_eps halves on a stall)
      predicted = kInf;
    }
  }
  out.v = centre;
  return out;
}

// What one MM step hands the next: the SDCA duals (one per row and side), the multipliers and,
// with several constraints, the SVM solutions (re-evaluated as cuts).
struct WarmStart {
  std::vector<double> alpha;
  std::vector<double> v;
  std::vector<LinearModel> solutions;
};

// Problem 3 at reference scores `ref` from `start`. Constraint j may end at its bound plus
// max(its value at the start, relax[j]) (band_relaxation); `exact_tol` is the outer tolerance of
// an exact step (o.outer_tol may be an inexact step's looser one).
Outer solve_problem3(const Compiled& c, const RampOptions& o, std::span<const double> ref,
                     const LinearModel& start, WarmStart& ws, std::span<const double> relax,
                     double exact_tol) {
  Problem3 p3(c, o, ref, ws.alpha);
  Candidate first = p3.evaluate(start);
  // A start within the feasibility tolerance but above a bound: hold that constraint at its
  // current value instead (the step then keeps the start's feasibility).
  std::vector<double> shift(c.m(), 0.0);
  for (std::size_t j = 0; j < c.m(); ++j)
    shift[j] = std::max({0.0, first.f[j], relax.empty() ? 0.0 : relax[j]});
  p3.set_shift(shift);
  for (std::size_t j = 0; j < c.m(); ++j) first.f[j] -= shift[j];
  if (c.m() == 0) {
    Outer out;
    init_outer(out, first, 0);
    for (int it = 0; it < o.max_outer_iterations; ++it) {
      double lower = -kInf;
      const Candidate cand = p3.solve({}, inner_eps(out, o), lower, out);
      consider(out, cand, lower, {}, o.feasibility_tol);
      if (out.upper - out.lower <= o.outer_tol) {
        out.status = Termination::kConverged;
        break;
      }
    }
    return out;
  }
  if (c.m() == 1) return solve_bisection(p3, first, o, ws.v.empty() ? 0.0 : ws.v[0]);
  return solve_bundle(p3, first, c.m(), o, ws.v, ws.solutions, exact_tol);
}

// ---- majorisation-minimisation -----------------------------------------------------------------

// Two constraints whose coefficients are opposite (the two sides of a parity, or an `a == b`)
// bound the same rate difference d from both sides: lo <= d <= hi, a band of width W = hi - lo
// (constant in w: their ramp values sum to -W). Problem 3 bounds both sides by hinges, whose sum
// exceeds the ramps' wherever a score leaves [-1, 1], so for W = 0 (an equality) its only
// feasible points keep every score of the band's rows on its side of +-1: no Slater point, the
// dual has no maximiser, and MM cannot move. A band narrower than the feasibility tolerance
// therefore lets each side exceed its bound by up to 0.9 (feasibility_tol - W) in Problem 3
// (the MM feasibility check still uses the bounds, so results stay within the tolerance).
// Returns that allowance per constraint (0 for the others).
std::vector<double> band_relaxation(const Compiled& c, double tol) {
  const std::size_t m = c.m();
  std::vector<double> relax(m, 0.0);
  if (m < 2) return relax;
  const std::vector<double> zero(c.rows, 0.0);
  const auto at_zero = values(c, zero, Valuation::kRamp, {}, 1);  // any point: W is constant
  for (std::size_t i = 1; i <= m; ++i) {
    double scale = 0;
    for (const double x : c.coef[i]) scale = std::max(scale, std::abs(x));
    for (std::size_t j = i + 1; j <= m; ++j) {
      bool opposite = true;
      for (std::size_t r = 0; r < c.rows && opposite; ++r)
        opposite = std::abs(c.coef[i][r] + c.coef[j][r]) <= 1e-12 * scale;
      if (!opposite) continue;
      const double width = -((at_zero[i] - c.bound[i]) + (at_zero[j] - c.bound[j]));
      if (width >= tol) continue;
      const double allowance = std::min(0.9 * tol, 0.9 * (tol - width));
      relax[i - 1] = std::max(relax[i - 1], allowance);
      relax[j - 1] = std::max(relax[j - 1], allowance);
    }
  }
  return relax;
}

struct MmState {
  LinearModel model;
  std::vector<double> scores;
  std::vector<double> ramp_values;  // all combinations (ramp)
  double objective = 0;             // ramp objective + regulariser
};

MmState make_state(const Compiled& c, LinearModel model, const RampOptions& o) {
  MmState s;
  s.model = std::move(model);
  s.scores = all_scores(c, s.model, o.n_threads);
  s.ramp_values = values(c, s.scores, Valuation::kRamp, {}, o.n_threads);
  s.objective = s.ramp_values[0] + regulariser(s.model, o.lambda, o.bias_feature);
  return s;
}

// Runs MM on `c` from `state`; appends to history. `stop_when_feasible_for` (phase 1): stop as
// soon as the original problem's constraints hold.
void run_mm(const Compiled& c, const RampOptions& o, int iterations, bool phase1, MmState& state,
            std::vector<MmIteration>& history, long long& solves, long long& epochs,
            const Compiled* original = nullptr) {
  WarmStart ws;
  const std::vector<double> relax = band_relaxation(c, o.feasibility_tol);
  // Inexact MM: a step's Problem 3 needs no more accuracy than a fraction of the progress MM is
  // making (any feasible point no worse than the current one keeps MM monotone and feasible).
  double last_decrease = std::abs(state.objective);
  RampOptions step_options = o;
  for (int t = 1; t <= iterations; ++t) {
    step_options.outer_tol = std::max(o.outer_tol, o.inexact_mm * last_decrease);
    Outer out = solve_problem3(c, step_options, state.scores, state.model, ws, relax, o.outer_tol);
    ws.v = out.v;
    ws.solutions = std::move(out.solutions);
    MmState next = make_state(c, out.best.model, o);
    MmIteration rec;
    rec.iteration = 1 + static_cast<int>(std::count_if(
                            history.begin(), history.end(),
                            [&](const MmIteration& h) { return h.phase1 == phase1; }));
    rec.phase1 = phase1;
    rec.previous_objective = state.objective;
    rec.objective = next.objective;
    rec.max_violation = max_violation(c, next.ramp_values);
    rec.upper_bound = out.upper;
    rec.lower_bound = out.lower;
    rec.multipliers = out.v;
    rec.svm_solves = out.solves;
    rec.epochs = out.epochs;
    rec.outer_status = out.status;
    const double slack = 1e-9 * std::max(1.0, std::abs(state.objective));
    rec.monotone = next.objective <= state.objective + slack;
    rec.feasible = rec.max_violation <= o.feasibility_tol;
    rec.accepted = rec.monotone && rec.feasible;
    solves += out.solves;
    epochs += out.epochs;
    const double decrease = state.objective - next.objective;
    if (rec.accepted) state = std::move(next);
    history.push_back(rec);
    if (o.progress) o.progress(rec);
    if (!rec.accepted) break;
    if (original != nullptr) {
      const auto v = values(*original, state.scores, Valuation::kRamp, {}, o.n_threads);
      if (max_violation(*original, v) <= o.feasibility_tol) break;
    }
    // Stop on a small decrease only after a step solved to the full outer tolerance.
    if (decrease <= o.mm_tol && step_options.outer_tol <= o.outer_tol) break;
    last_decrease = std::max(0.0, decrease);
  }
}

// Phase 1: minimise the sum of the violated constraints' left-hand sides subject to every other
// constraint staying below max(bound, current value); repeated until feasible.
Compiled phase1_problem(const Compiled& c, const std::vector<double>& current) {
  Compiled p = c;
  p.coef.resize(1);
  p.constant.resize(1);
  p.bound.resize(1);
  std::fill(p.coef[0].begin(), p.coef[0].end(), 0.0);
  p.constant[0] = 0;
  for (std::size_t j = 1; j <= c.m(); ++j) {
    if (current[j] - c.bound[j] > 0) {
      for (std::size_t r = 0; r < c.rows; ++r) p.coef[0][r] += c.coef[j][r];
      p.constant[0] += c.constant[j];
    } else {
      p.coef.push_back(c.coef[j]);
      p.constant.push_back(c.constant[j]);
      p.bound.push_back(c.bound[j]);
    }
  }
  return p;
}

RampEvaluation evaluate_compiled(const Compiled& c, const LinearModel& model, bool randomised) {
  RATEOPT_CHECK(model.weights.size() == c.cols, "model has {} weights, expected {}",
                model.weights.size(), c.cols);
  const auto s = all_scores(c, model, 0);
  const auto v = values(c, s, randomised ? Valuation::kRamp : Valuation::kThreshold, {}, 0);
  RampEvaluation e;
  e.objective = v[0];
  e.constraints.assign(v.begin() + 1, v.end());
  return e;
}

RampResult fit_compiled(const Compiled& c, std::span<const NamedDataset> datasets,
                        const RampOptions& options) {
  RampResult result;

  LinearModel start;
  if (options.initial) {
    RATEOPT_CHECK(options.initial->weights.size() == c.cols,
                  "initial has {} weights, expected {} (one per feature)",
                  options.initial->weights.size(), c.cols);
    RATEOPT_CHECK(options.bias_feature > 0 || options.initial->bias == 0,
                  "initial.bias is {} but bias_feature is 0", options.initial->bias);
    start = *options.initial;
    result.start = "initial";
  } else {
    start.weights.assign(c.cols, 0.0);
    result.start = "zero";
  }
  MmState state = make_state(c, start, options);
  if (max_violation(c, state.ramp_values) > options.feasibility_tol) {
    // Phase 1, re-targeted at the currently violated constraints after every step.
    result.start += "+phase1";
    for (int round = 0; round < options.phase1_iterations; ++round) {
      const Compiled p1 = phase1_problem(c, state.ramp_values);
      MmState s1 = make_state(p1, state.model, options);
      run_mm(p1, options, 1, true, s1, result.history, result.svm_solves, result.epochs, &c);
      state = make_state(c, s1.model, options);
      if (max_violation(c, state.ramp_values) <= options.feasibility_tol) break;
      if (result.history.back().previous_objective - result.history.back().objective <= 1e-12)
        break;  // no progress
    }
  }
  const bool feasible_start = max_violation(c, state.ramp_values) <= options.feasibility_tol;
  if (feasible_start) {
    run_mm(c, options, options.max_mm_iterations, false, state, result.history, result.svm_solves,
           result.epochs);
    // Converged unless the last step still made progress when the budget ran out.
    result.status = Termination::kConverged;
    const auto steps = std::count_if(result.history.begin(), result.history.end(),
                                     [](const MmIteration& h) { return !h.phase1; });
    if (steps >= options.max_mm_iterations && result.history.back().accepted &&
        result.history.back().previous_objective - result.history.back().objective > options.mm_tol)
      result.status = Termination::kMaxIterations;
  } else {
    result.status = Termination::kInfeasible;
  }

  result.model = state.model;
  result.objective = state.ramp_values[0];
  result.constraints.assign(state.ramp_values.begin() + 1, state.ramp_values.end());
  result.max_violation = max_violation(c, state.ramp_values);
  const auto det = values(c, state.scores, Valuation::kThreshold, {}, options.n_threads);
  result.objective_deterministic = det[0];
  result.constraints_deterministic.assign(det.begin() + 1, det.end());
  for (auto it = result.history.rbegin(); it != result.history.rend(); ++it)
    if (!it->phase1 && it->accepted) {
      result.multipliers = it->multipliers;
      break;
    }

  result.classifier = Classifier::single(result.model, Link::kRamp, datasets[0].data->encoding());
  result.classifier.kind = "ramp";
  nlohmann::json opts = {{"solver", "ramp"},
                         {"lambda", options.lambda},
                         {"bias_feature", options.bias_feature},
                         {"max_mm_iterations", options.max_mm_iterations},
                         {"feasibility_tol", options.feasibility_tol},
                         {"outer_tol", options.outer_tol},
                         {"seed", options.seed}};
  result.classifier.options_json = opts.dump();
  nlohmann::json rep = {{"status", std::string(to_string(result.status))},
                        {"start", result.start},
                        {"objective_ramp", result.objective},
                        {"objective_deterministic", result.objective_deterministic},
                        {"constraints_ramp", result.constraints},
                        {"constraints_deterministic", result.constraints_deterministic},
                        {"max_violation", result.max_violation},
                        {"multipliers", result.multipliers},
                        {"svm_solves", result.svm_solves},
                        {"epochs", result.epochs},
                        {"mm_iterations", result.history.size()}};
  result.classifier.report_json = rep.dump();
  return result;
}

}  // namespace

RampEvaluation evaluate_ramp_problem(const RampProblem& problem,
                                     std::span<const NamedDataset> datasets,
                                     const LinearModel& model, bool randomised) {
  return evaluate_compiled(compile(problem, datasets), model, randomised);
}

RampEvaluation evaluate_ramp_problem(const RowRampProblem& problem,
                                     std::span<const NamedDataset> datasets,
                                     const LinearModel& model, bool randomised) {
  return evaluate_compiled(compile(problem, datasets), model, randomised);
}

RampResult fit_ramp(const RampProblem& problem, std::span<const NamedDataset> datasets,
                    const RampOptions& options) {
  check_options(options);
  return fit_compiled(compile(problem, datasets), datasets, options);
}

RampResult fit_ramp(const RowRampProblem& problem, std::span<const NamedDataset> datasets,
                    const RampOptions& options) {
  check_options(options);
  return fit_compiled(compile(problem, datasets), datasets, options);
}

CovarianceSvmResult fit_covariance_svm(const Dataset& data, const Slice& group_a,
                                       const Slice& group_b, double c, const RampOptions& options) {
  check_options(options);
  RATEOPT_CHECK(std::isfinite(c), "c is {}, expected finite", c);
  RATEOPT_CHECK(data.labels().kind == LabelKind::kBinary, "data has {} labels, expected binary",
                to_string(data.labels().kind));
  const auto ma = slice_mask(data, group_a);
  const auto mb = slice_mask(data, group_b);
  const std::size_t n = data.num_rows(), d = data.num_features();
  std::vector<double> diff(d, 0.0), sum_b(d, 0.0);
  double wa = 0, wb = 0, total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    total += data.weight(i);
    if (ma[i] != 0) {
      data.features().row_axpy(i, data.weight(i), diff);
      wa += data.weight(i);
    }
    if (mb[i] != 0) {
      data.features().row_axpy(i, data.weight(i), sum_b);
      wb += data.weight(i);
    }
  }
  RATEOPT_CHECK(wa > 0 && wb > 0, "group_a ('{}') and group_b ('{}') must both be non-empty",
                group_a.to_string(), group_b.to_string());
  for (std::size_t j = 0; j < d; ++j) diff[j] = diff[j] / wa - sum_b[j] / wb;
  std::vector<SvmExample> ex(n);
  for (std::size_t i = 0; i < n; ++i)
    ex[i] = {0, i, data.labels().values[i] == 1 ? 1.0 : -1.0, 0.5 * data.weight(i) / total};
  const FeatureMatrix* const mats[] = {&data.features()};
  WeightedSvmOptions so;
  so.lambda = options.lambda;
  so.bias_feature = options.bias_feature;
  so.gap_rel = std::min(options.inner_gap_rel, 1e-4);
  so.max_epochs = options.max_epochs;
  so.seed = options.seed;
  so.n_threads = options.n_threads;
  std::vector<double> warm;
  auto solve = [&](double mu) {
    std::vector<double> q(d);
    for (std::size_t j = 0; j < d; ++j) q[j] = mu * diff[j];
    auto fit = fit_weighted_svm(mats, ex, so, q, warm);
    warm = fit.alpha;
    double g = 0;
    for (std::size_t j = 0; j < d; ++j) g += fit.model.weights[j] * diff[j];
    return std::make_pair(fit, g);
  };
  CovarianceSvmResult r;
  auto [fit0, g0] = solve(0.0);
  r.model = fit0.model;
  r.constraint = g0;
  r.status = fit0.status;
  if (g0 <= c) return r;
  double lo = 0, hi = 1e-6;
  for (;;) {
    auto [fit, g] = solve(hi);
    if (g <= c) {
      r = {fit.model, hi, g, fit.status};
      break;
    }
    lo = hi;
    hi *= 4;
    if (hi > 1e8) {
      r = {fit.model, hi, g, Termination::kInfeasible};
      return r;
    }
  }
  const double tol = 1e-4 * std::max(1.0, std::abs(c));
  for (int it = 0; it < 60 && r.constraint < c - tol; ++it) {
    const double mid = 0.5 * (lo + hi);
    auto [fit, g] = solve(mid);
    if (g <= c) {
      hi = mid;
      r = {fit.model, mid, g, fit.status};
    } else {
      lo = mid;
    }
  }
  return r;
}

}  // namespace rateopt
