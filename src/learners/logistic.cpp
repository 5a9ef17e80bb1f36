// L2-regularised logistic regression by trust-region Newton (Lin, Weng & Keerthi 2008) or L-BFGS
// (LBFGSpp). See rateopt/logistic.hpp.
#include "rateopt/logistic.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/check.hpp"
#include "common/csr.hpp"
#include "common/parallel.hpp"
#include "learners/lbfgs_line_search.hpp"
#include "learners/logistic_objective.hpp"
#include "rateopt/distributed.hpp"

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

// One row of a dense matrix. dot() keeps four partial sums in a fixed order (vectorisable and
// the same for any thread count).
struct DenseRow {
  const double* x;
  std::size_t d;
  [[nodiscard]] double dot(const double* v) const {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    std::size_t j = 0;
    for (; j + 4 <= d; j += 4) {
      a0 += x[j] * v[j];
      a1 += x[j + 1] * v[j + 1];
      a2 += x[j + 2] * v[j + 2];
      a3 += x[j + 3] * v[j + 3];
    }
    for (; j < d; ++j) a0 += x[j] * v[j];
    return (a0 + a1) + (a2 + a3);
  }
  void axpy(double a, double* out) const {
    for (std::size_t j = 0; j < d; ++j) out[j] += a * x[j];
  }
};

// One row of a CSR matrix (two partial sums: rows are short, so the dependency chain matters).
struct SparseRow {
  const std::int32_t* idx;
  const double* val;
  std::size_t nnz;
  [[nodiscard]] double dot(const double* v) const {
    double a0 = 0, a1 = 0;
    std::size_t k = 0;
    for (; k + 2 <= nnz; k += 2) {
      a0 += val[k] * v[idx[k]];
      a1 += val[k + 1] * v[idx[k + 1]];
    }
    if (k < nnz) a0 += val[k] * v[idx[k]];
    return a0 + a1;
  }
  void axpy(double a, double* out) const {
    for (std::size_t k = 0; k < nnz; ++k) out[idx[k]] += a * val[k];
  }
};

// Calls fn(i, row) for rows [begin, end); the storage kind is tested once, so fn's loops are
// compiled separately for each row type.
template <typename Fn>
void for_each_row(const FeatureMatrix& x, std::size_t begin, std::size_t end, Fn&& fn) {
  if (x.is_sparse()) {
    const CsrView v = x.csr_view();
    for (std::size_t i = begin; i < end; ++i) {
      const auto k0 = static_cast<std::size_t>(v.indptr[i]);
      const auto k1 = static_cast<std::size_t>(v.indptr[i + 1]);
      fn(i, SparseRow{v.indices.data() + k0, v.values.data() + k0, k1 - k0});
    }
  } else {
    const DenseView v = x.dense_view();
    for (std::size_t i = begin; i < end; ++i) fn(i, DenseRow{v.data + i * v.row_stride, v.cols});
  }
}

// A block's share of a sum over rows: scalars and a gradient-sized vector.
struct Partial {
  double loss = 0;
  double decrease = 0;
  std::vector<double> grad;
};

void combine_partials(Partial& total, Partial& part) {
  total.loss += part.loss;
  total.decrease += part.decrease;
  if (total.grad.empty()) {
    total.grad = std::move(part.grad);
    return;
  }
  for (std::size_t j = 0; j < total.grad.size(); ++j) total.grad[j] += part.grad[j];
}

// A Partial as the state of fold_over_ranks: [has_grad, loss, decrease, grad (dim entries)].
std::vector<double> to_state(const Partial& p, std::size_t dim) {
  std::vector<double> v(dim + 3, 0.0);
  v[0] = p.grad.empty() ? 0.0 : 1.0;
  v[1] = p.loss;
  v[2] = p.decrease;
  std::copy(p.grad.begin(), p.grad.end(), v.begin() + 3);
  return v;
}
Partial from_state(const std::vector<double>& v) {
  Partial p;
  p.loss = v[1];
  p.decrease = v[2];
  if (v[0] != 0) p.grad.assign(v.begin() + 3, v.end());
  return p;
}

