// train_two_dataset (rateopt/train.hpp, Cotter et al. 2019's two-dataset scheme) on the bundled
// Adult rows: the parts split the rows at the fraction asked, the reported values are the
// classifier's own on each part (objective on the model part, constraints on the held-out
// constraint part, recomputed by evaluate_spec), the mixture meets the constraints on the rows no
// model was fitted to; the same bits for 1 and 2 threads; bad input is an error. And
// with_default_dataset (rateopt/expr.hpp): its text reads back to the same values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/io.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"
#include "train_test_util.hpp"

namespace rateopt {
namespace {

TEST(WithDefaultDataset, ReadsBackToTheSameValues) {
  for (const char* text :
       {"max(abs(ppr[sex=Female] - ppr[sex=Male]), -0.5 * tpr) <= 0.02 + 1e-3",
        "ppr[sex=Female] >= 0.8 * ppr@train[sex=Male]", "-error / (1 - fpr[race=\"a,b\"])",
        "pow(tpr, 2) + sqrt(fbeta:2[sex=Male]) - -3"}) {
    SCOPED_TRACE(text);
    const Expression e = Expression::parse(text);
    const std::string moved = with_default_dataset(e, "hold");
    const Expression back = Expression::parse(moved);
    ASSERT_EQ(back.rates().size(), e.rates().size()) << moved;
    EXPECT_EQ(back.relation(), e.relation());
    for (std::size_t j = 0; j < e.rates().size(); ++j) {
      RateRef want = e.rates()[j];
      if (want.dataset.empty()) want.dataset = "hold";
      EXPECT_EQ(back.rates()[j], want) << moved;
    }
    std::mt19937_64 gen(3);
    std::uniform_real_distribution<double> u(0.05, 0.95);
    for (int draw = 0; draw < 20; ++draw) {
      std::vector<double> v(e.rates().size());
      for (double& x : v) x = u(gen);
      EXPECT_DOUBLE_EQ(back.value(v), e.value(v)) << moved;
    }
  }
}

TEST(TrainTwoDataset, ConstraintsHoldOnTheHeldOutPart) {
  const Dataset& ds = test::bundled_adult();
  ProblemSpec spec;
  spec.constraints = {"parity(ppr, sex) <= 0.05", "tpr[sex=Female] >= 0.3"};
  TrainOptions o;
  o.n_threads = 1;
  const TwoDatasetResult r = train_two_dataset(spec, ds, o, {});
  const double n = static_cast<double>(ds.num_rows());
  EXPECT_EQ(r.model_rows.num_rows() + r.constraint_rows.num_rows(), ds.num_rows());
  EXPECT_NEAR(static_cast<double>(r.constraint_rows.num_rows()) / n, 1.0 / 3.0, 0.02);
  ASSERT_EQ(r.result.status, Termination::kConverged);
  EXPECT_TRUE(std::isnan(r.result.gap));  // no certificate
  // The values are the classifier's: objective on the model part, constraints on the other.
  const std::vector<TrainingData> model = {{"train", &r.model_rows}};
  const std::vector<TrainingData> held = {{"train", &r.constraint_rows}};
  const SpecValues on_model =
      evaluate_spec(spec, r.result.classifier, model, PredictMode::kProbability);
  const SpecValues on_held =
      evaluate_spec(spec, r.result.classifier, held, PredictMode::kProbability);
  EXPECT_NEAR(on_model.objective.value, r.result.stochastic.objective, 1e-9);
  for (const ExpressionValue& c : on_held.constraints) EXPECT_LE(c.violation, o.tolerance);
  // The held-out rows' constraints are what the LP saw: some binds there, not on the model part.
  double held_worst = -1;
  for (const ExpressionValue& c : on_held.constraints)
    held_worst = std::max(held_worst, c.violation);
  EXPECT_GT(held_worst, -0.01);
  // The deterministic pick's held-out values are the ones reported for it.
  const SpecValues det =
      evaluate_spec(spec, r.result.classifier, held, PredictMode::kDeterministic);
  double det_worst = 0;
  for (const ExpressionValue& c : det.constraints) det_worst = std::max(det_worst, c.violation);
  EXPECT_NEAR(det_worst, r.result.deterministic.max_violation(), 1e-9);
}

TEST(TrainTwoDataset, SameBitsForOneAndTwoThreads) {
  ProblemSpec spec;
  spec.constraints = {"tpr[sex=Male] - tpr[sex=Female] <= 0.05"};
  // Two default-constructed options (a copy of one draws GCC 12's false -Wmaybe-uninitialized
  // on the empty optional under the sanitizers).
  TrainOptions one;
  one.n_threads = 1;
  TrainOptions two;
  two.n_threads = 2;
  const TwoDatasetResult a = train_two_dataset(spec, test::bundled_adult(), one, {});
  const TwoDatasetResult b = train_two_dataset(spec, test::bundled_adult(), two, {});
  EXPECT_EQ(a.result.classifier.to_json(), b.result.classifier.to_json());
  EXPECT_EQ(a.result.stochastic.constraints, b.result.stochastic.constraints);
}

TEST(TrainTwoDataset, BadInputIsAnError) {
  ProblemSpec none;
  test::expect_invalid([&] { (void)train_two_dataset(none, test::bundled_adult(), {}, {}); },
                       "has none");
  ProblemSpec ok;
  ok.constraints = {"ppr[sex=Female] >= 0.1"};
  test::expect_invalid(
      [&] { (void)train_two_dataset(ok, test::bundled_adult(), {}, {.constraint_fraction = 1.0}); },
      "constraint fraction is 1");
  ProblemSpec other;
  other.constraints = {"ppr@valid[sex=Female] >= 0.1"};
  test::expect_invalid([&] { (void)train_two_dataset(other, test::bundled_adult(), {}, {}); },
                       "names dataset 'valid'");
  ProblemSpec explicit_train;  // would stay on the model part: refused
  explicit_train.constraints = {"ppr@train[sex=Female] >= 0.1"};
  test::expect_invalid(
      [&] { (void)train_two_dataset(explicit_train, test::bundled_adult(), {}, {}); },
      "names dataset 'train'");
}

}  // namespace
}  // namespace rateopt
