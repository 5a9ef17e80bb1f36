// The table of rate-training options (rateopt/train_options.hpp): each option of TrainOptions
// that users set is declared once here. Add a field to TrainOptions, then one row to kEntries;
// the CLI flags, problem-file keys, Python keywords, checks, the options JSON of every model and
// docs/options.md follow (tests/cpp/train/train_options_test.cpp and the Python parameter test
// catch a row that is missing).
#include "rateopt/train_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <vector>

#include "common/enum_names.hpp"
#include "rateopt/error.hpp"

namespace rateopt {

// The names of the solvers and step rules are the tables in src/common/enum_names.hpp, so that the
// option table (and what reads problem files) does not need the solvers themselves;
// train_options_test checks the solver names against train_solvers().
std::string_view to_string(TrainSolver solver) noexcept {
  return detail::name_of(detail::kTrainSolverNames, solver);
}

std::string_view to_string(StepRule rule) noexcept {
  return detail::name_of(detail::kStepRuleNames, rule);
}

std::string_view to_string(Learner learner) noexcept {
  return detail::name_of(detail::kLearnerNames, learner);
}

StepRule parse_step_rule(std::string_view name) {
  if (const auto s = detail::parse(detail::kStepRuleNames, name)) return *s;
  throw InvalidArgument(fmt::format("unknown step rule '{}' (rules: {})", name,
                                    detail::joined_names(detail::kStepRuleNames)));
}

namespace {

// The order of the alternatives is TrainOptionType's.
using Field =
    std::variant<int TrainOptions::*, std::uint64_t TrainOptions::*, double TrainOptions::*,
                 bool TrainOptions::*, TrainSolver TrainOptions::*, StepRule TrainOptions::*,
                 Learner TrainOptions::*>;

constexpr unsigned bit(TrainSolver s) {
  return 1u << static_cast<unsigned>(s);
}
constexpr unsigned kGame = bit(TrainSolver::kProxyLagrangian) | bit(TrainSolver::kThreePlayer) |
                           bit(TrainSolver::kRatio) | bit(TrainSolver::kOracle);
constexpr unsigned kSlack =
    bit(TrainSolver::kThreePlayer) | bit(TrainSolver::kRatio) | bit(TrainSolver::kOracle);
constexpr unsigned kLogisticOracle = bit(TrainSolver::kCuttingPlane) | bit(TrainSolver::kOracle);
constexpr unsigned kAll = kGame | bit(TrainSolver::kCuttingPlane);

struct OptionEntry {
  std::string_view key;
  std::string_view flag;
  Field field;
  TrainOptionCheck check;
  unsigned solvers;
  std::string_view help;
  bool in_model = true;  // see TrainOptionInfo::in_model
};

using C = TrainOptionCheck;
using O = TrainOptions;

// One row per option, in the order of TrainOptions.
const std::array kEntries{
    OptionEntry{
        "solver", "--solver", &O::solver, C::kNone, kAll,
        "auto: cutting-plane for problems linear in rates, else three-player or ratio; "
        "cutting-plane: column generation with a logistic-regression oracle and an optimality "
        "certificate; proxy: the proxy-Lagrangian game (linear problems); three-player, ratio: "
        "Narasimhan et al.'s Algorithms 2 and 3; oracle: Algorithm 1 (the model player is a "
        "weighted logistic regression)."},
    OptionEntry{"iterations", "--iterations", &O::iterations, C::kPositive, kAll,
                "Game rounds (cutting-plane: column-generation rounds at most)."},
    OptionEntry{"model_rule", "--model-rule", &O::model_rule, C::kNone, kGame,
                "Step rule of the model player."},
    OptionEntry{"model_step", "--model-step", &O::model_step, C::kPositive, kGame,
                "Learning rate of the model player."},
    OptionEntry{"multiplier_rule", "--multiplier-rule", &O::multiplier_rule, C::kNone, kGame,
                "Step rule of the multiplier player."},
    OptionEntry{"multiplier_step", "--multiplier-step", &O::multiplier_step, C::kNonNegative, kGame,
                "Step of the multiplier player; 0: the solver's default (0.3 for proxy, 0.5 "
                "otherwise)."},
    OptionEntry{"multiplier_bound", "--multiplier-bound", &O::multiplier_bound, C::kPositive, kAll,
                "Multipliers lie in [0, bound] (constraints) and [-bound, bound] (slack links); "
                "cutting-plane: the cost M of a unit of violation in its master LP."},
    OptionEntry{"slack_step", "--slack-step", &O::slack_step, C::kPositive, kSlack,
                "Step of the slack player when it has no closed form (Algorithm 3's projected "
                "gradient)."},
    OptionEntry{"l2", "--l2", &O::l2, C::kNonNegative, kGame,
                "L2 penalty: 0.5 * l2 * |w|^2 is added to the model player's loss."},
    OptionEntry{
        "c", "--C", &O::c, C::kPositive, kLogisticOracle,
        "Inverse regularisation strength (scikit-learn's C) of the weighted logistic-regression "
        "oracle."},
    OptionEntry{"learner", "--learner", &O::learner, C::kNone, kLogisticOracle,
                "The model family: logistic (regression) or gbdt (boosted trees through XGBoost: "
                "the cutting-plane and oracle solvers' oracle, and the model without a problem)."},
    OptionEntry{"gbdt_rounds", "--gbdt-rounds", &O::gbdt_rounds, C::kPositive, kLogisticOracle,
                "--learner gbdt: boosting rounds (trees) of each fit."},
    OptionEntry{"gbdt_warm_rounds", "--gbdt-warm-rounds", &O::gbdt_warm_rounds, C::kNonNegative,
                kLogisticOracle,
                "--learner gbdt under constraints: each fit after the first keeps the first "
                "fit's first --gbdt-rounds minus this many trees and fits this many more to its "
                "own costs; 0 (or at least --gbdt-rounds): every fit from scratch."},
    OptionEntry{"gbdt_max_depth", "--gbdt-max-depth", &O::gbdt_max_depth, C::kPositive,
                kLogisticOracle, "--learner gbdt: depth of each tree (at most 32)."},
    OptionEntry{"gbdt_learning_rate", "--gbdt-learning-rate", &O::gbdt_learning_rate, C::kPositive,
                kLogisticOracle,
                "--learner gbdt: shrinkage of each tree (XGBoost's eta), at most 1."},
    OptionEntry{"gbdt_l2", "--gbdt-l2", &O::gbdt_l2, C::kNonNegative, kLogisticOracle,
                "--learner gbdt: L2 penalty on leaf values (XGBoost's lambda)."},
    OptionEntry{"gbdt_min_child_weight", "--gbdt-min-child-weight", &O::gbdt_min_child_weight,
                C::kNonNegative, kLogisticOracle,
                "--learner gbdt: least instance weight (hessian) in a leaf."},
    OptionEntry{"gbdt_subsample", "--gbdt-subsample", &O::gbdt_subsample, C::kPositive,
                kLogisticOracle,
                "--learner gbdt: share of rows each tree sees, at most 1 (drawn from --seed)."},
    OptionEntry{"gbdt_colsample", "--gbdt-colsample", &O::gbdt_colsample, C::kPositive,
                kLogisticOracle, "--learner gbdt: share of features each tree sees, at most 1."},
    OptionEntry{"fit_intercept", "--no-intercept", &O::fit_intercept, C::kNone, kAll,
                "Fit an intercept (the flag turns it off)."},
    OptionEntry{
        "checkpoint_every", "--checkpoint-every", &O::checkpoint_every, C::kNonNegative, kGame,
        "Keep the iterate as a candidate every this many rounds; 0: iterations / 100 (at least "
        "1)."},
    OptionEntry{
        "tolerance", "--tolerance", &O::tolerance, C::kNonNegative, kAll,
        "Constraint violation accepted as feasible (status, ranking of candidates, early stop); "
        "cutting-plane: also the optimality gap at which it stops."},
    OptionEntry{
        "stop_window", "--stop-window", &O::stop_window, C::kNonNegative, kGame,
        "Early stop: after every this many rounds, stop when the mean iterate of the window is "
        "feasible (to tolerance) and its objective moved by at most stop_tolerance from the "
        "previous window's; 0: run all iterations."},
    OptionEntry{"stop_tolerance", "--stop-tolerance", &O::stop_tolerance, C::kNonNegative, kGame,
                "Early stop: largest change of the window's objective that counts as converged."},
    OptionEntry{"shrink", "--no-shrink", &O::shrink, C::kNone, kGame,
                "LP-shrink the candidates to at most m + 1 models (the flag: a uniform mixture of "
                "them)."},
    OptionEntry{
        "batch_size", "--batch-size", &O::batch_size, C::kNonNegative, kGame,
        "Model player's minibatch: rows drawn per round and dataset without replacement; 0 (or "
        ">= the rows): full batch."},
    OptionEntry{"seed", "--seed", &O::seed, C::kNone, kGame, "Seed of the minibatch draws."},
    OptionEntry{
        "n_threads", "--threads", &O::n_threads, C::kNone, kAll,
        "Threads; <= 0: all cores. Results do not depend on it (so models do not record it).",
        false},
};

const OptionEntry& entry(std::string_view key) {
  for (const OptionEntry& e : kEntries)
    if (e.key == key) return e;
  std::string keys;
  for (const OptionEntry& e : kEntries)
    keys += fmt::format("{}{}", keys.empty() ? "" : ", ", e.key);
  throw NotFound(fmt::format("unknown training option '{}' (options: {})", key, keys));
}

std::string show(const TrainOptionValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return fmt::format("'{}'", x);
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else {
          return fmt::format("{}", x);
        }
      },
      v);
}