// The loss of a row with margin m = t z: log(1 + exp(-m)) = max(-m, 0) + log1p(e), e = exp(-|m|),
// and sigmoid(-m) = m >= 0 ? e / (1 + e) : 1 / (1 + e). One exp and one log1p per row.
struct RowLoss {
  double loss;
  double sig_neg;    // sigmoid(-m) = -dloss/dm
  double curvature;  // sigmoid(m) * sigmoid(-m) = e / (1 + e)^2
};
inline RowLoss row_loss(double m) {
  const double e = std::exp(-std::abs(m));
  const double inv = 1.0 / (1.0 + e);
  return {std::max(-m, 0.0) + std::log1p(e), m >= 0 ? e * inv : inv, e * inv * inv};
}
// row_loss(m).curvature alone (the same bits; no log1p).
inline double row_curvature(double m) {
  const double e = std::exp(-std::abs(m));
  const double inv = 1.0 / (1.0 + e);
  return e * inv * inv;
}

}  // namespace

LogisticObjective::LogisticObjective(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                                     std::span<const double> weights, double c, bool fit_intercept,
                                     int n_threads, std::span<const std::size_t> row_parts,
                                     std::span<const std::uint8_t> classes)
    : x_(x),
      labels_(labels),
      weights_(weights),
      classes_(classes),
      c_(c),
      fit_intercept_(fit_intercept),
      n_threads_(n_threads),
      dim_(x.cols() + (fit_intercept ? 1 : 0)) {
  if (classes.empty()) {
    RATEOPT_CHECK(labels.size() == x.rows(), "labels have {} entries, features have {} rows",
                  labels.size(), x.rows());
    RATEOPT_CHECK(weights.empty() || weights.size() == x.rows(),
                  "weights have {} entries, expected 0 or {}", weights.size(), x.rows());
  } else {
    RATEOPT_CHECK(classes.size() == x.rows(), "classes have {} entries, features have {} rows",
                  classes.size(), x.rows());
    RATEOPT_CHECK(weights.empty() || weights.size() == labels.size(),
                  "{} class weights for {} class labels", weights.size(), labels.size());
    for (const std::uint8_t k : classes)
      RATEOPT_CHECK(k < labels.size(), "row class {} is not below {} classes", k, labels.size());
  }
  std::size_t parts_rows = 0;
  for (const std::size_t r : row_parts) parts_rows += r;
  RATEOPT_CHECK(row_parts.empty() || parts_rows == x.rows(),
                "row_parts add up to {} rows, but the features have {}", parts_rows, x.rows());
  // The block size from the rows of every rank (an exact sum of counts).
  std::size_t total_rows = x.rows();
  if (is_distributed()) {
    total_rows = static_cast<std::size_t>(fold_over_ranks(
        {0.0}, [&](std::vector<double>& v) { v[0] += static_cast<double>(x.rows()); })[0]);
  }
  block_rows_ = choose_block_rows(total_rows, dim_);
  const std::vector<std::size_t> one_part{x.rows()};
  std::size_t begin = 0;
  for (const std::size_t part : row_parts.empty() ? std::span(one_part) : row_parts) {
    for (std::size_t b = begin; b < begin + part; b += block_rows_)
      blocks_.emplace_back(b, std::min(begin + part, b + block_rows_));
    begin += part;
  }
}

template <typename BlockFn>
auto LogisticObjective::reduce(BlockFn&& block) const {
  std::vector<Partial> partial(blocks_.size());
  parallel_for(blocks_.size(), n_threads_,
               [&](std::size_t b) { partial[b] = block(blocks_[b].first, blocks_[b].second); });
  Partial total;
  if (!is_distributed()) {
    for (Partial& p : partial) combine_partials(total, p);
  } else {
    // The same fold continued rank after rank: the bits of one process holding every part.
    total = from_state(fold_over_ranks(to_state(total, dim_), [&](std::vector<double>& state) {
      Partial t = from_state(state);
      for (Partial& p : partial) combine_partials(t, p);
      state = to_state(t, dim_);
    }));
  }
  if (total.grad.empty()) total.grad.assign(dim_, 0.0);
  return total;
}

double LogisticObjective::value_and_gradient(std::span<const double> theta,
                                             std::span<double> grad) const {
  RATEOPT_CHECK(theta.size() == dim_ && grad.size() == dim_,
                "theta has {} and grad {} entries, expected {}", theta.size(), grad.size(), dim_);
  return evaluate(theta, {}, grad, {}).value;
}

