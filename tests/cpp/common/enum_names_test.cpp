// The enum name tables (src/common/enum_names.hpp): every listed value has one name, the public
// to_string gives it, parse finds it again, and joined_names lists the names in table order.
#include "common/enum_names.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rateopt/error.hpp"
#include "test_util.hpp"

namespace rateopt::detail {
namespace {

template <typename E, std::size_t N>
void expect_round_trip(const EnumNames<E, N>& table) {
  std::set<std::string_view> names;
  std::set<E> values;
  for (const EnumName<E>& e : table.entries) {
    SCOPED_TRACE(std::string(e.name));
    EXPECT_TRUE(names.insert(e.name).second) << "name listed twice";
    EXPECT_TRUE(values.insert(e.value).second) << "value listed twice";
    EXPECT_EQ(to_string(e.value), e.name);
    EXPECT_EQ(name_of(table, e.value), e.name);
    EXPECT_EQ(parse(table, e.name), e.value);
  }
  EXPECT_EQ(parse(table, "no such name"), std::nullopt);
}

TEST(EnumNames, EveryTableRoundTrips) {
  expect_round_trip(kLabelKindNames);
  expect_round_trip(kLinkNames);
  expect_round_trip(kPredictModeNames);
  expect_round_trip(kSearchStatusNames);
  expect_round_trip(kTerminationNames);
  expect_round_trip(kTrainSolverNames);
  expect_round_trip(kStepRuleNames);
  expect_round_trip(kTrainOptionTypeNames);
  expect_round_trip(kRelationNames);
  expect_round_trip(kIntervalMethodNames);
}

TEST(EnumNames, UnlistedValuesAndLists) {
  EXPECT_EQ(to_string(static_cast<Link>(99)), "unknown");
  EXPECT_EQ(to_string(static_cast<TrainSolver>(99)), "?");
  EXPECT_EQ(to_string(static_cast<SearchStatus>(99)), "budget_exceeded");
  EXPECT_EQ(parse(kPredictModeNames, "Deterministic"), std::nullopt);  // case-sensitive
  EXPECT_EQ(joined_names(kStepRuleNames), "sgd, adagrad, adam");
  EXPECT_EQ(joined_names(kTrainSolverNames),
            "auto, cutting-plane, proxy, three-player, ratio, oracle");
  EXPECT_EQ(joined_names(kLinkNames, " | "), "logistic | threshold | ramp");
  static_assert(name_of(kTerminationNames, Termination::kFeasible) == "feasible");
  static_assert(parse(kLabelKindNames, "multilabel") == LabelKind::kMultilabel);
}

// The public parsers accept every listed name and keep their messages.
TEST(EnumNames, PublicParsers) {
  for (const auto& [kind, name] : kLabelKindNames.entries) EXPECT_EQ(parse_label_kind(name), kind);
  for (const auto& [mode, name] : kPredictModeNames.entries)
    EXPECT_EQ(parse_predict_mode(name), mode);
  for (const auto& [solver, name] : kTrainSolverNames.entries)
    EXPECT_EQ(parse_train_solver(name), solver);
  for (const auto& [rule, name] : kStepRuleNames.entries) EXPECT_EQ(parse_step_rule(name), rule);
  EXPECT_TRUE(test::contains(test::error_of<InvalidArgument>([] { (void)parse_label_kind("x"); }),
                             "label kind must be none, binary, multiclass or multilabel, got 'x'"));
  EXPECT_TRUE(test::contains(test::error_of<InvalidArgument>([] { (void)parse_step_rule("x"); }),
                             "unknown step rule 'x' (rules: sgd, adagrad, adam)"));
  EXPECT_TRUE(
      test::contains(test::error_of<InvalidArgument>([] { (void)parse_train_solver("x"); }),
                     "unknown solver 'x' (solvers: auto, cutting-plane, proxy, three-player, "
                     "ratio, oracle)"));
  EXPECT_TRUE(test::contains(
      test::error_of<InvalidArgument>([] { (void)parse_predict_mode("x"); }),
      "unknown predict mode 'x' (accepted: deterministic, stochastic, probability)"));
}

}  // namespace
}  // namespace rateopt::detail
