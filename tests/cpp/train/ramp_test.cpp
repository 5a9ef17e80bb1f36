// Tests of the ramp-loss trainer with dataset constraints (src/train/ramp*.cpp): the rate
// vocabulary against metrics.hpp, MM monotonicity and feasibility, the outer bounds bracketing an
// exact QP optimum of Problem 3 (bisection and cutting planes), phase 1, the saved classifier,
// determinism, the Zafar baseline, bad input, several constraints (two-sided parity, equalized
// odds, an equality), and the fairness constraint on an a9a subsample.
#include "rateopt/ramp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "learners/sdca_qp.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "rateopt/metrics.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

// Two groups (column "g": a, b), 2 dense features plus a group indicator; group a is more often
// positive, so fairness constraints bind.
Dataset make_data(std::size_t n, std::uint64_t seed, bool with_baseline = false) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif(0, 1);
  std::vector<double> x;
  Labels labels;
  labels.kind = LabelKind::kBinary;
  labels.names = {"0", "1"};
  Column g{"g", {}, {}, {}};
  Column base{"baseline", {}, {}, {}};
  for (std::size_t i = 0; i < n; ++i) {
    const bool a = unif(rng) < 0.5;
    const double x0 = normal(rng) + (a ? 0.8 : -0.4), x1 = normal(rng);
    x.insert(x.end(), {x0, x1, a ? 1.0 : 0.0});
    const double logit = 1.5 * x0 - 0.7 * x1 + 0.3 * normal(rng);
    labels.values.push_back(logit > 0.3 ? 1 : 0);
    g.push_back(a ? "a" : "b");
    base.push_back(x0 > 0.5 ? "1" : "0");
  }
  Dataset ds(FeatureMatrix::dense(x, n, 3), labels);
  ds.add_column(g);
  if (with_baseline) ds.add_column(base);
  return ds;
}

double ramp(double s) {
  return std::clamp((1 + s) / 2, 0.0, 1.0);
}

// P(positive) of every row, thresholded or ramp.
std::vector<double> probs(const Dataset& ds, const LinearModel& m, bool randomised) {
  std::vector<double> s(ds.num_rows());
  m.scores(ds.features(), s, 1);
  for (double& v : s) v = randomised ? ramp(v) : (v > 0 ? 1.0 : 0.0);
  return s;
}