LogisticObjective::Evaluation LogisticObjective::evaluate(std::span<const double> theta,
                                                          std::span<const double> step,
                                                          std::span<double> grad,
                                                          std::span<double> curvature) const {
  RATEOPT_CHECK(theta.size() == dim_ && grad.size() == dim_,
                "theta has {} and grad {} entries, expected {}", theta.size(), grad.size(), dim_);
  RATEOPT_CHECK(step.empty() || step.size() == dim_, "step has {} entries, expected 0 or {}",
                step.size(), dim_);
  RATEOPT_CHECK(curvature.empty() || curvature.size() == x_.rows(),
                "curvature has {} entries, expected 0 or {}", curvature.size(), x_.rows());
  const std::size_t d = x_.cols();
  const double* beta = theta.data();
  const double b = fit_intercept_ ? theta[d] : 0.0;
  const double* s = step.empty() ? nullptr : step.data();
  const double sb = s != nullptr && fit_intercept_ ? s[d] : 0.0;
  const bool unit_weights = weights_.empty();
  const bool store_curvature = !curvature.empty();

  auto block = [&](std::size_t begin, std::size_t end) {
    Partial p;
    p.grad.assign(dim_, 0.0);
    double* g = p.grad.data();
    double bias_grad = 0;
    for_each_row(x_, begin, end, [&](std::size_t i, const auto& row) {
      const std::size_t k = target(i);
      const double w = unit_weights ? 1.0 : weights_[k];
      if (w == 0) {
        if (store_curvature) curvature[i] = 0;
        return;
      }
      const double t = labels_[k] == 1 ? 1.0 : -1.0;
      const double m = t * (row.dot(beta) + b);
      const RowLoss r = row_loss(m);
      p.loss += w * r.loss;
      const double coef = -t * w * r.sig_neg;
      row.axpy(coef, g);
      bias_grad += coef;
      if (store_curvature) curvature[i] = w * r.curvature;
      if (s != nullptr) {
        // loss(m - delta) - loss(m) = log((1 + exp(delta - m)) / (1 + exp(-m)))
        //                           = log1p(expm1(delta) * sigmoid(-m)).
        const double delta = t * (row.dot(s) + sb);
        p.decrease += w * (std::abs(delta) < 1 ? std::log1p(std::expm1(delta) * r.sig_neg)
                                               : log1p_exp(delta - m) - log1p_exp(-m));
      }
    });
    if (fit_intercept_) g[d] = bias_grad;
    return p;
  };
  auto sum = reduce(block);

  double penalty = 0;
  for (std::size_t j = 0; j < d; ++j) {
    penalty += beta[j] * beta[j];
    grad[j] = c_ * sum.grad[j] + beta[j];
  }
  if (fit_intercept_) grad[d] = c_ * sum.grad[d];
  return {c_ * sum.loss + 0.5 * penalty, sum.decrease};
}

template <typename CurvatureOf>
void LogisticObjective::hessian_product_with(CurvatureOf&& curvature_of, std::span<const double> v,
                                             std::span<double> out) const {
  const std::size_t d = x_.cols();
  const double vb = fit_intercept_ ? v[d] : 0.0;
  auto block = [&](std::size_t begin, std::size_t end) {
    Partial p;
    p.grad.assign(dim_, 0.0);
    double* g = p.grad.data();
    double bias = 0;
    for_each_row(x_, begin, end, [&](std::size_t i, const auto& row) {
      const double h = curvature_of(i, row);
      if (h == 0) return;
      const double coef = h * (row.dot(v.data()) + vb);
      row.axpy(coef, g);
      bias += coef;
    });
    if (fit_intercept_) g[d] = bias;
    return p;
  };
  auto sum = reduce(block);
  for (std::size_t j = 0; j < d; ++j) out[j] = c_ * sum.grad[j] + v[j];
  if (fit_intercept_) out[d] = c_ * sum.grad[d];
}

