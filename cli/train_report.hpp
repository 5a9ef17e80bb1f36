// The train and validation sections of `rateopt train`'s report and their printout, shared by
// every solver's command (cmd_train.cpp, cmd_train_postprocess.cpp). The figures come from the
// library (evaluate_spec, train.hpp); this file only lays them out.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "rateopt/dataset.hpp"
#include "rateopt/model.hpp"
#include "rateopt/train.hpp"

namespace rateopt::cli {

// Named data as the train command holds it: ("train", training data), then each --dataset.
using NamedDatasets = std::vector<std::pair<std::string, const Dataset*>>;

// {"stochastic": S, "deterministic": D}, each {"objective": value, "constraints": [{"constraint",
// "lhs", "rhs", "violation" (clamped at 0)}]}: the spec evaluated for `classifier` on `data`
// with probability predictions and with deterministic ones. With `ci` (train --ci), each section
// also has "objective_ci" [low, high] and "ci_method", and each constraint "ci_low", "ci_high"
// (of its violation, not clamped) and "ci_method"; `in_sample` marks sections of the rows the
// model was fitted on ("in_sample": true: their intervals are optimistic). stacked_scores: the
// solver's scores of exactly these rows (TrainResult::training_scores), or none (evaluate_spec).
[[nodiscard]] nlohmann::json spec_sections(
    const ProblemSpec& spec, const Classifier& classifier, const NamedDatasets& data, int threads,
    const IntervalOptions* ci = nullptr, bool in_sample = false,
    std::span<const std::vector<double>> stacked_scores = {});

// Prints "minimize OBJECTIVE" and the report's train (and validation) sections, one line per
// objective and per constraint.
void print_spec_sections(const ProblemSpec& spec, const nlohmann::json& report);

// The report's "guarantee" section of the guaranteed mode (--confidence): the split, and per
// constraint as given its tightened form, margin, safety-part value and upper bound.
[[nodiscard]] nlohmann::json guarantee_section(const GuaranteedTrainResult& g,
                                               const std::vector<std::string>& constraints,
                                               const GuaranteeOptions& options,
                                               const std::string& output);

// Prints the guarantee section: one line per constraint, then passed or no_solution_found.
void print_guarantee(const nlohmann::json& g);

// Adds the train (and validation: a file or a pattern, each rank reading its share) sections and
// the total time to `report`, embeds it (without timings) in the classifier, saves the model
// (not when infeasible, unless `output_infeasible`) and, when asked, the report file; over
// several ranks rank 0 writes for the group. Shared by every solver. Returns whether the model
// was written (would be, on other ranks). stacked_scores: as spec_sections takes them, for
// `named` (the train sections).
bool finish_report(nlohmann::json& report, const ProblemSpec& spec, Classifier& classifier,
                   const NamedDatasets& named, const std::string& validation_path,
                   const ReaderFlags& reader, int threads,
                   std::chrono::steady_clock::time_point start, const std::string& output,
                   const std::string& report_path, bool infeasible, bool output_infeasible,
                   const IntervalOptions* ci,
                   std::span<const std::vector<double>> stacked_scores = {});

}  // namespace rateopt::cli
