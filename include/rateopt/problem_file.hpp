// File: rateopt/problem_file.hpp
// A rate-constrained training problem written as a file (`rateopt train --problem FILE`): a TOML
// table or a JSON object with the keys
//   minimize | maximize | objective (= minimize)   the objective expression (expr.hpp)
//   constraints                                    a list of 'EXPR <= EXPR' strings
//   lambda, mm_steps                               --solver ramp (ramp.hpp)
//   every training option's key (train_options.hpp: solver, iterations, model_step, l2, ...)
// Unknown keys, values of the wrong type and option values that fail the option's check throw
// ParseError naming the file (and, for TOML syntax errors, the line and column).
//
// Example (TOML):
//   maximize = "f1"
//   constraints = ["recall >= 0.7", "ppr[sex=Female] >= 0.8 * ppr[sex=Male]"]
//   iterations = 300
//
// Thread-safety: the functions are pure. Complexity: linear in the text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rateopt/train_options.hpp"

namespace rateopt {

enum class ProblemFileFormat { kToml, kJson };

struct ProblemFile {
  std::string minimize;  // "minimize", or "objective" when given (it wins); "" when absent
  std::string maximize;  // "" when absent
  std::vector<std::string> constraints;
  std::optional<double> lambda;  // > 0, finite
  std::optional<int> mm_steps;   // >= 1
  // The "solver" key as written: a TrainSolver name or a solver of the CLI's own ("ramp",
  // "postprocess"), so it is not checked here.
  std::optional<std::string> solver;
  // Every other training option given, in table order, each value already checked by
  // set_train_option (apply with apply_problem_options).
  std::vector<std::pair<std::string, TrainOptionValue>> options;
};

// Parses the text of a problem file; `name` appears in error messages.
[[nodiscard]] ProblemFile parse_problem_file(std::string_view text, ProblemFileFormat format,
                                             const std::string& name = "<string>");
// Reads and parses a problem file: JSON when the name ends in ".json", TOML otherwise. Throws
// IoError when the file cannot be read.
[[nodiscard]] ProblemFile read_problem_file(const std::string& path);

// Sets every option of `file.options` in `options` whose key `skip` does not hold (e.g. the keys
// given on the command line, which win over the file's).
template <typename KeySet>
void apply_problem_options(const ProblemFile& file, TrainOptions& options, const KeySet& skip) {
  for (const auto& [key, value] : file.options)
    if (!skip.contains(key)) set_train_option(options, key, value);
}

}  // namespace rateopt