void LogisticObjective::hessian_product(std::span<const double> curvature,
                                        std::span<const double> v, std::span<double> out) const {
  RATEOPT_CHECK(curvature.size() == x_.rows() && v.size() == dim_ && out.size() == dim_,
                "curvature, v and out have {}, {} and {} entries, expected {}, {} and {}",
                curvature.size(), v.size(), out.size(), x_.rows(), dim_, dim_);
  hessian_product_with([&](std::size_t i, const auto& /*row*/) { return curvature[i]; }, v, out);
}

void LogisticObjective::hessian_product_at(std::span<const double> theta, std::span<const double> v,
                                           std::span<double> out) const {
  RATEOPT_CHECK(theta.size() == dim_ && v.size() == dim_ && out.size() == dim_,
                "theta, v and out have {}, {} and {} entries, expected {}", theta.size(), v.size(),
                out.size(), dim_);
  const double* beta = theta.data();
  const double b = fit_intercept_ ? theta[x_.cols()] : 0.0;
  const bool unit_weights = weights_.empty();
  // evaluate's curvature, the same expression
  hessian_product_with(
      [&](std::size_t i, const auto& row) {
        const std::size_t k = target(i);
        const double w = unit_weights ? 1.0 : weights_[k];
        if (w == 0) return 0.0;
        const double t = labels_[k] == 1 ? 1.0 : -1.0;
        return w * row_curvature(t * (row.dot(beta) + b));
      },
      v, out);
}

void LogisticObjective::gradient_at_zero(std::span<double> grad) const {
  RATEOPT_CHECK(grad.size() == dim_, "grad has {} entries, expected {}", grad.size(), dim_);
  const std::size_t d = x_.cols();
  const bool unit_weights = weights_.empty();
  auto block = [&](std::size_t begin, std::size_t end) {
    Partial p;
    p.grad.assign(dim_, 0.0);
    double* g = p.grad.data();
    double bias = 0;
    for_each_row(x_, begin, end, [&](std::size_t i, const auto& row) {
      const std::size_t k = target(i);
      const double w = unit_weights ? 1.0 : weights_[k];
      if (w == 0) return;
      const double coef = labels_[k] == 1 ? -0.5 * w : 0.5 * w;
      row.axpy(coef, g);
      bias += coef;
    });
    if (fit_intercept_) g[d] = bias;
    return p;
  };
  auto sum = reduce(block);
  for (std::size_t j = 0; j < dim_; ++j) grad[j] = c_ * sum.grad[j];
}

}  // namespace detail

namespace {

using Vector = Eigen::VectorXd;

// Euclidean norm and dot product, summed in index order (the stopping test uses this norm).
double norm2(std::span<const double> v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

double dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (std::size_t j = 0; j < a.size(); ++j) s += a[j] * b[j];
  return s;
}

// Validates the inputs; returns the number of non-zero entries (counted while checking that
// every entry is finite).
// With classes (one per row), labels and weights are per class.
std::size_t validate_inputs(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                            std::span<const double> weights, const LogisticRegressionOptions& o,
                            std::span<const std::uint8_t> classes = {}) {
  RATEOPT_CHECK(std::isfinite(o.c) && o.c > 0, "c is {}, expected a finite value > 0", o.c);
  RATEOPT_CHECK(std::isfinite(o.tol) && o.tol > 0, "tol is {}, expected a finite value > 0", o.tol);
  RATEOPT_CHECK(o.max_iter > 0, "max_iter is {}, expected > 0", o.max_iter);
  RATEOPT_CHECK(o.memory > 0, "memory is {}, expected > 0", o.memory);
  RATEOPT_CHECK(o.solver == LogisticSolver::kNewton || o.solver == LogisticSolver::kLbfgs,
                "solver is {}, expected kNewton or kLbfgs", static_cast<int>(o.solver));
  // Over several ranks, a rank may hold no rows (its files had none left) while others do.
  RATEOPT_CHECK(x.rows() > 0 || is_distributed(), "the feature matrix has no rows");
  const std::size_t targets = classes.empty() ? x.rows() : labels.size();
  RATEOPT_CHECK(classes.empty() || classes.size() == x.rows(),
                "classes have {} entries, features have {} rows", classes.size(), x.rows());
  for (const std::uint8_t k : classes)
    RATEOPT_CHECK(k < labels.size(), "row class {} is not below {} classes", k, labels.size());
  RATEOPT_CHECK(labels.size() == targets, "labels have {} entries, features have {} rows",
                labels.size(), x.rows());
  RATEOPT_CHECK(weights.empty() || weights.size() == targets,
                "weights have {} entries, expected 0 (unit weights) or one per {} ({})",
                weights.size(), classes.empty() ? "row" : "class", targets);
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
    return v.values.size();
  }
  const DenseView v = x.dense_view();
  std::size_t nnz = 0;
  for (std::size_t i = 0; i < v.rows; ++i) {
    const double* row = v.data + i * v.row_stride;
    bool finite = true;
    for (std::size_t j = 0; j < v.cols; ++j) {
      finite = finite && std::isfinite(row[j]);
      nnz += row[j] != 0 ? 1 : 0;
    }
    if (!finite)
      for (std::size_t j = 0; j < v.cols; ++j)
        RATEOPT_CHECK(std::isfinite(row[j]), "feature ({}, {}) is {}, expected a finite value", i,
                      j, row[j]);
  }
  return nnz;
}

