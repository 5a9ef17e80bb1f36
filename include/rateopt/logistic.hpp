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
#include <limits>
#include <optional>
#include <span>
#include <vector>

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
  std::optional<LinearModel> initial{};
  // The rows of each part of the data, in order, when they come from several files (empty: one
  // part). Sums over rows then run in blocks that never cross a part boundary, so that the same
  // files give the same bits in one process and over any number of MPI ranks, each holding whole
  // parts (rateopt/distributed.hpp, docs/scale.md). Must add up to this rank's rows.
  std::vector<std::size_t> row_parts{};
  // kNewton: each row's curvature is kept for the Hessian products of the conjugate gradient
  // steps (8 bytes a row) while this process holds at most this many rows; with more, each
  // product computes it again (one more dot product and exp per row and product: fits with many
  // products take up to about twice the time) and holds no memory per row. The same bits either
  // way. The cost-sensitive fits of rate-constrained training (few products each) set 2^22.
  std::size_t curvature_rows_limit = std::numeric_limits<std::size_t>::max();
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

// The model file of one fit (rateopt train's default learner, Python's LogisticRegression, each
// one-vs-rest label): kind "logistic_regression", the logistic link, and the training options
// as options_json ({"learner", "C", "tol", "max_iter", "fit_intercept"}), so that every front end
// writes the same file for the same fit.
[[nodiscard]] Classifier logistic_regression_model(LinearModel model,
                                                   const LogisticRegressionOptions& options,
                                                   Encoding encoding);

// ---- multinomial (softmax) logistic regression -------------------------------------------------
// Minimises  C * sum_i w_i * (-log softmax(z_i)[c_i]) + 0.5 * sum_k |W_k|^2,
// z_i[k] = x_i . W_k + b_k over the K classes SEEN in `classes` (sorted distinct values; a class
// value that never occurs gets no parameters and, through MultinomialModel::probability_of,
// probability 0). The intercepts b_k are unpenalised; the objective is invariant under adding a
// constant to all of them, and the solvers, started at zero, keep sum_k b_k = 0 (every gradient
// has that property), which makes the solution unique. Solvers
// (MultinomialLogisticOptions::solver):
//   kNewton (default): Newton-CG, Hessian-vector products from the stored class probabilities
//     (rows x K doubles), CG preconditioned by the Hessian's diagonal to a relative residual
//     0.1, backtracking Armijo line search;
//   kLbfgs: L-BFGS (LBFGSpp, strong-Wolfe line search with the derivative fallback of the binary
//     solver). Measured on emotions (72 standardised ARFF features, 4 classes, C = 1): L-BFGS is
//     still at |g| = 41 after 1000 iterations (the binary L-BFGS too), Newton converges.
// Every sum over rows is reduced over fixed row blocks in block order, so the result is
// bit-identical for any thread count. Cost per function evaluation or Hessian product:
// O(nnz * K).
//
// With K = 2 the model is the binary logistic regression of the larger class against the smaller
// with C' = 2 C: at the optimum W_1 = -W_0, so 0.5 (|W_0|^2 + |W_1|^2) = 0.25 |W_1 - W_0|^2.
// With K = 1 nothing is fitted (the only class has probability 1).
//
// Stopping test: |grad f(theta)|_2 <= tol * |grad f(0)|_2. Status as for the binary fit.
//
// Example (EFP, rateopt/multilabel.hpp, fits one per label):
//   auto fit = rateopt::fit_multinomial_logistic_regression(x, t, {}, {.c = 0.1});
//   std::vector<double> p(fit.model.num_classes());
//   fit.model.probabilities(x, 0, p);
enum class MultinomialSolver {
  kNewton,  // Newton-CG (Hessian-vector products) with a backtracking line search
  kLbfgs,   // L-BFGS
};

struct MultinomialModel {
  std::vector<std::int32_t> classes;  // K class values, strictly increasing
  std::size_t num_features = 0;       // d
  // Feature-major: weights[j * K + k] is feature j's weight for class k (d * K entries).
  std::vector<double> weights;
  std::vector<double> biases;  // K entries

  [[nodiscard]] std::size_t num_classes() const noexcept { return classes.size(); }
  // Class probabilities of row i of x (out: K entries, in the order of `classes`). x may have
  // fewer columns than num_features (missing trailing columns are zero); more only when CSR and
  // the extra columns are empty (InvalidArgument otherwise). O(nnz of the row * K).
  void probabilities(const FeatureMatrix& x, std::size_t i, std::span<double> out) const;
  // P(class = value | row i), 0 for a class value not seen in training.
  [[nodiscard]] double probability_of(const FeatureMatrix& x, std::size_t i,
                                      std::int32_t value) const;
  // Throws InvalidArgument when sizes disagree, classes are not increasing or a value is not
  // finite.
  void validate() const;
};

struct MultinomialLogisticOptions {
  double c = 1.0;  // inverse regularisation strength (> 0)
  bool fit_intercept = true;
  double tol = 1e-6;    // relative gradient tolerance (> 0)
  int max_iter = 1000;  // Newton or L-BFGS iterations (> 0)
  int memory = 10;      // L-BFGS history (> 0; unused by kNewton)
  int n_threads = 0;    // <= 0: all cores
  MultinomialSolver solver = MultinomialSolver::kNewton;
  // Warm start: the fit starts from this model when it has the same classes and feature count as
  // the problem (otherwise from zero). The stopping test stays relative to the gradient at zero.
  std::optional<MultinomialModel> initial{};
};

struct MultinomialLogisticResult {
  MultinomialModel model;
  Termination status = Termination::kConverged;
  int iterations = 0;
  double objective = 0;
  double gradient_norm = 0;
};

// Throws InvalidArgument on bad options, sizes, negative class values, negative or non-finite
// weights, non-finite features, or no rows.
[[nodiscard]] MultinomialLogisticResult fit_multinomial_logistic_regression(
    const FeatureMatrix& x, std::span<const std::int32_t> classes,
    std::span<const double> weights = {}, const MultinomialLogisticOptions& options = {});

}  // namespace rateopt
