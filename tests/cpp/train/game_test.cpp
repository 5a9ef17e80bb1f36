// The solvers on a one-feature problem, where the model class is the thresholds of a fixed score
// (both orientations): the exact optimum over stochastic mixtures of thresholds is an LP over the
// pool of all thresholds (solved with CLP by shrink_candidates), an independent oracle.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/postprocess.hpp"
#include "rateopt/train.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

// Every threshold model of the score (w = +1 and w = -1, cut points between sorted scores).
std::vector<LinearModel> threshold_pool(const Dataset& ds) {
  std::vector<double> s(ds.num_rows());
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = ds.features().at(i, 0);
  std::sort(s.begin(), s.end());
  std::vector<double> cuts{s.front() - 1};
  for (std::size_t i = 0; i + 1 < s.size(); ++i) cuts.push_back(0.5 * (s[i] + s[i + 1]));
  cuts.push_back(s.back() + 1);
  std::vector<LinearModel> pool;
  for (double c : cuts) {
    pool.push_back(LinearModel{{1.0}, -c});
    pool.push_back(LinearModel{{-1.0}, c});
  }
  return pool;
}

struct PoolRates {
  std::vector<std::vector<double>> atoms;
  std::vector<double> f, g;
};

PoolRates pool_rates(const RateProblem& p, const Dataset& ds,
                     const std::vector<LinearModel>& pool) {
  PoolRates r;
  const std::size_t m = p.constraints().size();
  std::vector<double> sc(ds.num_rows());
  for (const LinearModel& model : pool) {
    model.scores(ds.features(), sc, 1);
    std::vector<std::vector<double>> pred{std::vector<double>(sc.size())};
    for (std::size_t i = 0; i < sc.size(); ++i) pred[0][i] = sc[i] > 0 ? 1.0 : 0.0;
    r.atoms.push_back(p.atom_values(pred));
    const ProblemValues v = p.evaluate(r.atoms.back());
    r.f.push_back(p.spec().maximize ? -v.objective : v.objective);
    for (std::size_t j = 0; j < m; ++j) r.g.push_back(v.constraints[j]);
  }
  return r;
}

// Exact cost-sensitive oracle over the pool of thresholds of feature 0: argmin of
// sum_i cost_i h_i by prefix sums over the sorted scores.
CostSensitiveOracle pool_oracle(const Dataset& ds) {
  return [&ds](const RateProblem&, const OracleCosts& oc) {
    const std::span<const std::vector<double>> costs = oc.rows;
    const std::size_t n = ds.num_rows();
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return ds.features().at(a, 0) < ds.features().at(b, 0);
    });
    const auto cut = [&](std::size_t k) {  // between sorted k-1 and k
      if (k == 0) return ds.features().at(order[0], 0) - 1;
      if (k == n) return ds.features().at(order[n - 1], 0) + 1;
      return 0.5 * (ds.features().at(order[k - 1], 0) + ds.features().at(order[k], 0));
    };
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) total += costs[0][i];
    double prefix = 0, best = 1e300;
    LinearModel arg;
    for (std::size_t k = 0; k <= n; ++k) {
      // w = +1: rows k.. positive (cost total - prefix); w = -1: rows ..k-1 positive (prefix).
      if (total - prefix < best - 1e-15) best = total - prefix, arg = LinearModel{{1.0}, -cut(k)};
      if (prefix < best - 1e-15) best = prefix, arg = LinearModel{{-1.0}, cut(k)};
      if (k < n) prefix += costs[0][order[k]];
    }
    return arg;
  };
}

// Adds the group indicator 1{g = b} as feature 1: linear models are then per-group thresholds
// of the score with a shared orientation.
Dataset with_group_feature(Dataset ds) {
  std::vector<double> x;
  const Column& g = ds.column("g");
  for (std::size_t i = 0; i < ds.num_rows(); ++i) {
    x.push_back(ds.features().at(i, 0));
    x.push_back(g.levels[static_cast<std::size_t>(g.codes[i])] == "b" ? 1.0 : 0.0);
  }
  ds.features() = FeatureMatrix::dense(std::move(x), ds.num_rows(), 2);
  return ds;
}

