// Multinomial (softmax) logistic regression with an L2 penalty, by Newton-CG with a line search
// or by L-BFGS (LBFGSpp). See rateopt/logistic.hpp.
//
// Parameters theta = (W, b): W feature-major (theta[j * K + k], d * K entries), then the K
// intercepts. Feature-major storage makes one non-zero x_ij touch K contiguous weights, both when
// scoring (z += x_ij * W[j, :]) and in the gradient (G[j, :] += x_ij * r), for dense and CSR rows.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/check.hpp"
#include "common/csr.hpp"
#include "common/parallel.hpp"
#include "common/row_entries.hpp"
#include "learners/lbfgs_line_search.hpp"
#include "rateopt/logistic.hpp"

namespace rateopt {

namespace {

using Vector = Eigen::VectorXd;
using detail::for_row_entries;

// z[k] = x_i . W_k + b_k for K classes; columns >= d are ignored (the caller checks them).
void class_scores(const FeatureMatrix& x, std::size_t i, const double* w, const double* b,
                  std::size_t d, std::size_t K, double* z) {
  for (std::size_t k = 0; k < K; ++k) z[k] = b == nullptr ? 0.0 : b[k];
  for_row_entries(x, i, [&](std::size_t j, double v) {
    if (j >= d) return;
    const double* wj = w + j * K;
    for (std::size_t k = 0; k < K; ++k) z[k] += v * wj[k];
  });
}

// In place: z -> softmax(z); returns log-sum-exp(z).
double softmax_in_place(double* z, std::size_t K) {
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < K; ++k) top = std::max(top, z[k]);
  double sum = 0;
  for (std::size_t k = 0; k < K; ++k) {
    z[k] = std::exp(z[k] - top);
    sum += z[k];
  }
  for (std::size_t k = 0; k < K; ++k) z[k] /= sum;
  return top + std::log(sum);
}

struct Partial {
  double loss = 0;
  std::vector<double> grad;
};

void combine(Partial& total, Partial& part) {
  total.loss += part.loss;
  if (total.grad.empty()) {
    total.grad = std::move(part.grad);
    return;
  }
  for (std::size_t j = 0; j < total.grad.size(); ++j) total.grad[j] += part.grad[j];
}

class Objective {
 public:
  Objective(const FeatureMatrix& x, std::span<const std::int32_t> index,
            std::span<const double> weights, std::size_t K, const MultinomialLogisticOptions& o)
      : x_(x),
        index_(index),
        weights_(weights),
        K_(K),
        d_(x.cols()),
        c_(o.c),
        fit_intercept_(o.fit_intercept),
        n_threads_(o.n_threads),
        dim_(x.cols() * K + K) {
    // Blocks depend only on the size of the problem; cap the live partial gradients at ~256 MiB.
    const std::size_t max_blocks = std::max<std::size_t>(8, (std::size_t{1} << 25) / dim_);
    block_rows_ = std::max(detail::kReduceBlock, (x.rows() + max_blocks - 1) / max_blocks);
  }

  [[nodiscard]] std::size_t dim() const noexcept { return dim_; }