TEST(RampRates, VocabularyMatchesMetrics) {
  const Dataset ds = make_data(200, 1, true);
  const LinearModel m{{0.7, -0.3, 0.4}, -0.1};
  const NamedDataset data[] = {{"d", &ds}};
  for (const bool randomised : {false, true}) {
    const auto p = probs(ds, m, randomised);
    const auto all = count_slice(ds, {}, p);
    const auto ma = slice_mask(ds, Slice::parse("g=a"));
    const auto mb = slice_mask(ds, Slice::parse("g=b"));
    const auto ca = count_slice(ds, ma, p), cb = count_slice(ds, mb, p);
    const double ppr_a = ca.confusion.predicted_positive() / ca.total;
    const double ppr_b = cb.confusion.predicted_positive() / cb.total;
    const double tpr_a = ca.confusion.tp / ca.confusion.positives();
    const double tpr_b = cb.confusion.tp / cb.confusion.positives();
    RampProblem prob;
    prob.objective = error_rate("d");
    const std::vector<std::pair<RateConstraint, double>> expected{
        {at_most(coverage("d"), 0), all.confusion.predicted_positive() / all.total},
        {at_most(true_positives("d"), 0), all.confusion.tp},
        {at_most(false_positives("d"), 0), all.confusion.fp},
        {at_most(false_negatives("d"), 0), all.confusion.fn},
        {at_most(true_negatives("d"), 0), all.confusion.tn},
        {at_most(error_count("d"), 0), all.confusion.fp + all.confusion.fn},
        {at_most(recall("d"), 0), all.confusion.tp / all.confusion.positives()},
        {at_most(false_positive_rate("d"), 0), all.confusion.fp / all.confusion.negatives()},
        {at_most(error_rate("d", Slice::parse("g=a")), 0),
         (ca.confusion.fp + ca.confusion.fn) / ca.total},
        {at_most(churn_count("d"), 0), all.changes},
        {at_most(churn_rate("d", Slice::parse("g=b")), 0), cb.changes / cb.total},
        {fairness_ratio_constraint("d", Slice::parse("g=b"), Slice::parse("g=a"), 0.8),
         0.8 * ppr_a - ppr_b},
        {equal_opportunity_constraint("d", Slice::parse("g=b"), Slice::parse("g=a"), 0.9),
         0.9 * tpr_a - tpr_b},
        {egregious_constraints("d", 0.7)[1], -(all.confusion.tn / all.confusion.negatives())},
        {at_least(2.0 * coverage("d") - positive_rate("d", Slice::parse("g=a")) + 0.25, 0.1),
         -(2.0 * all.confusion.predicted_positive() / all.total - ppr_a + 0.25)},
    };
    for (const auto& [c, value] : expected) prob.constraints.push_back(c);
    const RampEvaluation e = evaluate_ramp_problem(prob, data, m, randomised);
    EXPECT_NEAR(e.objective, (all.confusion.fp + all.confusion.fn) / all.total, 1e-12);
    for (std::size_t j = 0; j < expected.size(); ++j)
      EXPECT_NEAR(e.constraints[j], expected[j].second, 1e-9) << "constraint " << j;
    // Bounds of the vocabulary's constraints.
    EXPECT_EQ(egregious_constraints("d", 0.7)[0].bound, -0.7);
    EXPECT_EQ(neyman_pearson("d", 0.1).constraints[0].bound, 0.1);
  }
}

// Problem 3 at w' = 0 (every ramp bounded by its hinge) as an exact QP, for the problem
//   min error_rate  s.t.  0.8 sp(a) - sp(b) <= 0  [and recall(a) >= 0.5].
// Per row and side: h+(s) = max(0, 1 + s)/2 (label -1), h-(s) = max(0, 1 - s)/2 (label +1).
double exact_problem3_at_zero(const Dataset& ds, double lambda, bool two_constraints) {
  const std::size_t n = ds.num_rows();
  const auto ma = slice_mask(ds, Slice::parse("g=a"));
  double na = 0, nb = 0, na1 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    na += ma[i];
    nb += 1 - ma[i];
    na1 += ma[i] * static_cast<double>(ds.labels().values[i] == 1);
  }
  std::vector<SvmExample> ex;
  std::vector<std::vector<double>> cw(two_constraints ? 2 : 1);
  for (std::size_t i = 0; i < n; ++i) {
    const bool pos = ds.labels().values[i] == 1;
    // Positive side (label -1): objective on negatives; constraint 1 on group a.
    ex.push_back({0, i, -1.0, pos ? 0.0 : 0.5 / static_cast<double>(n)});
    cw[0].push_back(ma[i] != 0 ? 0.5 * 0.8 / na : 0.0);
    if (two_constraints) cw[1].push_back(0.0);
    // Negative side (label +1): objective on positives; constraint 1 on group b (sn(b) - 1);
    // constraint 2 on positives of group a (sn(a+) <= 0.5).
    ex.push_back({0, i, 1.0, pos ? 0.5 / static_cast<double>(n) : 0.0});
    cw[0].push_back(ma[i] == 0 ? 0.5 / nb : 0.0);
    if (two_constraints) cw[1].push_back(ma[i] != 0 && pos ? 0.5 / na1 : 0.0);
  }
  std::vector<double> bounds{1.0};
  if (two_constraints) bounds.push_back(0.5);
  const auto qp = detail::solve_hinge_qp(ds.features(), ex, lambda, 1.0, {}, cw, bounds);
  EXPECT_TRUE(qp.solved);
  return qp.objective;
}