// The scale of the stopping test (see LogisticRegressionOptions::tol): with unit weights
// max(min(#positive, #negative), 1) / #rows, LIBLINEAR's factor; with weights the same with
// weight sums, "1" being the mean weight of a row with non-zero weight.
// With classes, labels and weights are per class (row i's are those of classes[i]).
double class_balance_factor(std::span<const std::int32_t> labels, std::span<const double> weights,
                            std::span<const std::uint8_t> classes) {
  // One pass in row order, continued rank after rank over several ranks (the same bits).
  const std::size_t rows = classes.empty() ? labels.size() : classes.size();
  const std::vector<double> sums = fold_over_ranks({0.0, 0.0, 0.0}, [&](std::vector<double>& v) {
    for (std::size_t i = 0; i < rows; ++i) {
      const std::size_t k = classes.empty() ? i : classes[i];
      const double w = weights.empty() ? 1.0 : weights[k];
      v[labels[k] == 1 ? 0 : 1] += w;
      v[2] += w > 0 ? 1 : 0;
    }
  });
  const double pos = sums[0];
  const double neg = sums[1];
  const auto weighted_rows = static_cast<std::size_t>(sums[2]);
  const double total = pos + neg;
  if (!(total > 0)) return 0;  // all weights zero: f = 0.5 |beta|^2, gradient 0 at zero
  return std::max(std::min(pos, neg), total / static_cast<double>(weighted_rows)) / total;
}

// ---- trust-region Newton (Lin, Weng & Keerthi 2008, algorithms 1 and 2) ------------------------

// Trust-region update constants of the paper (section 2): a step is accepted when the actual
// reduction exceeds eta0 times the predicted one; the radius shrinks or grows depending on how
// well the quadratic model predicted the reduction.
constexpr double kEta0 = 1e-4;
constexpr double kEta1 = 0.25;
constexpr double kEta2 = 0.75;
constexpr double kSigma1 = 0.25;
constexpr double kSigma2 = 0.5;
constexpr double kSigma3 = 4.0;
// Conjugate gradient stops when |residual| <= kCgTolerance * |gradient| (the paper's xi_k).
constexpr double kCgTolerance = 0.1;

struct NewtonOutcome {
  Termination status = Termination::kConverged;
  int iterations = 0;
  int cg_iterations = 0;
};

// Largest tau >= 0 with |s + tau d| = radius, for |s| <= radius (stable root of the quadratic).
double to_boundary(std::span<const double> s, std::span<const double> d, double radius) {
  const double sd = dot(s, d);
  const double dd = dot(d, d);
  const double gap = std::max(radius * radius - dot(s, s), 0.0);
  const double root = std::sqrt(sd * sd + dd * gap);
  return sd >= 0 ? gap / (sd + root) : (root - sd) / dd;
}

class NewtonSolver {
 public:
  NewtonSolver(const detail::LogisticObjective& f, const LogisticRegressionOptions& o)
      : f_(f), o_(o), dim_(f.dim()) {}