// Pool of per-group thresholds: atoms are linear in the predictions, so the atoms of a pair
// (threshold on group a, threshold on group b) are the sum of the two groups' parts.
PoolRates group_pool_rates(const RateProblem& p, const Dataset& ds,
                           std::vector<double> signs = {1.0, -1.0}) {
  const Column& g = ds.column("g");
  const std::size_t n = ds.num_rows();
  const auto parts = [&](const std::string& group, double sign) {
    std::vector<double> s;
    for (std::size_t i = 0; i < n; ++i)
      if (g.levels[static_cast<std::size_t>(g.codes[i])] == group)
        s.push_back(ds.features().at(i, 0));
    std::sort(s.begin(), s.end());
    std::vector<double> cuts{s.front() - 1};
    for (std::size_t i = 0; i + 1 < s.size(); ++i) cuts.push_back(0.5 * (s[i] + s[i + 1]));
    cuts.push_back(s.back() + 1);
    std::vector<std::vector<double>> out;
    for (double c : cuts) {
      std::vector<std::vector<double>> pred{std::vector<double>(n, 0.0)};
      for (std::size_t i = 0; i < n; ++i)
        if (g.levels[static_cast<std::size_t>(g.codes[i])] == group)
          pred[0][i] = sign * (ds.features().at(i, 0) - c) > 0 ? 1.0 : 0.0;
      out.push_back(p.atom_values(pred));
    }
    return out;
  };
  PoolRates r;
  const std::size_t m = p.constraints().size();
  for (double sign : signs) {
    const auto a = parts("a", sign), b = parts("b", sign);
    for (const auto& pa : a)
      for (const auto& pb : b) {
        std::vector<double> atoms(pa.size());
        for (std::size_t k = 0; k < atoms.size(); ++k) atoms[k] = pa[k] + pb[k];
        const ProblemValues v = p.evaluate(atoms);
        r.f.push_back(v.objective);
        for (std::size_t j = 0; j < m; ++j) r.g.push_back(v.constraints[j]);
      }
  }
  return r;
}

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ds_ = test::synthetic(600, 21);
    pool_ = threshold_pool(ds_);
  }
  Dataset ds_;
  std::vector<LinearModel> pool_;
};

void expect_near_optimum(const RateProblem& p, const PoolRates& pr, const char* what) {
  const std::size_t m = p.constraints().size();
  const ShrinkResult opt = shrink_candidates(pr.f, pr.g, m);
  ASSERT_TRUE(opt.feasible) << what;
  for (TrainSolver solver : {TrainSolver::kProxyLagrangian, TrainSolver::kThreePlayer}) {
    TrainOptions o;
    o.solver = solver;
    o.iterations = 1500;
    o.tolerance = 0.005;
    const TrainResult r = train_rate_constrained(p, o);
    EXPECT_EQ(r.solver, solver);
    EXPECT_LE(r.stochastic.max_violation(), 0.005) << what << " " << to_string(solver);
    EXPECT_LE(r.stochastic.objective, opt.objective + 0.015) << what << " " << to_string(solver);
    // It cannot beat the LP optimum at its own violation.
    std::vector<double> g = pr.g;
    for (double& x : g) x -= r.stochastic.max_violation();
    EXPECT_GE(r.stochastic.objective, shrink_candidates(pr.f, g, m).objective - 1e-9) << what;
    // Converged only with a certificate: the Lagrangian bound (logistic oracle) within tolerance.
    EXPECT_TRUE(r.status == Termination::kConverged || r.status == Termination::kFeasible);
    EXPECT_EQ(r.status == Termination::kConverged, r.gap <= o.tolerance) << r.gap;
    EXPECT_FALSE(std::isnan(r.gap));
    EXPECT_LE(r.classifier.components.size(), m + 2);  // m + 1 plus the best iterate
  }
}

// Error under a recall constraint (one feature) and under demographic parity and equal
// opportunity (score + group indicator): the trained stochastic classifier meets the constraints
// to 0.005 and is within 0.015 of the LP optimum over mixtures of the model class (the model
// player only sees hinge surrogates, so the true optimum is approached, not reached).
TEST_F(PoolTest, RecallConstraintReachesLpOptimum) {
  const RateProblem p =
      RateProblem::build(test::spec("error", {"tpr[g=a] >= 0.85"}), {{"train", &ds_}});
  expect_near_optimum(p, pool_rates(p, ds_, pool_), "recall");
}

TEST(GroupPoolTest, DemographicParityReachesLpOptimum) {
  const Dataset ds = with_group_feature(test::synthetic(400, 22));
  const RateProblem p = RateProblem::build(
      test::spec("error", {"ppr[g=b] - ppr[g=a] <= 0.03", "ppr[g=a] - ppr[g=b] <= 0.03"}),
      {{"train", &ds}});
  expect_near_optimum(p, group_pool_rates(p, ds), "demographic parity");
}

TEST(GroupPoolTest, EqualOpportunityReachesLpOptimum) {
  const Dataset ds = with_group_feature(test::synthetic(400, 23));
  const RateProblem p = RateProblem::build(
      test::spec("error", {"tpr[g=b] - tpr[g=a] <= 0.02", "tpr[g=a] - tpr[g=b] <= 0.02"}),
      {{"train", &ds}});
  expect_near_optimum(p, group_pool_rates(p, ds), "equal opportunity");
}