  // f(theta) and its gradient; with probs (rows x K entries) also every row's class
  // probabilities, the input of hessian_product.
  double value_and_gradient(const double* theta, double* grad, double* probs = nullptr) const {
    const double* w = theta;
    const double* b = theta + d_ * K_;
    auto block = [&](std::size_t begin, std::size_t end) {
      Partial p;
      p.grad.assign(dim_, 0.0);
      std::vector<double> z(K_);
      for (std::size_t i = begin; i < end; ++i) {
        const double wi = weights_.empty() ? 1.0 : weights_[i];
        if (wi == 0) {
          if (probs != nullptr) std::fill(probs + i * K_, probs + (i + 1) * K_, 0.0);
          continue;
        }
        class_scores(x_, i, w, fit_intercept_ ? b : nullptr, d_, K_, z.data());
        const auto y = static_cast<std::size_t>(index_[i]);
        const double zy = z[y];
        const double lse = softmax_in_place(z.data(), K_);
        if (probs != nullptr) std::copy(z.begin(), z.end(), probs + i * K_);
        p.loss += wi * (lse - zy);
        z[y] -= 1.0;  // residual p - e_y
        for (std::size_t k = 0; k < K_; ++k) z[k] *= wi;
        for_row_entries(x_, i, [&](std::size_t j, double v) {
          double* gj = p.grad.data() + j * K_;
          for (std::size_t k = 0; k < K_; ++k) gj[k] += v * z[k];
        });
        double* gb = p.grad.data() + d_ * K_;
        for (std::size_t k = 0; k < K_; ++k) gb[k] += z[k];
      }
      return p;
    };
    auto sum = detail::block_reduce<Partial>(x_.rows(), n_threads_, block, combine, block_rows_);
    if (sum.grad.empty()) sum.grad.assign(dim_, 0.0);
    double penalty = 0;
    const std::size_t nw = d_ * K_;
    for (std::size_t j = 0; j < nw; ++j) {
      penalty += w[j] * w[j];
      grad[j] = c_ * sum.grad[j] + w[j];
    }
    for (std::size_t k = 0; k < K_; ++k) grad[nw + k] = fit_intercept_ ? c_ * sum.grad[nw + k] : 0;
    return c_ * sum.loss + 0.5 * penalty;
  }

  // The diagonal of H (the Jacobi preconditioner of Newton's conjugate gradient), from the
  // probabilities stored by value_and_gradient.
  void hessian_diagonal(const double* probs, double* out) const {
    auto block = [&](std::size_t begin, std::size_t end) {
      Partial p;
      p.grad.assign(dim_, 0.0);
      for (std::size_t i = begin; i < end; ++i) {
        const double wi = weights_.empty() ? 1.0 : weights_[i];
        if (wi == 0) continue;
        const double* pi = probs + i * K_;
        for_row_entries(x_, i, [&](std::size_t j, double val) {
          double* gj = p.grad.data() + j * K_;
          for (std::size_t k = 0; k < K_; ++k) gj[k] += wi * val * val * pi[k] * (1 - pi[k]);
        });
        double* gb = p.grad.data() + d_ * K_;
        for (std::size_t k = 0; k < K_; ++k) gb[k] += wi * pi[k] * (1 - pi[k]);
      }
      return p;
    };
    auto sum = detail::block_reduce<Partial>(x_.rows(), n_threads_, block, combine, block_rows_);
    if (sum.grad.empty()) sum.grad.assign(dim_, 0.0);
    const std::size_t nw = d_ * K_;
    for (std::size_t j = 0; j < nw; ++j) out[j] = c_ * sum.grad[j] + 1;
    for (std::size_t k = 0; k < K_; ++k)
      out[nw + k] = fit_intercept_ ? std::max(c_ * sum.grad[nw + k], 1e-12) : 1;
  }