RampProblem fairness_problem(bool two_constraints) {
  RampProblem p;
  p.objective = error_rate("d");
  p.constraints.push_back(
      fairness_ratio_constraint("d", Slice::parse("g=b"), Slice::parse("g=a"), 0.8));
  if (two_constraints)
    p.constraints.push_back(at_least(recall("d", Slice::parse("g=a")), 0.5, "recall_a"));
  return p;
}

TEST(Ramp, OuterBoundsBracketTheExactProblem3Optimum) {
  const Dataset ds = make_data(60, 3);
  const NamedDataset data[] = {{"d", &ds}};
  for (const bool two : {false, true}) {
    RampOptions o;
    o.lambda = 0.05;
    o.max_mm_iterations = 1;
    o.outer_tol = 1e-5;
    o.inexact_mm = 0;  // the first step solved to outer_tol
    o.max_outer_iterations = 80;
    o.n_threads = 1;
    const RampResult r = fit_ramp(fairness_problem(two), data, o);
    ASSERT_EQ(r.start, "zero");
    ASSERT_FALSE(r.history.empty());
    const MmIteration& h = r.history[0];
    const double exact = exact_problem3_at_zero(ds, o.lambda, two);
    EXPECT_LE(h.lower_bound, exact + 1e-9) << (two ? "cutting plane" : "bisection");
    EXPECT_GE(h.upper_bound, exact - 1e-9) << (two ? "cutting plane" : "bisection");
    EXPECT_EQ(h.outer_status, Termination::kConverged)
        << two << " U " << h.upper_bound << " L " << h.lower_bound << " solves " << h.svm_solves
        << " v " << h.multipliers[0];
    EXPECT_LE(h.upper_bound - h.lower_bound, o.outer_tol);
    EXPECT_GT(h.multipliers[0], 0) << "the fairness constraint should bind";
    // The step's ramp objective is at most the Problem-3 value of its model (the bound).
    EXPECT_LE(h.objective, h.upper_bound + 1e-12);
  }
}

TEST(Ramp, MajorisationStepsNeverIncreaseTheObjectiveAndStayFeasible) {
  const Dataset ds = make_data(400, 5);
  const NamedDataset data[] = {{"d", &ds}};
  for (const bool two : {false, true}) {
    RampOptions o;
    o.lambda = 1e-3;
    o.max_mm_iterations = 6;
    o.mm_tol = 0;
    o.n_threads = 1;
    const RampProblem p = fairness_problem(two);
    const RampResult r = fit_ramp(p, data, o);
    ASSERT_GE(r.history.size(), 2U);
    double previous = 0.5 + 0.0;  // w = 0: every ramp is 1/2, error rate 1/2, no regulariser
    for (const MmIteration& h : r.history) {
      EXPECT_FALSE(h.phase1);
      EXPECT_TRUE(h.monotone && h.feasible && h.accepted) << "step " << h.iteration;
      EXPECT_NEAR(h.previous_objective, previous, 1e-12);
      EXPECT_LE(h.objective, h.previous_objective + 1e-12);
      EXPECT_LE(h.max_violation, o.feasibility_tol);
      previous = h.objective;
    }
    EXPECT_LT(r.history.back().objective, 0.5 - 0.1);
    // Independent evaluation of the returned model.
    const RampEvaluation e = evaluate_ramp_problem(p, data, r.model, true);
    double reg = 0;
    for (double w : r.model.weights) reg += w * w;
    reg = 0.5 * o.lambda * (reg + r.model.bias * r.model.bias);
    EXPECT_NEAR(e.objective + reg, r.history.back().objective, 1e-12);
    EXPECT_NEAR(e.objective, r.objective, 1e-12);
    for (std::size_t j = 0; j < p.constraints.size(); ++j)
      EXPECT_LE(e.constraints[j], p.constraints[j].bound + o.feasibility_tol);
  }
}