// The cutting-plane solver with the exact oracle over the pool: its Lagrangian bound is then a true
// lower bound on the optimum over stochastic mixtures of the class, so the certificate must
// bracket the LP optimum over the pool: lower_bound <= optimum <= objective <= lower_bound + gap.
TEST_F(PoolTest, CuttingPlaneExactOracleCertifiesTheLpOptimum) {
  for (const char* c : {"tpr[g=a] >= 0.85", "ppr[g=b] <= 0.3"}) {
    const RateProblem p = RateProblem::build(test::spec("error", {c}), {{"train", &ds_}});
    const PoolRates pr = pool_rates(p, ds_, pool_);
    const ShrinkResult opt = shrink_candidates(pr.f, pr.g, 1);
    ASSERT_TRUE(opt.feasible) << c;
    TrainOptions o;
    o.solver = TrainSolver::kCuttingPlane;
    o.oracle = pool_oracle(ds_);
    o.tolerance = 1e-4;
    const TrainResult r = train_rate_constrained(p, o);
    EXPECT_EQ(r.solver, TrainSolver::kCuttingPlane);
    EXPECT_EQ(r.status, Termination::kConverged) << c;
    EXPECT_LE(r.stochastic.max_violation(), 1e-9) << c;
    EXPECT_LE(r.lower_bound, opt.objective + 1e-9) << c;
    EXPECT_GE(r.stochastic.objective, opt.objective - 1e-9) << c;
    EXPECT_NEAR(r.stochastic.objective, opt.objective, 1e-4) << c;
    EXPECT_NEAR(r.gap, r.stochastic.objective - r.lower_bound, 1e-12) << c;
    EXPECT_LT(r.iterations, 60) << c;
    // The deterministic pick is feasible whenever a feasible candidate exists.
    EXPECT_LE(r.deterministic.max_violation(), o.tolerance) << c;
  }
}

// Rows of one score feature and a group column "c" of k values, whose rates differ by group.
Dataset many_groups(std::size_t n, std::size_t k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  std::vector<double> x(n);
  Labels y;
  y.kind = LabelKind::kBinary;
  y.names = {"0", "1"};
  std::vector<std::string> group(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t v = i % k;
    x[i] = normal(rng) + 0.8 * static_cast<double>(v) / static_cast<double>(k);
    y.values.push_back(unif(rng) < 1 / (1 + std::exp(-2.5 * x[i])) ? 1 : 0);
    group[i] = fmt::format("v{}", v);
  }
  Dataset ds(FeatureMatrix::dense(std::move(x), n, 1), y);
  ds.add_column(test::make_column("c", group));
  return ds;
}

// parity over many values as one spread constraint (max - min <= b, with two auxiliary variables
// in the cutting-plane solver's LP): the same values as the pairwise form on every classifier of
// the pool, and the exact oracle reaches the pairwise LP optimum over the pool.
TEST(SpreadParity, CuttingPlaneReachesThePairwiseOptimum) {
  for (const std::size_t k : {3U, 7U, 20U}) {
    const Dataset ds = many_groups(700, k, 40 + k);
    const std::vector<LinearModel> pool = threshold_pool(ds);
    for (const char* c : {"parity(ppr, c) <= 0.04", "parity(tpr, c) <= 0.03"}) {
      ProblemSpec pairs = test::spec("error", {c});
      pairs.parity = ParityForm::kPairs;
      ProblemSpec spread = pairs;
      spread.parity = ParityForm::kSpread;
      const RateProblem pp = RateProblem::build(pairs, {{"train", &ds}});
      const RateProblem sp = RateProblem::build(spread, {{"train", &ds}});
      // The forms: k (k - 1) pieces (each gap both ways) against one spread of k members; the
      // default (kTraining) pairs up to 16 values.
      ASSERT_EQ(pp.constraints().size(), k * (k - 1)) << c;
      ASSERT_EQ(sp.constraints().size(), 1U) << c;
      ASSERT_TRUE(sp.constraints()[0].spread.has_value()) << c;
      EXPECT_EQ(sp.constraints()[0].spread->members.size(), k) << c;
      EXPECT_EQ(sp.constraints()[0].shape, "convex");
      EXPECT_EQ(RateProblem::build(test::spec("error", {c}), {{"train", &ds}})
                    .constraints()[0]
                    .spread.has_value(),
                k > kPairwiseParityValues);
      // The same value on every classifier of the pool.
      const PoolRates pr = pool_rates(pp, ds, pool);
      const PoolRates sr = pool_rates(sp, ds, pool);
      const std::size_t m = pp.constraints().size();
      for (std::size_t i = 0; i < pool.size(); ++i) {
        double worst = -1e300;
        for (std::size_t j = 0; j < m; ++j) worst = std::max(worst, pr.g[i * m + j]);
        ASSERT_NEAR(sr.g[i], worst, 1e-12) << c << ", pool model " << i;
      }
      const ShrinkResult opt = shrink_candidates(pr.f, pr.g, m);
      ASSERT_TRUE(opt.feasible) << c;
      // The bound binds: the best unconstrained threshold is better.
      EXPECT_GT(opt.objective, *std::min_element(pr.f.begin(), pr.f.end()) + 1e-3) << k << c;
      TrainOptions o;
      o.oracle = pool_oracle(ds);
      o.tolerance = 1e-4;
      const TrainResult r = train_rate_constrained(sp, o);
      EXPECT_EQ(r.solver, TrainSolver::kCuttingPlane) << c;  // auto takes the spread
      EXPECT_EQ(r.status, Termination::kConverged) << k << " " << c;
      EXPECT_LE(r.stochastic.max_violation(), 1e-9) << k << " " << c;
      EXPECT_LE(r.lower_bound, opt.objective + 1e-9) << k << " " << c;
      EXPECT_GE(r.stochastic.objective, opt.objective - 1e-9) << k << " " << c;
      EXPECT_NEAR(r.stochastic.objective, opt.objective, 1e-4) << k << " " << c;
      EXPECT_NEAR(r.gap, r.stochastic.objective - r.lower_bound, 1e-12) << c;
      // The mixture's own pairwise gaps, recomputed from its components, meet the bound.
      std::vector<double> mix_atoms(pp.atoms().size(), 0.0);
      for (std::size_t q = 0; q < r.classifier.components.size(); ++q) {
        const LinearModel& lm = r.classifier.components[q].linear();
        const auto at = std::find_if(pool.begin(), pool.end(), [&](const LinearModel& x) {
          return x.weights == lm.weights && x.bias == lm.bias;
        });
        ASSERT_NE(at, pool.end());
        const std::vector<double>& a = pr.atoms[static_cast<std::size_t>(at - pool.begin())];
        for (std::size_t t = 0; t < a.size(); ++t) mix_atoms[t] += r.classifier.mixture[q] * a[t];
      }
      EXPECT_LE(pp.evaluate(mix_atoms).max_violation(), 1e-9) << k << " " << c;
    }
  }
}

