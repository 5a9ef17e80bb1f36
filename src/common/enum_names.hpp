// The names of the public enums, one {value, name} table per enum: the single source for each
// public to_string(...) and for every parser of those names (model JSON, problem files and
// train options, the Python binding). Header-only and constexpr; no state.
//
// DecideMethod (src/decide/metric.cpp) and FunctionKind (src/train/problem.cpp) keep their tables
// beside their to_string, with the same EnumNames.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "rateopt/dataset.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/model.hpp"
#include "rateopt/multilabel.hpp"
#include "rateopt/status.hpp"
#include "rateopt/train.hpp"
#include "rateopt/train_options.hpp"

namespace rateopt::detail {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

// The names of an enum's values, in declaration order (the order in which lists of the names are
// written), and the name to_string gives a value outside the table (one cast from an integer).
template <typename E, std::size_t N>
struct EnumNames {
  std::array<EnumName<E>, N> entries;
  std::string_view unknown;
};

// The name of `value` (table.unknown when the table does not list it).
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::string_view name_of(const EnumNames<E, N>& table, E value) noexcept {
  for (const EnumName<E>& e : table.entries)
    if (e.value == value) return e.name;
  return table.unknown;
}

// The value named `text` (exact, case-sensitive match); nullopt when no value has that name.
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::optional<E> parse(const EnumNames<E, N>& table,
                                               std::string_view text) noexcept {
  for (const EnumName<E>& e : table.entries)
    if (e.name == text) return e.value;
  return std::nullopt;
}

// The names in table order, separated by `separator`: "sgd, adagrad, adam".
template <typename E, std::size_t N>
[[nodiscard]] std::string joined_names(const EnumNames<E, N>& table,
                                       std::string_view separator = ", ") {
  std::string out;
  for (const EnumName<E>& e : table.entries) {
    if (!out.empty()) out += separator;
    out += e.name;
  }
  return out;
}

inline constexpr EnumNames<LabelKind, 4> kLabelKindNames{{{{LabelKind::kNone, "none"},
                                                           {LabelKind::kBinary, "binary"},
                                                           {LabelKind::kMulticlass, "multiclass"},
                                                           {LabelKind::kMultilabel, "multilabel"}}},
                                                         "unknown"};

inline constexpr EnumNames<Link, 3> kLinkNames{
    {{{Link::kLogistic, "logistic"}, {Link::kThreshold, "threshold"}, {Link::kRamp, "ramp"}}},
    "unknown"};

inline constexpr EnumNames<PredictMode, 3> kPredictModeNames{
    {{{PredictMode::kDeterministic, "deterministic"},
      {PredictMode::kStochastic, "stochastic"},
      {PredictMode::kProbability, "probability"}}},
    "unknown"};

// Any value but kExact reads "budget_exceeded" (as to_string(SearchStatus) always has).
inline constexpr EnumNames<SearchStatus, 2> kSearchStatusNames{
    {{{SearchStatus::kExact, "exact"}, {SearchStatus::kBudgetExceeded, "budget_exceeded"}}},
    "budget_exceeded"};

inline constexpr EnumNames<Termination, 7> kTerminationNames{
    {{{Termination::kConverged, "converged"},
      {Termination::kMaxIterations, "max_iterations"},
      {Termination::kInfeasible, "infeasible"},
      {Termination::kNumericalError, "numerical_error"},
      {Termination::kFeasible, "feasible"},
      {Termination::kInterrupted, "interrupted"},
      {Termination::kNoSolutionFound, "no_solution_found"}}},
    "unknown"};

// "auto" first, then the order of `auto`'s preference (src/train/solvers.cpp), which lists of the
// solver names follow.
inline constexpr EnumNames<TrainSolver, 6> kTrainSolverNames{
    {{{TrainSolver::kAuto, "auto"},
      {TrainSolver::kCuttingPlane, "cutting-plane"},
      {TrainSolver::kProxyLagrangian, "proxy"},
      {TrainSolver::kThreePlayer, "three-player"},
      {TrainSolver::kRatio, "ratio"},
      {TrainSolver::kOracle, "oracle"}}},
    "?"};

inline constexpr EnumNames<StepRule, 3> kStepRuleNames{
    {{{StepRule::kSgd, "sgd"}, {StepRule::kAdagrad, "adagrad"}, {StepRule::kAdam, "adam"}}}, "?"};

inline constexpr EnumNames<Learner, 2> kLearnerNames{
    {{{Learner::kLogistic, "logistic"}, {Learner::kGbdt, "gbdt"}}}, "?"};

inline constexpr EnumNames<TrainOptionType, 7> kTrainOptionTypeNames{
    {{{TrainOptionType::kInt, "int"},
      {TrainOptionType::kUint, "uint"},
      {TrainOptionType::kDouble, "float"},
      {TrainOptionType::kBool, "bool"},
      {TrainOptionType::kSolver, "solver"},
      {TrainOptionType::kStepRule, "step rule"},
      {TrainOptionType::kLearner, "learner"}}},
    "?"};

// kNone (an expression, not a constraint) has no symbol.
inline constexpr EnumNames<Relation, 4> kRelationNames{{{{Relation::kNone, ""},
                                                         {Relation::kLessEqual, "<="},
                                                         {Relation::kGreaterEqual, ">="},
                                                         {Relation::kEqual, "=="}}},
                                                       ""};

inline constexpr EnumNames<IntervalMethod, 5> kIntervalMethodNames{
    {{{IntervalMethod::kNone, "none"},
      {IntervalMethod::kClopperPearson, "clopper-pearson"},
      {IntervalMethod::kBootstrap, "bootstrap"},
      {IntervalMethod::kExactUnion, "exact-union"},
      {IntervalMethod::kBootstrapMax, "bootstrap-max"}}},
    "none"};

}  // namespace rateopt::detail
