// train_with_prediction_oracle (any base model): an exact oracle over the thresholds of a fixed
// score answers with predictions only; the cutting-plane solver must reach and certify the LP
// optimum over the pool of all thresholds (an independent computation, as in game_test.cpp),
// Algorithm 1 must approach it, and answers, mixture and pick must be consistent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/train.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

// Predictions of every threshold of feature 0, both orientations.
std::vector<std::vector<double>> threshold_predictions(const Dataset& ds) {
  const std::size_t n = ds.num_rows();
  std::vector<double> s(n);
  for (std::size_t i = 0; i < n; ++i) s[i] = ds.features().at(i, 0);
  std::vector<double> sorted = s;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> cuts{sorted.front() - 1};
  for (std::size_t i = 0; i + 1 < n; ++i) cuts.push_back(0.5 * (sorted[i] + sorted[i + 1]));
  cuts.push_back(sorted.back() + 1);
  std::vector<std::vector<double>> pool;
  for (double c : cuts) {
    std::vector<double> up(n), down(n);
    for (std::size_t i = 0; i < n; ++i) {
      up[i] = s[i] > c ? 1.0 : 0.0;
      down[i] = s[i] < c ? 1.0 : 0.0;
    }
    pool.push_back(std::move(up));
    pool.push_back(std::move(down));
  }
  return pool;
}

// The exact oracle over the pool: the member with the smallest sum_i cost_i h_i (the first on
// ties). Counts its calls.
struct PoolOracle {
  const std::vector<std::vector<double>>* pool;
  int* calls;
  std::vector<std::vector<double>> operator()(const OracleCosts& oc) const {
    ++*calls;
    const std::vector<double>& c = oc.rows[0];
    std::size_t arg = 0;
    double best = 1e300;
    for (std::size_t k = 0; k < pool->size(); ++k) {
      const double v = std::inner_product(c.begin(), c.end(), (*pool)[k].begin(), 0.0);
      if (v < best - 1e-15) best = v, arg = k;
    }
    return {(*pool)[arg]};
  }
};

struct PoolOptimum {
  ShrinkResult lp;
  std::vector<double> f, g;
};

PoolOptimum pool_optimum(const RateProblem& p, const std::vector<std::vector<double>>& pool) {
  PoolOptimum r;
  const std::size_t m = p.constraints().size();
  for (const std::vector<double>& h : pool) {
    const std::vector<std::vector<double>> pred{h};
    const ProblemValues v = p.evaluate(p.atom_values(pred));
    r.f.push_back(p.spec().maximize ? -v.objective : v.objective);
    for (std::size_t j = 0; j < m; ++j) r.g.push_back(v.constraints[j]);
  }
  r.lp = shrink_candidates(r.f, r.g, m);
  return r;
}

class PredictionOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ds_ = test::synthetic(600, 21);
    pool_ = threshold_predictions(ds_);
  }
  Dataset ds_;
  std::vector<std::vector<double>> pool_;
};