// A spread bound no mixture meets: the smallest violation (gaps are >= 0: 0.01, at a mixture of
// equal rates), found by the bisection over the lifted LP.
TEST(SpreadParity, InfeasibleBoundEndsAtTheSmallestViolation) {
  const Dataset ds = many_groups(400, 20, 6);
  const RateProblem sp =
      RateProblem::build(test::spec("error", {"parity(ppr, c) <= -0.01"}), {{"train", &ds}});
  ASSERT_TRUE(sp.constraints()[0].spread.has_value());
  TrainOptions o;
  o.oracle = pool_oracle(ds);
  const TrainResult r = train_rate_constrained(sp, o);
  EXPECT_EQ(r.status, Termination::kInfeasible);
  EXPECT_NEAR(r.stochastic.max_violation(), 0.01, 1e-6);
}

// The solvers that need linear functions refuse the spread and say what takes it; the game
// solvers take it as a convex function; post-processing asks for the pairwise form.
TEST(SpreadParity, OtherSolversAndPostProcessing) {
  const Dataset ds = many_groups(300, 20, 5);
  const RateProblem sp =
      RateProblem::build(test::spec("error", {"parity(ppr, c) <= 0.1"}), {{"train", &ds}});
  ASSERT_TRUE(sp.constraints()[0].spread.has_value());
  TrainOptions o;
  o.solver = TrainSolver::kProxyLagrangian;
  test::expect_invalid([&] { (void)train_rate_constrained(sp, o); },
                       "parity over more than 16 values is one convex constraint");
  o.solver = TrainSolver::kThreePlayer;
  o.iterations = 50;
  const TrainResult r = train_rate_constrained(sp, o);
  EXPECT_EQ(r.solver, TrainSolver::kThreePlayer);
  EXPECT_EQ(r.stochastic.constraints.size(), 1U);
  const Classifier base =
      Classifier::single(LinearModel{{1.0}, 0.0}, Link::kThreshold, Encoding::for_matrix(1));
  test::expect_invalid([&] { (void)postprocess(sp, base, test::by_groups({"c"})); },
                       "pairwise_parity(spec)");
  const RateProblem pairs = RateProblem::build(
      pairwise_parity(test::spec("error", {"parity(ppr, c) <= 0.1"})), {{"train", &ds}});
  EXPECT_EQ(pairs.constraints().size(), 20U * 19U);
  EXPECT_EQ(postprocess(pairs, base, test::by_groups({"c"})).status, Termination::kConverged);
}

// The default (logistic) oracle on the score + group indicator problems: feasible to the
// tolerance, within 0.015 of the LP optimum over per-group thresholds, identical for 1 and 2
// threads, and `auto` picks it for problems linear in rates.
TEST(GroupPoolTest, CuttingPlaneLogisticOracleNearOptimum) {
  const Dataset ds = with_group_feature(test::synthetic(400, 22));
  for (const std::vector<std::string>& cs :
       {std::vector<std::string>{"abs(ppr[g=b] - ppr[g=a]) <= 0.03"},
        std::vector<std::string>{"abs(tpr[g=b] - tpr[g=a]) <= 0.02"}}) {
    const RateProblem p = RateProblem::build(test::spec("error", cs), {{"train", &ds}});
    const ShrinkResult opt =
        shrink_candidates(group_pool_rates(p, ds).f, group_pool_rates(p, ds).g, 2);
    TrainOptions o;
    o.tolerance = 0.005;
    o.n_threads = 1;
    const TrainResult r = train_rate_constrained(p, o);
    EXPECT_EQ(r.solver, TrainSolver::kCuttingPlane);
    EXPECT_LE(r.stochastic.max_violation(), o.tolerance) << cs[0];
    EXPECT_LE(r.stochastic.objective, opt.objective + 0.015) << cs[0];
    EXPECT_TRUE(r.status == Termination::kConverged || r.status == Termination::kFeasible);
    EXPECT_EQ(r.status == Termination::kConverged, r.gap <= o.tolerance);
    o.n_threads = 2;
    const TrainResult r2 = train_rate_constrained(p, o);
    EXPECT_EQ(r.classifier.mixture, r2.classifier.mixture);
    ASSERT_EQ(r.classifier.components.size(), r2.classifier.components.size());
    for (std::size_t k = 0; k < r.classifier.components.size(); ++k) {
      EXPECT_EQ(r.classifier.components[k].linear().weights,
                r2.classifier.components[k].linear().weights);
      EXPECT_EQ(r.classifier.components[k].linear().bias,
                r2.classifier.components[k].linear().bias);
    }
  }
}

