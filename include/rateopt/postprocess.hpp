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
// LP. Variables pi_{g,c} >= 0 (one per group and cut), sum_c pi_{g,c} = 1 per group, and z_a
// per atom the functions use, equal to sum pi_{g,c} * (prefix sum of the atom's coefficients over
// the top c rows of g); objective and constraints are the problem's affine forms over the z
// (FunctionInfo::linear). A column holds its group's row and its group's atoms only: sparse for
// any number of groups and constraints. Its optimum is the best randomised per-group threshold
// rule on the problem's data, exactly (the same optimum as the LP over mixtures of all tuples of
// deterministic group thresholds: only each group's marginal matters). Where the rows of a group
// enter the atoms in at most two ways (row types: e.g. its two labels, unweighted, one dataset,
// slices over the group columns), each atom of a cut is linear in the two types' counts above
// it, so only the cuts at vertices of the convex hull of that count path are columns (its ROC
// hull and the mirror image), with the same optimum (PostprocessOptions::hull). Solved with
// COIN-OR CLP (primal simplex, unscaled), so the solution is basic: at most (number of groups +
// number of constraints) non-zero pi in all, i.e. a group uses one threshold, or two (a mixture
// of two thresholds, the usual randomised threshold), and only a group whose point lies inside
// its ROC hull (equalized odds) needs three. When the constraints cannot all hold, a first LP
// finds the smallest v with every g_j <= v, and the objective is minimised under g_j <= v.
//
// Output: a Classifier of kind "group_threshold" (model.hpp): the base score plus one rule per
// group (thresholds midway between consecutive distinct scores; 1 -- or |s| when larger -- below
// the group's smallest score for "all positive" and above its largest for "none"). Its
// probability-mode predictions on the problem's data reproduce the LP's atoms exactly.
//
// Deterministic mode (PostprocessOptions::deterministic): the best rule with one cut per group
// meeting the constraints, exactly. A mixed-integer problem (one binary pi per cut), solved by
// LP-based branch and bound: every cut is a column (a cut inside a group's hull can be the best
// deterministic one); a node restricts each group to a range of its cuts, and its LP, over the
// hull vertices of each range where the hull applies (the same relaxation), bounds every rule in
// it; a node whose LP puts all of each group's weight on one cut is a rule, with the LP's value;
// otherwise the group whose weight is most spread is split after its weighted-median cut. Best
// bound first, plunging depth first while no non-constant rule is known; every node's rounding
// (each group's heaviest cut) and the two constant rules are tried; a node is dropped once its
// bound cannot beat the best rule by more than 1e-9 (relative): the answer is optimal to that,
// and its bound is reported. Among rules of equal value a non-constant one is kept. When no rule
// meets the constraints, a first search finds the smallest largest violation, a second the best
// objective under it. The randomised optimum is solved too: the price of determinism is the
// difference.
//
// Two groups: where every constraint row, over one group's cuts (b), never both rises and falls
// (rates that count b's rows with coefficients of one sign: ppr, tpr, fpr and their gaps; not
// precision), the cuts of b that each cut of the other group allows form an interval, and the
// best of them is a range minimum of b's part of the objective: a sweep over every pair of cuts in
// O(n_a m log n_b + n_b log n_b), exact. A ratio objective (F1, Jaccard) by Dinkelbach's method:
// the sweep of num - lambda den, lambda the last best rule's ratio, until none improves. When no
// pair meets the constraints, or they are not monotone, the branch and bound.
//
// Any number of groups, every constraint row reading one group's cuts (per-group bounds:
// min_over / max_over of a rate, precision included, a rate on one group's slice): each group's
// rows hold by its own cut and the objective is a sum over groups, so each group takes its best
// allowed cut (a ratio objective by Dinkelbach's method, each step the same choice), the
// constant rules left out and weighed after, as by the sweep: O(cuts x rows), exact. Tried first.
//
// Cost: O(N log N) to sort, O(N a) to type the rows (N rows of all datasets, a atoms a row holds),
// one simplex solve over (hull vertices or cuts) + atoms columns and groups + atoms + m rows (m
// linear constraints). Over MPI ranks (distributed.hpp) every rank gathers every row's group,
// type and score (16 bytes a row) and the ranks' type tables in the order one process holding
// all the rows reads them and solves that LP: the same bits for any rank count.
//
// Thread-safety: the function is reentrant; it reads the problem and the model only.
#pragma once