std::string_view check_words(TrainOptionCheck c) {
  switch (c) {
    case TrainOptionCheck::kPositive:
      return " > 0";
    case TrainOptionCheck::kNonNegative:
      return " >= 0";
    case TrainOptionCheck::kNone:
      break;
  }
  return "";
}

TrainOptionType type_of(const OptionEntry& e) {
  return static_cast<TrainOptionType>(e.field.index());
}

// The accepted names of a solver or step-rule option: "auto, cutting-plane, ...".
std::string choice_names(const OptionEntry& e) {
  switch (type_of(e)) {
    case TrainOptionType::kSolver:
      return detail::joined_names(detail::kTrainSolverNames);
    case TrainOptionType::kLearner:
      return detail::joined_names(detail::kLearnerNames);
    default:
      return detail::joined_names(detail::kStepRuleNames);
  }
}

// "an integer > 0", "a finite number >= 0", "one of auto, ..."
std::string expected(const OptionEntry& e) {
  switch (type_of(e)) {
    case TrainOptionType::kInt:
      return fmt::format("an integer{}", check_words(e.check));
    case TrainOptionType::kUint:
      return "an integer >= 0";
    case TrainOptionType::kDouble:
      return fmt::format("a finite number{}", check_words(e.check));
    case TrainOptionType::kBool:
      return "true or false";
    case TrainOptionType::kSolver:
    case TrainOptionType::kStepRule:
    case TrainOptionType::kLearner:
      break;
  }
  return "one of " + choice_names(e);
}