// When the slice column is also one-hot features ("g=a", "g=b"), the cutting-plane oracle adds
// the exact best per-group thresholds of each logistic score: with one real feature that is the
// whole class of per-group thresholds (one orientation per score), so the LP optimum over that
// class (enumerated) is reached, and the deterministic pick is feasible.
TEST(GroupPoolTest, CuttingPlaneGroupThresholdsReachTheClassOptimum) {
  const Dataset base = test::synthetic(400, 24);
  Dataset ds = base;
  std::vector<double> x;
  const Column& g = base.column("g");
  for (std::size_t i = 0; i < base.num_rows(); ++i) {
    const bool b = g.levels[static_cast<std::size_t>(g.codes[i])] == "b";
    x.insert(x.end(), {base.features().at(i, 0), b ? 0.0 : 1.0, b ? 1.0 : 0.0});
  }
  ds.features() = FeatureMatrix::dense(std::move(x), base.num_rows(), 3);
  ds.encoding().feature_names = {"x", "g=a", "g=b"};
  for (const std::vector<std::string>& cs :
       {std::vector<std::string>{"abs(ppr[g=b] - ppr[g=a]) <= 0.02"},
        std::vector<std::string>{"abs(tpr[g=b] - tpr[g=a]) <= 0.02"}}) {
    const RateProblem p = RateProblem::build(test::spec("error", cs), {{"train", &ds}});
    // The class optimum: per-group thresholds of x, both orientations (the indicator columns
    // only move thresholds, so group_pool_rates' pool over feature 0 is the class).
    const PoolRates pr = group_pool_rates(p, ds);
    const ShrinkResult opt = shrink_candidates(pr.f, pr.g, 2);
    TrainOptions o;
    o.tolerance = 1e-3;
    const TrainResult r = train_rate_constrained(p, o);
    EXPECT_LE(r.stochastic.max_violation(), o.tolerance) << cs[0];
    EXPECT_NEAR(r.stochastic.objective, opt.objective, 0.003) << cs[0];
    EXPECT_LE(r.deterministic.max_violation(), o.tolerance) << cs[0];
  }
}

// Algorithm 1 with the exact oracle over the pool converges to the LP optimum.
TEST_F(PoolTest, OracleSolverReachesLpOptimum) {
  const RateProblem p =
      RateProblem::build(test::spec("error", {"tpr[g=a] >= 0.85"}), {{"train", &ds_}});
  const PoolRates pr = pool_rates(p, ds_, pool_);
  const ShrinkResult opt = shrink_candidates(pr.f, pr.g, 1);
  TrainOptions o;
  o.solver = TrainSolver::kOracle;
  o.oracle = pool_oracle(ds_);
  o.iterations = 300;
  o.checkpoint_every = 1;
  o.tolerance = 0.005;
  const TrainResult r = train_rate_constrained(p, o);
  EXPECT_LE(r.stochastic.max_violation(), 0.005);
  EXPECT_NEAR(r.stochastic.objective, opt.objective, 0.005);
}

// F-measure (Algorithm 3): over mixtures of thresholds the best F1 is a single threshold.
TEST_F(PoolTest, RatioSolverReachesBestF1) {
  const RateProblem p = RateProblem::build(test::spec("f1", {}, true), {{"", &ds_}});
  EXPECT_EQ(p.objective().kind, FunctionKind::kRatio);
  const PoolRates pr = pool_rates(p, ds_, pool_);
  const double best = -*std::min_element(pr.f.begin(), pr.f.end());
  TrainOptions o;
  o.iterations = 1000;
  const TrainResult r = train_rate_constrained(p, o);
  EXPECT_EQ(r.solver, TrainSolver::kRatio);
  EXPECT_GE(r.stochastic.objective, best - 0.015);
  EXPECT_LE(r.stochastic.objective, best + 1e-9);
  EXPECT_GE(r.deterministic.objective, best - 0.02);
}

// G-mean (Algorithm 2, closed-form slack response): the best mixture of two thresholds (a grid
// over pairs and weights) bounds what is reachable.
TEST_F(PoolTest, ThreePlayerReachesBestGmean) {
  const RateProblem p = RateProblem::build(test::spec("gmean", {}, true), {{"", &ds_}});
  const PoolRates pr = pool_rates(p, ds_, pool_);
  double best_single = 0;
  for (double v : pr.f) best_single = std::max(best_single, -v);
  TrainOptions o;
  o.iterations = 1000;
  const TrainResult r = train_rate_constrained(p, o);
  EXPECT_EQ(r.solver, TrainSolver::kThreePlayer);
  // Mixtures can only help a concave utility of the rates; the stochastic model must get close to
  // the best threshold and cannot exceed the best threshold by more than the concavity gap of a
  // finite pool (tiny for 1200 thresholds).
  EXPECT_GE(r.stochastic.objective, best_single - 0.01);
  EXPECT_LE(r.stochastic.objective, best_single + 0.005);
}

