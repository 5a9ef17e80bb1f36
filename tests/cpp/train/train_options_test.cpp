// The rate-training option table (train_options.hpp): defaults from TrainOptions{}, round trips
// through text and JSON, checks naming the key, and the options JSON saved in models.
#include "rateopt/train_options.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "rateopt/error.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

using Json = nlohmann::json;

// A value different from the default, of the option's type.
TrainOptionValue other_value(const TrainOptionInfo& i) {
  const TrainOptionValue& d = i.default_value;
  switch (i.type) {
    case TrainOptionType::kInt:
      return std::get<std::int64_t>(d) + 7;
    case TrainOptionType::kUint:
      return std::uint64_t{18446744073709551557ull};  // above INT64_MAX
    case TrainOptionType::kDouble:
      return std::get<double>(d) * 2 + 0.125;
    case TrainOptionType::kBool:
      return !std::get<bool>(d);
    case TrainOptionType::kSolver:
      return std::string(std::get<std::string>(d) == "ratio" ? "proxy" : "ratio");
    case TrainOptionType::kStepRule:
      return std::string(std::get<std::string>(d) == "adagrad" ? "sgd" : "adagrad");
    case TrainOptionType::kLearner:
      return std::string(std::get<std::string>(d) == "gbdt" ? "logistic" : "gbdt");
  }
  return d;
}

TEST(TrainOptionsTest, CoversTheUserFieldsWithUniqueKeysAndFlags) {
  std::set<std::string> keys, flags;
  for (const TrainOptionInfo& i : train_option_table()) {
    EXPECT_TRUE(keys.insert(std::string(i.key)).second) << i.key;
    EXPECT_TRUE(flags.insert(std::string(i.flag)).second) << i.flag;
    EXPECT_TRUE(std::all_of(i.key.begin(), i.key.end(), [](char c) {
      return std::islower(c) || std::isdigit(c) || c == '_';
    })) << i.key;
    EXPECT_EQ(i.flag.substr(0, 2), "--") << i.key;
    EXPECT_FALSE(i.help.empty()) << i.key;
    EXPECT_NE(i.solvers, 0u) << i.key;
    EXPECT_EQ(find_train_option(i.key), &i);
  }
  // Every TrainOptions field a user sets (a new one needs a row in src/train/train_options.cpp).
  for (const char* k :
       {"solver", "iterations", "model_rule", "model_step", "multiplier_rule", "multiplier_step",
        "multiplier_bound", "slack_step", "l2", "c", "fit_intercept", "checkpoint_every",
        "tolerance", "stop_window", "stop_tolerance", "shrink", "batch_size", "seed", "n_threads"})
    EXPECT_TRUE(keys.contains(k)) << k;
  EXPECT_EQ(find_train_option("oracle_c"), nullptr);
  EXPECT_EQ(find_train_option("l2")->flag, "--l2");
  EXPECT_EQ(find_train_option("fit_intercept")->flag, "--no-intercept");
}

TEST(TrainOptionsTest, DefaultsAreThoseOfTrainOptions) {
  const TrainOptions d{};
  const Json dumped = Json::parse(train_options_json(d));
  EXPECT_EQ(dumped.size(), train_option_table().size());
  for (const TrainOptionInfo& i : train_option_table()) {
    EXPECT_EQ(get_train_option(d, i.key), i.default_value) << i.key;
    EXPECT_EQ(format_train_option(d, i.key), i.default_text) << i.key;
  }
  // Spot checks against the declaration in train.hpp.
  EXPECT_EQ(dumped.at("iterations"), d.iterations);
  EXPECT_EQ(dumped.at("model_step"), d.model_step);
  EXPECT_EQ(dumped.at("multiplier_bound"), d.multiplier_bound);
  EXPECT_EQ(dumped.at("l2"), d.l2);
  EXPECT_EQ(dumped.at("c"), d.c);
  EXPECT_EQ(dumped.at("fit_intercept"), d.fit_intercept);
  EXPECT_EQ(dumped.at("seed"), d.seed);
  EXPECT_EQ(dumped.at("solver"), "auto");
  EXPECT_EQ(dumped.at("model_rule"), "adam");
  EXPECT_NO_THROW(check_train_options(d));
}