// The per-row form (what rateopt train --solver ramp builds from its atoms), written by hand from
// the definitions: error = sum_i (y_i ? 1 - p_i : p_i) / n, and
// 0.8 sp(a) - sp(b) = sum_{i in a} 0.8 p_i / n_a - sum_{i in b} p_i / n_b; recall(a) >= 0.5 as
// 0.5 - sum_{i in a, y=1} p_i / n_a1 <= 0. It must give the same values and the same fit as the
// slice form.
TEST(Ramp, PerRowFormMatchesTheSliceForm) {
  const Dataset ds = make_data(300, 8);
  const NamedDataset data[] = {{"d", &ds}};
  const auto ma = slice_mask(ds, Slice::parse("g=a"));
  const std::size_t n = ds.num_rows();
  double na = 0, na1 = 0, npos = 0;
  for (std::size_t i = 0; i < n; ++i) {
    na += ma[i];
    na1 += ma[i] != 0 && ds.labels().values[i] == 1 ? 1 : 0;
    npos += ds.labels().values[i] == 1 ? 1 : 0;
  }
  const double nb = static_cast<double>(n) - na;
  RowRampProblem rp;
  rp.objective.constant = npos / static_cast<double>(n);
  rp.objective.coef.assign(1, std::vector<double>(n));
  RowConstraint fair{"fair", {0.0, {std::vector<double>(n)}}, 0.0};
  RowConstraint rec{"recall_a", {0.5, {std::vector<double>(n)}}, 0.0};
  for (std::size_t i = 0; i < n; ++i) {
    const bool y = ds.labels().values[i] == 1;
    rp.objective.coef[0][i] = (y ? -1.0 : 1.0) / static_cast<double>(n);
    fair.lhs.coef[0][i] = ma[i] != 0 ? 0.8 / na : -1.0 / nb;
    rec.lhs.coef[0][i] = ma[i] != 0 && y ? -1.0 / na1 : 0.0;
  }
  rp.constraints = {fair, rec};
  const RampProblem p = fairness_problem(true);
  const LinearModel m{{0.6, -0.4, 0.3}, 0.1};
  for (const bool randomised : {false, true}) {
    const RampEvaluation a = evaluate_ramp_problem(p, data, m, randomised);
    const RampEvaluation b = evaluate_ramp_problem(rp, data, m, randomised);
    EXPECT_NEAR(a.objective, b.objective, 1e-12);
    ASSERT_EQ(b.constraints.size(), 2U);
    EXPECT_NEAR(a.constraints[0] - p.constraints[0].bound, b.constraints[0], 1e-12);
    EXPECT_NEAR(a.constraints[1] - p.constraints[1].bound, b.constraints[1], 1e-12);
  }
  RampOptions o;
  o.lambda = 1e-3;
  o.max_mm_iterations = 4;
  o.n_threads = 1;
  const RampResult ra = fit_ramp(p, data, o);
  const RampResult rb = fit_ramp(rp, data, o);
  // The first steps solve the same convex problems (the compiled forms differ only by rounding
  // in the constants); later steps may branch apart on discrete choices (cut LPs, bracket moves),
  // so the per-row fit is checked on its own terms there.
  ASSERT_GE(ra.history.size(), 2U);
  ASSERT_GE(rb.history.size(), 2U);
  for (std::size_t h = 0; h < 2; ++h) {
    EXPECT_NEAR(ra.history[h].objective, rb.history[h].objective, 1e-9);
    EXPECT_NEAR(ra.history[h].upper_bound, rb.history[h].upper_bound, 1e-9);
    EXPECT_NEAR(ra.history[h].lower_bound, rb.history[h].lower_bound, 1e-9);
  }
  for (const MmIteration& h : rb.history) EXPECT_TRUE(h.monotone && h.feasible && h.accepted);
  const RampEvaluation e = evaluate_ramp_problem(p, data, rb.model, true);
  EXPECT_NEAR(e.objective, rb.objective, 1e-12);
  for (std::size_t j = 0; j < 2; ++j)
    EXPECT_LE(e.constraints[j], p.constraints[j].bound + o.feasibility_tol);
  // Per-row input errors name the argument.
  RowRampProblem bad = rp;
  bad.constraints[0].lhs.coef[0].pop_back();
  EXPECT_THROW((void)fit_ramp(bad, data, o), InvalidArgument);
}

