// File: rateopt/ramp.hpp
// Dataset constraints with the ramp loss (Goh, Cotter, Gupta & Friedlander 2016): minimise a
// linear combination of positive/negative prediction rates on named datasets (or slices of them)
// subject to upper bounds on other such combinations, for a linear scorer.
//
// Rates. For a scorer s(x) = <w, x> + b and a set of rows S of a dataset with example weights u:
//   sp(S) = sum_{x in S} u_x [s(x) > 0] / U,  sn(S) = 1 - sp(S)    (deterministic, threshold at 0)
//   rp(S) = sum_{x in S} u_x ramp(s(x)) / U,   rn(S) = 1 - rp(S)    (ramp-randomised)
// with ramp(s) = clamp((1 + s) / 2, 0, 1) -- the Link::kRamp of model.hpp, i.e. Goh's
// sigma(z) = clamp(1/2 + z, 0, 1) at z = s / 2 -- and U the total weight of the term's
// denominator rows (see RateTerm). The ramp rates are what the randomised classifier, which
// predicts positive with probability ramp(s(x)), achieves in expectation.
//
// Problem (Goh's Problem 2): minimise  objective(rp, rn) + (lambda/2)(|w|^2 + w_b^2)
//                            s.t.      constraint_j(rp, rn) <= bound_j,
// where every combination is linear in the rates. Coefficients may have any sign: per example,
// a sp coefficient a and a sn coefficient c combine to (a - c) sp + c, so each example ends up on
// one side with a non-negative weight plus a constant (Goh's positive form, exact for rp + rn = 1).
//
// Algorithm (docs/ramp.md):
//   * majorisation-minimisation (Goh Alg. 1): at the current scores s', each example's ramp is
//     bounded by a hinge (tight for s' <= 1 on the positive side, s' >= -1 on the negative side)
//     or by the constant 1 (Problem 3, convex, tight at s'); each step minimises that bound,
//     so the ramp objective does not increase and feasibility is kept, up to the inner tolerance
//     -- checked and reported per iteration (MmIteration);
//   * Problem 3 by its Lagrangian over the multipliers v >= 0: for fixed v it is a weighted hinge
//     SVM (sdca.hpp) whose dual value is a lower bound l(v) <= zeta(v); the outer problem
//     max_v zeta(v) is solved by bisection (one constraint) or by a trust-region cutting-plane
//     (bundle) method in the spirit of Goh's Alg. 2 (several constraints: Kelley's point near the
//     best multipliers, upper bounds from the best feasible convex combination of the SVM
//     solutions), with shallow cuts, stopping when the upper bound (the best feasible primal
//     value) and the lower bound (the best dual value) are within outer_tol; two opposite
//     constraints bounding a band narrower than feasibility_tol (an equality a == b) may each
//     exceed their bound by up to 0.9 feasibility_tol;
//   * a feasible start: options.initial when given, else w = 0 when it is feasible (every ramp is
//     1/2), else a phase 1 that minimises the largest violation (RampResult::start says which).
//
// Determinism: the same input, options and seed give the same result for any n_threads.
// Ownership: datasets are borrowed for the duration of the call. Thread-safety: reentrant.
//
// Example (Goh section 4.1: error subject to the 80% rule between men and women):
//   rateopt::RampProblem p;
//   p.objective = rateopt::error_rate("train");
//   p.constraints.push_back(rateopt::fairness_ratio_constraint(
//       "train", rateopt::Slice::parse("sex=Female"), rateopt::Slice::parse("sex=Male"), 0.8));
//   rateopt::NamedDataset data[] = {{"train", &ds}};
//   rateopt::RampResult r = rateopt::fit_ramp(p, data, {.lambda = 1e-5});
//   r.classifier.predict(x, rateopt::PredictMode::kDeterministic, out);   // or kStochastic
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/model.hpp"
#include "rateopt/status.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

// Which prediction a term counts.
enum class RatePrediction { kPositive, kNegative };  // sp / sn (rp / rn when randomised)