TEST(TrainOptionsTest, EveryOptionRoundTripsThroughTextAndJson) {
  for (const TrainOptionInfo& i : train_option_table()) {
    SCOPED_TRACE(std::string(i.key));
    TrainOptions typed;
    set_train_option(typed, i.key, other_value(i));
    EXPECT_EQ(get_train_option(typed, i.key), other_value(i));
    EXPECT_NE(get_train_option(typed, i.key), i.default_value);
    // Text (a command line) -> same value.
    TrainOptions from_text;
    set_train_option(from_text, i.key, format_train_option(typed, i.key));
    EXPECT_EQ(get_train_option(from_text, i.key), other_value(i));
    // JSON (a model's options, a problem file) -> same value.
    const Json j = Json::parse(train_options_json(from_text));
    TrainOptions from_json;
    const Json& v = j.at(std::string(i.key));
    TrainOptionValue value;
    if (v.is_boolean()) {
      value = v.get<bool>();
    } else if (v.is_number_unsigned()) {
      value = v.get<std::uint64_t>();
    } else if (v.is_number_integer()) {
      value = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
      value = v.get<double>();
    } else {
      value = v.get<std::string>();
    }
    set_train_option(from_json, i.key, value);
    EXPECT_EQ(train_options_json(from_json), train_options_json(typed));
  }
  // Integers are accepted for float options.
  TrainOptions o;
  set_train_option(o, "l2", std::int64_t{2});
  EXPECT_EQ(o.l2, 2.0);
  set_train_option(o, "fit_intercept", std::string("false"));
  EXPECT_FALSE(o.fit_intercept);
  set_train_option(o, "solver", std::string("cutting-plane"));
  EXPECT_EQ(o.solver, TrainSolver::kCuttingPlane);
  set_train_option(o, "model_rule", std::string("sgd"));
  EXPECT_EQ(o.model_rule, StepRule::kSgd);
}

// The message of the InvalidArgument `f` throws (a test failure when none).
constexpr auto message_of = &test::error_of<InvalidArgument>;

TEST(TrainOptionsTest, RejectsOutOfRangeValuesNamingKeyValueAndRange) {
  for (const TrainOptionInfo& i : train_option_table()) {
    if (i.check == TrainOptionCheck::kNone) continue;
    SCOPED_TRACE(std::string(i.key));
    const std::string bad = i.check == TrainOptionCheck::kPositive ? "0" : "-1";
    TrainOptions o;
    const std::string msg = message_of([&] { set_train_option(o, i.key, bad); });
    EXPECT_NE(msg.find(std::string(i.key)), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string(i.flag)), std::string::npos) << msg;
    EXPECT_NE(msg.find(bad), std::string::npos) << msg;
    EXPECT_NE(msg.find(i.check == TrainOptionCheck::kPositive ? "> 0" : ">= 0"), std::string::npos)
        << msg;
    EXPECT_EQ(format_train_option(o, i.key), i.default_text);  // unchanged
    // The same check on a whole TrainOptions (what train_rate_constrained needs).
    TrainOptions direct;
    set_train_option(direct, i.key, other_value(i));
    EXPECT_NO_THROW(check_train_options(direct));
  }
  TrainOptions o;
  o.model_step = -1;
  EXPECT_NE(message_of([&] { check_train_options(o); }).find("model_step (--model-step) is -1"),
            std::string::npos);
  // Types and names.
  EXPECT_NE(message_of([&] {
              set_train_option(o, "iterations", std::string("1.5"));
            }).find("expected an integer > 0"),
            std::string::npos);
  EXPECT_NE(message_of([&] { set_train_option(o, "iterations", 2.0); }).find("iterations"),
            std::string::npos);
  EXPECT_NE(message_of([&] { set_train_option(o, "iterations", true); }).find("iterations"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              set_train_option(o, "iterations", std::int64_t{1} << 40);
            }).find("iterations"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              set_train_option(o, "tolerance", std::string("nan"));
            }).find("expected a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(message_of([&] { set_train_option(o, "l2", std::string("inf")); }).find("l2"),
            std::string::npos);
  EXPECT_NE(message_of([&] { set_train_option(o, "seed", std::int64_t{-1}); }).find("seed"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              set_train_option(o, "shrink", std::string("maybe"));
            }).find("true or false"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              set_train_option(o, "solver", std::string("fast"));
            }).find("one of auto, cutting-plane, proxy, three-player, ratio, oracle"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              set_train_option(o, "model_rule", std::int64_t{1});
            }).find("model_rule (--model-rule) is 1"),
            std::string::npos);
  try {
    set_train_option(o, "oracle_c", 1.0);
    ADD_FAILURE() << "an unknown key must throw";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("unknown training option 'oracle_c'"), std::string::npos);
  }
}