[[noreturn]] void bad_value(const OptionEntry& e, const TrainOptionValue& v) {
  throw InvalidArgument(
      fmt::format("{} ({}) is {}, expected {}", e.key, e.flag, show(v), expected(e)));
}

bool in_range(TrainOptionCheck c, double x) {
  if (!std::isfinite(x)) return false;
  switch (c) {
    case TrainOptionCheck::kPositive:
      return x > 0;
    case TrainOptionCheck::kNonNegative:
      return x >= 0;
    case TrainOptionCheck::kNone:
      break;
  }
  return true;
}

template <class T>
bool parse_number(const std::string& s, T& out) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && !s.empty();
}

std::int64_t to_int(const OptionEntry& e, const TrainOptionValue& v) {
  std::int64_t x = 0;
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    x = *i;
  } else if (const auto* u = std::get_if<std::uint64_t>(&v)) {
    if (*u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) bad_value(e, v);
    x = static_cast<std::int64_t>(*u);
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    if (!parse_number(*s, x)) bad_value(e, v);
  } else {
    bad_value(e, v);
  }
  return x;
}

double to_double(const OptionEntry& e, const TrainOptionValue& v) {
  double x = 0;
  if (const auto* d = std::get_if<double>(&v)) {
    x = *d;
  } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
    x = static_cast<double>(*i);
  } else if (const auto* u = std::get_if<std::uint64_t>(&v)) {
    x = static_cast<double>(*u);
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    if (!parse_number(*s, x)) bad_value(e, v);
  } else {
    bad_value(e, v);
  }
  return x;
}