// coefficient * (weighted number of rows of `slice` predicted `prediction`) / (denominator).
// The denominator is the total weight of the rows of `per` (nullopt: of `slice` itself); with
// count = true there is none (a weighted count, Goh's #TP etc.).
struct RateTerm {
  double coefficient = 1;
  RatePrediction prediction = RatePrediction::kPositive;
  std::string dataset;  // name of a NamedDataset
  Slice slice;          // metrics.hpp syntax: label=1, sex=Female, baseline=0, f73=1; empty: all
  std::optional<Slice> per;
  bool count = false;
};

// constant + sum of terms.
struct RateCombination {
  std::vector<RateTerm> terms;
  double constant = 0;

  RateCombination& operator+=(const RateCombination& other);
  RateCombination& operator-=(const RateCombination& other);
  RateCombination& operator*=(double factor);
};
[[nodiscard]] RateCombination operator+(RateCombination a, const RateCombination& b);
[[nodiscard]] RateCombination operator-(RateCombination a, const RateCombination& b);
[[nodiscard]] RateCombination operator*(double factor, RateCombination a);
[[nodiscard]] RateCombination operator+(RateCombination a, double constant);

// lhs <= bound.
struct RateConstraint {
  std::string name;
  RateCombination lhs;
  double bound = 0;
};

struct RampProblem {
  RateCombination objective;
  std::vector<RateConstraint> constraints;
};

// A dataset the problem refers to by name (borrowed). Rows are weighted by Dataset::weights().
struct NamedDataset {
  std::string name;
  const Dataset* data = nullptr;
};

// ---- Goh Table 2 vocabulary -------------------------------------------------------------------
// `slice` restricts to a subpopulation (empty: all rows); labels are the dataset's binary labels
// (label=1 is D+, label=0 is D-), the deployed model's predictions its "baseline" column.

// sp(S) and sn(S).
[[nodiscard]] RateCombination positive_rate(const std::string& dataset, const Slice& slice = {});
[[nodiscard]] RateCombination negative_rate(const std::string& dataset, const Slice& slice = {});
// Coverage: sp(S) (needs no labels).
[[nodiscard]] RateCombination coverage(const std::string& dataset, const Slice& slice = {});
// Weighted counts |S+| sp(S+), |S-| sn(S-), |S-| sp(S-), |S+| sn(S+).
[[nodiscard]] RateCombination true_positives(const std::string& dataset, const Slice& slice = {});
[[nodiscard]] RateCombination true_negatives(const std::string& dataset, const Slice& slice = {});
[[nodiscard]] RateCombination false_positives(const std::string& dataset, const Slice& slice = {});
[[nodiscard]] RateCombination false_negatives(const std::string& dataset, const Slice& slice = {});
// #FP + #FN, and (#FP + #FN) / |S|.
[[nodiscard]] RateCombination error_count(const std::string& dataset, const Slice& slice = {});
[[nodiscard]] RateCombination error_rate(const std::string& dataset, const Slice& slice = {});
// Recall = sp(S+) = TPR; FPR = sp(S-); FNR = sn(S+); TNR = sn(S-).
[[nodiscard]] RateCombination recall(const std::string& dataset, const Slice& slice = {});
[[nodiscard]] RateCombination false_positive_rate(const std::string& dataset,
                                                  const Slice& slice = {});
[[nodiscard]] RateCombination false_negative_rate(const std::string& dataset,
                                                  const Slice& slice = {});
[[nodiscard]] RateCombination true_negative_rate(const std::string& dataset,
                                                 const Slice& slice = {});
// Churn against the "baseline" column (0/1 predictions of a deployed model), labels unused:
// #changes = |S.+| sn(S.+) + |S.-| sp(S.-), and #changes / |S|.
[[nodiscard]] RateCombination churn_count(const std::string& dataset, const Slice& slice = {});
[[nodiscard]] RateCombination churn_rate(const std::string& dataset, const Slice& slice = {});

// lhs <= bound and lhs >= bound (as -lhs <= -bound).
[[nodiscard]] RateConstraint at_most(RateCombination lhs, double bound, std::string name = {});
[[nodiscard]] RateConstraint at_least(const RateCombination& lhs, double bound,
                                      std::string name = {});