  // Minimises from theta (overwritten with the last accepted iterate); grad, curvature and value
  // are those of theta on entry and on return. Stops when |grad|_2 <= threshold.
  NewtonOutcome run(std::vector<double>& theta, std::vector<double>& grad,
                    std::vector<double>& curvature, double& value, double threshold) {
    NewtonOutcome out;
    std::vector<double> step(dim_), residual(dim_), direction(dim_), hd(dim_);
    // The trial point's curvature goes into `curvature` (no second vector of one entry per row);
    // a rejected step computes theta's again, the same bits (it depends on theta alone).
    std::vector<double> trial(dim_), trial_grad(dim_), scratch_grad(dim_);
    double gnorm = norm2(grad);
    double radius = gnorm;
    const std::size_t d = f_.dim() - (o_.fit_intercept ? 1 : 0);
    while (true) {
      if (gnorm <= threshold) {
        out.status = Termination::kConverged;
        return out;
      }
      if (out.iterations >= o_.max_iter) {
        out.status = Termination::kMaxIterations;
        return out;
      }
      // Approximate minimiser of the quadratic model within the trust region.
      bool ok = true;
      out.cg_iterations += conjugate_gradient(theta, grad, gnorm, curvature, radius, step, residual,
                                              direction, hd, ok);
      if (!ok) {
        out.status = Termination::kNumericalError;
        return out;
      }
      for (std::size_t j = 0; j < dim_; ++j) trial[j] = theta[j] + step[j];
      const auto eval = f_.evaluate(trial, step, trial_grad, curvature);
      ++out.iterations;

      // Reductions: actual (without cancellation, see LogisticObjective::Evaluation) and
      // predicted by the model q(s) = g.s + s.Hs / 2 = (g.s - r.s) / 2, r = -g - Hs.
      double beta_step = 0;
      double step_sq = 0;
      for (std::size_t j = 0; j < d; ++j) {
        beta_step += theta[j] * step[j];
        step_sq += step[j] * step[j];
      }
      const double actual = o_.c * eval.loss_decrease - beta_step - 0.5 * step_sq;
      const double gs = dot(grad, step);
      const double predicted = -0.5 * (gs - dot(residual, step));
      const double snorm = norm2(step);
      const bool finite =
          std::isfinite(eval.value) && std::isfinite(actual) && std::isfinite(norm2(trial_grad));

      // Radius update (section 2): the step length that minimises the quadratic through f(w),
      // g.s and f(w + s) along s, clipped into the interval that the ratio actual / predicted
      // allows.
      if (out.iterations == 1) radius = std::min(radius, snorm);
      const double curv = -actual - gs;  // f(w + s) - f(w) - g.s
      double alpha = curv <= 0 ? kSigma3 : std::max(kSigma1, -0.5 * gs / curv);
      const double rho = finite && predicted > 0 ? actual / predicted : -1.0;
      if (!finite) alpha = kSigma1;
      if (rho < kEta0) {
        radius = std::min(std::max(alpha, kSigma1) * snorm, kSigma2 * radius);
      } else if (rho < kEta1) {
        radius = std::max(kSigma1 * radius, std::min(alpha * snorm, kSigma2 * radius));
      } else if (rho < kEta2) {
        radius = std::max(kSigma1 * radius, std::min(alpha * snorm, kSigma3 * radius));
      } else {
        radius = std::max(radius, std::min(alpha * snorm, kSigma3 * radius));
      }

      if (rho > kEta0) {
        theta.swap(trial);
        grad.swap(trial_grad);
        value = eval.value;
        gnorm = norm2(grad);
        continue;
      }
      // Rejected: theta's curvature back (the trial's overwrote it). A radius below the
      // resolution of theta cannot move it any more.
      if (!curvature.empty()) (void)f_.evaluate(theta, {}, scratch_grad, curvature);
      if (!(radius > 1e-15 * std::max(1.0, norm2(theta)))) {
        out.status = Termination::kNumericalError;
        return out;
      }
    }
  }