TEST(Ramp, PhaseOneFindsAFeasibleStart) {
  const Dataset ds = make_data(300, 7);
  const NamedDataset data[] = {{"d", &ds}};
  RampProblem p = neyman_pearson("d", 0.15);  // w = 0 has FPR 1/2
  RampOptions o;
  o.lambda = 1e-3;
  o.max_mm_iterations = 3;
  o.n_threads = 1;
  const RampResult r = fit_ramp(p, data, o);
  EXPECT_EQ(r.start, "zero+phase1");
  ASSERT_FALSE(r.history.empty());
  EXPECT_TRUE(r.history.front().phase1);
  EXPECT_NE(r.status, Termination::kInfeasible);
  EXPECT_LE(r.constraints[0], 0.15 + o.feasibility_tol);
  EXPECT_LE(r.max_violation, o.feasibility_tol);
  // An impossible constraint is reported, not thrown.
  RampProblem impossible;
  impossible.objective = error_rate("d");
  impossible.constraints.push_back(at_most(coverage("d"), -0.5));
  o.phase1_iterations = 2;
  const RampResult bad = fit_ramp(impossible, data, o);
  EXPECT_EQ(bad.status, Termination::kInfeasible);
  EXPECT_GT(bad.max_violation, 0.4);
}

TEST(Ramp, ClassifierPredictsThresholdAndRampAndRoundTrips) {
  const Dataset ds = make_data(200, 9);
  const NamedDataset data[] = {{"d", &ds}};
  RampOptions o;
  o.lambda = 1e-2;
  o.max_mm_iterations = 2;
  o.n_threads = 1;
  const RampResult r = fit_ramp(fairness_problem(false), data, o);
  EXPECT_EQ(r.classifier.link, Link::kRamp);
  const Classifier back = Classifier::from_json(r.classifier.to_json());
  std::vector<double> det(ds.num_rows()), prob(ds.num_rows()), det2(ds.num_rows());
  r.classifier.predict(ds.features(), PredictMode::kDeterministic, det);
  r.classifier.predict(ds.features(), PredictMode::kProbability, prob);
  back.predict(ds.features(), PredictMode::kDeterministic, det2);
  EXPECT_EQ(det, probs(ds, r.model, false));
  EXPECT_EQ(det, det2);
  const auto expected = probs(ds, r.model, true);
  for (std::size_t i = 0; i < prob.size(); ++i) EXPECT_NEAR(prob[i], expected[i], 1e-15);
  // The reported ramp and 0/1 values are those of the saved model.
  const auto e = evaluate_ramp_problem(fairness_problem(false), data, r.model, false);
  EXPECT_NEAR(e.objective, r.objective_deterministic, 1e-12);
  EXPECT_NEAR(e.constraints[0], r.constraints_deterministic[0], 1e-12);
}

TEST(Ramp, SameResultForAnyThreadCountAndGivenStart) {
  const Dataset ds = make_data(300, 11);
  const NamedDataset data[] = {{"d", &ds}};
  RampOptions o;
  o.lambda = 1e-3;
  o.max_mm_iterations = 3;
  o.n_threads = 1;
  const RampResult a = fit_ramp(fairness_problem(true), data, o);
  o.n_threads = 2;
  const RampResult b = fit_ramp(fairness_problem(true), data, o);
  EXPECT_EQ(a.model.weights, b.model.weights);
  EXPECT_EQ(a.model.bias, b.model.bias);
  // Starting from the result continues from there (never worse).
  o.initial = a.model;
  o.max_mm_iterations = 1;
  const RampResult c = fit_ramp(fairness_problem(true), data, o);
  EXPECT_EQ(c.start, "initial");
  EXPECT_LE(c.history.back().objective, a.history.back().objective + 1e-12);
}