// Fairness ratio (80% rule for kappa = 0.8): sp(A) >= kappa sp(B), kappa > 0.
[[nodiscard]] RateConstraint fairness_ratio_constraint(const std::string& dataset,
                                                       const Slice& group_a, const Slice& group_b,
                                                       double kappa);
// Equal opportunity: sp(A and label=1) >= kappa sp(B and label=1).
[[nodiscard]] RateConstraint equal_opportunity_constraint(const std::string& dataset,
                                                          const Slice& group_a,
                                                          const Slice& group_b, double kappa);
// Egregious examples (a dataset of them, labelled): sp(D+) >= kappa and sn(D-) >= kappa.
[[nodiscard]] std::vector<RateConstraint> egregious_constraints(const std::string& dataset,
                                                                double kappa,
                                                                const Slice& slice = {});
// Neyman-Pearson: minimise FNR subject to FPR <= max_fpr.
[[nodiscard]] RampProblem neyman_pearson(const std::string& dataset, double max_fpr);

// ---- per-row form ------------------------------------------------------------------------------
// A combination already reduced to rows (e.g. rateopt train's RateProblem, whose linear functions
// are affine forms over atoms with per-row coefficients):
//   constant + sum_d sum_i coef[d][i] * P(row i of datasets[d] is predicted positive).
// coef has one vector per NamedDataset, in order, each empty (all zero) or with the dataset's
// row count; coefficients may have any sign (a negative one counts the row's P(negative)).
struct RowCombination {
  double constant = 0;
  std::vector<std::vector<double>> coef;
};

struct RowConstraint {
  std::string name;
  RowCombination lhs;
  double bound = 0;  // lhs <= bound
};

struct RowRampProblem {
  RowCombination objective;
  std::vector<RowConstraint> constraints;
};

// ---- solver -----------------------------------------------------------------------------------

struct MmIteration;

struct RampOptions {
  double lambda = 1e-4;           // (lambda/2)(|w|^2 + w_b^2) on the saved model's weights (> 0)
  double bias_feature = 1;        // regularised bias feature (LIBLINEAR style); 0: no bias
  int max_mm_iterations = 10;     // majorisation-minimisation steps (> 0)
  double mm_tol = 1e-5;           // stop when a step lowers the ramp objective by less (>= 0)
  double feasibility_tol = 1e-3;  // accepted constraint excess, in the constraint's units (> 0)
  double outer_tol = 1e-4;        // upper - lower bound on Problem 3 (objective units, > 0)
  double inexact_mm = 0.25;       // step t solves Problem 3 to max(outer_tol, inexact_mm x the
                                  // decrease of step t-1 (step 1: x the start objective));
                                  // 0: every step to outer_tol. In [0, 1)
  int max_outer_iterations = 60;  // SVM solves per MM step (> 0)
  double max_multiplier = 1e4;    // multipliers live in [0, max_multiplier]^m (> 0)
  double inner_gap_rel = 1e-3;    // SDCA gap relative to its primal, loosest (shallow cuts)
  double inner_gap_min = 1e-7;    // ... and the tightest absolute gap asked for
  int max_epochs = 2000;          // SDCA epochs per solve
  int phase1_iterations = 10;     // MM steps of the phase 1 (when a feasible start is needed)
  std::optional<LinearModel> initial;  // feasible start (weights: one per feature)
  std::uint64_t seed = 0;
  int n_threads = 0;  // <= 0: all cores
  // Called after every MM step (phase 1 included) with its record, e.g. for progress output.
  std::function<void(const MmIteration&)> progress;
};

// One majorisation-minimisation step.
struct MmIteration {
  int iteration = 0;  // 1-based; phase-1 steps are reported with phase1 = true
  bool phase1 = false;
  double objective = 0;  // ramp objective + regulariser after the step
  double previous_objective = 0;
  double max_violation = 0;  // max_j (ramp constraint_j - bound_j) after the step
  double upper_bound = 0;    // outer certificate on Problem 3: upper - lower <= outer_tol
  double lower_bound = 0;    //   when converged
  std::vector<double> multipliers;
  int svm_solves = 0;
  long long epochs = 0;
  bool monotone = true;  // objective <= previous_objective + tolerance
  bool feasible = true;  // max_violation <= feasibility_tol
  bool accepted = true;  // false: the step was rejected and the previous iterate kept
  Termination outer_status = Termination::kConverged;
};

