// Backward compatibility of the joint multi-label model files: checked-in version-1
// "rateopt.classifier_chain" and "rateopt.efp" files load, predict what their weights say (by
// hand), and round-trip; malformed variants are ParseErrors naming the field.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "rateopt/error.hpp"
#include "rateopt/multilabel.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::source_path;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

using test::sigmoid;

TEST(MultilabelFiles, LoadsCheckedInVersion1ClassifierChain) {
  const ClassifierChain c =
      ClassifierChain::load(source_path("tests/data/models/classifier_chain_v1.json"));
  EXPECT_EQ(c.names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.fits[1].iterations, 9);
  EXPECT_EQ(c.encoding.num_features, 2u);
  const FeatureMatrix x = FeatureMatrix::dense({1.0, 2.0}, 1, 2);
  // z0 = 1 - 1 + 0.25; z1 = 0.5 - 1 + 2 y0.
  const double q0 = sigmoid(0.25);
  const std::vector<double> joint = c.joint_probabilities(x, 0);
  EXPECT_NEAR(joint[0], (1 - q0) * (1 - sigmoid(-0.5)), 1e-15);
  EXPECT_NEAR(joint[1], q0 * (1 - sigmoid(1.5)), 1e-15);
  EXPECT_NEAR(joint[2], (1 - q0) * sigmoid(-0.5), 1e-15);
  EXPECT_NEAR(joint[3], q0 * sigmoid(1.5), 1e-15);
  EXPECT_EQ(c.joint_mode(x, 0).labels, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(ClassifierChain::from_json(c.to_json()).to_json(), c.to_json());
}

TEST(MultilabelFiles, LoadsCheckedInVersion1Efp) {
  const ExactFPlugin e = ExactFPlugin::load(source_path("tests/data/models/efp_v1.json"));
  ASSERT_EQ(e.num_labels(), 2u);
  EXPECT_EQ(e.fits.back().status, Termination::kMaxIterations);
  const FeatureMatrix x = FeatureMatrix::dense({1.0, 2.0}, 1, 2);
  const GfmInput in = e.predict_gfm(x, 0);
  // Label a: scores (0.1 - 0.2, 0.2 + 0.5, 0.3 + 0.8 - 0.5) for t = 0, 1, 2.
  const double za[3] = {-0.1, 0.7, 0.6};
  const double sa = std::exp(za[0]) + std::exp(za[1]) + std::exp(za[2]);
  EXPECT_NEAR(in.p[0], std::exp(za[1]) / sa, 1e-15);
  EXPECT_NEAR(in.p[1], std::exp(za[2]) / sa, 1e-15);
  // Label b: classes 0 and 2 only; t = 1 was never seen.
  const double zb[2] = {0.2 + 0.0 + 0.1, -0.2 + 0.6 - 0.1};
  EXPECT_EQ(in.p[2], 0.0);
  EXPECT_NEAR(in.p[3], std::exp(zb[1]) / (std::exp(zb[0]) + std::exp(zb[1])), 1e-15);
  EXPECT_NEAR(in.p_zero, sigmoid(0.3 - 0.6 - 1.0), 1e-15);
  EXPECT_EQ(ExactFPlugin::from_json(e.to_json()).to_json(), e.to_json());
}

TEST(MultilabelFiles, MalformedFilesNameTheField) {
  std::string chain = read(source_path("tests/data/models/classifier_chain_v1.json"));
  const auto replaced = [](std::string s, const std::string& from, const std::string& to) {
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  try {
    (void)ClassifierChain::from_json(replaced(chain, "[0.5, 0.0, 2.0]", "[0.5, 2.0]"));
    ADD_FAILURE() << "no exception";
  } catch (const ParseError& err) {
    EXPECT_NE(std::string(err.what()).find("chain model 1 has 2 weights"), std::string::npos)
        << err.what();
  }
  EXPECT_THROW(
      (void)ClassifierChain::from_json(replaced(chain, "\"version\": 1", "\"version\": 2")),
      ParseError);
  EXPECT_THROW((void)ClassifierChain::from_json(replaced(chain, "\"converged\"", "\"done\"")),
               ParseError);
  std::string efp = read(source_path("tests/data/models/efp_v1.json"));
  EXPECT_THROW((void)ExactFPlugin::from_json(replaced(efp, "[0, 2]", "[2, 0]")), ParseError);
  EXPECT_THROW((void)ExactFPlugin::from_json(replaced(efp, "[0, 2]", "[0, 3]")), ParseError);
  EXPECT_THROW((void)ExactFPlugin::from_json(efp.substr(0, 100)), ParseError);
}

}  // namespace
}  // namespace rateopt