TEST(Ramp, CovarianceBaselineMeetsItsConstraint) {
  const Dataset ds = make_data(300, 13);
  RampOptions o;
  o.lambda = 1e-2;
  const auto free = fit_covariance_svm(ds, Slice::parse("g=a"), Slice::parse("g=b"), 1e9, o);
  EXPECT_EQ(free.multiplier, 0.0);
  ASSERT_GT(free.constraint, 0.1);
  const double c = 0.3 * free.constraint;
  const auto z = fit_covariance_svm(ds, Slice::parse("g=a"), Slice::parse("g=b"), c, o);
  EXPECT_GT(z.multiplier, 0.0);
  EXPECT_LE(z.constraint, c + 1e-9);
  // Bisection on the multiplier with inexact SVM solves: within 2% of the unconstrained value.
  EXPECT_GE(z.constraint, c - 0.02 * std::abs(free.constraint));
}

TEST(Ramp, BadInputThrows) {
  const Dataset ds = make_data(20, 1);
  const NamedDataset data[] = {{"d", &ds}};
  using test::contains;
  using test::error_of;
  RampProblem p = fairness_problem(false);
  p.constraints[0].lhs.terms[0].dataset = "nope";
  EXPECT_TRUE(contains(error_of<NotFound>([&] { (void)fit_ramp(p, data); }), "dataset 'nope'"));
  RampOptions o;
  o.lambda = -1;
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] { (void)fit_ramp(fairness_problem(false), data, o); }),
               "lambda"));
  o = {};
  o.initial = LinearModel{{1.0}, 0.0};
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] { (void)fit_ramp(fairness_problem(false), data, o); }),
               "initial"));
  EXPECT_TRUE(contains(
      error_of<InvalidArgument>([&] { (void)fairness_ratio_constraint("d", {}, {}, 0.0); }),
      "kappa"));
  const NamedDataset twice[] = {{"d", &ds}, {"d", &ds}};
  EXPECT_TRUE(contains(
      error_of<InvalidArgument>([&] { (void)fit_ramp(fairness_problem(false), twice); }), "twice"));
  RampProblem unknown_column;
  unknown_column.objective = coverage("d", Slice::parse("color=red"));
  EXPECT_THROW((void)fit_ramp(unknown_column, data), NotFound);
}

// ---- several constraints: two-sided parity and equalized odds (issue 9) ------------------------
// With two or more constraints Problem 3 is solved by a bundle method over the multipliers with
// primal recovery (convex combinations of the SVM solutions). When the extra constraints are
// redundant (the one-constraint solution already satisfies them), the several-constraint run
// must reach the same objective -- up to MM following a slightly different path -- at a
// comparable number of SVM solves (the limit: 3x).

struct SeveralConstraintsRun {
  RampResult r;
  RampEvaluation e;  // independent evaluation (ramp rates)
};

SeveralConstraintsRun run_several(const RampProblem& p, const Dataset& ds) {
  const NamedDataset data[] = {{"d", &ds}};
  RampOptions o;
  o.lambda = 1e-3;
  o.max_mm_iterations = 30;
  o.mm_tol = 1e-6;
  o.n_threads = 1;
  SeveralConstraintsRun run{fit_ramp(p, data, o), {}};
  run.e = evaluate_ramp_problem(p, data, run.r.model, true);
  return run;
}

void expect_feasible_monotone(const SeveralConstraintsRun& run, const RampProblem& p,
                              const std::string& what) {
  const double tol = RampOptions{}.feasibility_tol;
  EXPECT_EQ(run.r.start, "zero") << what;
  EXPECT_EQ(run.r.status, Termination::kConverged) << what;
  for (const MmIteration& h : run.r.history) {
    EXPECT_TRUE(h.monotone && h.feasible && h.accepted) << what << " step " << h.iteration;
    EXPECT_EQ(h.outer_status, Termination::kConverged) << what << " step " << h.iteration;
  }
  ASSERT_EQ(run.e.constraints.size(), p.constraints.size());
  for (std::size_t j = 0; j < p.constraints.size(); ++j)
    EXPECT_LE(run.e.constraints[j], p.constraints[j].bound + tol) << what << " constraint " << j;
  EXPECT_NEAR(run.e.objective, run.r.objective, 1e-12) << what;
}

