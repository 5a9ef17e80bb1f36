// File: rateopt/postprocess.hpp
// Post-processing a fixed score into exact randomised group thresholds for any constraint set
// linear in rates (Hardt, Price & Srebro 2016, "Equality of opportunity in supervised learning":
// the LP over group-wise derived predictors; fairlearn's ThresholdOptimizer is the peer, for five
// fixed constraints).
//
// Class. Rows are split into groups by the values of some slice columns (by default the columns
// the problem's slices name, e.g. `sex` for `ppr[sex=Female] - ppr[sex=Male] <= 0.01`); within a
// group, rows are ordered by the base model's score s(x) = w . x + b. A deterministic group rule
// predicts the group's rows with s(x) > t_g positive (one of the group's n_g + 1 cuts between
// distinct scores); a randomised one is a distribution over the group's thresholds. Every atom
// (train.hpp) is linear in the per-row predictions, and under a threshold the rows of a group
// enter through a prefix of the sorted order, so an atom's value is the sum over groups of
// sum_c pi_{g,c} * (prefix sum of the atom's row coefficients over the top c rows of g).
//
// LP. Variables pi_{g,c} >= 0 (one per group and cut), sum_c pi_{g,c} = 1 per group; objective
// and constraints are the problem's affine forms over atoms (FunctionInfo::linear) composed with
// the prefix sums. Its optimum is the best randomised per-group threshold rule on the problem's
// data, exactly (the same optimum as the LP over mixtures of all tuples of deterministic group
// thresholds: only each group's marginal matters). Solved with COIN-OR CLP (primal simplex,
// unscaled), so the solution is basic: at most (number of groups + number of constraints)
// non-zero pi in all, i.e. a group uses one threshold, or two (a mixture of two thresholds, the
// usual randomised threshold), and only a group whose point lies inside its ROC hull (equalized
// odds) needs three. When the constraints cannot all hold, a first LP finds the smallest v with
// every g_j <= v, and the objective is minimised under g_j <= v.
//
// Output: a Classifier of kind "group_threshold" (model.hpp): the base score plus one rule per
// group (thresholds midway between consecutive distinct scores; 1 -- or |s| when larger -- below
// the group's smallest score for "all positive" and above its largest for "none"). Its
// probability-mode predictions on the problem's data reproduce the LP's atoms exactly.
//
// Cost: O(N log N) to sort, O(N (a + m)) to build the LP (N rows of all datasets, a atoms per row,
// m constraints), one simplex solve over about N columns and G + m rows. Over MPI ranks
// (distributed.hpp) every rank gathers every row's group, score and coefficients (8 (m + 3)
// bytes a row) in the order one process holding all the rows reads them and solves that LP: the
// same bits for any rank count.
//
// Thread-safety: the function is reentrant; it reads the problem and the model only.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rateopt/logistic.hpp"
#include "rateopt/model.hpp"
#include "rateopt/status.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

struct PostprocessOptions {
  // Slice columns whose value combinations are the groups (each must be a column of every
  // dataset of the problem). Empty: the columns the problem's slices name, in order of first
  // appearance (no slice: a single group, one threshold rule for all rows).
  std::vector<std::string> group_columns;
  int n_threads = 0;  // scoring; <= 0: all cores
};

struct PostprocessGroup {
  std::vector<std::string> key;  // one value per group column
  std::size_t rows = 0;          // rows of the group in all datasets
  std::size_t cuts = 0;          // thresholds considered (distinct scores + 1)
};

struct PostprocessResult {
  Classifier classifier;  // kind "group_threshold"; group rules in order of first appearance
  // kConverged: the LP with every constraint is optimal (the stochastic model is the exact
  // optimum over randomised group thresholds); kInfeasible: no such rule meets the constraints,
  // the model minimises the objective at the smallest largest violation.
  Termination status = Termination::kConverged;
  ProblemValues stochastic;     // training values of the randomised rule (probability mode)
  ProblemValues deterministic;  // training values of the deterministic mode
  double lp_objective = 0;      // the LP's optimum (objective as minimised, constant included)
  double violation_budget = 0;  // 0, or the smallest largest violation when infeasible
  std::vector<std::string> group_columns;
  std::vector<PostprocessGroup> groups;  // one per rule
  std::size_t lp_columns = 0;            // threshold variables
  double seconds = 0;
};

// The columns the problem's slices name (the default groups), in order of first appearance.
[[nodiscard]] std::vector<std::string> slice_columns(const RateProblem& problem);

// Post-processes `base` (one linear component, e.g. a saved logistic regression; its score is
// components[0]) on the problem's data. Throws InvalidArgument when the objective or a constraint
// is not linear in rates, when the base model has other than one component, has group rules, or
// its weight count differs from a dataset's feature count; NotFound when a group column is not a
// column of a dataset or a row's value in it is missing.
[[nodiscard]] PostprocessResult postprocess(const RateProblem& problem, const Classifier& base,
                                            const PostprocessOptions& options = {});

// ---- the guaranteed mode for post-processing (train.hpp, train_guaranteed) --------------------

struct GuaranteedPostprocessResult {
  // guarantee.result.classifier is the group-threshold model kept (fitted on the candidate part);
  // guarantee.result.status is kNoSolutionFound when the safety test failed.
  GuaranteedTrainResult guarantee;
  PostprocessResult postprocess;  // the kept LP's answer, on the candidate part
  Classifier base;                // the score post-processed
  bool base_fitted = false;       // true: fitted here on the candidate part
};

// Post-processing with a guarantee: the rows are split as in train_guaranteed; on the candidate
// part the base score is fitted (logistic regression with `base_options`) unless `base` is given,
// and postprocess() finds the group thresholds for the tightened constraints; the safety part
// certifies the output guarantee.stochastic_output names (deterministic: each group's majority
// threshold; stochastic: the randomised thresholds, bounded through guarantee_data's hard
// components). A given `base` must have the data's encoding and must not have been fitted on
// `data`'s rows: the guarantee needs safety rows that the whole model never saw. `tolerance`:
// the largest violation a deterministic output may keep on the candidate part. Throws as
// postprocess and train_guaranteed do.
[[nodiscard]] GuaranteedPostprocessResult postprocess_guaranteed(
    const ProblemSpec& spec, const Dataset& data, std::size_t first_row, const Classifier* base,
    const LogisticRegressionOptions& base_options, const PostprocessOptions& options,
    double tolerance, const GuaranteeOptions& guarantee);

}  // namespace rateopt
