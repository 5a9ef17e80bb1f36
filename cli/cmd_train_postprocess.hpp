// rateopt train --solver postprocess: exact randomised group thresholds on a saved scoring model
// (rateopt/postprocess.hpp). Kept apart from cmd_train.cpp, which only registers the flags and
// dispatches here.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "rateopt/dataset.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/postprocess.hpp"
#include "rateopt/train.hpp"

namespace rateopt::cli {

struct PostprocessFlags {
  std::string base_model;           // --base-model FILE
  std::vector<std::string> groups;  // --postprocess-groups COL[,COL]
  std::string columns = "hull";     // --postprocess-columns hull|all
  std::string rule = "randomized";  // --postprocess-rule randomized|deterministic
  std::size_t max_nodes = PostprocessOptions{}.max_nodes;  // --postprocess-max-nodes
  std::optional<IntervalOptions> ci;  // train --ci: intervals in the report sections
  // train --confidence: the guaranteed mode (postprocess_guaranteed), certifying the output
  // `guarantee_for` names; without --base-model the score is fitted on the candidate part
  // (fit_base when set, else a logistic regression with base_options).
  std::optional<GuaranteeOptions> guarantee;
  std::string guarantee_for = "deterministic";
  double tolerance = 1e-3;
  LogisticRegressionOptions base_options;
  // --learner gbdt without --base-model or --scores: the base score is boosted trees fitted here
  // (on the candidate part with --confidence, else on the --data rows); `base_learner` names it.
  // It gives the model and its scores of the rows (a booster's margins from its fit), which
  // spare post-processing and its report scoring them (postprocess' base_scores).
  std::function<std::pair<Classifier, std::vector<double>>(const Dataset& rows)> fit_base;
  std::string base_learner;
  // --base-folds: with fit_base and --confidence, the thresholds' cross-fitted scores' folds.
  std::size_t base_folds = 5;
};

// Registers --base-model and --postprocess-groups in `group` and mentions postprocess in the
// help of --solver (when registered before).
void add_postprocess_flags(CLI::App& app, PostprocessFlags& flags, const std::string& group);

// Post-processes the base model on the named datasets (the training data first; `dataset_args`
// are their --dataset NAME=FILE flags, so that they can be read again with the base model's
// encoding when it differs from theirs), prints and saves like the other solvers. Returns the
// exit code: 0 when the LP met the constraints, kExitRuntime when they cannot hold, and in the
// guaranteed mode (flags.guarantee; one dataset) kExitNoSolution when the safety test fails.
// Over MPI ranks (`shard`: this rank's rows of --data; no --dataset) every rank solves the same
// LP over every rank's rows and rank 0 prints and writes.
int train_postprocess_cli(const ProblemSpec& spec,
                          const std::vector<std::pair<std::string, const Dataset*>>& named,
                          const std::vector<std::string>& dataset_args, const DataShard& shard,
                          const std::string& data_path, const std::string& validation_path,
                          const ReaderFlags& reader, const PostprocessFlags& flags, bool quiet,
                          bool output_infeasible, const std::string& report_path, int threads,
                          const std::string& output);

}  // namespace rateopt::cli
