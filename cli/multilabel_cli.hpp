// rateopt train --multilabel-model {br,pcc,efp} and rateopt predict on the joint multi-label
// models (rateopt/multilabel.hpp). Kept apart from cmd_train.cpp / cmd_predict.cpp, which only
// register the flags and dispatch here.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "rateopt/dataset.hpp"

namespace rateopt::cli {

struct MultilabelTrainFlags {
  std::string model;           // --multilabel-model: br, pcc or efp ("" = not used)
  std::vector<double> c_grid;  // --c-grid: tune C per base model over these values
  bool tune_c = false;         // --tune-c: tune over the paper's grid 10^-4..10^3
  int cv_folds = 5;            // --cv-folds
  std::uint64_t cv_seed = 0;   // --cv-seed
};

void add_multilabel_train_flags(CLI::App& app, MultilabelTrainFlags& flags);

// Fits the model on multi-label data and saves it (atomically). Returns the exit code: 0 when
// every base model converged, kExitRuntime otherwise (the model is still written).
int train_multilabel_cli(const Dataset& ds, const std::string& data_path,
                         const MultilabelTrainFlags& flags, double c, double tol, int max_iter,
                         int threads, const std::string& output);

struct JointPredictFlags {
  std::size_t samples = 1000;          // --samples: ancestral samples per row (PCC)
  bool exact = false;                  // --exact: PCC's exact joint (m <= 20)
  bool raw_p = false;                  // --raw-p: EFP's P as estimated (not made consistent)
  std::size_t max_expanded = 1000000;  // --max-expanded: node budget of the joint-mode search
};

void add_joint_predict_flags(CLI::App& app, JointPredictFlags& flags);

// True when `format` is a joint multi-label model this file predicts with.
[[nodiscard]] bool is_joint_model_format(const std::string& format);

// One line per row of the data file; see `rateopt predict --help` and docs/models.md.
void predict_joint_model_cli(const std::string& model_text, const std::string& model_path,
                             const std::string& format, const std::string& data_path,
                             const ReaderFlags& reader, const std::string& mode,
                             const JointPredictFlags& flags, std::uint64_t seed, int threads,
                             const std::string& output);

}  // namespace rateopt::cli