// Cutting-plane over predictions: the certificate brackets the LP optimum over the pool, the
// mixture (by answer index) reproduces the reported values, and the pick is answer `best`.
TEST_F(PredictionOracleTest, CuttingPlaneCertifiesTheLpOptimum) {
  for (const char* c :
       {"tpr[g=a] >= 0.85", "ppr[g=b] <= 0.3", "abs(ppr[g=a] - ppr[g=b]) <= 0.05"}) {
    const RateProblem p = RateProblem::build(test::spec("error", {c}), {{"train", &ds_}});
    const PoolOptimum opt = pool_optimum(p, pool_);
    ASSERT_TRUE(opt.lp.feasible) << c;
    TrainOptions o;
    o.tolerance = 1e-4;
    int calls = 0;
    const PredictionOracleResult r = train_with_prediction_oracle(p, o, PoolOracle{&pool_, &calls});
    EXPECT_EQ(r.solver, TrainSolver::kCuttingPlane) << c;
    EXPECT_EQ(r.status, Termination::kConverged) << c;
    EXPECT_EQ(r.oracle_calls, calls) << c;
    ASSERT_EQ(r.mixture.size(), static_cast<std::size_t>(calls)) << c;
    ASSERT_EQ(r.answers.size(), static_cast<std::size_t>(calls)) << c;
    EXPECT_LE(r.stochastic.max_violation(), 1e-9) << c;
    EXPECT_LE(r.lower_bound, opt.lp.objective + 1e-9) << c;
    EXPECT_GE(r.stochastic.objective, opt.lp.objective - 1e-9) << c;
    EXPECT_NEAR(r.stochastic.objective, opt.lp.objective, 1e-4) << c;
    EXPECT_NEAR(r.gap, r.stochastic.objective - r.lower_bound, 1e-12) << c;
    EXPECT_LT(r.iterations, 60) << c;
    // The mixture over the answers: weights sum to 1, at most m + 1 positive (m = 1 or 2), and
    // the values of a problem linear in rates are the weighted sums of the answers' values.
    const std::size_t m = p.constraints().size();
    double total = 0, objective = 0;
    std::vector<double> g(m, 0.0);
    std::size_t positive = 0;
    for (std::size_t k = 0; k < r.mixture.size(); ++k) {
      EXPECT_GE(r.mixture[k], 0) << c;
      total += r.mixture[k];
      positive += r.mixture[k] > 0 ? 1 : 0;
      objective += r.mixture[k] * r.answers[k].objective;
      for (std::size_t j = 0; j < m; ++j) g[j] += r.mixture[k] * r.answers[k].constraints[j];
    }
    EXPECT_NEAR(total, 1.0, 1e-9) << c;
    EXPECT_LE(positive, m + 1) << c;
    EXPECT_NEAR(objective, r.stochastic.objective, 1e-9) << c;
    for (std::size_t j = 0; j < m; ++j) EXPECT_NEAR(g[j], r.stochastic.constraints[j], 1e-9) << c;
    ASSERT_LT(r.best, r.answers.size()) << c;
    EXPECT_EQ(r.deterministic.objective, r.answers[r.best].objective) << c;
    // The pick is feasible whenever an answer is (no single shared threshold meets the parity
    // constraint: the groups' scores differ).
    bool any_feasible = false;
    for (const ProblemValues& v : r.answers)
      any_feasible = any_feasible || v.max_violation() <= o.tolerance;
    if (any_feasible) {
      EXPECT_LE(r.deterministic.max_violation(), o.tolerance) << c;
    }
  }
}

// An inexact oracle over the pool: the exact answer at the constraint part of the costs (the
// first call, at multipliers 0, gives the objective part) times kappa, then clipped to `clip`
// times the objective part's largest entry. kappa > 1 over-reacts to the multipliers, as a
// warm-started booster does; a finite clip stops responding beyond some size of them, as a
// regularised learner does.
struct DistortedOracle {
  const std::vector<std::vector<double>>* pool;
  double kappa;
  double clip;
  int* calls;
  std::shared_ptr<std::vector<double>> objective_costs = std::make_shared<std::vector<double>>();
  std::vector<std::vector<double>> operator()(const OracleCosts& oc) const {
    std::vector<double> c = oc.rows[0];
    if (objective_costs->empty()) *objective_costs = c;
    const std::vector<double>& a = *objective_costs;
    double part = 0, scale = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      part = std::max(part, kappa * std::fabs(c[i] - a[i]));
      scale = std::max(scale, std::fabs(a[i]));
    }
    const double k = part > clip * scale ? kappa * clip * scale / part : kappa;
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = a[i] + k * (c[i] - a[i]);
    const std::vector<std::vector<double>> rows{c};
    return PoolOracle{pool, calls}(OracleCosts{rows, {}});
  }
};