  // out = H v, H = C sum_i w_i x~_i x~_i^T (x) (diag(p_i) - p_i p_i^T) + (identity on W), with
  // the probabilities stored by value_and_gradient (v, out: dim() entries).
  void hessian_product(const double* probs, const double* v, double* out) const {
    const double* vw = v;
    const double* vb = v + d_ * K_;
    auto block = [&](std::size_t begin, std::size_t end) {
      Partial p;
      p.grad.assign(dim_, 0.0);
      std::vector<double> u(K_);
      for (std::size_t i = begin; i < end; ++i) {
        const double wi = weights_.empty() ? 1.0 : weights_[i];
        if (wi == 0) continue;
        class_scores(x_, i, vw, fit_intercept_ ? vb : nullptr, d_, K_, u.data());
        const double* pi = probs + i * K_;
        double pu = 0;
        for (std::size_t k = 0; k < K_; ++k) pu += pi[k] * u[k];
        for (std::size_t k = 0; k < K_; ++k) u[k] = wi * pi[k] * (u[k] - pu);
        for_row_entries(x_, i, [&](std::size_t j, double val) {
          double* gj = p.grad.data() + j * K_;
          for (std::size_t k = 0; k < K_; ++k) gj[k] += val * u[k];
        });
        double* gb = p.grad.data() + d_ * K_;
        for (std::size_t k = 0; k < K_; ++k) gb[k] += u[k];
      }
      return p;
    };
    auto sum = detail::block_reduce<Partial>(x_.rows(), n_threads_, block, combine, block_rows_);
    if (sum.grad.empty()) sum.grad.assign(dim_, 0.0);
    const std::size_t nw = d_ * K_;
    for (std::size_t j = 0; j < nw; ++j) out[j] = c_ * sum.grad[j] + vw[j];
    for (std::size_t k = 0; k < K_; ++k) out[nw + k] = fit_intercept_ ? c_ * sum.grad[nw + k] : 0;
  }

 private:
  const FeatureMatrix& x_;
  std::span<const std::int32_t> index_;
  std::span<const double> weights_;
  std::size_t K_;
  std::size_t d_;
  double c_;
  bool fit_intercept_;
  int n_threads_;
  std::size_t dim_;
  std::size_t block_rows_ = detail::kReduceBlock;
};

double norm2(const Vector& v) {
  double s = 0;
  for (Eigen::Index j = 0; j < v.size(); ++j) s += v[j] * v[j];
  return std::sqrt(s);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t j = 0; j < a.size(); ++j) s += a[j] * b[j];
  return s;
}

struct MultinomialNewtonOutcome {
  Termination status = Termination::kConverged;
  int iterations = 0;
};

