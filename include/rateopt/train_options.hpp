// File: rateopt/train_options.hpp
// The one table of rate-training options (TrainOptions, train.hpp). Every option users set is
// declared once, in src/train/train_options.cpp, with
//   * its key: the TrainOptions field name, snake_case; also the Python keyword
//     (RateConstrainedClassifier), the key of a `rateopt train --problem` file, and the key in the
//     options JSON saved in each model;
//   * its command-line flag (`rateopt train`), kebab-case; a bool option's flag is the switch that
//     sets the non-default value (fit_intercept: --no-intercept);
//   * its type, its check (range), the solvers it affects and its help text;
//   * its default, read from a default-constructed TrainOptions (so it cannot drift).
// The CLI registers its rate-training flags and reads problem files through this table, the
// Python bindings read their options dict through it, the solvers save train_options_json into
// each model, and `rateopt options --markdown` renders docs/options.md (CI diffs it).
//
// Not in the table: the callbacks and programmatic fields (initial, oracle, progress,
// progress_every) and the ramp solver's RampOptions (ramp.hpp).
//
// Thread-safety: every function is safe to call concurrently (the table is immutable).
//
// Example:
//   rateopt::TrainOptions o;
//   rateopt::set_train_option(o, "model_step", std::string("0.01"));  // from a command line
//   rateopt::set_train_option(o, "iterations", std::int64_t{200});
//   std::string json = rateopt::train_options_json(o);          // {"solver":"auto",...}
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "rateopt/train.hpp"

namespace rateopt {

enum class TrainOptionType { kInt, kUint, kDouble, kBool, kSolver, kStepRule, kLearner };
// "int", "uint", "float", "bool", "solver", "step rule", "learner".
[[nodiscard]] std::string_view to_string(TrainOptionType type) noexcept;

// The check applied to every value (numbers must also be finite).
enum class TrainOptionCheck { kNone, kPositive, kNonNegative };

// A value to set: from a command line (a string, parsed by the option's type), a JSON or TOML
// file, or Python. Integers are accepted for float options; strings for every type.
using TrainOptionValue = std::variant<bool, std::int64_t, std::uint64_t, double, std::string>;

struct TrainOptionInfo {
  std::string_view key;   // snake_case: field, Python keyword, problem-file and options-JSON key
  std::string_view flag;  // the `rateopt train` flag, e.g. "--model-step"
  TrainOptionType type = TrainOptionType::kDouble;
  TrainOptionCheck check = TrainOptionCheck::kNone;
  unsigned solvers = 0;   // bit (1u << static_cast<unsigned>(TrainSolver)) per solver it affects
  std::string_view help;  // one sentence or two, without the default
  // False for options that cannot change the result (n_threads): models leave them out, so a
  // model file is byte-identical for any thread count.
  bool in_model = true;
  std::string default_text;        // TrainOptions{}'s value, formatted as format_train_option does
  TrainOptionValue default_value;  // TrainOptions{}'s value
  // True when the option changes what `solver` does (kAuto: what any solver does).
  [[nodiscard]] bool applies_to(TrainSolver solver) const noexcept;
  // "> 0", ">= 0", "" (kNone); for kSolver / kStepRule the accepted names ("sgd, adagrad, adam").
  [[nodiscard]] std::string check_text() const;
};

// Every option, in the order of TrainOptions.
[[nodiscard]] std::span<const TrainOptionInfo> train_option_table();
// The entry of `key`, or nullptr when no option has that key.
[[nodiscard]] const TrainOptionInfo* find_train_option(std::string_view key) noexcept;

// Sets option `key` of `options` to `value` after converting and checking it. Throws NotFound for
// an unknown key (listing the keys) and InvalidArgument naming the key, the flag, the value and
// what is expected, e.g. "model_step (--model-step) is -1, expected a finite number > 0".
void set_train_option(TrainOptions& options, std::string_view key, const TrainOptionValue& value);
// The current value of option `key` (NotFound for an unknown key).
[[nodiscard]] TrainOptionValue get_train_option(const TrainOptions& options, std::string_view key);
// The value as text that set_train_option reads back to the same value (doubles: shortest
// round-trip form; bools: "true" / "false"; solver and step rules: their names).
[[nodiscard]] std::string format_train_option(const TrainOptions& options, std::string_view key);
// Applies every option's check to `options` (InvalidArgument as set_train_option).
void check_train_options(const TrainOptions& options);
// A JSON object with every key of the table and its value (numbers as numbers, bools as bools,
// solver and step rules as names); kModel: only the keys with in_model (what the solvers save in
// each model, adding their extras: learner, the problem, the solver that ran).
enum class TrainOptionsJson { kAll, kModel };
[[nodiscard]] std::string train_options_json(const TrainOptions& options,
                                             TrainOptionsJson which = TrainOptionsJson::kAll);
// The markdown reference of the table (docs/options.md).
[[nodiscard]] std::string train_options_markdown();

}  // namespace rateopt