// The cutting-plane solver over the pool with an oracle answering at 3x its multipliers
// (DistortedOracle, kappa 3, no clip): converged,
// the mixture feasible and the deterministic pick feasible (tolerance 1e-3); returns the result
// and the oracle calls made.
std::pair<PredictionOracleResult, int> over_reacting_run(
    const Dataset& ds, const std::vector<std::vector<double>>& pool,
    std::vector<std::string> constraints) {
  const RateProblem p =
      RateProblem::build(test::spec("error", std::move(constraints)), {{"train", &ds}});
  TrainOptions o;
  o.tolerance = 1e-3;
  int calls = 0;
  PredictionOracleResult r = train_with_prediction_oracle(
      p, o, DistortedOracle{&pool, 3.0, std::numeric_limits<double>::infinity(), &calls});
  EXPECT_EQ(r.status, Termination::kConverged);
  EXPECT_LE(r.stochastic.max_violation(), 1e-9);
  EXPECT_LE(r.deterministic.max_violation(), o.tolerance);
  return {std::move(r), calls};
}

// The deterministic pick's ray search when the oracle's answer at the LP's own multipliers already
// overshoots: every answer at s >= 1 has ppr[g=b] = 0 (the lower bound violated), the feasible
// answers lie at s ~ 1 / kappa; the search must bracket below s = 1 and find one (10 calls).
TEST_F(PredictionOracleTest, RaySearchBracketsBelowTheLpMultipliers) {
  const auto [r, calls] = over_reacting_run(ds_, pool_, {"ppr[g=b] <= 0.4", "ppr[g=b] >= 0.1"});
  bool overshoot = false;  // an answer with ppr[g=b] = 0
  for (const ProblemValues& v : r.answers)
    overshoot = overshoot || (v.constraints[1] > 0.09 && v.constraints[0] < -0.39);
  EXPECT_TRUE(overshoot);
  EXPECT_LE(calls, 12);
}

// A constraint the ray does not move that is violated at both ends of the bracket (ppr[g=a] >= 0.3
// at lo and hi) ends the bisection: 12 oracle calls in all where running its 8 steps took 19
// (and found nothing more).
TEST_F(PredictionOracleTest, RaySearchStopsWhenAConstraintIsViolatedAcrossTheBracket) {
  const auto [r, calls] =
      over_reacting_run(ds_, pool_, {"ppr[g=b] <= 0.4", "ppr[g=b] >= 0.1", "ppr[g=a] >= 0.3"});
  EXPECT_LE(calls, 12);
}

// An oracle that stops responding beyond some size of the multipliers (DistortedOracle, kappa 1,
// clip 0.2). No answer then meets tpr[g=a] >= 0.9, and doubling s changes
// nothing: the search stops after two probes that come no closer (10 oracle calls in all, where
// doubling on to s = 256 took 16; the same result).
TEST_F(PredictionOracleTest, RaySearchStopsDoublingWhenAnswersComeNoCloser) {
  const RateProblem p =
      RateProblem::build(test::spec("error", {"tpr[g=a] >= 0.9"}), {{"train", &ds_}});
  TrainOptions o;
  o.tolerance = 1e-3;
  int calls = 0;
  const PredictionOracleResult r =
      train_with_prediction_oracle(p, o, DistortedOracle{&pool_, 1.0, 0.2, &calls});
  EXPECT_EQ(r.status, Termination::kInfeasible);
  EXPECT_NEAR(r.stochastic.max_violation(), 0.1081, 1e-4);
  EXPECT_NEAR(r.deterministic.max_violation(), 0.1081, 1e-4);
  EXPECT_LE(calls, 10);
}

