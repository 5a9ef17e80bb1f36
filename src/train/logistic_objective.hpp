// Private: the objective of L2-regularised logistic regression (see rateopt/logistic.hpp),
// exposed so that tests can check its gradient and solve it independently.
//
//   f(theta) = C * sum_i w_i * log(1 + exp(-t_i * z_i)) + 0.5 * |beta|^2,
//   z_i = x_i . beta + b,  t_i = 2 * y_i - 1,
//
// with theta = (beta_0, ..., beta_{d-1}, b) when the intercept is fitted and theta = beta
// otherwise (b = 0). Value and gradient come from one pass over the rows, parallel over fixed row
// blocks whose partial sums are combined in block order, so results are bit-identical for any
// thread count. Cost O(nnz + d * blocks) per evaluation.
//
// Ownership: borrows x, labels and weights; they must outlive the object. Inputs are assumed
// valid (fit_logistic_regression validates them). Thread-safety: const methods may run
// concurrently.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "rateopt/dataset.hpp"

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
  // weights empty: all 1. n_threads <= 0: all cores.
  LogisticObjective(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                    std::span<const double> weights, double c, bool fit_intercept, int n_threads);

  // Number of parameters: x.cols() (+ 1 with an intercept).
  [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
  // Rows per reduction block (depends on the row count and dim() only, never on threads).
  [[nodiscard]] std::size_t block_rows() const noexcept { return block_rows_; }

  // Returns f(theta) and writes its gradient into grad; both spans have dim() entries.
  double value_and_gradient(std::span<const double> theta, std::span<double> grad) const;

 private:
  const FeatureMatrix& x_;
  std::span<const std::int32_t> labels_;
  std::span<const double> weights_;
  double c_;
  bool fit_intercept_;
  int n_threads_;
  std::size_t dim_;
  std::size_t block_rows_;
};

}  // namespace rateopt::detail
