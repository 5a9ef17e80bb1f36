// L2-regularised logistic regression by L-BFGS (LBFGSpp). See rateopt/logistic.hpp.
#include "rateopt/logistic.hpp"

#include <LBFGS.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/check.hpp"
#include "common/parallel.hpp"
#include "train/logistic_objective.hpp"

namespace rateopt {

namespace detail {

namespace {

// The partial gradients of all blocks are alive at once; cap their total size (in doubles) so a
// very wide problem does not allocate n/4096 gradient copies. The block size depends only on the
// row count and the dimension, never on the thread count.
constexpr std::size_t kPartialBudget = std::size_t{1} << 25;  // 256 MiB of doubles
constexpr std::size_t kMinBlocks = 8;

std::size_t choose_block_rows(std::size_t rows, std::size_t dim) {
  const std::size_t max_blocks =
      std::max(kMinBlocks, kPartialBudget / std::max<std::size_t>(dim, 1));
  const std::size_t spread = (rows + max_blocks - 1) / max_blocks;
  return std::max(kReduceBlock, spread);
}

struct Partial {
  double loss = 0;
  std::vector<double> grad;  // d(sum of weighted losses)/d(theta), without C and the penalty
};

// Adds the loss of one row with margin z and label y, and returns dloss/dz (weighted). One exp
// and one log1p per row (they dominate on sparse data): with e = exp(-|m|), m = t z,
//   log(1 + exp(-m)) = max(-m, 0) + log1p(e),  sigmoid(-m) = m >= 0 ? e / (1 + e) : 1 / (1 + e).
inline double row_term(double z, std::int32_t y, double w, double& loss) {
  const double t = y == 1 ? 1.0 : -1.0;
  const double m = t * z;
  const double e = std::exp(-std::abs(m));
  loss += w * (std::max(-m, 0.0) + std::log1p(e));
  const double s = m >= 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
  return -t * w * s;
}

}  // namespace

LogisticObjective::LogisticObjective(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                                     std::span<const double> weights, double c, bool fit_intercept,
                                     int n_threads)
    : x_(x),
      labels_(labels),
      weights_(weights),
      c_(c),
      fit_intercept_(fit_intercept),
      n_threads_(n_threads),
      dim_(x.cols() + (fit_intercept ? 1 : 0)),
      block_rows_(choose_block_rows(x.rows(), dim_)) {
  RATEOPT_CHECK(labels.size() == x.rows(), "labels have {} entries, features have {} rows",
                labels.size(), x.rows());
  RATEOPT_CHECK(weights.empty() || weights.size() == x.rows(),
                "weights have {} entries, expected 0 or {}", weights.size(), x.rows());
}

double LogisticObjective::value_and_gradient(std::span<const double> theta,
                                             std::span<double> grad) const {
  RATEOPT_CHECK(theta.size() == dim_ && grad.size() == dim_,
                "theta has {} and grad {} entries, expected {}", theta.size(), grad.size(), dim_);
  const std::size_t d = x_.cols();
  const double* beta = theta.data();
  const double b = fit_intercept_ ? theta[d] : 0.0;
  const bool unit_weights = weights_.empty();

  auto block = [&](std::size_t begin, std::size_t end) {
    Partial p;
    p.grad.assign(dim_, 0.0);
    double* g = p.grad.data();
    double bias_grad = 0;
    if (x_.is_sparse()) {
      const CsrView v = x_.csr_view();
      for (std::size_t i = begin; i < end; ++i) {
        const double w = unit_weights ? 1.0 : weights_[i];
        if (w == 0) continue;
        const auto k0 = static_cast<std::size_t>(v.indptr[i]);
        const auto k1 = static_cast<std::size_t>(v.indptr[i + 1]);
        double z = b;
        for (std::size_t k = k0; k < k1; ++k) z += v.values[k] * beta[v.indices[k]];
        const double coef = row_term(z, labels_[i], w, p.loss);
        for (std::size_t k = k0; k < k1; ++k) g[v.indices[k]] += coef * v.values[k];
        bias_grad += coef;
      }
    } else {
      const DenseView v = x_.dense_view();
      for (std::size_t i = begin; i < end; ++i) {
        const double w = unit_weights ? 1.0 : weights_[i];
        if (w == 0) continue;
        const double* row = v.data + i * v.row_stride;
        double z = b;
        for (std::size_t j = 0; j < d; ++j) z += row[j] * beta[j];
        const double coef = row_term(z, labels_[i], w, p.loss);
        for (std::size_t j = 0; j < d; ++j) g[j] += coef * row[j];
        bias_grad += coef;
      }
    }
    if (fit_intercept_) g[d] = bias_grad;
    return p;
  };
  auto combine = [](Partial& total, Partial& part) {
    total.loss += part.loss;
    if (total.grad.empty()) {
      total.grad = std::move(part.grad);
      return;
    }
    for (std::size_t j = 0; j < total.grad.size(); ++j) total.grad[j] += part.grad[j];
  };
  Partial sum = block_reduce<Partial>(x_.rows(), n_threads_, block, combine, block_rows_);
  if (sum.grad.empty()) sum.grad.assign(dim_, 0.0);

  double penalty = 0;
  for (std::size_t j = 0; j < d; ++j) {
    penalty += beta[j] * beta[j];
    grad[j] = c_ * sum.grad[j] + beta[j];
  }
  if (fit_intercept_) grad[d] = c_ * sum.grad[d];
  return c_ * sum.loss + 0.5 * penalty;
}

}  // namespace detail

namespace {

using Vector = Eigen::VectorXd;

// The function object LBFGSpp minimises. It also remembers the iterate at which each line search
// starts (the last accepted iterate), so that a failed line search can return it, and applies the
// stopping test.
class SolverObjective {
 public:
  SolverObjective(const detail::LogisticObjective& objective, double threshold)
      : objective_(objective), threshold_(threshold) {}

