// Private: the objective of L2-regularised logistic regression (see rateopt/logistic.hpp),
// exposed so that tests can check its derivatives and solve it independently.
//
//   f(theta) = C * sum_i w_i * log(1 + exp(-t_i * z_i)) + 0.5 * |beta|^2,
//   z_i = x_i . beta + b,  t_i = 2 * y_i - 1,
//
// with theta = (beta_0, ..., beta_{d-1}, b) when the intercept is fitted and theta = beta
// otherwise (b = 0). Every sum over rows runs over fixed row blocks whose partial sums are
// combined in block order (block_reduce), so results are bit-identical for any thread count.
//
// Second-order information for the trust-region Newton solver: the Hessian is
//   H = C * X~^T D X~ + P,   D = diag(h_i),  h_i = w_i * s_i * (1 - s_i),  s_i = sigmoid(z_i),
// X~ = [X, 1] with an intercept, P = identity on beta and 0 on b. evaluate() stores h_i (one
// double per row) and hessian_product() multiplies by H without forming it (Lin, Weng & Keerthi
// 2008, section 3).
//
// Cost: value_and_gradient, evaluate, gradient_at_zero and hessian_product each make one pass
// over the rows, O(nnz + dim * blocks); only the first two evaluate exp/log1p (one of each per
// row, evaluate with a step two more).
//
// Ownership: borrows x, labels and weights; they must outlive the object. Inputs are assumed
// valid (fit_logistic_regression validates them). Thread-safety: const methods may run
// concurrently.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/logistic.hpp"

namespace rateopt::detail {

// log(1 + exp(z)) without overflow or loss of precision for large |z|.
[[nodiscard]] inline double log1p_exp(double z) noexcept {
  return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
}

// 1 / (1 + exp(-z)) without overflow.
[[nodiscard]] inline double sigmoid(double z) noexcept {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

class LogisticObjective {
 public:
  // weights empty: all 1. n_threads <= 0: all cores. row_parts: see
  // LogisticRegressionOptions::row_parts (empty: one part). Over several ranks (a collective):
  // every sum is over every rank's rows, folded in rank order.
  // classes non-empty (one per row): labels and weights are per class, row i taking those of
  // class classes[i] (1 byte a row instead of 12; the same bits as the per-row values).
  LogisticObjective(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                    std::span<const double> weights, double c, bool fit_intercept, int n_threads,
                    std::span<const std::size_t> row_parts = {},
                    std::span<const std::uint8_t> classes = {});

  // Number of parameters: x.cols() (+ 1 with an intercept).
  [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
  [[nodiscard]] std::size_t rows() const noexcept { return x_.rows(); }
  // Rows per reduction block (depends on the row count over every rank and dim() only, never on
  // threads). Blocks restart at each part of row_parts.
  [[nodiscard]] std::size_t block_rows() const noexcept { return block_rows_; }

  // Returns f(theta) and writes its gradient into grad; both spans have dim() entries.
  // The result may go unused: a caller may want only the gradient written into `grad`.
  // NOLINTNEXTLINE(modernize-use-nodiscard)
  double value_and_gradient(std::span<const double> theta, std::span<double> grad) const;

  struct Evaluation {
    double value = 0;  // f(theta)
    // sum_i w_i * (loss_i(theta - step) - loss_i(theta)) (no C, no penalty), computed per row as
    // log1p(expm1(t_i * x~_i . step) * sigmoid(-t_i z_i)), which keeps its relative accuracy
    // when the step is tiny (the difference of two values of f would be rounding noise).
    // 0 when step is empty.
    double loss_decrease = 0;
  };
  // f(theta), its gradient (dim() entries) and the curvature h_i of every row (rows() entries,
  // the input of hessian_product). step: empty, or the move (dim() entries) that led to theta.
  // The result may go unused: a caller may want only the gradient written into `grad`.
  // NOLINTNEXTLINE(modernize-use-nodiscard)
  Evaluation evaluate(std::span<const double> theta, std::span<const double> step,
                      std::span<double> grad, std::span<double> curvature) const;

  // out = H v with the curvature stored by evaluate (v and out: dim() entries; no aliasing).
  void hessian_product(std::span<const double> curvature, std::span<const double> v,
                       std::span<double> out) const;
  // out = H v at theta, each row's curvature computed again (the bits evaluate stores).
  void hessian_product_at(std::span<const double> theta, std::span<const double> v,
                          std::span<double> out) const;

  // The gradient at theta = 0 (no exp: every row's loss derivative is -t_i w_i / 2).
  void gradient_at_zero(std::span<double> grad) const;

 private:
  const FeatureMatrix& x_;
  std::span<const std::int32_t> labels_;
  std::span<const double> weights_;
  std::span<const std::uint8_t> classes_;
  double c_;
  bool fit_intercept_;
  int n_threads_;
  std::size_t dim_;
  std::size_t block_rows_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> blocks_;  // [begin, end) row ranges, in order

  // Where row i's label and weight are (row i itself, or its class).
  [[nodiscard]] std::size_t target(std::size_t i) const noexcept {
    return classes_.empty() ? i : classes_[i];
  }
  // out = H v with row i's curvature curvature_of(i, row).
  template <typename CurvatureOf>
  void hessian_product_with(CurvatureOf&& curvature_of, std::span<const double> v,
                            std::span<double> out) const;
  // The sum of block(begin, end) over every block (and over ranks), folded in block order.
  template <typename BlockFn>
  [[nodiscard]] auto reduce(BlockFn&& block) const;
};

// fit_logistic_regression for rows in classes (see the LogisticObjective constructor): the same
// result, bit for bit, as per-row labels[classes[i]] and weights[classes[i]].
[[nodiscard]] LogisticRegressionResult fit_logistic_regression_by_class(
    const FeatureMatrix& x, std::span<const std::uint8_t> classes,
    std::span<const std::int32_t> class_labels, std::span<const double> class_weights,
    const LogisticRegressionOptions& options);

}  // namespace rateopt::detail
