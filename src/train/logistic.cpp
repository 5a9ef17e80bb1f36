// L2-regularised logistic regression by L-BFGS (LBFGSpp). See rateopt/logistic.hpp.
#include "rateopt/logistic.hpp"

#include <Eigen/Core>
#include <LBFGS.h>
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
  const std::size_t max_blocks = std::max(kMinBlocks, kPartialBudget / std::max<std::size_t>(dim, 1));
  const std::size_t spread = (rows + max_blocks - 1) / max_blocks;
  return std::max(kReduceBlock, spread);
}

struct Partial {
  double loss = 0;
  std::vector<double> grad;  // d(sum of weighted losses)/d(theta), without C and the penalty
};

// Adds the loss of one row with margin z and label y, and returns dloss/dz (weighted).
inline double row_term(double z, std::int32_t y, double w, double& loss) {
  const double t = y == 1 ? 1.0 : -1.0;
  const double m = t * z;
  loss += w * log1p_exp(-m);
  return -t * w * sigmoid(-m);
}

}  // namespace

LogisticObjective::LogisticObjective(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                                     std::span<const double> weights, double c,
                                     bool fit_intercept, int n_threads)
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
// starts (the last accepted iterate), so that a failed line search can return it.
class SolverObjective {
 public:
  explicit SolverObjective(const detail::LogisticObjective& objective) : objective_(objective) {}

  double operator()(const Vector& theta, Vector& grad) {
    const auto n = static_cast<std::size_t>(theta.size());
    return objective_.value_and_gradient({theta.data(), n}, {grad.data(), n});
  }

  void begin_line_search(const Vector& iterate) {
    ++line_searches_;
    last_iterate_ = iterate;
  }
  [[nodiscard]] int line_searches() const noexcept { return line_searches_; }
  [[nodiscard]] const Vector& last_iterate() const noexcept { return last_iterate_; }

 private:
  const detail::LogisticObjective& objective_;
  int line_searches_ = 0;
  Vector last_iterate_;
};

// LBFGSpp's strong-Wolfe line search (Nocedal & Wright, Algorithms 3.5/3.6), wrapped to record
// the starting iterate and to reject a step that did not decrease the objective (the wrapped
// routine returns silently when it runs out of trials).
template <typename Scalar>
class RecordingLineSearch {
 public:
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  template <typename Foo>
  static void LineSearch(Foo& f, Scalar& fx, Vec& x, Vec& grad, Scalar& step,  // NOLINT
                         const Vec& drt, const Vec& xp, const LBFGSpp::LBFGSParam<Scalar>& param) {
    f.begin_line_search(xp);
    const Scalar fx_init = fx;
    LBFGSpp::LineSearchNocedalWright<Scalar>::LineSearch(f, fx, x, grad, step, drt, xp, param);
    if (!(fx <= fx_init)) throw std::runtime_error("the line search did not decrease the objective");
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
                      v.indices[static_cast<std::size_t>(k)], v.values[static_cast<std::size_t>(k)]);
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
    // LBFGSpp stops on the Euclidean norm, |g|_2 <= epsilon; as |g|_inf <= |g|_2 this implies
    // the documented test |g|_inf <= threshold (and may take a few more iterations).
    LBFGSpp::LBFGSParam<double> param;
    param.m = options.memory;
    param.epsilon = threshold;
    param.epsilon_rel = 0;
    param.past = 0;
    param.max_iterations = options.max_iter;
    param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
    LBFGSpp::LBFGSSolver<double, RecordingLineSearch> solver(param);
    SolverObjective fn(objective);
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
