// train_guaranteed (rateopt/train.hpp, the guaranteed mode) on the bundled Adult rows: a loose
// bound is certified with every upper bound <= 0 and the bounds are the safety part's own
// (high_confidence_ranges recomputed); an impossible one ends in the typed status
// kNoSolutionFound; the split holds the safety fraction; the same bits for 1 and 2 threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

const Dataset& adult_rows() {
  static const Dataset ds = [] {
    ReadOptions ro;
    ro.csv.label_column = "income";
    ro.csv.positive_values = {">50K"};
    ro.csv.group_columns = {"sex", "race"};
    return read_dataset(std::string(RATEOPT_SOURCE_DIR) + "/data/adult/adult-train.csv.gz", ro);
  }();
  return ds;
}

TEST(TrainGuaranteed, LooseBoundIsCertifiedWithTheSafetyPartsBounds) {
  const Dataset& ds = adult_rows();
  ProblemSpec spec;
  spec.constraints = {"ppr[sex=Female] >= 0.6 * ppr[sex=Male]"};
  for (const bool stochastic : {false, true}) {
    SCOPED_TRACE(stochastic ? "stochastic" : "deterministic");
    GuaranteeOptions g;
    g.stochastic_output = stochastic;
    const GuaranteedTrainResult r = train_guaranteed(spec, ds, 0, {}, g);
    ASSERT_TRUE(r.passed);
    EXPECT_NE(r.result.status, Termination::kNoSolutionFound);
    EXPECT_EQ(r.candidate_total + r.safety_total, static_cast<double>(ds.num_rows()));
    EXPECT_NEAR(r.safety_total / static_cast<double>(ds.num_rows()), 0.4, 0.02);
    ASSERT_EQ(r.safety.size(), 1U);
    EXPECT_LE(r.safety[0].range.high, 0.0);
    EXPECT_GT(r.margins[0], 0.0);
    EXPECT_NE(r.trained_constraints[0], spec.constraints[0]);
    // The bounds are the safety part's: recomputed from the model kept.
    const auto again = high_confidence_ranges(
        spec.constraints, guarantee_data(r.result.classifier, r.safety_rows, "train", stochastic),
        0.05);
    EXPECT_EQ(again[0].range.high, r.safety[0].range.high);
  }
}

TEST(TrainGuaranteed, ImpossibleBoundIsNoSolutionFound) {
  ProblemSpec spec;
  spec.constraints = {"ppr[sex=Male] - ppr[sex=Female] <= 0.001",
                      "ppr[sex=Female] - ppr[sex=Male] <= 0.001"};
  GuaranteeOptions g;
  g.confidence = 0.999;
  // The first 4,000 rows: every fit of the margin search is quick.
  std::vector<std::size_t> rows(4000);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  const GuaranteedTrainResult r = train_guaranteed(spec, select_rows(adult_rows(), rows), 0, {}, g);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.result.status, Termination::kNoSolutionFound);
  EXPECT_GT(r.safety[0].range.high, 0.0);
}

TEST(TrainGuaranteed, SameBitsForOneAndTwoThreads) {
  ProblemSpec spec;
  spec.constraints = {"tpr[sex=Male] - tpr[sex=Female] <= 0.1"};
  TrainOptions one;
  one.n_threads = 1;
  TrainOptions two;
  two.n_threads = 2;
  const GuaranteedTrainResult a = train_guaranteed(spec, adult_rows(), 0, one, {});
  const GuaranteedTrainResult b = train_guaranteed(spec, adult_rows(), 0, two, {});
  EXPECT_EQ(a.result.classifier.to_json(), b.result.classifier.to_json());
  EXPECT_EQ(a.safety[0].range.high, b.safety[0].range.high);
  EXPECT_EQ(a.margins, b.margins);
}

TEST(TrainGuaranteed, BadInputIsAnError) {
  test::expect_invalid([] { (void)train_guaranteed({}, adult_rows(), 0, {}, {}); }, "has none");
  ProblemSpec eq;
  eq.constraints = {"ppr[sex=Female] == ppr[sex=Male]"};
  test::expect_invalid([&] { (void)train_guaranteed(eq, adult_rows(), 0, {}, {}); }, "equality");
  GuaranteeOptions bad;
  bad.safety_fraction = 1.0;
  ProblemSpec ok;
  ok.constraints = {"ppr[sex=Female] >= 0.1"};
  test::expect_invalid([&] { (void)train_guaranteed(ok, adult_rows(), 0, {}, bad); },
                       "safety fraction is 1");
}

}  // namespace
}  // namespace rateopt
