// evaluate_spec and evaluate_text: a classifier's objective and constraint values on named data,
// checked against counts taken by hand from the same predictions.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/gbdt.hpp"
#include "rateopt/model.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"
#include "train_test_util.hpp"

namespace rateopt {
namespace {

// sign(score) of the single feature: predicts 1 exactly when feature 0 > 0.
Classifier threshold_at_zero(const Dataset& ds) {
  LinearModel m;
  m.weights = {1.0};
  m.bias = 0;
  return Classifier::single(m, Link::kLogistic, ds.encoding());
}

struct HandCounts {
  double error = 0, ppr_a = 0, ppr_b = 0, ppr = 0;
};

// Deterministic predictions 1{x > 0} counted directly from the feature matrix.
HandCounts hand_counts(const Dataset& ds) {
  HandCounts h;
  double n_a = 0, n_b = 0, pos_a = 0, pos_b = 0, wrong = 0;
  const Column& g = ds.column("g");
  for (std::size_t i = 0; i < ds.num_rows(); ++i) {
    const int pred = ds.features().at(i, 0) > 0 ? 1 : 0;
    wrong += pred != ds.labels().values[i] ? 1 : 0;
    const bool a = g.levels[g.codes[i]] == "a";
    (a ? n_a : n_b) += 1;
    (a ? pos_a : pos_b) += pred;
  }
  const double n = static_cast<double>(ds.num_rows());
  h.error = wrong / n;
  h.ppr_a = pos_a / n_a;
  h.ppr_b = pos_b / n_b;
  h.ppr = (pos_a + pos_b) / n;
  return h;
}

TEST(EvaluateSpec, DeterministicValuesMatchHandCounts) {
  const Dataset ds = test::synthetic(400, 11);
  const Classifier clf = threshold_at_zero(ds);
  const HandCounts h = hand_counts(ds);
  const ProblemSpec spec =
      test::spec("error", {"ppr <= 0.25", "parity(ppr, g) <= 0.05", "ppr[g=a] >= ppr[g=b]"});
  const std::vector<TrainingData> data{{"train", &ds}};
  const SpecValues v = evaluate_spec(spec, clf, data, PredictMode::kDeterministic);
  EXPECT_NEAR(v.objective.value, h.error, 1e-12);
  EXPECT_EQ(v.objective.text, "error");
  ASSERT_EQ(v.constraints.size(), 3U);
  EXPECT_NEAR(v.constraints[0].value, h.ppr, 1e-12);
  EXPECT_NEAR(v.constraints[0].rhs, 0.25, 1e-12);
  EXPECT_NEAR(v.constraints[0].violation, h.ppr - 0.25, 1e-12);
  // The shorthand is reported as written, with the value of its expansion.
  EXPECT_EQ(v.constraints[1].text, "parity(ppr, g) <= 0.05");
  EXPECT_NEAR(v.constraints[1].value, std::abs(h.ppr_a - h.ppr_b), 1e-12);
  EXPECT_EQ(v.constraints[1].satisfied, std::abs(h.ppr_a - h.ppr_b) <= 0.05);
  EXPECT_NEAR(v.constraints[2].value - v.constraints[2].rhs, h.ppr_a - h.ppr_b, 1e-12);
}

TEST(EvaluateSpec, ProbabilityModeAveragesScoresAndNamedDataResolve) {
  const Dataset train = test::synthetic(300, 3);
  const Dataset other = test::synthetic(200, 4);
  const Classifier clf = threshold_at_zero(train);
  double mean_p = 0;
  for (std::size_t i = 0; i < other.num_rows(); ++i)
    mean_p += 1 / (1 + std::exp(-other.features().at(i, 0)));
  mean_p /= static_cast<double>(other.num_rows());
  const std::vector<TrainingData> data{{"train", &train}, {"other", &other}};
  const SpecValues v = evaluate_spec(test::spec("ppr@other"), clf, data, PredictMode::kProbability);
  EXPECT_NEAR(v.objective.value, mean_p, 1e-12);
  EXPECT_TRUE(v.constraints.empty());
}

TEST(EvaluateSpec, UnknownColumnOrDatasetIsNamed) {
  const Dataset ds = test::synthetic(50, 5);
  const Classifier clf = threshold_at_zero(ds);
  const std::vector<TrainingData> data{{"train", &ds}};
  EXPECT_THROW((void)evaluate_spec(test::spec("ppr@nope"), clf, data, PredictMode::kDeterministic),
               NotFound);
  EXPECT_THROW((void)evaluate_spec(test::spec("error", {"parity(ppr, missing) <= 0.1"}), clf, data,
                                   PredictMode::kDeterministic),
               NotFound);
}

// The solver's own scores of the training rows (TrainResult::training_scores: boosted trees,
// from XGBoost's training cache) are each component's scores, bit for bit, on two stacked
// datasets; the report's values from them equal those from scoring the rows anew, in both modes.
// They are what is used (other scores give other values), and sizes that do not fit are errors.
TEST(EvaluateSpec, SolverScoresOfTheTrainingRowsGiveTheSameValues) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Dataset a = test::synthetic(500, 21, false, 2);
  const Dataset b = test::synthetic(300, 22, false, 2);
  const std::vector<TrainingData> data{{"train", &a}, {"other", &b}};
  const ProblemSpec spec = test::spec("error", {"parity(ppr, g) <= 0.02", "ppr@other >= 0.45"});
  TrainOptions o;
  o.learner = Learner::kGbdt;
  o.gbdt_rounds = 12;
  o.gbdt_warm_rounds = 4;
  o.gbdt_max_depth = 3;
  o.n_threads = 1;
  const TrainResult r = train(RateProblem::build(spec, data), o);
  const Classifier& clf = r.classifier;
  ASSERT_GE(clf.components.size(), 2U);
  ASSERT_EQ(r.training_scores.size(), clf.components.size());
  for (std::size_t m = 0; m < clf.components.size(); ++m) {
    std::vector<double> own(a.num_rows() + b.num_rows());
    clf.components[m].trees()->scores(a.features(), std::span<double>(own).first(a.num_rows()), 1);
    clf.components[m].trees()->scores(b.features(), std::span<double>(own).subspan(a.num_rows()),
                                      1);
    EXPECT_TRUE(test::same_bits(r.training_scores[m], own)) << m;
  }
  for (const PredictMode mode : {PredictMode::kProbability, PredictMode::kDeterministic}) {
    const SpecValues fresh = evaluate_spec(spec, clf, data, mode, 0, 1);
    const SpecValues known = evaluate_spec(spec, clf, data, mode, 0, 1, nullptr, r.training_scores);
    EXPECT_EQ(known.objective.value, fresh.objective.value);
    ASSERT_EQ(known.constraints.size(), 2U);
    for (std::size_t k = 0; k < 2; ++k)
      EXPECT_EQ(known.constraints[k].value, fresh.constraints[k].value) << k;
    // Every score negated: every prediction flips (no score is 0 here), so the error is 1 minus.
    std::vector<std::vector<double>> flipped = r.training_scores;
    for (auto& s : flipped)
      for (double& v : s) v = -v;
    const SpecValues other = evaluate_spec(spec, clf, data, mode, 0, 1, nullptr, flipped);
    EXPECT_NEAR(other.objective.value, 1 - fresh.objective.value, 1e-12);
  }
  std::vector<std::vector<double>> short_scores = r.training_scores;
  short_scores[0].pop_back();
  test::expect_invalid(
      [&] {
        (void)evaluate_spec(spec, clf, data, PredictMode::kDeterministic, 0, 1, nullptr,
                            short_scores);
      },
      "stacked_scores[0] has 799 scores for the data's 800 rows");
  const std::vector<std::vector<double>> one(1, r.training_scores[0]);
  test::expect_invalid(
      [&] {
        (void)evaluate_spec(spec, clf, data, PredictMode::kDeterministic, 0, 1, nullptr, one);
      },
      "stacked_scores has 1 entries");
}

}  // namespace
}  // namespace rateopt
