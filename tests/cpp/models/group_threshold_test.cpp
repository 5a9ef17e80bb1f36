// Classifier kind "group_threshold" (model.hpp): per-group randomised thresholds of one score,
// keyed by the values of group columns. Hand-computed predictions, JSON round trip (version 2),
// validation and the errors of predicting without the group columns.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/model.hpp"

namespace rateopt {
namespace {

using Json = nlohmann::json;

Column column(const std::string& name, const std::vector<std::string>& values) {
  Column c;
  c.name = name;
  for (const auto& v : values) c.push_back(v);
  return c;
}

// score = x; group a: 1{s > 0} w.p. 0.3, 1{s > 1} w.p. 0.7; group b: 1{s > -1} w.p. 1.
Classifier two_rules() {
  Classifier c = Classifier::single({{1.0}, 0.0}, Link::kThreshold, Encoding{});
  c.kind = "group_threshold";
  c.group_columns = {"g"};
  c.group_rules = {{{"a"}, {0.0, 1.0}, {0.3, 0.7}}, {{"b"}, {-1.0}, {1.0}}};
  c.validate();
  return c;
}

Dataset data(const std::vector<double>& x, const std::vector<std::string>& g) {
  Dataset ds(FeatureMatrix::dense(x, x.size(), 1), Labels{});
  ds.add_column(column("g", g));
  return ds;
}

TEST(GroupThreshold, PredictsByHand) {
  const Classifier c = two_rules();
  const Dataset ds = data({-2, -0.5, 0.5, 1.5, -2, -0.5, 0.5}, {"a", "a", "a", "a", "b", "b", "b"});
  std::vector<double> out(7);
  c.predict(ds, PredictMode::kProbability, out);
  EXPECT_EQ(out, (std::vector<double>{0, 0, 0.3, 1, 0, 1, 1}));
  // Deterministic: the weighted-median threshold (a: 1, the one of weight 0.7; b: -1).
  c.predict(ds, PredictMode::kDeterministic, out);
  EXPECT_EQ(out, (std::vector<double>{0, 0, 0, 1, 0, 1, 1}));
  c.decision_function(ds, out);
  EXPECT_EQ(out, (std::vector<double>{-3, -1.5, -0.5, 0.5, -1, 0.5, 1.5}));
  // Stochastic: reproducible, 0/1, and certain rows never flip.
  std::vector<double> s1(7), s2(7);
  c.predict(ds, PredictMode::kStochastic, s1, 5, 1);
  c.predict(ds, PredictMode::kStochastic, s2, 5, 2);
  EXPECT_EQ(s1, s2);
  EXPECT_EQ(s1[0], 0);
  EXPECT_EQ(s1[3], 1);
  // Equal weights: the higher threshold (P = 1/2 is not > 1/2).
  Classifier tie = c;
  tie.group_rules[0].weights = {0.5, 0.5};
  tie.predict(ds, PredictMode::kDeterministic, out);
  EXPECT_EQ(out[2], 0);
  // Numeric group columns match numerically ("1" and "1.0").
  Classifier numeric = c;
  numeric.group_rules = {{{"1"}, {0.0}, {1.0}}};
  const Dataset nd = data({0.5, -0.5}, {"1.0", "1.0"});
  std::vector<double> two(2);
  numeric.predict(nd, PredictMode::kProbability, two);
  EXPECT_EQ(two, (std::vector<double>{1, 0}));
  // No group columns: one rule (empty key) for every row, from the features alone.
  Classifier all = c;
  all.group_columns.clear();
  all.group_rules = {{{}, {0.0, 1.0}, {0.3, 0.7}}};
  all.validate();
  all.predict(nd.features(), PredictMode::kProbability, two);
  EXPECT_EQ(two, (std::vector<double>{0.3, 0}));
  EXPECT_EQ(Classifier::from_json(all.to_json()).to_json(), all.to_json());
}

TEST(GroupThreshold, JsonRoundTripIsVersion2) {
  Classifier c = two_rules();
  c.report_json = R"({"status":"converged"})";
  const std::string text = c.to_json();
  const Json j = Json::parse(text);
  EXPECT_EQ(j.at("version"), 2);
  EXPECT_EQ(j.at("group_columns"), Json({"g"}));
  EXPECT_EQ(j.at("groups")[0].at("thresholds"), Json({0.0, 1.0}));
  EXPECT_EQ(j.at("groups")[0].at("weights"), Json({0.3, 0.7}));
  const Classifier r = Classifier::from_json(text);
  EXPECT_EQ(r.group_columns, c.group_columns);
  ASSERT_EQ(r.group_rules.size(), 2U);
  EXPECT_EQ(r.group_rules[1].key, std::vector<std::string>{"b"});
  EXPECT_EQ(r.to_json(), text);
  // Models without group rules stay version 1.
  EXPECT_EQ(Json::parse(Classifier::single({{1.0}, 0.0}, Link::kLogistic, Encoding{}).to_json())
                .at("version"),
            1);
  Json bad = j;
  bad["groups"][0]["thresholds"] = Json({1.0, 0.0});
  EXPECT_THROW((void)Classifier::from_json(bad.dump()), ParseError);
  bad = j;
  bad["groups"][0].erase("weights");
  EXPECT_THROW((void)Classifier::from_json(bad.dump()), ParseError);
  bad = j;
  bad.erase("group_columns");
  EXPECT_THROW((void)Classifier::from_json(bad.dump()), ParseError);
  bad = j;
  bad["version"] = Classifier::kFormatVersion + 1;
  EXPECT_THROW((void)Classifier::from_json(bad.dump()), ParseError);
}

TEST(GroupThreshold, ValidateRejectsInconsistentRules) {
  const auto invalid = [](auto edit) {
    Classifier c = two_rules();
    edit(c);
    EXPECT_THROW(c.validate(), InvalidArgument);
  };
  invalid([](Classifier& c) { c.group_rules[0].weights = {0.3, 0.6}; });
  invalid([](Classifier& c) { c.group_rules[0].weights = {-0.3, 1.3}; });
  invalid([](Classifier& c) { c.group_rules[0].thresholds = {1.0, 1.0}; });
  invalid([](Classifier& c) { c.group_rules[0].weights = {1.0}; });
  invalid([](Classifier& c) { c.group_rules[1].key = {"a"}; });
  invalid([](Classifier& c) { c.group_rules[1].key = {"b", "x"}; });
  invalid([](Classifier& c) { c.group_rules.clear(); });
  invalid([](Classifier& c) {
    c.components.push_back(c.components[0]);
    c.mixture = {0.5, 0.5};
  });
  invalid([](Classifier& c) { c.group_columns.clear(); });
}

// predict_positive: predict's 0/1 predictions at 1 byte a row, group rules included (rules read
// per block of rows), and the same errors.
TEST(GroupThreshold, PredictPositiveMatchesPredict) {
  const Classifier c = two_rules();
  std::vector<double> x;
  std::vector<std::string> g;
  for (std::size_t i = 0; i < 140000; ++i) {
    x.push_back(static_cast<double>(i % 7) - 3.0);
    g.push_back(i % 3 == 0 ? "b" : "a");
  }
  const Dataset ds = data(x, g);
  for (PredictMode mode : {PredictMode::kDeterministic, PredictMode::kStochastic}) {
    std::vector<double> want(x.size());
    c.predict(ds, mode, want, 9);
    std::vector<std::uint8_t> got(x.size(), 7);
    c.predict_positive(ds, mode, got, 9);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      differ += static_cast<double>(got[i]) != want[i] ? 1 : 0;
    EXPECT_EQ(differ, 0u) << to_string(mode);
  }
  // A group without a rule after the first block: NotFound naming the row.
  g[100000] = "c";
  const Dataset bad = data(x, g);
  std::vector<std::uint8_t> out(x.size());
  try {
    c.predict_positive(bad, PredictMode::kDeterministic, out);
    ADD_FAILURE() << "expected NotFound";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("row 100000: group [g=c]"), std::string::npos) << e.what();
  }
}

TEST(GroupThreshold, PredictErrors) {
  const Classifier c = two_rules();
  const Dataset ds = data({0.5, 0.5}, {"a", "c"});
  std::vector<double> out(2);
  EXPECT_THROW(c.predict(ds.features(), PredictMode::kProbability, out), InvalidArgument);
  EXPECT_THROW(c.predict(ds, PredictMode::kProbability, out), NotFound);  // group c
  Dataset none(FeatureMatrix::dense({0.5, 0.5}, 2, 1), Labels{});
  try {
    c.predict(none, PredictMode::kProbability, out);
    ADD_FAILURE() << "expected NotFound";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("group column 'g' is not a column"), std::string::npos)
        << e.what();
  }
  Dataset missing(FeatureMatrix::dense({0.5, 0.5}, 2, 1), Labels{});
  Column g = column("g", {"a"});
  g.push_back("", /*missing=*/true);
  missing.add_column(g);
  EXPECT_THROW(c.predict(missing, PredictMode::kProbability, out), NotFound);
}

}  // namespace
}  // namespace rateopt