// KLD fairness objective with an error budget (Narasimhan Task A shape) on score + group: the
// per-group thresholds at the label rate make the KLD sum ~0, but the error budget binds.
TEST(GroupPoolTest, KldWithErrorBudget) {
  const Dataset ds = with_group_feature(test::synthetic(400, 24));
  const RateProblem unc = RateProblem::build(test::spec("error"), {{"", &ds}});
  const PoolRates pu = group_pool_rates(unc, ds);
  const std::size_t at =
      static_cast<std::size_t>(std::min_element(pu.f.begin(), pu.f.end()) - pu.f.begin());
  const double best_error = pu.f[at];
  const RateProblem p = RateProblem::build(
      test::spec("kld[g=a] + kld[g=b]", {fmt::format("error <= {}", 1.1 * best_error)}),
      {{"", &ds}});
  EXPECT_EQ(p.objective().shape, "convex");
  const PoolRates pr = group_pool_rates(p, ds);
  TrainOptions o;
  o.iterations = 1500;
  o.tolerance = 0.005;
  const TrainResult r = train_rate_constrained(p, o);
  EXPECT_EQ(r.solver, TrainSolver::kThreePlayer);
  EXPECT_LE(r.stochastic.max_violation(), 0.005);
  // Better than the error-optimal model's KLD, and close to the best feasible pool member's.
  double best_feasible = 1e300;
  for (std::size_t i = 0; i < pr.f.size(); ++i)
    if (pr.g[i] <= 0) best_feasible = std::min(best_feasible, pr.f[i]);
  std::printf("kld: error-optimal %.5f best feasible pair %.5f trained %.5f\n", pr.f[at],
              best_feasible, r.stochastic.objective);
  EXPECT_LT(r.stochastic.objective, pr.f[at]);
  EXPECT_LE(r.stochastic.objective, best_feasible + 0.01);
}

// Same input and seed give bit-identical models for any thread count (fixed-block reductions).
TEST(TrainDeterminism, ThreadCountInvariance) {
  const Dataset ds = test::synthetic(5000, 31, false, 3);
  const RateProblem p = RateProblem::build(
      test::spec("error", {"ppr[g=b] - ppr[g=a] <= 0.02", "ppr[g=a] - ppr[g=b] <= 0.02"}),
      {{"", &ds}});
  std::vector<std::string> json;
  for (int threads : {1, 2, 3}) {
    TrainOptions o;
    o.iterations = 40;
    o.n_threads = threads;
    json.push_back(train_rate_constrained(p, o).classifier.to_json());
  }
  EXPECT_EQ(json[0], json[1]);
  EXPECT_EQ(json[0], json[2]);
}

// ---- group-threshold (plug-in) oracle -------------------------------------------------------

// Row costs of a linear function of the atoms (what the game hands the oracle).
OracleCosts function_costs(const RateProblem& p, const AffineForm& f,
                           std::vector<std::vector<double>>& rows, std::vector<double>& beta) {
  beta.assign(p.atoms().size(), 0.0);
  for (const AtomTerm& t : f.terms) beta[t.atom] += t.coef;
  rows.assign(p.data().size(), {});
  for (std::size_t d = 0; d < rows.size(); ++d) rows[d].assign(p.data()[d].data->num_rows(), 0.0);
  for (std::size_t k = 0; k < beta.size(); ++k) {
    const Atom& a = p.atoms()[k];
    a.rows.for_each(
        [&](std::size_t r, std::uint32_t row) { rows[a.dataset][row] += beta[k] * a.coef_at(r); });
  }
  return OracleCosts{rows, beta};
}

// Exact (plugin = false): the oracle's choice costs no more than any pair of group thresholds
// (brute force over all cut pairs), and is itself such a pair.
TEST(GroupThresholdOracle, EmpiricalMatchesBruteForceOverThresholdPairs) {
  const Dataset ds = with_group_feature(test::synthetic(150, 41));
  const RateProblem p =
      RateProblem::build(test::spec("error + 0.7 * ppr[g=b] - 0.4 * tpr[g=a]"), {{"", &ds}});
  std::vector<std::vector<double>> rows;
  std::vector<double> beta;
  const OracleCosts costs = function_costs(p, *p.objective().linear, rows, beta);
  const CostSensitiveOracle oracle = group_threshold_oracle(
      {.probability_model = LinearModel{{1.0, 0.0}, 0.0}, .group_features = {1}, .plugin = false});
  const LinearModel m = oracle(p, costs);
  const std::size_t n = ds.num_rows();
  std::vector<double> sc(n);
  m.scores(ds.features(), sc, 1);
  double got = 0;
  for (std::size_t i = 0; i < n; ++i) got += sc[i] > 0 ? rows[0][i] : 0.0;
  // Brute force: every cut of group a (indicator 0) and of group b, separately (costs add).
  double best = 0;
  for (double ind : {0.0, 1.0}) {
    std::vector<double> cuts{-1e9, 1e9};
    for (std::size_t i = 0; i < n; ++i)
      if (ds.features().at(i, 1) == ind) cuts.push_back(ds.features().at(i, 0));
    double group_best = 1e300;
    for (double c : cuts)
      for (double eps : {-1e-9, 1e-9}) {
        double cost = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (ds.features().at(i, 1) == ind && ds.features().at(i, 0) > c + eps) cost += rows[0][i];
        group_best = std::min(group_best, cost);
      }
    best += group_best;
  }
  EXPECT_NEAR(got, best, 1e-12);
  EXPECT_EQ(m.weights[0], 1.0);
}