// Algorithm 1 over predictions (solver "oracle", and auto for a ratio objective).
TEST_F(PredictionOracleTest, AlgorithmOneApproachesTheLpOptimum) {
  const RateProblem p =
      RateProblem::build(test::spec("error", {"tpr[g=a] >= 0.85"}), {{"train", &ds_}});
  const PoolOptimum opt = pool_optimum(p, pool_);
  TrainOptions o;
  o.solver = TrainSolver::kOracle;
  o.iterations = 300;
  o.checkpoint_every = 1;
  o.tolerance = 0.005;
  int calls = 0;
  const PredictionOracleResult r = train_with_prediction_oracle(p, o, PoolOracle{&pool_, &calls});
  EXPECT_EQ(r.solver, TrainSolver::kOracle);
  EXPECT_EQ(calls, 300);  // theta_0 and one answer per further round
  EXPECT_EQ(r.oracle_calls, calls);
  EXPECT_LE(r.stochastic.max_violation(), 0.005);
  EXPECT_NEAR(r.stochastic.objective, opt.lp.objective, 0.005);
  EXPECT_TRUE(std::isnan(r.gap));
  EXPECT_NEAR(std::accumulate(r.mixture.begin(), r.mixture.end(), 0.0), 1.0, 1e-9);

  // F1 (a ratio): auto runs Algorithm 1; the best F1 over mixtures of thresholds is one threshold.
  const RateProblem f1 = RateProblem::build(test::spec("f1", {}, true), {{"train", &ds_}});
  const PoolOptimum best = pool_optimum(f1, pool_);
  const double best_f1 = -*std::min_element(best.f.begin(), best.f.end());
  TrainOptions fo;
  fo.iterations = 200;
  fo.checkpoint_every = 1;
  calls = 0;
  const PredictionOracleResult rf =
      train_with_prediction_oracle(f1, fo, PoolOracle{&pool_, &calls});
  EXPECT_EQ(rf.solver, TrainSolver::kOracle);
  EXPECT_LE(rf.stochastic.objective, best_f1 + 1e-9);
  EXPECT_GE(rf.deterministic.objective, best_f1 - 0.02);
}

// Errors: an exception of the oracle travels out unchanged; malformed answers and solvers that
// need a differentiable model are refused.
TEST_F(PredictionOracleTest, ErrorsPropagate) {
  const RateProblem p =
      RateProblem::build(test::spec("error", {"ppr[g=b] <= 0.3"}), {{"train", &ds_}});
  struct Stop : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  int calls = 0, answered = 0;
  const PredictionOracle failing = [&](const OracleCosts& oc) -> std::vector<std::vector<double>> {
    if (++calls == 2) throw Stop("user stop");
    return PoolOracle{&pool_, &answered}(oc);
  };
  EXPECT_THROW((void)train_with_prediction_oracle(p, {}, failing), Stop);
  EXPECT_EQ(calls, 2);
  const PredictionOracle short_answer = [&](const OracleCosts&) {
    return std::vector<std::vector<double>>{std::vector<double>(10, 0.0)};
  };
  EXPECT_THROW((void)train_with_prediction_oracle(p, {}, short_answer), InvalidArgument);
  const PredictionOracle out_of_range = [&](const OracleCosts&) {
    return std::vector<std::vector<double>>{std::vector<double>(ds_.num_rows(), 2.0)};
  };
  EXPECT_THROW((void)train_with_prediction_oracle(p, {}, out_of_range), InvalidArgument);
  TrainOptions proxy;
  proxy.solver = TrainSolver::kProxyLagrangian;
  EXPECT_THROW((void)train_with_prediction_oracle(p, proxy, PoolOracle{&pool_, &calls}),
               InvalidArgument);
  const RateProblem f1 = RateProblem::build(test::spec("f1", {}, true), {{"train", &ds_}});
  TrainOptions cp;
  cp.solver = TrainSolver::kCuttingPlane;  // linear problems only
  EXPECT_THROW((void)train_with_prediction_oracle(f1, cp, PoolOracle{&pool_, &calls}),
               InvalidArgument);
}

}  // namespace
}  // namespace rateopt