TEST(TrainOptionsTest, ApplicabilityAndMarkdown) {
  EXPECT_TRUE(find_train_option("l2")->applies_to(TrainSolver::kProxyLagrangian));
  EXPECT_FALSE(find_train_option("l2")->applies_to(TrainSolver::kCuttingPlane));
  EXPECT_TRUE(find_train_option("c")->applies_to(TrainSolver::kCuttingPlane));
  EXPECT_TRUE(find_train_option("tolerance")->applies_to(TrainSolver::kAuto));
  const std::string md = train_options_markdown();
  EXPECT_EQ(md.rfind("<!-- Generated", 0), 0u);
  for (const TrainOptionInfo& i : train_option_table()) {
    std::string quoted(1, '`');
    quoted.append(i.key).push_back('`');
    EXPECT_NE(md.find(quoted), std::string::npos) << i.key;
    EXPECT_NE(md.find(std::string(i.flag)), std::string::npos) << i.flag;
  }
}

TEST(TrainOptionsTest, ModelsSaveEveryOptionPlusTheProblem) {
  const Dataset ds = test::synthetic(300, 3);
  const RateProblem problem =
      RateProblem::build(test::spec("error", {"ppr[g=b] - ppr[g=a] <= 0.1"}), {{"train", &ds}});
  for (const char* solver : {"proxy", "cutting-plane"}) {
    SCOPED_TRACE(solver);
    TrainOptions o;
    set_train_option(o, "solver", std::string(solver));
    set_train_option(o, "iterations", std::int64_t{30});
    set_train_option(o, "l2", 0.25);
    const TrainResult r = train_rate_constrained(problem, o);
    const Json saved = Json::parse(r.classifier.options_json);
    // A linear model leaves out the boosted trees' options ("learner" is the model's kind).
    for (const TrainOptionInfo& i : train_option_table()) {
      if (i.key == "learner") continue;
      EXPECT_EQ(saved.contains(std::string(i.key)), i.in_model && !i.key.starts_with("gbdt_"))
          << i.key;
    }
    EXPECT_EQ(saved.at("l2"), 0.25);
    EXPECT_EQ(saved.at("iterations"), 30);
    EXPECT_EQ(saved.at("solver"), solver);
    EXPECT_EQ(saved.at("learner"), "rate_constrained");
    EXPECT_EQ(saved.at("objective"), "error");
  }
}

// to_string(TrainSolver) lives beside the option table (train_options.cpp), the solver table in
// solvers.cpp: the names must agree, and parse_train_solver must read them back.
TEST(TrainOptionsTest, SolverNamesAgreeWithTheSolverTable) {
  EXPECT_EQ(to_string(TrainSolver::kAuto), "auto");
  EXPECT_EQ(parse_train_solver("auto"), TrainSolver::kAuto);
  for (const TrainSolverInfo& info : train_solvers()) {
    EXPECT_EQ(to_string(info.solver), info.name);
    EXPECT_EQ(parse_train_solver(info.name), info.solver);
  }
  for (StepRule r : {StepRule::kSgd, StepRule::kAdagrad, StepRule::kAdam})
    EXPECT_EQ(parse_step_rule(to_string(r)), r);
}

}  // namespace
}  // namespace rateopt