// Plug-in (COCO): the costs of error + c * ppr[g=b] with labels replaced by eta = sigmoid(s) are
// (1 - 2 eta) / N (+ c / N_b in group b), so the oracle predicts 1{eta > 1/2} in group a and
// 1{eta > 1/2 + c N / (2 N_b)} in group b.
TEST(GroupThresholdOracle, PluginThresholdsFollowTheCostFormula) {
  const Dataset ds = with_group_feature(test::synthetic(400, 42));
  const double c = 0.08;
  const RateProblem p =
      RateProblem::build(test::spec(fmt::format("error + {} * ppr[g=b]", c)), {{"", &ds}});
  std::vector<std::vector<double>> rows;
  std::vector<double> beta;
  const OracleCosts costs = function_costs(p, *p.objective().linear, rows, beta);
  const LinearModel prob{{1.3, 0.0}, -0.2};
  const LinearModel m =
      group_threshold_oracle({.probability_model = prob, .group_features = {1}})(p, costs);
  const std::size_t n = ds.num_rows();
  double nb = 0;
  for (std::size_t i = 0; i < n; ++i) nb += ds.features().at(i, 1);
  std::vector<double> s(n), got(n);
  prob.scores(ds.features(), s, 1);
  m.scores(ds.features(), got, 1);
  int positives = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double eta = 1 / (1 + std::exp(-s[i]));
    const bool b = ds.features().at(i, 1) == 1;
    const double cut = b ? 0.5 + c * static_cast<double>(n) / (2 * nb) : 0.5;
    EXPECT_EQ(got[i] > 0, eta > cut) << "row " << i << " eta " << eta;
    positives += got[i] > 0 ? 1 : 0;
  }
  EXPECT_GT(positives, 0);
}

TEST(GroupThresholdOracle, BadGroupFeatures) {
  const Dataset ds = with_group_feature(test::synthetic(50, 43));
  const RateProblem p = RateProblem::build(test::spec("error"), {{"", &ds}});
  std::vector<std::vector<double>> rows;
  std::vector<double> beta;
  const OracleCosts costs = function_costs(p, *p.objective().linear, rows, beta);
  // Column 5 does not exist; column 0 is not an indicator.
  EXPECT_THROW((void)group_threshold_oracle({.probability_model = LinearModel{{1.0, 0.0}, 0.0},
                                             .group_features = {5}})(p, costs),
               InvalidArgument);
  EXPECT_THROW((void)group_threshold_oracle({.probability_model = LinearModel{{1.0, 0.0}, 0.0},
                                             .group_features = {0}})(p, costs),
               InvalidArgument);
}

// Algorithm 1 with the exact group-threshold oracle reaches the LP optimum over mixtures of
// group-threshold pairs under demographic parity.
TEST(GroupThresholdOracle, AlgorithmOneReachesLpOptimumUnderDemographicParity) {
  const Dataset ds = with_group_feature(test::synthetic(300, 44));
  const RateProblem p = RateProblem::build(
      test::spec("error", {"ppr[g=b] - ppr[g=a] <= 0.03", "ppr[g=a] - ppr[g=b] <= 0.03"}),
      {{"train", &ds}});
  const PoolRates pr = group_pool_rates(p, ds, {1.0});
  const ShrinkResult opt = shrink_candidates(pr.f, pr.g, 2);
  ASSERT_TRUE(opt.feasible);
  TrainOptions o;
  o.solver = TrainSolver::kOracle;
  o.oracle = group_threshold_oracle(
      {.probability_model = LinearModel{{1.0, 0.0}, 0.0}, .group_features = {1}, .plugin = false});
  o.iterations = 400;
  o.checkpoint_every = 1;
  o.tolerance = 0.005;
  const TrainResult r = train_rate_constrained(p, o);
  EXPECT_LE(r.stochastic.max_violation(), 0.005);
  EXPECT_NEAR(r.stochastic.objective, opt.objective, 0.005);
  std::vector<double> g = pr.g;
  for (double& x : g) x -= r.stochastic.max_violation();
  EXPECT_GE(r.stochastic.objective, shrink_candidates(pr.f, g, 2).objective - 1e-9);
}