#include <cstddef>
#include <functional>
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
  // Only the cuts at vertices of a group's convex hull become LP columns, where every function
  // reads the group's rows through at most two row types (e.g. its two labels, unweighted, one
  // dataset): the same optimum with far fewer columns. false: every cut (for tests).
  bool hull = true;
  // Up to this many linear constraints enter the LP at once; with more, they are added as they are
  // found violated at the LP's optimum (constraint generation: the same optimum, e.g. for the
  // k (k - 1) pairwise gaps of parity over k groups, where few bind).
  std::size_t eager_constraints = 256;
  // Deterministic mode: the best rule with one threshold per group (no randomisation), found
  // exactly by branch and bound over the LP (every cut a column; see "Deterministic mode" above).
  bool deterministic = false;
  // The exact paths without LP solves instead of the branch and bound where they apply (see
  // "Deterministic mode"): every constraint reading one group (the per-group choice, any number of
  // groups), or two groups whose every constraint is monotone in one group's threshold (gaps of
  // ppr, tpr, fpr and such; the sweep over every pair of thresholds). false: the branch and bound
  // always (for tests).
  bool sweep = true;
  // Its budget of LP solves; when spent, the best rule found (status kFeasible, or
  // kMaxIterations when none met the constraints) with the search's proved bound.
  std::size_t max_nodes = 100000;
  // The search's progress, at most once a second: LP solves so far, the best rule's objective
  // (as minimised; +inf before one meets the constraints) and the proved lower bound.
  std::function<void(std::size_t nodes, double best, double bound)> progress;
  // Polled after every LP solve of the search: true stops it with status kInterrupted and the
  // best rule so far (Python's Ctrl-C check).
  std::function<bool()> should_stop;
};

struct PostprocessGroup {
  std::vector<std::string> key;  // one value per group column
  std::size_t rows = 0;          // rows of the group in all datasets
  std::size_t cuts = 0;          // thresholds considered (distinct scores + 1)
  std::size_t columns = 0;       // of them, LP columns (the hull's vertices; all without it)
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
  // The base's scores of this process's rows of the problem, its datasets stacked in order: the
  // classifier's one component's (KnownScores, evaluate_spec's stacked_scores).
  std::vector<double> training_scores;
  // Deterministic mode only: the randomised optimum on the same data (as lp_objective and
  // violation_budget would be without the mode). The price of determinism is lp_objective -
  // randomized.objective (both as minimised; >= 0 up to 1e-9 when both meet the constraints).
  struct Randomized {
    Termination status = Termination::kConverged;
    double objective = 0;
    double violation_budget = 0;
  } randomized;
  // And the search: LP solves, and a proved lower bound on the best deterministic objective (as
  // minimised; equal to lp_objective to 1e-9 when status is kConverged or kInfeasible).
  struct Search {
    std::size_t nodes = 0;
    double bound = 0;
    bool sweep = false;  // found without LP solves: the per-group choice or the sweep (nodes 0)
  } search;
};

// The columns the problem's slices name (the default groups), in order of first appearance.
[[nodiscard]] std::vector<std::string> slice_columns(const RateProblem& problem);

// Post-processes `base` (one linear component, e.g. a saved logistic regression; its score is
// components[0]) on the problem's data. Throws InvalidArgument when the objective or a constraint
// is not linear in rates, when the base model has other than one component, has group rules, or
// its weight count differs from a dataset's feature count; NotFound when a group column is not a
// column of a dataset or a row's value in it is missing. base_scores: the base's scores of the
// problem's rows, its datasets stacked in order, where the caller holds them (the margins of a
// booster's fit, fit_gbdt_with_margins), used in place of scoring the rows (InvalidArgument when
// not one per row); empty: scored here.
[[nodiscard]] PostprocessResult postprocess(const RateProblem& problem, const Classifier& base,
                                            const PostprocessOptions& options = {},
                                            std::span<const double> base_scores = {});

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

// The base score's learner for postprocess_guaranteed: fits a scoring model (one component, the
// candidate's encoding) on the candidate part's rows, e.g. boosted trees (fit_gbdt) or any other
// learner; called once, before the first threshold fit.
using BaseScoreFit = std::function<Classifier(const Dataset& candidate)>;

// The same with the base score fitted on the candidate part by `fit_base` (its result has
// base_fitted true). Post-processing the best unconstrained model of any family keeps the
// guarantee, since the safety rows are split off before the base is fitted. With base_folds >= 2
// the thresholds are fitted on cross-fitted scores: each candidate row scored by a model fitted
// on the other folds (row i of the candidate part in fold i mod base_folds), so that a learner
// that fits its rows closely (deep trees) does not make its scores look more separable than they
// are on new rows; the model returned, and the safety test, use the fit on the whole candidate
// part (base_folds + 1 fits in all). One process only.
[[nodiscard]] GuaranteedPostprocessResult postprocess_guaranteed(
    const ProblemSpec& spec, const Dataset& data, std::size_t first_row,
    const BaseScoreFit& fit_base, const PostprocessOptions& options, double tolerance,
    const GuaranteeOptions& guarantee, std::size_t base_folds = 0);

}  // namespace rateopt