// Newton's method with conjugate-gradient steps (Hessian-vector products, no Hessian formed;
// preconditioned by the diagonal of the Hessian) and a backtracking (Armijo) line search. CG solves
// H s = -g to the relative residual 0.1 (LIBLINEAR's eps_cg). The intercept direction (all
// b_k + t) has zero curvature, but every gradient is orthogonal to it and the preconditioner keeps
// the iterates orthogonal too, so CG never leaves the subspace where H is positive definite.
MultinomialNewtonOutcome newton(const Objective& f, const MultinomialLogisticOptions& o,
                                std::size_t rows, std::size_t K, std::vector<double>& theta,
                                std::vector<double>& grad, double& value, double threshold) {
  MultinomialNewtonOutcome out;
  const std::size_t dim = f.dim();
  std::vector<double> probs(rows * K), step(dim), r(dim), z(dim), diag(dim), dir(dim), hd(dim),
      trial(dim), trial_grad(dim), trial_probs(rows * K);
  value = f.value_and_gradient(theta.data(), grad.data(), probs.data());
  double gnorm = std::sqrt(dot(grad, grad));
  while (gnorm > threshold) {
    if (out.iterations >= o.max_iter) {
      out.status = Termination::kMaxIterations;
      return out;
    }
    ++out.iterations;
    // Truncated CG on H s = -g, preconditioned by the diagonal of H.
    f.hessian_diagonal(probs.data(), diag.data());
    std::fill(step.begin(), step.end(), 0.0);
    // z = P D^-1 r, P removing the mean of the intercept part: a symmetric preconditioner on
    // the subspace sum_k b_k = 0, so the step stays in it (H is singular along all b_k + t).
    const auto precondition = [&] {
      double mean = 0;
      for (std::size_t j = 0; j < dim; ++j) z[j] = r[j] / diag[j];
      for (std::size_t k = dim - K; k < dim; ++k) mean += z[k];
      mean /= static_cast<double>(K);
      for (std::size_t k = dim - K; k < dim; ++k) z[k] -= mean;
    };
    for (std::size_t j = 0; j < dim; ++j) r[j] = -grad[j];
    precondition();
    dir = z;
    double rz = dot(r, z);
    double rnorm = gnorm;
    const double stop = 0.1 * gnorm;
    for (std::size_t it = 0; it < 2 * dim + 10 && rnorm > stop; ++it) {
      f.hessian_product(probs.data(), dir.data(), hd.data());
      const double dhd = dot(dir, hd);
      if (!(dhd > 0)) break;
      const double alpha = rz / dhd;
      for (std::size_t j = 0; j < dim; ++j) {
        step[j] += alpha * dir[j];
        r[j] -= alpha * hd[j];
      }
      precondition();
      const double next = dot(r, z);
      for (std::size_t j = 0; j < dim; ++j) dir[j] = z[j] + next / rz * dir[j];
      rz = next;
      rnorm = std::sqrt(dot(r, r));
    }
    double slope = dot(grad, step);
    if (!(slope < 0)) {  // no descent from CG (only by rounding): take the steepest descent
      for (std::size_t j = 0; j < dim; ++j) step[j] = -grad[j];
      slope = -gnorm * gnorm;
    }
    // Backtracking line search: Armijo, or (near the optimum, where f's decrease is below its
    // rounding) no increase beyond rounding with a smaller gradient.
    double t = 1;
    bool accepted = false;
    for (int halving = 0; halving < 60 && !accepted; ++halving, t *= 0.5) {
      for (std::size_t j = 0; j < dim; ++j) trial[j] = theta[j] + t * step[j];
      const double fv = f.value_and_gradient(trial.data(), trial_grad.data(), trial_probs.data());
      if (!std::isfinite(fv)) continue;
      const double tg = std::sqrt(dot(trial_grad, trial_grad));
      accepted =
          fv <= value + 1e-4 * t * slope || (fv <= value + 1e-13 * std::abs(value) && tg < gnorm);
      if (accepted) {
        theta.swap(trial);
        grad.swap(trial_grad);
        probs.swap(trial_probs);
        value = fv;
        gnorm = tg;
      }
    }
    if (!accepted) {
      out.status = Termination::kNumericalError;
      return out;
    }
  }
  out.status = Termination::kConverged;
  return out;
}

void validate_options(const MultinomialLogisticOptions& o) {
  RATEOPT_CHECK(std::isfinite(o.c) && o.c > 0, "c is {}, expected a finite value > 0", o.c);
  RATEOPT_CHECK(std::isfinite(o.tol) && o.tol > 0, "tol is {}, expected a finite value > 0", o.tol);
  RATEOPT_CHECK(o.max_iter > 0, "max_iter is {}, expected > 0", o.max_iter);
  RATEOPT_CHECK(o.memory > 0, "memory is {}, expected > 0", o.memory);
  RATEOPT_CHECK(o.solver == MultinomialSolver::kNewton || o.solver == MultinomialSolver::kLbfgs,
                "solver is {}, expected kNewton or kLbfgs", static_cast<int>(o.solver));
}

void validate_features(const FeatureMatrix& x) {
  if (x.is_sparse()) {
    const CsrView v = x.csr_view();
    for (std::size_t k = 0; k < v.values.size(); ++k)
      RATEOPT_CHECK(std::isfinite(v.values[k]), "feature entry {} is {}, expected a finite value",
                    k, v.values[k]);
    return;
  }
  const DenseView v = x.dense_view();
  for (std::size_t i = 0; i < v.rows; ++i)
    for (std::size_t j = 0; j < v.cols; ++j)
      RATEOPT_CHECK(std::isfinite(v(i, j)), "feature ({}, {}) is {}, expected a finite value", i, j,
                    v(i, j));
}

}  // namespace