// Early stop: the run ends at a window boundary before `iterations`, and its classifier is the
// one of a plain run truncated to the same number of rounds.
TEST(TrainEarlyStop, StopsAtAWindowAndEqualsTheTruncatedRun) {
  const Dataset ds = with_group_feature(test::synthetic(400, 45));
  const RateProblem p = RateProblem::build(
      test::spec("error", {"ppr[g=b] - ppr[g=a] <= 0.03", "ppr[g=a] - ppr[g=b] <= 0.03"}),
      {{"", &ds}});
  TrainOptions o;
  o.solver = TrainSolver::kProxyLagrangian;
  o.iterations = 3000;
  o.checkpoint_every = 10;
  o.stop_window = 100;
  o.stop_tolerance = 0.01;
  o.tolerance = 0.01;
  const TrainResult early = train_rate_constrained(p, o);
  EXPECT_LT(early.iterations, o.iterations);
  EXPECT_EQ(early.iterations % o.stop_window, 0);
  EXPECT_GE(early.iterations, 2 * o.stop_window);
  TrainOptions plain = o;
  plain.stop_window = 0;
  plain.iterations = early.iterations;
  const TrainResult full = train_rate_constrained(p, plain);
  EXPECT_EQ(full.iterations, early.iterations);
  EXPECT_EQ(full.num_candidates, early.num_candidates);
  EXPECT_EQ(full.classifier.mixture, early.classifier.mixture);
  ASSERT_EQ(full.classifier.components.size(), early.classifier.components.size());
  for (std::size_t k = 0; k < full.classifier.components.size(); ++k)
    EXPECT_EQ(full.classifier.components[k].linear().weights,
              early.classifier.components[k].linear().weights);
  EXPECT_EQ(full.stochastic.objective, early.stochastic.objective);
}

// Minibatch model player: a batch as large as the data is the full batch; a small batch is
// seeded (same seed, same model, for any thread count) and still reaches the LP optimum over
// group-threshold mixtures under demographic parity, to a looser tolerance.
TEST(TrainMinibatch, FullSizeBatchEqualsFullBatchAndSmallBatchReachesOptimum) {
  const Dataset ds = with_group_feature(test::synthetic(400, 46));
  const RateProblem p = RateProblem::build(
      test::spec("error", {"ppr[g=b] - ppr[g=a] <= 0.03", "ppr[g=a] - ppr[g=b] <= 0.03"}),
      {{"", &ds}});
  TrainOptions o;
  o.solver = TrainSolver::kProxyLagrangian;
  o.iterations = 1500;
  o.tolerance = 0.01;
  const TrainResult full = train_rate_constrained(p, o);
  o.batch_size = 400;
  const TrainResult same = train_rate_constrained(p, o);
  EXPECT_EQ(full.classifier.components.size(), same.classifier.components.size());
  EXPECT_EQ(full.classifier.mixture, same.classifier.mixture);
  EXPECT_EQ(full.stochastic.objective, same.stochastic.objective);

  o.batch_size = 64;
  o.seed = 3;
  const TrainResult mb = train_rate_constrained(p, o);
  o.n_threads = 2;
  const TrainResult mb2 = train_rate_constrained(p, o);
  EXPECT_EQ(mb.classifier.to_json(), mb2.classifier.to_json());
  o.seed = 4;
  const TrainResult other = train_rate_constrained(p, o);
  EXPECT_NE(mb.classifier.to_json(), other.classifier.to_json());

  const PoolRates pr = group_pool_rates(p, ds);
  const ShrinkResult opt = shrink_candidates(pr.f, pr.g, 2);
  ASSERT_TRUE(opt.feasible);
  std::printf("minibatch 64: objective %.5f violation %.5f; full batch %.5f; LP optimum %.5f\n",
              mb.stochastic.objective, mb.stochastic.max_violation(), full.stochastic.objective,
              opt.objective);
  EXPECT_LE(mb.stochastic.max_violation(), 0.01);
  EXPECT_LE(mb.stochastic.objective, opt.objective + 0.03);
  std::vector<double> g = pr.g;
  for (double& x : g) x -= mb.stochastic.max_violation();
  EXPECT_GE(mb.stochastic.objective, shrink_candidates(pr.f, g, 2).objective - 1e-9);
}

TEST(TrainOptionsCheck, BadOptions) {
  const Dataset ds = test::synthetic(50, 1);
  const RateProblem p = RateProblem::build(test::spec("error"), {{"", &ds}});
  TrainOptions o;
  o.iterations = 0;
  EXPECT_THROW((void)train_rate_constrained(p, o), InvalidArgument);
  o = {};
  o.solver = TrainSolver::kOracle;
  EXPECT_THROW((void)train_rate_constrained(p, o), InvalidArgument);
  o = {};
  o.batch_size = -1;
  EXPECT_THROW((void)train_rate_constrained(p, o), InvalidArgument);
  o = {};
  o.stop_window = -1;
  EXPECT_THROW((void)train_rate_constrained(p, o), InvalidArgument);
  const RateProblem f1 = RateProblem::build(test::spec("f1", {}, true), {{"", &ds}});
  o = {};
  o.solver = TrainSolver::kProxyLagrangian;
  EXPECT_THROW((void)train_rate_constrained(f1, o), InvalidArgument);
  EXPECT_EQ(parse_train_solver("three-player"), TrainSolver::kThreePlayer);
  EXPECT_THROW((void)parse_train_solver("nope"), InvalidArgument);
}

}  // namespace
}  // namespace rateopt