struct RampResult {
  // Link::kRamp: PredictMode::kDeterministic thresholds the score at 0, kStochastic draws the
  // ramp-randomised prediction, kProbability returns ramp(s).
  Classifier classifier;
  LinearModel model;
  Termination status = Termination::kConverged;  // kInfeasible: no feasible start was found
  std::string start;  // "initial" or "zero", with "+phase1" when a phase 1 ran
  std::vector<MmIteration> history;
  double objective = 0;                // ramp objective (rates only, no regulariser)
  std::vector<double> constraints;     // ramp constraint values (lhs), one per constraint
  double objective_deterministic = 0;  // the same with the 0/1 rates (threshold at 0)
  std::vector<double> constraints_deterministic;
  double max_violation = 0;  // max_j (ramp lhs_j - bound_j)
  std::vector<double> multipliers;
  long long svm_solves = 0;
  long long epochs = 0;
};

// Throws InvalidArgument (bad options, an empty problem, a dataset without binary labels where a
// term needs label=..., non-finite coefficients, mismatched feature counts, an initial model of
// the wrong size), NotFound (unknown dataset name, slice column or value).
[[nodiscard]] RampResult fit_ramp(const RampProblem& problem,
                                  std::span<const NamedDataset> datasets,
                                  const RampOptions& options = {});

// The same for a problem in per-row form; also throws InvalidArgument when a coefficient vector's
// length is neither 0 nor its dataset's row count, or a coefficient is not finite.
[[nodiscard]] RampResult fit_ramp(const RowRampProblem& problem,
                                  std::span<const NamedDataset> datasets,
                                  const RampOptions& options = {});

// Values of a problem's combinations for a fixed model: ramp (randomised) or 0/1 (threshold at 0).
struct RampEvaluation {
  double objective = 0;
  std::vector<double> constraints;
};
[[nodiscard]] RampEvaluation evaluate_ramp_problem(const RampProblem& problem,
                                                   std::span<const NamedDataset> datasets,
                                                   const LinearModel& model, bool randomised);
[[nodiscard]] RampEvaluation evaluate_ramp_problem(const RowRampProblem& problem,
                                                   std::span<const NamedDataset> datasets,
                                                   const LinearModel& model, bool randomised);

// Zafar et al. (2017) baseline used by Goh section 4.1: the hinge SVM on one labelled dataset
// whose loss is the hinge bound of the error rate (as in fit_ramp's first step),
//   minimise (lambda/2)(|w|^2 + w_b^2) + (1/n) sum_i u_i max(0, 1 - y_i s(x_i)) / 2
//   s.t.     <w, d> <= c,   d = mean of the `group_a` rows - mean of the `group_b` rows,
// solved by bisection on the constraint's multiplier (u: example weights, n: their sum). Uses
// options.lambda, bias_feature, inner_gap_rel, max_epochs, seed and n_threads.
struct CovarianceSvmResult {
  LinearModel model;
  double multiplier = 0;
  double constraint = 0;  // <w, d> at the solution
  Termination status = Termination::kConverged;
};
[[nodiscard]] CovarianceSvmResult fit_covariance_svm(const Dataset& data, const Slice& group_a,
                                                     const Slice& group_b, double c,
                                                     const RampOptions& options = {});

// ---- from the expression language ----------------------------------------------------------

// A RateProblem (train.hpp) in per-row form for fit_ramp: every atom is a per-row weighted sum of
// P(positive), so each function linear in rates is a RowCombination over the problem's datasets
// (same order), and each constraint g <= 0 a RowConstraint named by its text with bound 0. The
// objective is as minimised (negated when maximising). Throws InvalidArgument naming the first
// function that is not linear in rates. The CLI (--solver ramp) and the Python RampClassifier
// both go through it.
[[nodiscard]] RowRampProblem ramp_problem(const RateProblem& problem);
// The problem's datasets as fit_ramp's NamedDataset list.
[[nodiscard]] std::vector<NamedDataset> ramp_datasets(const RateProblem& problem);

}  // namespace rateopt
