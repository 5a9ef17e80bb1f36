// File: rateopt/logistic.hpp
// L2-regularised logistic regression: the baseline learner, the probability model for decide,
// and a cost-sensitive oracle for train.
//
// Minimises  C * sum_i w_i * log(1 + exp(-t_i * (x_i . beta + b))) + 0.5 * |beta|^2,
// t_i = +1 / -1, the intercept b unpenalised -- the objective of scikit-learn's
// LogisticRegression(C=C, penalty="l2") with sample_weight.
//
// Solver (LogisticRegressionOptions::solver):
//   kNewton (default): trust-region Newton with conjugate gradient (Lin, Weng & Keerthi 2008, the
//     method of LIBLINEAR's primal solver). Each iteration solves the Newton system inexactly
//     with Hessian-vector products X^T D X v (D: per-row second derivatives stored at the
//     iterate), then makes one loss + gradient pass. Cost per iteration: O(nnz) for the
//     evaluation plus O(nnz) per conjugate-gradient step.
//   kLbfgs: L-BFGS (LBFGSpp, strong-Wolfe line search), O(nnz) per function evaluation.
// Every sum over rows is reduced over fixed row blocks in block order, so the result is
// bit-identical for any thread count. A dense x with at most 30% non-zero entries (one-hot
// columns from CSV files) is fitted from a CSR copy made on entry (O(nnz) memory).
//
// Stopping test (both solvers), LIBLINEAR's rule for its primal solvers:
//   |grad f(theta)|_2 <= tol * max(min(W+, W-), w_bar) / W * |grad f(0)|_2,
// with W+ / W- the total weight of the positive / negative rows, W = W+ + W-, and w_bar the mean
// weight of the rows with non-zero weight (unit weights: max(min(#pos, #neg), 1) / #rows,
// exactly LIBLINEAR's eps * max(min(pos, neg), 1) / l). The reference is the gradient at ZERO
// even after a warm start, so a warm start does not tighten the test. tol = 1e-4 is the
// tolerance of scikit-learn's LogisticRegression(solver="liblinear"); its model differs only in
// that liblinear penalises the intercept (intercept_scaling = 1). The default 1e-6 costs Newton
// about two iterations more (on a9a: 9 instead of 7) and a few more digits of the objective.
//
// Status: kConverged when the test holds; kMaxIterations after max_iter iterations;
// kNumericalError when a Hessian product is not finite, the trust region shrinks below the
// resolution of theta, or an L-BFGS line search fails. The model is always the last accepted
// iterate, with its objective and gradient norm.
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

enum class LogisticSolver {
  kNewton,  // trust-region Newton + conjugate gradient (LIBLINEAR's primal method)
  kLbfgs,   // L-BFGS
};

struct LogisticRegressionOptions {
  double c = 1.0;  // inverse regularisation strength (> 0)
  bool fit_intercept = true;
  double tol = 1e-6;    // relative gradient tolerance (> 0), LIBLINEAR's eps: see above
  int max_iter = 1000;  // Newton or L-BFGS iterations (> 0)
  int memory = 10;      // L-BFGS history (> 0; unused by kNewton)
  int n_threads = 0;    // <= 0: all cores
  LogisticSolver solver = LogisticSolver::kNewton;
  // Warm start: the fit starts from this model (its weights must have x.cols() entries) instead
  // of zero. Refits on slightly changed weights (the cost-sensitive oracles of train.hpp) then
  // take a few iterations.
  std::optional<LinearModel> initial;
};

struct LogisticRegressionResult {
  LinearModel model;
  Termination status = Termination::kConverged;
  int iterations = 0;        // Newton iterations (accepted or not) or L-BFGS iterations
  int inner_iterations = 0;  // kNewton: conjugate-gradient steps (Hessian-vector products)
  double objective = 0;
  double gradient_norm = 0;  // Euclidean norm at the end (the norm of the stopping test)
};

// Throws InvalidArgument on bad options, label/weight sizes, labels not 0/1, non-finite features.
[[nodiscard]] LogisticRegressionResult fit_logistic_regression(
    const FeatureMatrix& x, std::span<const std::int32_t> labels,
    std::span<const double> weights = {}, const LogisticRegressionOptions& options = {});

}  // namespace rateopt