 private:
  // Steihaug's truncated conjugate gradient on H s = -g inside |s| <= radius (the paper's
  // algorithm 2). Writes the step and its residual r = -g - H s; returns the number of Hessian
  // products. ok = false when a curvature is not finite.
  // With curvature empty, each product computes theta's curvature again.
  int conjugate_gradient(std::span<const double> theta, std::span<const double> grad, double gnorm,
                         std::span<const double> curvature, double radius, std::vector<double>& s,
                         std::vector<double>& r, std::vector<double>& dir, std::vector<double>& hd,
                         bool& ok) const {
    std::fill(s.begin(), s.end(), 0.0);
    for (std::size_t j = 0; j < dim_; ++j) r[j] = -grad[j];
    dir = r;
    double rr = dot(r, r);
    const double stop = kCgTolerance * gnorm;
    // Exact arithmetic needs at most dim steps; allow some more for rounding.
    const std::size_t max_steps = 2 * dim_ + 10;
    int products = 0;
    for (std::size_t it = 0; it < max_steps && std::sqrt(rr) > stop; ++it) {
      if (curvature.empty()) {
        f_.hessian_product_at(theta, dir, hd);
      } else {
        f_.hessian_product(curvature, dir, hd);
      }
      ++products;
      const double dhd = dot(dir, hd);
      if (!std::isfinite(dhd)) {
        ok = false;
        return products;
      }
      double alpha = dhd > 0 ? rr / dhd : 0.0;
      bool boundary = dhd <= 0;  // no positive curvature along dir: go to the boundary
      if (!boundary) {
        double sq = 0;
        for (std::size_t j = 0; j < dim_; ++j) {
          const double v = s[j] + alpha * dir[j];
          sq += v * v;
        }
        boundary = sq > radius * radius;
      }
      if (boundary) {
        alpha = to_boundary(s, dir, radius);
        for (std::size_t j = 0; j < dim_; ++j) {
          s[j] += alpha * dir[j];
          r[j] -= alpha * hd[j];
        }
        return products;
      }
      for (std::size_t j = 0; j < dim_; ++j) {
        s[j] += alpha * dir[j];
        r[j] -= alpha * hd[j];
      }
      const double rr_next = dot(r, r);
      const double beta = rr_next / rr;
      for (std::size_t j = 0; j < dim_; ++j) dir[j] = r[j] + beta * dir[j];
      rr = rr_next;
    }
    return products;
  }

  const detail::LogisticObjective& f_;
  const LogisticRegressionOptions& o_;
  std::size_t dim_;
};

// ---- L-BFGS ------------------------------------------------------------------------------------

struct LbfgsOutcome {
  Termination status = Termination::kConverged;
  int iterations = 0;
};

LbfgsOutcome run_lbfgs(const detail::LogisticObjective& objective,
                       const LogisticRegressionOptions& options, std::vector<double>& theta_out,
                       double threshold) {
  LbfgsOutcome out;
  const auto dim = static_cast<Eigen::Index>(objective.dim());
  Vector theta = Eigen::Map<const Vector>(theta_out.data(), dim);
  const auto value_and_gradient = [&](const Vector& t, Vector& grad) {
    const auto n = static_cast<std::size_t>(t.size());
    return objective.value_and_gradient({t.data(), n}, {grad.data(), n});
  };
  const detail::LbfgsRun run =
      detail::run_lbfgs(value_and_gradient, theta, options.memory, options.max_iter, threshold);
  out.iterations = run.iterations;
  if (run.failed)
    out.status = Termination::kNumericalError;
  else
    out.status =
        out.iterations >= options.max_iter ? Termination::kMaxIterations : Termination::kConverged;
  std::copy(theta.data(), theta.data() + dim, theta_out.begin());
  return out;
}