void MultinomialModel::validate() const {
  const std::size_t n_classes = classes.size();
  RATEOPT_CHECK(n_classes >= 1, "a multinomial model needs at least one class");
  for (std::size_t k = 1; k < n_classes; ++k)
    RATEOPT_CHECK(classes[k - 1] < classes[k],
                  "classes must be strictly increasing; class {} is {} after {}", k, classes[k],
                  classes[k - 1]);
  RATEOPT_CHECK(weights.size() == num_features * n_classes,
                "multinomial weights have {} entries, expected features x classes = {} x {}",
                weights.size(), num_features, n_classes);
  RATEOPT_CHECK(biases.size() == n_classes, "multinomial biases have {} entries, expected {}",
                biases.size(), n_classes);
  for (double v : weights)
    RATEOPT_CHECK(std::isfinite(v), "a multinomial weight is {}, expected finite", v);
  for (double v : biases)
    RATEOPT_CHECK(std::isfinite(v), "a multinomial bias is {}, expected finite", v);
}

void MultinomialModel::probabilities(const FeatureMatrix& x, std::size_t i,
                                     std::span<double> out) const {
  const std::size_t n_classes = classes.size();
  RATEOPT_CHECK(out.size() == n_classes, "output has {} entries, expected {} classes", out.size(),
                n_classes);
  RATEOPT_CHECK(i < x.rows(), "row {} out of range ({} rows)", i, x.rows());
  if (x.cols() > num_features) {
    if (!x.is_sparse())
      RATEOPT_CHECK(false, "features have {} columns, the model {}", x.cols(), num_features);
    for_row_entries(x, i, [&](std::size_t j, double) {
      RATEOPT_CHECK(j < num_features, "row {} has feature {}, the model only {} features", i, j,
                    num_features);
    });
  }
  class_scores(x, i, weights.data(), biases.data(), num_features, n_classes, out.data());
  softmax_in_place(out.data(), n_classes);
}

double MultinomialModel::probability_of(const FeatureMatrix& x, std::size_t i,
                                        std::int32_t value) const {
  const auto it = std::lower_bound(classes.begin(), classes.end(), value);
  if (it == classes.end() || *it != value) return 0.0;
  std::vector<double> p(classes.size());
  probabilities(x, i, p);
  return p[static_cast<std::size_t>(it - classes.begin())];
}