  double operator()(const Vector& theta, Vector& grad) {
    const auto n = static_cast<std::size_t>(theta.size());
    return objective_.value_and_gradient({theta.data(), n}, {grad.data(), n});
  }

  void begin_line_search(const Vector& iterate) {
    ++line_searches_;
    last_iterate_ = iterate;
  }
  // Called with the gradient at an accepted step. LBFGSpp tests the Euclidean norm of the
  // gradient right after the line search and stops when it is <= epsilon = 0; the documented test
  // is on the infinity norm, so when that one holds the gradient handed back is zeroed, which
  // ends the run at this step (LBFGSpp returns before using the gradient again).
  void end_line_search(Vector& grad) const {
    if (grad.lpNorm<Eigen::Infinity>() <= threshold_) grad.setZero();
  }
  [[nodiscard]] int line_searches() const noexcept { return line_searches_; }
  [[nodiscard]] const Vector& last_iterate() const noexcept { return last_iterate_; }

 private:
  const detail::LogisticObjective& objective_;
  double threshold_;
  int line_searches_ = 0;
  Vector last_iterate_;
};

// LBFGSpp's strong-Wolfe line search (Nocedal & Wright, Algorithms 3.5/3.6), wrapped to
//  - record the iterate it starts from (returned if the solver fails),
//  - reject a step that did not decrease the objective (the wrapped routine returns silently
//    when it runs out of trials),
//  - fall back, when it fails, to a search on the directional derivative alone. Near the optimum
//    the decrease of f falls below its rounding error and value-based tests become noise, while
//    the gradient is still accurate. The objective is convex, so phi(a) = f(xp + a d) has an
//    increasing derivative, and ftol * phi'(0) >= phi'(a) >= wolfe * phi'(0) implies both Wolfe
//    conditions: phi(a) - phi(0) <= a phi'(a) <= a ftol phi'(0).
template <typename Scalar>
class RecordingLineSearch {
 public:
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Param = LBFGSpp::LBFGSParam<Scalar>;