TEST(RampSeveral, TwoSidedParityCostsAboutAsMuchAsOneSide) {
  const Dataset ds = make_data(1500, 21);
  const Slice a = Slice::parse("g=a"), b = Slice::parse("g=b");
  // Group a is more often positive: sp(a) - sp(b) <= 0.1 binds, its mirror image does not.
  RampProblem one;
  one.objective = error_rate("d");
  one.constraints.push_back(
      at_most(positive_rate("d", a) - positive_rate("d", b), 0.1, "sp(a) - sp(b)"));
  RampProblem two = one;
  two.constraints.push_back(
      at_most(positive_rate("d", b) - positive_rate("d", a), 0.1, "sp(b) - sp(a)"));
  const SeveralConstraintsRun r1 = run_several(one, ds);
  const SeveralConstraintsRun r2 = run_several(two, ds);
  expect_feasible_monotone(r1, one, "one side");
  expect_feasible_monotone(r2, two, "two sides");
  ASSERT_GT(r1.r.multipliers.at(0), 0) << "the parity should bind";
  ASSERT_LE(-r1.e.constraints[0], 0.1) << "the mirror side should be redundant";
  EXPECT_LE(r2.r.objective, r1.r.objective + 1e-3);
  EXPECT_LE(r2.r.svm_solves, 3 * r1.r.svm_solves)
      << "one side: " << r1.r.svm_solves << " solves, two sides: " << r2.r.svm_solves;
  EXPECT_GE(r2.e.constraints[0], 0.1 - 5e-3) << "the binding side should stay (nearly) tight";
}

TEST(RampSeveral, EqualizedOddsWithFourConstraints) {
  const Dataset ds = make_data(1500, 22);
  const Slice a1 = Slice::parse("g=a,label=1"), b1 = Slice::parse("g=b,label=1");
  const Slice a0 = Slice::parse("g=a,label=0"), b0 = Slice::parse("g=b,label=0");
  const auto tpr_gap = positive_rate("d", a1) - positive_rate("d", b1);
  const auto fpr_gap = positive_rate("d", a0) - positive_rate("d", b0);
  RampProblem one;
  one.objective = error_rate("d");
  one.constraints.push_back(at_most(fpr_gap, 0.05, "fpr(a) - fpr(b)"));
  RampProblem four = one;
  four.constraints.push_back(at_most(-1.0 * fpr_gap, 0.05, "fpr(b) - fpr(a)"));
  four.constraints.push_back(at_most(tpr_gap, 0.2, "tpr(a) - tpr(b)"));
  four.constraints.push_back(at_most(-1.0 * tpr_gap, 0.2, "tpr(b) - tpr(a)"));
  const SeveralConstraintsRun r1 = run_several(one, ds);
  const SeveralConstraintsRun r4 = run_several(four, ds);
  expect_feasible_monotone(r1, one, "one constraint");
  expect_feasible_monotone(r4, four, "equalized odds");
  ASSERT_GT(r1.r.multipliers.at(0), 0) << "the fpr parity should bind";
  // The one-constraint solution satisfies the other three: they are redundant.
  const NamedDataset data[] = {{"d", &ds}};
  const RampEvaluation e1 = evaluate_ramp_problem(four, data, r1.r.model, true);
  for (std::size_t j = 1; j < 4; ++j)
    ASSERT_LE(e1.constraints[j], four.constraints[j].bound) << "constraint " << j;
  EXPECT_LE(r4.r.objective, r1.r.objective + 1e-3);
  EXPECT_LE(r4.r.svm_solves, 3 * r1.r.svm_solves)
      << "one constraint: " << r1.r.svm_solves << " solves, four: " << r4.r.svm_solves;
}

