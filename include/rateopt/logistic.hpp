// File: rateopt/logistic.hpp
// L2-regularised logistic regression: the baseline learner, the probability model for decide,
// and a cost-sensitive oracle for train.
//
// Minimises  C * sum_i w_i * log(1 + exp(-t_i * (x_i . beta + b))) + 0.5 * |beta|^2,
// t_i = +1 / -1, the intercept b unpenalised -- the objective of scikit-learn's
// LogisticRegression(C=C, penalty="l2") with sample_weight. Solved by L-BFGS (LBFGSpp, with a
// strong-Wolfe line search) until the gradient's infinity norm is <= tol * max(1, |g0|_inf).
// Cost per iteration: O(nnz) (one pass for loss and gradient), parallel over fixed row blocks so
// the result is bit-identical for any thread count.
//
// Example:
//   auto fit = rateopt::fit_logistic_regression(ds.features(), ds.labels().values,
//                                               ds.weights(), {.c = 1.0});
//   if (fit.status != rateopt::Termination::kConverged) { ... }
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "rateopt/dataset.hpp"
#include "rateopt/model.hpp"
#include "rateopt/status.hpp"

namespace rateopt {

struct LogisticRegressionOptions {
  double c = 1.0;  // inverse regularisation strength (> 0)
  bool fit_intercept = true;
  double tol = 1e-6;    // relative gradient tolerance (> 0)
  int max_iter = 1000;  // L-BFGS iterations (> 0)
  int memory = 10;      // L-BFGS history (> 0)
  int n_threads = 0;    // <= 0: all cores
  // Warm start: the fit starts from this model (its weights must have x.cols() entries) instead
  // of zero. Refits on slightly changed weights (the cost-sensitive oracles of train.hpp) then
  // take a few iterations.
  std::optional<LinearModel> initial;
};

struct LogisticRegressionResult {
  LinearModel model;
  Termination status = Termination::kConverged;
  int iterations = 0;
  double objective = 0;
  double gradient_norm = 0;  // infinity norm at the end
};

// Throws InvalidArgument on bad options, label/weight sizes, labels not 0/1, non-finite features.
[[nodiscard]] LogisticRegressionResult fit_logistic_regression(
    const FeatureMatrix& x, std::span<const std::int32_t> labels,
    std::span<const double> weights = {}, const LogisticRegressionOptions& options = {});

}  // namespace rateopt