void set(TrainOptions& o, const OptionEntry& e, const TrainOptionValue& v) {
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(o.*member)>;
        if constexpr (std::is_same_v<T, int>) {
          const std::int64_t x = to_int(e, v);
          if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max() ||
              !in_range(e.check, static_cast<double>(x)))
            bad_value(e, v);
          o.*member = static_cast<int>(x);
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          std::uint64_t x = 0;
          if (const auto* u = std::get_if<std::uint64_t>(&v)) {
            x = *u;
          } else if (const auto* s = std::get_if<std::string>(&v)) {
            if (!parse_number(*s, x)) bad_value(e, v);
          } else {
            const std::int64_t i = to_int(e, v);
            if (i < 0) bad_value(e, v);
            x = static_cast<std::uint64_t>(i);
          }
          o.*member = x;
        } else if constexpr (std::is_same_v<T, double>) {
          const double x = to_double(e, v);
          if (!in_range(e.check, x)) bad_value(e, v);
          o.*member = x;
        } else if constexpr (std::is_same_v<T, bool>) {
          if (const auto* b = std::get_if<bool>(&v)) {
            o.*member = *b;
          } else if (const auto* s = std::get_if<std::string>(&v)) {
            if (*s == "true" || *s == "1") {
              o.*member = true;
            } else if (*s == "false" || *s == "0") {
              o.*member = false;
            } else {
              bad_value(e, v);
            }
          } else {
            bad_value(e, v);
          }
        } else {
          const auto* s = std::get_if<std::string>(&v);
          if (s == nullptr) bad_value(e, v);
          std::optional<T> x;
          if constexpr (std::is_same_v<T, TrainSolver>) {
            x = detail::parse(detail::kTrainSolverNames, *s);
          } else if constexpr (std::is_same_v<T, Learner>) {
            x = detail::parse(detail::kLearnerNames, *s);
          } else {
            x = detail::parse(detail::kStepRuleNames, *s);
          }
          if (!x) bad_value(e, v);
          o.*member = *x;
        }
      },
      e.field);
}

TrainOptionValue get(const TrainOptions& o, const OptionEntry& e) {
  return std::visit(
      [&](auto member) -> TrainOptionValue {
        using T = std::remove_cvref_t<decltype(o.*member)>;
        if constexpr (std::is_same_v<T, int>) {
          return std::int64_t{o.*member};
        } else if constexpr (std::is_same_v<T, TrainSolver> || std::is_same_v<T, StepRule> ||
                             std::is_same_v<T, Learner>) {
          return std::string(to_string(o.*member));
        } else {
          return o.*member;
        }
      },
      e.field);
}

std::string format(const TrainOptionValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else {
          return fmt::format("{}", x);  // shortest round-trip form for doubles
        }
      },
      v);
}

nlohmann::json to_json(const TrainOptionValue& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

std::string solver_names(unsigned solvers) {
  if ((solvers & kAll) == kAll) return "all";
  std::string out;
  for (const auto& [s, name] : detail::kTrainSolverNames.entries)
    if (s != TrainSolver::kAuto && (solvers & bit(s)) != 0)
      out += fmt::format("{}{}", out.empty() ? "" : ", ", name);
  return out;
}

}  // namespace

std::string_view to_string(TrainOptionType type) noexcept {
  return detail::name_of(detail::kTrainOptionTypeNames, type);
}

bool TrainOptionInfo::applies_to(TrainSolver solver) const noexcept {
  return solver == TrainSolver::kAuto ? solvers != 0 : (solvers & bit(solver)) != 0;
}

std::string TrainOptionInfo::check_text() const {
  if (type == TrainOptionType::kSolver || type == TrainOptionType::kStepRule ||
      type == TrainOptionType::kLearner)
    return choice_names(entry(key));
  const std::string_view w = check_words(check);
  return std::string(w.empty() ? w : w.substr(1));
}

std::span<const TrainOptionInfo> train_option_table() {
  static const std::vector<TrainOptionInfo> table = [] {
    const TrainOptions defaults{};
    std::vector<TrainOptionInfo> out;
    for (const OptionEntry& e : kEntries) {
      TrainOptionInfo info;
      info.key = e.key;
      info.flag = e.flag;
      info.type = type_of(e);
      info.check = e.check;
      info.solvers = e.solvers;
      info.help = e.help;
      info.in_model = e.in_model;
      info.default_value = get(defaults, e);
      info.default_text = format(info.default_value);
      out.push_back(std::move(info));
    }
    return out;
  }();
  return table;
}