  template <typename Foo>
  static void LineSearch(Foo& f, Scalar& fx, Vec& x, Vec& grad, Scalar& step,  // NOLINT
                         const Vec& drt, const Vec& xp, const Param& param) {
    f.begin_line_search(xp);
    const Scalar fx_init = fx;
    const Scalar step_init = step;
    const Scalar dg_init = grad.dot(drt);
    const Vec grad_init = grad;
    if (!(dg_init < 0)) throw std::runtime_error("the search direction is not a descent direction");
    try {
      LBFGSpp::LineSearchNocedalWright<Scalar>::LineSearch(f, fx, x, grad, step, drt, xp, param);
      // The wrapped routine can return without meeting the conditions (out of trials); check.
      const Scalar dg = grad.dot(drt);
      if (fx <= fx_init + step * param.ftol * dg_init && std::abs(dg) <= -param.wolfe * dg_init) {
        f.end_line_search(grad);
        return;
      }
    } catch (const std::runtime_error&) {
      // fall through to the derivative search
    }
    fx = fx_init;
    grad = grad_init;
    step = derivative_search(f, fx, x, grad, step_init, drt, xp, dg_init, param);
    // The value may exceed the start by rounding only.
    const Scalar slack = Scalar(1e-10) * std::max(Scalar(1), std::abs(fx_init));
    if (!(fx <= fx_init + slack))
      throw std::runtime_error("the line search did not decrease the objective");
    f.end_line_search(grad);
  }

