// File: rateopt/sdca.hpp
// L2-regularised hinge-loss SVM with per-example weights and labels, solved by stochastic dual
// coordinate ascent (SDCA, Shalev-Shwartz & Zhang 2013) with a duality-gap certificate: the inner
// solver of the ramp-loss trainer (ramp.hpp) and the unconstrained SVM baseline.
//
// Problem (w in R^d, an optional bias coordinate w_b attached to a constant feature beta):
//
//   P(w, w_b) = (lambda/2) (|w|^2 + w_b^2) + <q, w> + sum_i c_i max(0, 1 - y_i (<w, x_i> + beta
//   w_b))
//
// with labels y_i in {-1, +1}, weights c_i >= 0 and an optional linear term q (used for linear
// constraints such as Zafar et al.'s covariance constraint). Its dual is
//
//   D(alpha) = sum_i alpha_i - (1/(2 lambda)) (|sum_i alpha_i y_i x_i - q|^2 + (beta sum_i alpha_i
//   y_i)^2), 0 <= alpha_i <= c_i,   w = (sum_i alpha_i y_i x_i - q) / lambda,  w_b = beta sum_i
//   alpha_i y_i / lambda.
//
// P(w(alpha)) - D(alpha) >= 0 bounds the suboptimality of both; the solver stops when it is at
// most max(gap_abs, gap_rel * |P|). The saved model scores s(x) = <w, x> + b with b = beta w_b;
// the bias is regularised like the weights (LIBLINEAR's bias feature), beta = 0 means no bias.
//
// Examples may come from several feature matrices (the datasets of a ramp problem), each with the
// same number of columns; an example is (matrix, row, label, weight), and one row may appear in
// several examples (e.g. with opposite labels).
//
// Complexity: O(nnz of the examples) per epoch (dense matrices that are mostly zeros are walked
// through a CSR copy; with shrinking, O(nnz of the active examples)); a gap check costs O(nnz).
// Determinism: the visiting order is a seeded permutation and the gap is a fixed-block reduction,
// so the result is bit-identical for any n_threads. Ownership: borrows the matrices during the
// call only. Thread-safety: reentrant.
//
// Example:
//   rateopt::WeightedSvmOptions o;  o.lambda = 1e-4;
//   auto fit = rateopt::fit_weighted_svm(x, labels_pm1, weights, o);
//   if (fit.status == rateopt::Termination::kConverged) use(fit.model);  // fit.gap <= tolerance
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/model.hpp"
#include "rateopt/status.hpp"

namespace rateopt {

// One weighted SVM example: row `row` of matrix `matrix`, label +1 or -1, weight c >= 0.
struct SvmExample {
  std::uint32_t matrix = 0;
  std::size_t row = 0;
  double label = 1;
  double weight = 1;
};

struct WeightedSvmOptions {
  double lambda = 1e-4;     // regularisation (> 0)
  double bias_feature = 1;  // constant feature beta (>= 0; 0: no bias)
  double gap_abs = 0;       // stop when P - D <= max(gap_abs, gap_rel * |P|) (>= 0 each,
  double gap_rel = 1e-6;    //   not both 0)
  int max_epochs = 10000;   // > 0
  int check_every = 1;      // epochs between gap checks (> 0)
  bool shrinking = true;    // drop examples stuck at a bound between gap checks (LIBLINEAR)
  std::uint64_t seed = 0;   // visiting order
  int n_threads = 0;        // gap evaluation; <= 0: all cores
};

struct WeightedSvmResult {
  LinearModel model;          // weights (d) and bias = beta * w_b
  std::vector<double> alpha;  // dual variables, one per example, alpha_i in [0, c_i]
  double primal = 0;          // P(w(alpha))
  double dual = 0;            // D(alpha) <= min P
  double gap = 0;             // primal - dual (>= 0 up to rounding)
  int epochs = 0;
  Termination status = Termination::kConverged;  // or kMaxIterations
};

// General form. `linear_term` is q (empty or d entries); `warm_alpha` (empty or one per example)
// is clipped to [0, c_i] and used as the starting point. Throws InvalidArgument on bad options,
// null or mis-sized matrices, rows out of range, labels other than +-1, negative or non-finite
// weights, or mis-sized spans.
[[nodiscard]] WeightedSvmResult fit_weighted_svm(std::span<const FeatureMatrix* const> matrices,
                                                 std::span<const SvmExample> examples,
                                                 const WeightedSvmOptions& options = {},
                                                 std::span<const double> linear_term = {},
                                                 std::span<const double> warm_alpha = {});

// One matrix, one example per row: labels +-1 (or 0/1, mapped to -1/+1) and weights (empty: 1).
[[nodiscard]] WeightedSvmResult fit_weighted_svm(const FeatureMatrix& x,
                                                 std::span<const std::int32_t> labels,
                                                 std::span<const double> weights = {},
                                                 const WeightedSvmOptions& options = {});

// P(w) of a model for the problem above (a check for callers and tests). O(nnz).
[[nodiscard]] double weighted_svm_primal(std::span<const FeatureMatrix* const> matrices,
                                         std::span<const SvmExample> examples,
                                         const LinearModel& model, double lambda,
                                         double bias_feature,
                                         std::span<const double> linear_term = {});

}  // namespace rateopt