LogisticRegressionResult fit(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                             std::span<const double> weights,
                             const LogisticRegressionOptions& options,
                             std::span<const std::uint8_t> classes) {
  const detail::LogisticObjective objective(x, labels, weights, options.c, options.fit_intercept,
                                            options.n_threads, options.row_parts, classes);
  const std::size_t dim = objective.dim();
  const std::size_t d = x.cols();

  std::vector<double> theta(dim, 0.0);
  if (options.initial) {
    const LinearModel& init = *options.initial;
    RATEOPT_CHECK(init.weights.size() == d, "initial model has {} weights, expected {}",
                  init.weights.size(), d);
    for (std::size_t j = 0; j < d; ++j) {
      RATEOPT_CHECK(std::isfinite(init.weights[j]), "initial weight {} is {}, expected finite", j,
                    init.weights[j]);
      theta[j] = init.weights[j];
    }
    if (options.fit_intercept) {
      RATEOPT_CHECK(std::isfinite(init.bias), "initial bias is {}, expected finite", init.bias);
      theta[d] = init.bias;
    }
  }
  const bool newton = options.solver == LogisticSolver::kNewton;
  std::vector<double> grad(dim);
  std::vector<double> curvature(newton && x.rows() <= options.curvature_rows_limit ? x.rows() : 0);
  LogisticRegressionResult result;
  result.objective = objective.evaluate(theta, {}, grad, curvature).value;

  // The stopping threshold is relative to the gradient at zero, also after a warm start (which
  // then does not tighten the test); that gradient needs no exp, one cheap pass.
  double g0 = 0;
  if (options.initial) {
    std::vector<double> zero_grad(dim);
    objective.gradient_at_zero(zero_grad);
    g0 = norm2(zero_grad);
  } else {
    g0 = norm2(grad);
  }
  const double threshold = options.tol * class_balance_factor(labels, weights, classes) * g0;

  if (newton) {
    NewtonSolver solver(objective, options);
    const NewtonOutcome out = solver.run(theta, grad, curvature, result.objective, threshold);
    result.status = out.status;
    result.iterations = out.iterations;
    result.inner_iterations = out.cg_iterations;
    result.gradient_norm = norm2(grad);
    if (!std::isfinite(result.objective) || !std::isfinite(result.gradient_norm))
      result.status = Termination::kNumericalError;
  } else if (norm2(grad) > threshold) {
    const LbfgsOutcome out = run_lbfgs(objective, options, theta, threshold);
    result.objective = objective.value_and_gradient(theta, grad);
    result.gradient_norm = norm2(grad);
    result.iterations = out.iterations;
    const bool finite = std::isfinite(result.objective) && std::isfinite(result.gradient_norm);
    if (finite && result.gradient_norm <= threshold) {
      result.status = Termination::kConverged;
    } else if (out.status == Termination::kMaxIterations && finite) {
      result.status = Termination::kMaxIterations;
    } else {
      result.status = Termination::kNumericalError;
    }
  } else {
    result.gradient_norm = norm2(grad);
  }

  result.model.weights.assign(theta.begin(), theta.begin() + static_cast<std::ptrdiff_t>(d));
  result.model.bias = options.fit_intercept ? theta[d] : 0.0;
  return result;
}

}  // namespace

namespace {

LogisticRegressionResult validate_and_fit(const FeatureMatrix& x,
                                          std::span<const std::int32_t> labels,
                                          std::span<const double> weights,
                                          const LogisticRegressionOptions& options,
                                          std::span<const std::uint8_t> classes) {
  const std::size_t nnz = validate_inputs(x, labels, weights, options, classes);
  // The storage decision is the same on every rank (dense and CSR rows sum in different orders).
  const std::vector<double> counts = fold_over_ranks({0.0, 0.0}, [&](std::vector<double>& v) {
    v[0] += static_cast<double>(nnz);
    v[1] += static_cast<double>(x.rows());
  });
  if (!x.is_sparse() &&
      counts[0] <= detail::kSparseCopyDensity * counts[1] * static_cast<double>(x.cols()))
    return fit(detail::dense_to_csr_matrix(x.dense_view(), nnz), labels, weights, options, classes);
  return fit(x, labels, weights, options, classes);
}

}  // namespace

LogisticRegressionResult fit_logistic_regression(const FeatureMatrix& x,
                                                 std::span<const std::int32_t> labels,
                                                 std::span<const double> weights,
                                                 const LogisticRegressionOptions& options) {
  return validate_and_fit(x, labels, weights, options, {});
}

LogisticRegressionResult detail::fit_logistic_regression_by_class(
    const FeatureMatrix& x, std::span<const std::uint8_t> classes,
    std::span<const std::int32_t> class_labels, std::span<const double> class_weights,
    const LogisticRegressionOptions& options) {
  RATEOPT_CHECK(classes.size() == x.rows(), "classes have {} entries, features have {} rows",
                classes.size(), x.rows());
  return validate_and_fit(x, class_labels, class_weights, options, classes);
}

}  // namespace rateopt