 private:
  // Returns the accepted step; x, fx and grad are at xp + step * drt.
  template <typename Foo>
  static Scalar derivative_search(Foo& f, Scalar& fx, Vec& x, Vec& grad, Scalar step,
                                  const Vec& drt, const Vec& xp, Scalar dg_init,
                                  const Param& param) {
    const Scalar steep = param.wolfe * dg_init;  // phi'(a) below this: the step is too short
    const Scalar flat = param.ftol * dg_init;    // phi'(a) above this: the step is too long
    Scalar lo = 0;
    Scalar hi = std::numeric_limits<Scalar>::infinity();
    constexpr int kMaxTrials = 100;
    for (int trial = 0; trial < kMaxTrials; ++trial) {
      x.noalias() = xp + step * drt;
      fx = f(x, grad);
      const Scalar dg = grad.dot(drt);
      const bool finite = std::isfinite(fx) && std::isfinite(dg);
      if (finite && dg >= steep && dg <= flat) return step;
      if (finite && dg < steep) {
        lo = step;
      } else {
        hi = step;
      }
      step = std::isfinite(hi) ? lo + (hi - lo) / 2 : 2 * step;
      if (step <= lo || step >= hi || step < param.min_step || step > param.max_step) break;
    }
    throw std::runtime_error("the derivative line search failed");
  }
};

double inf_norm(std::span<const double> v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

void validate_inputs(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                     std::span<const double> weights, const LogisticRegressionOptions& o) {
  RATEOPT_CHECK(std::isfinite(o.c) && o.c > 0, "c is {}, expected a finite value > 0", o.c);
  RATEOPT_CHECK(std::isfinite(o.tol) && o.tol > 0, "tol is {}, expected a finite value > 0", o.tol);
  RATEOPT_CHECK(o.max_iter > 0, "max_iter is {}, expected > 0", o.max_iter);
  RATEOPT_CHECK(o.memory > 0, "memory is {}, expected > 0", o.memory);
  RATEOPT_CHECK(x.rows() > 0, "the feature matrix has no rows");
  RATEOPT_CHECK(labels.size() == x.rows(), "labels have {} entries, features have {} rows",
                labels.size(), x.rows());
  RATEOPT_CHECK(weights.empty() || weights.size() == x.rows(),
                "weights have {} entries, expected 0 (unit weights) or one per row ({})",
                weights.size(), x.rows());
  for (std::size_t i = 0; i < labels.size(); ++i)
    RATEOPT_CHECK(labels[i] == 0 || labels[i] == 1, "label of row {} is {}, expected 0 or 1", i,
                  labels[i]);
  for (std::size_t i = 0; i < weights.size(); ++i)
    RATEOPT_CHECK(std::isfinite(weights[i]) && weights[i] >= 0,
                  "weight of row {} is {}, expected a finite value >= 0", i, weights[i]);
  if (x.is_sparse()) {
    const CsrView v = x.csr_view();
    for (std::size_t i = 0; i < v.rows; ++i)
      for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
        RATEOPT_CHECK(std::isfinite(v.values[static_cast<std::size_t>(k)]),
                      "feature ({}, {}) is {}, expected a finite value", i,
                      v.indices[static_cast<std::size_t>(k)],
                      v.values[static_cast<std::size_t>(k)]);
  } else {
    const DenseView v = x.dense_view();
    for (std::size_t i = 0; i < v.rows; ++i)
      for (std::size_t j = 0; j < v.cols; ++j)
        RATEOPT_CHECK(std::isfinite(v(i, j)), "feature ({}, {}) is {}, expected a finite value", i,
                      j, v(i, j));
  }
}

}  // namespace

LogisticRegressionResult fit_logistic_regression(const FeatureMatrix& x,
                                                 std::span<const std::int32_t> labels,
                                                 std::span<const double> weights,
                                                 const LogisticRegressionOptions& options) {
  validate_inputs(x, labels, weights, options);
  const detail::LogisticObjective objective(x, labels, weights, options.c, options.fit_intercept,
                                            options.n_threads);
  const std::size_t dim = objective.dim();
  const std::size_t d = x.cols();

  Vector theta = Vector::Zero(static_cast<Eigen::Index>(dim));
  if (options.initial) {
    const LinearModel& init = *options.initial;
    RATEOPT_CHECK(init.weights.size() == d, "initial model has {} weights, expected {}",
                  init.weights.size(), d);
    for (std::size_t j = 0; j < d; ++j) {
      RATEOPT_CHECK(std::isfinite(init.weights[j]), "initial weight {} is {}, expected finite", j,
                    init.weights[j]);
      theta[static_cast<Eigen::Index>(j)] = init.weights[j];
    }
    if (options.fit_intercept) theta[static_cast<Eigen::Index>(d)] = init.bias;
  }
  Vector grad(static_cast<Eigen::Index>(dim));
  auto evaluate = [&](const Vector& at, double& norm) {
    const double f = objective.value_and_gradient({at.data(), dim}, {grad.data(), dim});
    norm = inf_norm({grad.data(), dim});
    return f;
  };

  LogisticRegressionResult result;
  double g0 = 0;
  result.objective = evaluate(theta, g0);
  result.gradient_norm = g0;
  const double threshold = options.tol * std::max(1.0, g0);

  if (g0 > threshold) {
    // The stopping test |g|_inf <= threshold is applied by SolverObjective::end_line_search.
    LBFGSpp::LBFGSParam<double> param;
    param.m = options.memory;
    param.epsilon = 0;
    param.epsilon_rel = 0;
    param.past = 0;
    param.max_iterations = options.max_iter;
    param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
    LBFGSpp::LBFGSSolver<double, RecordingLineSearch> solver(param);
    SolverObjective fn(objective, threshold);
    bool failed = false;
    double fx = 0;
    try {
      result.iterations = solver.minimize(fn, theta, fx);
    } catch (const std::runtime_error&) {
      failed = true;
    } catch (const std::logic_error&) {
      failed = true;
    }
    if (failed) {
      // The iteration that failed did not complete: return the iterate it started from.
      result.iterations = std::max(fn.line_searches() - 1, 0);
      if (fn.line_searches() > 0) theta = fn.last_iterate();
    }
    double norm = 0;
    result.objective = evaluate(theta, norm);
    result.gradient_norm = norm;
    const bool finite = std::isfinite(result.objective) && std::isfinite(norm);
    if (finite && norm <= threshold) {
      result.status = Termination::kConverged;
    } else if (!failed && finite && result.iterations >= options.max_iter) {
      result.status = Termination::kMaxIterations;
    } else {
      result.status = Termination::kNumericalError;
    }
  }

  result.model.weights.assign(theta.data(), theta.data() + d);
  result.model.bias = options.fit_intercept ? theta[static_cast<Eigen::Index>(d)] : 0.0;
  return result;
}

}  // namespace rateopt
