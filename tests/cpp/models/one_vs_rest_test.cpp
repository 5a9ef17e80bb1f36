// Tests of the one-vs-rest model (src/models/model.cpp): prediction layout, JSON round trip,
// and errors for inconsistent or malformed files.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/model.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

Encoding two_feature_encoding() {
  Encoding e;
  e.format = "libsvm";
  e.num_features = 2;
  e.feature_names = {"f1", "f2"};
  return e;
}

// Output j scores w_j . x + b_j with logistic links.
OneVsRest make_model() {
  OneVsRest m;
  m.label_kind = LabelKind::kMultilabel;
  m.names = {"a", "b", "c"};
  m.encoding = two_feature_encoding();
  const std::vector<LinearModel> lms = {{{1.0, 0.0}, 0.0}, {{0.0, -2.0}, 0.5}, {{1.0, 1.0}, -3.0}};
  for (const auto& lm : lms)
    m.outputs.push_back(Classifier::single(lm, Link::kLogistic, m.encoding));
  return m;
}

using test::sigmoid;

TEST(OneVsRest, PredictIsRowMajorPerOutput) {
  const OneVsRest m = make_model();
  const std::vector<double> x = {0.5, 1.0, -1.0, 0.25, 3.0, 2.0};
  const FeatureMatrix fm = FeatureMatrix::dense(x, 3, 2);
  std::vector<double> prob(9), det(9);
  m.predict(fm, PredictMode::kProbability, prob);
  m.predict(fm, PredictMode::kDeterministic, det);
  for (std::size_t i = 0; i < 3; ++i) {
    const double x0 = x[2 * i], x1 = x[2 * i + 1];
    const double s[3] = {x0, -2 * x1 + 0.5, x0 + x1 - 3};
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_NEAR(prob[i * 3 + j], sigmoid(s[j]), 1e-15) << i << "," << j;
      EXPECT_EQ(det[i * 3 + j], s[j] > 0 ? 1.0 : 0.0) << i << "," << j;
    }
  }
  std::vector<double> wrong(8);
  EXPECT_THROW(m.predict(fm, PredictMode::kProbability, wrong), InvalidArgument);
}

TEST(OneVsRest, JsonRoundTripStoresTheEncodingOnce) {
  const OneVsRest m = make_model();
  const std::string text = m.to_json();
  EXPECT_EQ(model_format(text), "rateopt.one_vs_rest");
  const auto j = nlohmann::json::parse(text);
  ASSERT_EQ(j["outputs"].size(), 3u);
  EXPECT_FALSE(j["outputs"][0].contains("encoding"));
  const OneVsRest back = OneVsRest::from_json(text);
  EXPECT_EQ(back.names, m.names);
  EXPECT_EQ(back.label_kind, LabelKind::kMultilabel);
  EXPECT_EQ(back.encoding.feature_names, m.encoding.feature_names);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(back.outputs[k].components[0].linear().weights,
              m.outputs[k].components[0].linear().weights);
    EXPECT_EQ(back.outputs[k].components[0].linear().bias,
              m.outputs[k].components[0].linear().bias);
  }
  EXPECT_EQ(back.to_json(), text);
}

TEST(OneVsRest, RejectsInconsistentModels) {
  OneVsRest m = make_model();
  m.names.pop_back();
  EXPECT_TRUE(test::contains(test::error_of<InvalidArgument>([&] { m.validate(); }),
                             "2 output names for 3"));
  m = make_model();
  m.outputs[1].components[0].linear().weights.push_back(1.0);
  EXPECT_THROW(m.validate(), InvalidArgument);
  m = make_model();
  m.label_kind = LabelKind::kBinary;
  EXPECT_THROW(m.validate(), InvalidArgument);
  m = OneVsRest{};
  EXPECT_THROW(m.validate(), InvalidArgument);
}

TEST(OneVsRest, MalformedFilesGiveParseErrors) {
  const std::string good = make_model().to_json();
  auto j = nlohmann::json::parse(good);
  j["format"] = "rateopt.model";
  EXPECT_TRUE(test::contains(
      test::error_of<ParseError>([&] { (void)OneVsRest::from_json(j.dump(), "m.json"); }),
      "expected 'rateopt.one_vs_rest'"));
  j = nlohmann::json::parse(good);
  j["version"] = 99;
  EXPECT_THROW((void)OneVsRest::from_json(j.dump()), ParseError);
  j = nlohmann::json::parse(good);
  j["names"] = {"a", "b"};
  EXPECT_TRUE(test::contains(
      test::error_of<ParseError>([&] { (void)OneVsRest::from_json(j.dump(), "m.json"); }),
      "2 output names for 3 outputs"));
  j = nlohmann::json::parse(good);
  j["outputs"][2]["mixture"] = {0.5};
  EXPECT_TRUE(test::contains(
      test::error_of<ParseError>([&] { (void)OneVsRest::from_json(j.dump(), "m.json"); }),
      "outputs[2]"));
  EXPECT_THROW((void)OneVsRest::from_json("{", "m.json"), ParseError);
  EXPECT_THROW((void)model_format("[1, 2]"), ParseError);
}

}  // namespace
}  // namespace rateopt