const TrainOptionInfo* find_train_option(std::string_view key) noexcept {
  for (const TrainOptionInfo& i : train_option_table())
    if (i.key == key) return &i;
  return nullptr;
}

void set_train_option(TrainOptions& options, std::string_view key, const TrainOptionValue& value) {
  set(options, entry(key), value);
}

TrainOptionValue get_train_option(const TrainOptions& options, std::string_view key) {
  return get(options, entry(key));
}

std::string format_train_option(const TrainOptions& options, std::string_view key) {
  return format(get_train_option(options, key));
}

void check_train_options(const TrainOptions& options) {
  // Setting each value on a copy applies exactly the checks of set_train_option.
  TrainOptions copy = options;
  for (const OptionEntry& e : kEntries) set(copy, e, get(options, e));
}

std::string train_options_json(const TrainOptions& options, TrainOptionsJson which) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  // A model of the logistic learner leaves out the learner's options (its bytes as before them).
  const bool linear_model =
      which == TrainOptionsJson::kModel && options.learner == Learner::kLogistic;
  for (const OptionEntry& e : kEntries) {
    if (linear_model && (e.key == "learner" || e.key.starts_with("gbdt_"))) continue;
    if (e.in_model || which == TrainOptionsJson::kAll)
      j[std::string(e.key)] = to_json(get(options, e));
  }
  return j.dump();
}

std::string train_options_markdown() {
  std::string md;
  md +=
      "<!-- Generated from the option table (src/train/train_options.cpp) by `rateopt options "
      "--markdown`; do not edit.\n     Regenerate: build/release/rateopt options --markdown > "
      "docs/options.md -->\n";
  md += "# Rate-training options\n\n";
  md +=
      "Every option of rate-constrained training (`TrainOptions`, `include/rateopt/train.hpp`) "
      "is declared once, in the table of `src/train/train_options.cpp` "
      "(`include/rateopt/train_options.hpp`). Its key is the `TrainOptions` field, the keyword of "
      "`rateopt.RateConstrainedClassifier`, the key of a `rateopt train --problem` file (TOML or "
      "JSON) and the key in the `options` object saved in every rate-constrained model; its flag "
      "is `rateopt train`'s. Flags given on the command line win over the problem file. Values "
      "outside the check are errors naming the key, the value and the expected range.\n\n";
  md += "| key | flag | type | default | check | solvers | description |\n";
  md += "|---|---|---|---|---|---|---|\n";
  for (const TrainOptionInfo& i : train_option_table()) {
    const std::string check = i.check_text();
    std::string help;  // a '|' would end the table cell
    for (char ch : i.help) help += ch == '|' ? std::string("\\|") : std::string(1, ch);
    std::string flag = fmt::format("`{}`", i.flag);
    if (i.type == TrainOptionType::kBool)
      flag += fmt::format(" (sets {})", std::get<bool>(i.default_value) ? "false" : "true");
    md += fmt::format("| `{}` | {} | {} | `{}` | {} | {} | {} |\n", i.key, flag, to_string(i.type),
                      i.default_text, check.empty() ? "any" : check, solver_names(i.solvers), help);
  }
  md +=
      "\nNotes\n\n"
      "* `solvers`: the solvers whose result the option changes; `solver = auto` resolves to "
      "one of them.\n"
      "* `rateopt train --solver ramp` runs Goh et al.'s ramp solver (`docs/ramp.md`; Python: "
      "`RampClassifier`) instead: it reads `tolerance`, `seed` and `n_threads` from this table "
      "and has its own `--lambda` and `--mm-steps` (problem-file keys `lambda`, `mm_steps`).\n"
      "* Without a problem (`--minimize`, `--maximize`, `--constraint`, `--problem`), `rateopt "
      "train` fits logistic regression: `--C`, `--threads` and `--no-intercept` then set its "
      "options.\n"
      "* Each model's `options` records every key but `n_threads` (so a model file is the same "
      "for any thread count), plus `learner`, the problem (`objective`, `maximize`, "
      "`constraints`) and the solver that ran (`solver`, never `auto`); the game solvers record "
      "the multiplier step they used.\n";
  return md;
}

}  // namespace rateopt