MultinomialLogisticResult fit_multinomial_logistic_regression(
    const FeatureMatrix& x, std::span<const std::int32_t> classes, std::span<const double> weights,
    const MultinomialLogisticOptions& options) {
  validate_options(options);
  RATEOPT_CHECK(x.rows() > 0, "the feature matrix has no rows");
  RATEOPT_CHECK(classes.size() == x.rows(), "classes have {} entries, features have {} rows",
                classes.size(), x.rows());
  RATEOPT_CHECK(weights.empty() || weights.size() == x.rows(),
                "weights have {} entries, expected 0 (unit weights) or one per row ({})",
                weights.size(), x.rows());
  for (std::size_t i = 0; i < classes.size(); ++i)
    RATEOPT_CHECK(classes[i] >= 0, "class of row {} is {}, expected >= 0", i, classes[i]);
  for (std::size_t i = 0; i < weights.size(); ++i)
    RATEOPT_CHECK(std::isfinite(weights[i]) && weights[i] >= 0,
                  "weight of row {} is {}, expected a finite value >= 0", i, weights[i]);
  validate_features(x);
  if (!x.is_sparse()) {
    // A mostly-zero dense matrix (one-hot or bag-of-words columns) is fitted from a CSR copy, as
    // in the binary fit: the kernels then touch only the non-zeros. Same model, same columns.
    const DenseView v = x.dense_view();
    const std::size_t nnz = detail::count_nonzeros(v);
    if (static_cast<double>(nnz) <=
        detail::kSparseCopyDensity * static_cast<double>(v.rows * v.cols))
      return fit_multinomial_logistic_regression(detail::dense_to_csr_matrix(v, nnz), classes,
                                                 weights, options);
  }

  MultinomialLogisticResult result;
  MultinomialModel& model = result.model;
  model.classes.assign(classes.begin(), classes.end());
  std::sort(model.classes.begin(), model.classes.end());
  model.classes.erase(std::unique(model.classes.begin(), model.classes.end()), model.classes.end());
  const std::size_t n_classes = model.classes.size();
  const std::size_t d = x.cols();
  model.num_features = d;
  model.weights.assign(d * n_classes, 0.0);
  model.biases.assign(n_classes, 0.0);
  if (n_classes == 1) return result;  // one class: probability 1, nothing to fit

  std::vector<std::int32_t> index(classes.size());
  for (std::size_t i = 0; i < classes.size(); ++i)
    index[i] = static_cast<std::int32_t>(
        std::lower_bound(model.classes.begin(), model.classes.end(), classes[i]) -
        model.classes.begin());

  const Objective f(x, index, weights, n_classes, options);
  const auto dim = static_cast<Eigen::Index>(f.dim());
  Vector theta = Vector::Zero(dim);
  Vector grad(dim);
  result.objective = f.value_and_gradient(theta.data(), grad.data());
  const double g0 = norm2(grad);
  if (options.initial && options.initial->classes == model.classes &&
      options.initial->num_features == d && options.initial->weights.size() == d * n_classes &&
      options.initial->biases.size() == n_classes) {
    // Centre the intercepts (the solvers work where they sum to 0; f does not change).
    double mean = 0;
    for (double b : options.initial->biases) mean += b / static_cast<double>(n_classes);
    for (std::size_t j = 0; j < d * n_classes; ++j)
      theta[static_cast<Eigen::Index>(j)] = options.initial->weights[j];
    for (std::size_t k = 0; k < n_classes; ++k)
      theta[static_cast<Eigen::Index>(d * n_classes + k)] = options.initial->biases[k] - mean;
    for (double v : options.initial->weights)
      RATEOPT_CHECK(std::isfinite(v), "an initial weight is {}, expected finite", v);
    result.objective = f.value_and_gradient(theta.data(), grad.data());
  }
  const double threshold = options.tol * g0;
  if (options.solver == MultinomialSolver::kNewton) {
    std::vector<double> t(theta.data(), theta.data() + dim), g(grad.data(), grad.data() + dim);
    const MultinomialNewtonOutcome out =
        newton(f, options, x.rows(), n_classes, t, g, result.objective, threshold);
    result.status = out.status;
    result.iterations = out.iterations;
    result.gradient_norm = std::sqrt(dot(g, g));
    if (!std::isfinite(result.objective) || !std::isfinite(result.gradient_norm))
      result.status = Termination::kNumericalError;
    theta = Eigen::Map<const Vector>(t.data(), dim);
  } else if (norm2(grad) > threshold) {
    const auto value_and_gradient = [&](const Vector& t, Vector& g) {
      return f.value_and_gradient(t.data(), g.data());
    };
    const detail::LbfgsRun run =
        detail::run_lbfgs(value_and_gradient, theta, options.memory, options.max_iter, threshold);
    result.iterations = run.iterations;
    const bool failed = run.failed;
    result.objective = f.value_and_gradient(theta.data(), grad.data());
    result.gradient_norm = norm2(grad);
    const bool finite = std::isfinite(result.objective) && std::isfinite(result.gradient_norm);
    if (finite && result.gradient_norm <= threshold)
      result.status = Termination::kConverged;
    else if (finite && !failed && result.iterations >= options.max_iter)
      result.status = Termination::kMaxIterations;
    else
      result.status = Termination::kNumericalError;
  } else {
    result.gradient_norm = norm2(grad);
  }
  std::copy(theta.data(), theta.data() + static_cast<std::ptrdiff_t>(d * n_classes),
            model.weights.begin());
  std::copy(theta.data() + static_cast<std::ptrdiff_t>(d * n_classes), theta.data() + dim,
            model.biases.begin());
  return result;
}

}  // namespace rateopt