// An equality (a == b becomes two opposite constraints with bound 0) leaves Problem 3 no
// strictly feasible point; the band is widened within the feasibility tolerance so that MM
// still makes progress (before: every step spent its outer budget and the start was kept).
TEST(RampSeveral, EqualityParityMakesProgressWithinTheTolerance) {
  const Dataset ds = make_data(800, 23);
  const Slice a = Slice::parse("g=a"), b = Slice::parse("g=b");
  RampProblem p;
  p.objective = error_rate("d");
  p.constraints.push_back(at_most(positive_rate("d", a) - positive_rate("d", b), 0.0));
  p.constraints.push_back(at_most(positive_rate("d", b) - positive_rate("d", a), 0.0));
  const SeveralConstraintsRun r = run_several(p, ds);
  for (const MmIteration& h : r.r.history) EXPECT_TRUE(h.monotone && h.feasible && h.accepted);
  for (std::size_t j = 0; j < 2; ++j)
    EXPECT_LE(r.e.constraints[j], RampOptions{}.feasibility_tol) << "constraint " << j;
  EXPECT_LT(r.r.objective, 0.5 - 0.1) << "MM should leave the start (w = 0, error 1/2)";
}

// ---- a9a: the fairness constraint holds on the training data at termination ----------------

TEST(RampA9a, FairnessConstraintHoldsOnTrainingSubsample) {
  const std::string path = test::data_dir() + "/adult/a9a.gz";
  if (!std::filesystem::exists(path)) {
    const char* req = std::getenv("RATEOPT_REQUIRE_DATA");
    if (req != nullptr && std::string(req) == "1")
      FAIL() << "a9a not found under " << test::data_dir();
    GTEST_SKIP() << "a9a not found under " << test::data_dir();
  }
  LibsvmOptions lo;
  lo.num_features = 123;
  const Dataset full = read_libsvm(path, lo);
  // Every 12th row (2714 rows); the full-data check lives in bench/repro_goh.cpp.
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < full.num_rows(); i += 12) rows.push_back(i);
  Labels labels = full.labels();
  labels.values.clear();
  for (std::size_t i : rows) labels.values.push_back(full.labels().values[i]);
  const Dataset ds(full.features().select_rows(rows), labels);
  const NamedDataset data[] = {{"train", &ds}};
  RampProblem p;
  p.objective = error_rate("train");
  // sp(male) <= sp(female) / 0.8; male = feature 73, female = feature 72 (1-based names).
  p.constraints.push_back(
      fairness_ratio_constraint("train", Slice::parse("f72=1"), Slice::parse("f73=1"), 0.8));
  RampOptions o;
  o.lambda = 1e-4;
  o.max_mm_iterations = 2;
  o.outer_tol = 1e-3;
  o.n_threads = 1;
  const RampResult r = fit_ramp(p, data, o);
  ASSERT_EQ(r.start, "zero");
  for (const MmIteration& h : r.history) EXPECT_TRUE(h.monotone && h.feasible);
  // Ramp (randomised) constraint on the training data, independently evaluated.
  const auto e = evaluate_ramp_problem(p, data, r.model, true);
  EXPECT_LE(e.constraints[0], o.feasibility_tol);
  const auto pm = probs(ds, r.model, true);
  const auto cm = count_slice(ds, slice_mask(ds, Slice::parse("f73=1")), pm);
  const auto cf = count_slice(ds, slice_mask(ds, Slice::parse("f72=1")), pm);
  const double ratio = (cm.confusion.predicted_positive() / cm.total) /
                       (cf.confusion.predicted_positive() / cf.total);
  EXPECT_LE(ratio, 1.25 * (1 + 0.01));
  // The constraint binds (the unconstrained ratio is above 3) and accuracy stays reasonable.
  EXPECT_GT(r.multipliers.at(0), 0);
  EXPECT_LT(r.objective, 0.25);
}

}  // namespace
}  // namespace rateopt
