// Constraints hold at termination on (a subsample of) the bundled Adult training data, for
// demographic parity, equal opportunity and a recall target. Heavier runs live in bench/.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rateopt/io.hpp"
#include "rateopt/train.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

// Every fourth row of the bundled adult-train.csv.gz (about 7 500 rows), loaded once.
const Dataset& adult() {
  static const Dataset ds = [] {
    ReadOptions ro;
    ro.csv.label_column = "income";
    ro.csv.positive_values = {">50K"};
    ro.csv.group_columns = {"sex", "race"};
    const Dataset full =
        read_dataset(std::string(RATEOPT_SOURCE_DIR) + "/data/adult/adult-train.csv.gz", ro);
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < full.num_rows(); i += 4) rows.push_back(i);
    Labels y;
    y.kind = LabelKind::kBinary;
    y.names = full.labels().names;
    for (std::size_t i : rows) y.values.push_back(full.labels().values[i]);
    Dataset out(full.features().select_rows(rows), y);
    for (const Column& c : full.columns()) {
      Column sub;
      sub.name = c.name;
      sub.levels = c.levels;
      for (std::size_t i : rows) {
        sub.codes.push_back(c.codes[i]);
        if (c.is_numeric()) sub.numeric.push_back(c.numeric[i]);
      }
      out.add_column(sub);
    }
    out.encoding() = full.encoding();
    return out;
  }();
  return ds;
}

void expect_feasible(const std::vector<std::string>& constraints, double max_error) {
  const RateProblem p = RateProblem::build(test::spec("error", constraints), {{"train", &adult()}});
  TrainOptions o;
  o.iterations = 300;
  o.tolerance = 0.005;
  o.n_threads = 1;  // the result is the same for any count (ThreadCountInvariance)
  const TrainResult r = train_rate_constrained(p, o);
  EXPECT_EQ(r.status, Termination::kConverged) << constraints.front();
  EXPECT_LE(r.stochastic.max_violation(), 0.005) << constraints.front();
  EXPECT_LE(r.stochastic.objective, max_error) << constraints.front();
  // The saved classifier reproduces the reported training values (mixture of expected rates).
  std::vector<std::vector<double>> prob{std::vector<double>(adult().num_rows())};
  r.classifier.predict(adult().features(), PredictMode::kProbability, prob[0]);
  const ProblemValues v = p.evaluate(p.atom_values(prob));
  EXPECT_NEAR(v.objective, r.stochastic.objective, 1e-9);
  for (std::size_t j = 0; j < v.constraints.size(); ++j)
    EXPECT_NEAR(v.constraints[j], r.stochastic.constraints[j], 1e-9);
}

// Unconstrained logistic regression on Adult has about 15% training error; the constrained
// models must stay well below the 24% of the majority class.
TEST(TrainAdult, DemographicParity) {
  expect_feasible(
      {"ppr[sex=Male] - ppr[sex=Female] <= 0.05", "ppr[sex=Female] - ppr[sex=Male] <= 0.05"}, 0.18);
}

TEST(TrainAdult, EqualOpportunity) {
  expect_feasible(
      {"tpr[sex=Male] - tpr[sex=Female] <= 0.05", "tpr[sex=Female] - tpr[sex=Male] <= 0.05"}, 0.18);
}

TEST(TrainAdult, Recall) {
  expect_feasible({"recall >= 0.8"}, 0.22);
}

// The cutting-plane solver (the default for linear problems) on Adult demographic parity, with
// the parity written as abs(): training violation within the tolerance, the deterministic pick
// feasible, the certificate consistent with the status, the same result for 1 and 2 threads, and
// the same problem written as two linear constraints gives the same model.
TEST(TrainAdult, CuttingPlaneDemographicParity) {
  const RateProblem p = RateProblem::build(
      test::spec("error", {"abs(ppr[sex=Female] - ppr[sex=Male]) <= 0.01"}), {{"train", &adult()}});
  TrainOptions o;
  o.n_threads = 1;
  const TrainResult r = train_rate_constrained(p, o);
  EXPECT_EQ(r.solver, TrainSolver::kCuttingPlane);
  EXPECT_LE(r.stochastic.max_violation(), o.tolerance);
  EXPECT_LE(r.deterministic.max_violation(), o.tolerance);
  EXPECT_LE(r.stochastic.objective, 0.18);
  EXPECT_EQ(r.status == Termination::kConverged, r.gap <= o.tolerance);
  EXPECT_GE(r.gap, -1e-9);
  o.n_threads = 2;
  const TrainResult r2 = train_rate_constrained(p, o);
  EXPECT_EQ(r.classifier.mixture, r2.classifier.mixture);
  EXPECT_EQ(r.stochastic.objective, r2.stochastic.objective);
  const RateProblem two =
      RateProblem::build(test::spec("error", {"ppr[sex=Female] - ppr[sex=Male] <= 0.01",
                                              "ppr[sex=Male] - ppr[sex=Female] <= 0.01"}),
                         {{"train", &adult()}});
  o.n_threads = 1;
  const TrainResult r3 = train_rate_constrained(two, o);
  EXPECT_NEAR(r3.stochastic.objective, r.stochastic.objective, 1e-12);
}

}  // namespace
}  // namespace rateopt
