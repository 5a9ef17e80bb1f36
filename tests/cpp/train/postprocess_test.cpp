// Post-processing (postprocess.hpp) against brute force: on tiny two-group problems the LP over
// mixtures of every pair of group thresholds (shrink_candidates) is the exact optimum over
// randomised group thresholds; the post-processing LP must reach it to 1e-9. Also: the saved
// model reproduces the training rates, the infeasible case, and errors on bad inputs.
#include "rateopt/postprocess.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "train_test_util.hpp"

namespace rateopt {
namespace {

using test::make_column;

// n rows per group (a, b); feature 0 = score (group b shifted up); labels ~ sigmoid(2 s); with
// `ties` the scores are rounded to one decimal (tied scores must share a threshold).
Dataset two_groups(std::size_t n, std::uint64_t seed, bool ties = false) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  std::vector<double> x;
  Labels y;
  y.kind = LabelKind::kBinary;
  y.names = {"0", "1"};
  std::vector<std::string> group;
  for (std::size_t i = 0; i < 2 * n; ++i) {
    const bool b = i % 2 == 1;
    double s = normal(rng) + (b ? 0.7 : 0.0);
    if (ties) s = std::round(s * 2) / 2;
    x.push_back(s);
    y.values.push_back(unif(rng) < 1 / (1 + std::exp(-2 * s)) ? 1 : 0);
    group.push_back(b ? "b" : "a");
  }
  // Both labels in both groups (tpr / fpr slices must not be empty).
  y.values[0] = 0;
  y.values[1] = 0;
  y.values[2] = 1;
  y.values[3] = 1;
  Dataset ds(FeatureMatrix::dense(std::move(x), 2 * n, 1), y);
  ds.add_column(make_column("g", group));
  return ds;
}

Classifier score_model(std::vector<double> w = {1.0}, double b = 0) {
  Classifier c = Classifier::single({std::move(w), b}, Link::kLogistic, Encoding{});
  c.kind = "logistic_regression";
  return c;
}

struct Brute {
  ShrinkResult lp;
  std::size_t candidates = 0;
};

// Each group's deterministic thresholds on the "g" column: below every score, then each distinct
// score (s > t), increasing.
std::vector<std::vector<double>> group_thresholds(const Dataset& ds) {
  const Column& g = ds.column("g");
  const FeatureMatrix& x = ds.features();
  std::vector<std::vector<double>> thresholds(g.levels.size());
  for (std::size_t i = 0; i < ds.num_rows(); ++i)
    thresholds[static_cast<std::size_t>(g.codes[i])].push_back(x.at(i, 0));
  for (auto& t : thresholds) {
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    t.insert(t.begin(), t.front() - 1);
  }
  return thresholds;
}

// Every pair of deterministic group thresholds (below every score, or at each distinct score:
// s > t) of two_groups data: at(atoms) with each pair's exact atom values.
template <typename F>
void for_each_threshold_pair(const RateProblem& problem, const Dataset& ds, F&& at) {
  const Column& g = ds.column("g");
  const FeatureMatrix& x = ds.features();
  const std::vector<std::vector<double>> thresholds = group_thresholds(ds);
  for (double ta : thresholds[0]) {
    for (double tb : thresholds[1]) {
      std::vector<std::vector<double>> pred(1, std::vector<double>(ds.num_rows()));
      for (std::size_t i = 0; i < ds.num_rows(); ++i)
        pred[0][i] = x.at(i, 0) > (g.codes[i] == 0 ? ta : tb) ? 1.0 : 0.0;
      at(problem.atom_values(pred));
    }
  }
}

// Every pair of group thresholds evaluated exactly, then the LP over their mixtures.
Brute brute_force(const RateProblem& problem, const Dataset& ds) {
  const std::size_t m = problem.constraints().size();
  std::vector<double> f, gv;
  for_each_threshold_pair(problem, ds, [&](const std::vector<double>& atoms) {
    const ProblemValues v = problem.evaluate(atoms);
    f.push_back(problem.spec().maximize ? -v.objective : v.objective);
    gv.insert(gv.end(), v.constraints.begin(), v.constraints.end());
  });
  Brute b;
  b.candidates = f.size();
  b.lp = shrink_candidates(f, gv, m);
  if (problem.spec().maximize) b.lp.objective = -b.lp.objective;
  return b;
}

struct Case {
  std::string name;
  ProblemSpec spec;
};

std::vector<Case> cases() {
  using test::spec;
  return {
      {"demographic parity", spec("error", {"abs(ppr[g=a] - ppr[g=b]) <= 0.05"})},
      {"equal opportunity", spec("error", {"abs(tpr[g=a] - tpr[g=b]) <= 0.02"})},
      {"equalized odds",
       spec("error", {"max(abs(tpr[g=a] - tpr[g=b]), abs(fpr[g=a] - fpr[g=b])) <= 0.02"})},
      {"80% rule", spec("error", {"ppr[g=a] >= 0.8 * ppr[g=b]"})},
      {"maximise recall, fpr budget per group",
       spec("recall", {"fpr[g=a] <= 0.3", "fpr[g=b] <= 0.3"}, /*maximize=*/true)},
  };
}

TEST(Postprocess, MatchesBruteForceOverThresholdPairs) {
  int checked = 0;
  for (const Case& c : cases()) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      const Dataset ds = two_groups(8, seed, /*ties=*/seed % 3 == 0);
      const RateProblem problem = RateProblem::build(c.spec, {{"train", &ds}});
      const PostprocessResult r = postprocess(problem, score_model());
      const Brute b = brute_force(problem, ds);
      SCOPED_TRACE(c.name + ", seed " + std::to_string(seed));
      ASSERT_TRUE(b.lp.feasible);
      EXPECT_EQ(r.status, Termination::kConverged);
      EXPECT_EQ(r.group_columns, std::vector<std::string>{"g"});
      ASSERT_EQ(r.groups.size(), 2U);
      EXPECT_NEAR(r.stochastic.objective, b.lp.objective, 1e-9);
      EXPECT_NEAR(r.lp_objective * (c.spec.maximize ? -1 : 1), r.stochastic.objective, 1e-9);
      EXPECT_LE(r.stochastic.max_violation(), 1e-9);
      // At a basic solution: at most groups + constraints thresholds in all.
      std::size_t support = 0;
      for (const GroupRule& rule : r.classifier.group_rules) support += rule.thresholds.size();
      EXPECT_LE(support, 2 + problem.constraints().size());
      ++checked;
    }
  }
  EXPECT_EQ(checked, 30);
}

// n rows in k groups g0..g(k-1) (scores shifted by group, rounded to a grid with `ties`), a
// second column h (two values, independent of g), and, with `weighted`, row weights in (0.5, 2).
Dataset many_groups(std::size_t n, std::size_t k, std::uint64_t seed, bool ties, bool weighted) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  std::vector<double> x, w;
  Labels y;
  y.kind = LabelKind::kBinary;
  y.names = {"0", "1"};
  std::vector<std::string> group, h;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = i % k;
    double s = normal(rng) + 0.4 * static_cast<double>(g);
    if (ties) s = std::round(s * 4) / 4;
    x.push_back(s);
    // Both labels in every group.
    y.values.push_back(i < 2 * k ? (i < k ? 0 : 1) : unif(rng) < 1 / (1 + std::exp(-2 * s)));
    group.push_back("g" + std::to_string(g));
    h.push_back(unif(rng) < 0.5 ? "u" : "v");
    w.push_back(0.5 + 1.5 * unif(rng));
  }
  Dataset ds(FeatureMatrix::dense(std::move(x), n, 1), y);
  ds.add_column(make_column("g", group));
  ds.add_column(make_column("h", h));
  if (weighted) ds.set_weights(std::move(w));
  return ds;
}

// A random problem for a trial: `constraints` with B replaced by a random bound, on many_groups
// data of 2 to max_groups groups and rows(k) rows (ties every third trial, weights every fourth).
struct RandomCase {
  Dataset ds;
  std::vector<std::string> constraints;
  std::string trace;
};

template <typename Rows>
RandomCase random_case(std::mt19937_64& rng, int trial, std::size_t max_groups,
                       const std::string& objective, const std::vector<std::string>& constraints,
                       Rows&& rows) {
  const std::size_t k = 2 + static_cast<std::size_t>(rng() % (max_groups - 1));
  const bool ties = trial % 3 == 0, weighted = trial % 4 == 3;
  const double bound = std::vector<double>{0.0, 0.01, 0.05, 0.2}[rng() % 4];
  RandomCase out{many_groups(rows(k), k, rng(), ties, weighted), {}, {}};
  for (std::string c : constraints) {
    if (const auto at = c.find('B'); at != std::string::npos)
      c.replace(at, 1, fmt::format("{}", bound));
    out.constraints.push_back(c);
  }
  out.trace = fmt::format("trial {}: {} s.t. {}; {} groups, {} rows{}{}", trial, objective,
                          fmt::join(out.constraints, "; "), k, out.ds.num_rows(),
                          ties ? ", ties" : "", weighted ? ", weighted" : "");
  return out;
}

// Objective and constraints (B: the bound) of random problems: parity, equalized odds, the 80%
// rule.
using Shape = std::pair<std::string, std::vector<std::string>>;
std::vector<Shape> fairness_shapes() {
  return {
      {"error", {"parity(ppr, g) <= B"}},
      {"error", {"parity(tpr, g) <= B", "parity(fpr, g) <= B"}},
      {"error", {"ppr[g=g0] >= 0.8 * ppr[g=g1] - B", "ppr[g=g1] >= 0.8 * ppr[g=g0] - B"}},
  };
}

// The LP over the vertices of each group's hull, and the LP with constraint generation, have the
// full LP's optimum (and status) to 1e-9, on random problems with 2-5 groups: rates of the groups
// (two row types a group: the hull applies), slices on a second column or row weights (more types:
// every cut kept), feasible and infeasible bounds, minimised and maximised objectives.
TEST(Postprocess, HullColumnsGiveTheFullLpsOptimum) {
  std::mt19937_64 rng(2027);
  std::vector<Shape> shapes = fairness_shapes();
  shapes.insert(shapes.end(), {
                                  {"recall", {"max_over(fpr, g) <= B"}},
                                  {"error", {"parity(ppr, g) <= B", "ppr[h=u] <= 0.4 + B"}},
                                  {"error", {"tpr[g=g0, h=u] >= 0.5 - B", "parity(ppr, g) <= 0.1"}},
                                  {"error", {"ppr <= B", "ppr[g=g1] >= 0.2"}},
                              });
  int fewer = 0, checked = 0, infeasible = 0;
  for (int trial = 0; trial < 84; ++trial) {
    const auto& [objective, constraints] = shapes[static_cast<std::size_t>(trial) % shapes.size()];
    const RandomCase rc = random_case(rng, trial, 5, objective, constraints,
                                      [&](std::size_t) { return 40 + rng() % 120; });
    const Dataset& ds = rc.ds;
    const std::vector<std::string>& cs = rc.constraints;
    const RateProblem problem =
        RateProblem::build(test::spec(objective, cs, objective == "recall"), {{"train", &ds}});
    PostprocessOptions full;
    full.hull = false;
    PostprocessOptions o;
    o.group_columns = full.group_columns = {"g"};
    PostprocessOptions lazy = o;
    lazy.eager_constraints = 0;
    const PostprocessResult a = postprocess(problem, score_model(), o);
    const PostprocessResult b = postprocess(problem, score_model(), full);
    const PostprocessResult c = postprocess(problem, score_model(), lazy);
    SCOPED_TRACE(rc.trace);
    ASSERT_EQ(a.status, b.status);
    EXPECT_NEAR(a.lp_objective, b.lp_objective, 1e-9);
    EXPECT_NEAR(a.violation_budget, b.violation_budget, 1e-9);
    EXPECT_NEAR(a.stochastic.objective, b.stochastic.objective, 1e-9);
    EXPECT_LE(a.stochastic.max_violation(), b.stochastic.max_violation() + 1e-9);
    EXPECT_LE(a.lp_columns, b.lp_columns);
    // Constraint generation: the same optimum.
    ASSERT_EQ(c.status, b.status);
    EXPECT_NEAR(c.lp_objective, b.lp_objective, 1e-9);
    EXPECT_NEAR(c.violation_budget, b.violation_budget, 1e-9);
    EXPECT_LE(c.stochastic.max_violation(), b.stochastic.max_violation() + 1e-9);
    infeasible += b.status == Termination::kInfeasible ? 1 : 0;
    std::size_t cuts = 0;
    for (const PostprocessGroup& g : b.groups) {
      EXPECT_EQ(g.columns, g.cuts);
      cuts += g.cuts;
    }
    EXPECT_EQ(b.lp_columns, cuts);
    fewer += a.lp_columns < b.lp_columns ? 1 : 0;
    ++checked;
  }
  EXPECT_EQ(checked, 84);
  EXPECT_GE(fewer, 50);  // the unweighted cases of group rates
  EXPECT_GE(infeasible, 3);
  EXPECT_LE(infeasible, 40);
}

// Ratio objectives (f1, F-beta, Jaccard: Charnes-Cooper) and ratio constraints (precision,
// linearised), with balanced accuracy, cost-weighted errors and minimum selection rates (linear),
// against brute force: the LP over mixtures of every pair of deterministic group
// thresholds, with the ratio objective in its own Charnes-Cooper form (shrink_candidates_ratio)
// and a ratio constraint as the linear c * den + coef * num <= 0 of the mixture's expected
// counts.
TEST(Postprocess, RatioObjectivesAndConstraintsMatchBruteForce) {
  using test::spec;
  const std::vector<std::pair<std::string, ProblemSpec>> ratio_cases = {
      {"f1, parity", spec("f1", {"abs(ppr[g=a] - ppr[g=b]) <= 0.05"}, true)},
      {"f-beta 2, equal opportunity", spec("fbeta:2", {"abs(tpr[g=a] - tpr[g=b]) <= 0.02"}, true)},
      {"jaccard, 80% rule", spec("jaccard", {"ppr[g=a] >= 0.8 * ppr[g=b]"}, true)},
      {"error, precision per group", spec("error", {"precision[g=a] >= 0.7"})},
      {"f1, precision and recall",
       spec("f1", {"precision[g=b] >= 0.75", "recall[g=a] >= 0.5"}, true)},
      {"balanced accuracy, parity",
       spec("balanced_accuracy", {"abs(ppr[g=a] - ppr[g=b]) <= 0.05"}, true)},
      {"cost-weighted errors, minimum selection rates",
       spec("fpr + 3 * fnr", {"ppr[g=a] >= 0.3", "ppr[g=b] >= 0.3"})},
  };
  int checked = 0;
  for (const auto& [name, sp] : ratio_cases) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const Dataset ds = two_groups(8, seed, /*ties=*/seed % 2 == 0);
      const RateProblem problem = RateProblem::build(sp, {{"train", &ds}});
      const PostprocessResult r = postprocess(problem, score_model());
      SCOPED_TRACE(name + ", seed " + std::to_string(seed));
      // Brute force: every pair of group thresholds.
      const FunctionInfo& obj = problem.objective();
      const std::size_t m = problem.constraints().size();
      std::vector<double> num, den, gv;
      for_each_threshold_pair(problem, ds, [&](const std::vector<double>& atoms) {
        if (obj.ratio) {
          num.push_back(obj.ratio->coef * obj.ratio->num.evaluate(atoms));
          den.push_back(obj.ratio->den.evaluate(atoms));
        } else {
          num.push_back(obj.linear->evaluate(atoms));
          den.push_back(1.0);
        }
        for (const FunctionInfo& c : problem.constraints())
          gv.push_back(c.ratio ? c.ratio->constant * c.ratio->den.evaluate(atoms) +
                                     c.ratio->coef * c.ratio->num.evaluate(atoms)
                               : c.linear->evaluate(atoms));
      });
      const ShrinkResult b = shrink_candidates_ratio(num, den, gv, m);
      ASSERT_TRUE(b.feasible);
      const double best = (obj.ratio ? obj.ratio->constant : 0.0) + b.objective;
      EXPECT_EQ(r.status, Termination::kConverged);
      EXPECT_NEAR(r.lp_objective, best, 1e-9);
      EXPECT_NEAR(r.stochastic.objective * (sp.maximize ? -1 : 1), best, 1e-9);
      EXPECT_LE(r.stochastic.max_violation(), 1e-9);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 35);
  // A ratio objective whose denominator can vanish is refused.
  const Dataset ds = two_groups(8, 1);
  const RateProblem precision =
      RateProblem::build(spec("precision", {"ppr <= 0.5"}, true), {{"train", &ds}});
  EXPECT_THROW((void)postprocess(precision, score_model()), InvalidArgument);
}

// The best deterministic rule by exhaustive search: every tuple of group thresholds (below every
// score, or at each distinct score of the group: s > t) on the "g" column, evaluated exactly.
// Returns the smallest objective (as minimised) among tuples within `budget` of every constraint,
// and the smallest largest violation among all tuples.
struct Exhaustive {
  double objective = std::numeric_limits<double>::infinity();
  double least_violation = std::numeric_limits<double>::infinity();
  std::size_t tuples = 0;
};

Exhaustive exhaustive(const RateProblem& problem, const Dataset& ds, double budget) {
  const Column& g = ds.column("g");
  const FeatureMatrix& x = ds.features();
  const std::vector<std::vector<double>> thresholds = group_thresholds(ds);
  Exhaustive out;
  std::vector<std::size_t> at(thresholds.size(), 0);
  std::vector<std::vector<double>> pred(1, std::vector<double>(ds.num_rows()));
  while (true) {
    for (std::size_t i = 0; i < ds.num_rows(); ++i) {
      const auto k = static_cast<std::size_t>(g.codes[i]);
      pred[0][i] = x.at(i, 0) > thresholds[k][at[k]] ? 1.0 : 0.0;
    }
    const ProblemValues v = problem.evaluate(problem.atom_values(pred));
    const double f = problem.spec().maximize ? -v.objective : v.objective;
    const double viol = std::max(0.0, v.max_violation());
    out.least_violation = std::min(out.least_violation, viol);
    if (viol <= budget + 1e-9) out.objective = std::min(out.objective, f);
    ++out.tuples;
    std::size_t k = 0;
    while (k < at.size() && ++at[k] == thresholds[k].size()) at[k++] = 0;
    if (k == at.size()) break;
  }
  return out;
}

// Deterministic mode against exhaustive search over every tuple of group thresholds, with 2-4
// groups, ties and weights; linear and ratio objectives, ratio constraints, bounds that no
// deterministic rule (or no rule at all) meets. Also: one threshold per group, the price of
// determinism against the randomised optimum, and the node budget.
TEST(Postprocess, DeterministicModeMatchesExhaustiveSearch) {
  std::mt19937_64 rng(4242);
  std::vector<Shape> shapes = fairness_shapes();
  shapes.insert(
      shapes.end(),
      {
          {"recall", {"max_over(fpr, g) <= 0.2 + B"}},
          {"f1", {"parity(tpr, g) <= B"}},
          {"error", {"precision[g=g0] >= 0.8 - B", "ppr[g=g1] >= 0.3"}},
          {"balanced_accuracy", {"parity(ppr, g) <= B", "ppr[h=u] <= 0.4 + B"}},
          // Between two steps of a group's selection rate (or an empty range): met only by
          // mixtures, or by nothing.
          {"error", {"ppr[g=g0] >= 0.45 + B", "ppr[g=g0] <= 0.47", "parity(tpr, g) <= 0.3"}},
      });
  int checked = 0, infeasible = 0, priced = 0, split = 0, mixtures_only = 0, swept = 0,
      separable_many = 0;
  for (int trial = 0; trial < 64; ++trial) {
    const auto& [objective, constraints] = shapes[static_cast<std::size_t>(trial) % shapes.size()];
    const RandomCase rc = random_case(rng, trial, 4, objective, constraints, [&](std::size_t k) {
      return k == 4 ? 20 + rng() % 8 : 24 + rng() % 16;
    });
    const Dataset& ds = rc.ds;
    const std::vector<std::string>& cs = rc.constraints;
    const bool maximize = objective != "error";
    const RateProblem problem =
        RateProblem::build(test::spec(objective, cs, maximize), {{"train", &ds}});
    PostprocessOptions o;
    o.group_columns = {"g"};
    o.deterministic = true;
    const PostprocessResult r = postprocess(problem, score_model(), o);
    const PostprocessResult randomized =
        postprocess(problem, score_model(), test::by_groups({"g"}));
    // Nodes over each range's hull vertices, or over every cut: the same answer.
    o.hull = false;
    const PostprocessResult every_cut = postprocess(problem, score_model(), o);
    EXPECT_EQ(every_cut.status, r.status);
    EXPECT_NEAR(every_cut.lp_objective, r.lp_objective, 1e-9);
    SCOPED_TRACE(rc.trace);
    const Exhaustive strict = exhaustive(problem, ds, 0.0);
    const bool feasible = std::isfinite(strict.objective);
    const double det = maximize ? -r.deterministic.objective : r.deterministic.objective;
    for (const GroupRule& rule : r.classifier.group_rules) {
      ASSERT_EQ(rule.thresholds.size(), 1U);
      EXPECT_EQ(rule.weights[0], 1.0);
    }
    EXPECT_EQ(r.stochastic.objective, r.deterministic.objective);
    EXPECT_NEAR(r.lp_objective, det, 1e-9);
    EXPECT_NEAR(r.search.bound, r.lp_objective, 1e-8 * std::max(1.0, std::fabs(det)));
    EXPECT_EQ(r.search.nodes == 0, r.search.sweep);
    // Two groups: the sweep where it applies, the same optimum as the branch and bound.
    o.hull = true;
    o.sweep = false;
    const PostprocessResult searched = postprocess(problem, score_model(), o);
    o.sweep = true;
    EXPECT_FALSE(searched.search.sweep);
    EXPECT_EQ(searched.status, r.status);
    EXPECT_NEAR(searched.lp_objective, r.lp_objective, 1e-9);
    if (r.search.sweep) {
      // Two groups (the sweep), or rows of one group each (any number of groups).
      ++(rc.ds.column("g").levels.size() == 2 ? swept : separable_many);
    }
    // The randomised optimum is the plain mode's.
    EXPECT_EQ(r.randomized.status, randomized.status);
    EXPECT_NEAR(r.randomized.objective, randomized.lp_objective, 1e-9);
    if (feasible) {
      ASSERT_EQ(r.status, Termination::kConverged);
      EXPECT_NEAR(det, strict.objective, 1e-9);
      EXPECT_LE(r.deterministic.max_violation(), 1e-9);
      // The price of determinism is never negative.
      EXPECT_GE(det, r.randomized.objective - 1e-9);
      priced += det > r.randomized.objective + 1e-6 ? 1 : 0;
    } else {
      ASSERT_EQ(r.status, Termination::kInfeasible);
      // Linear constraints only here (the search's violation is the constraint's own unit).
      if (objective != "error" || cs[0].find("precision") == std::string::npos) {
        EXPECT_NEAR(r.violation_budget, strict.least_violation, 1e-9);
        const Exhaustive under = exhaustive(problem, ds, strict.least_violation);
        EXPECT_NEAR(det, under.objective, 1e-9);
      }
      ++infeasible;
      mixtures_only += r.randomized.status == Termination::kConverged ? 1 : 0;
    }
    split += r.search.nodes > 1 ? 1 : 0;
    ++checked;
  }
  EXPECT_EQ(checked, 64);
  EXPECT_GE(infeasible, 4);
  EXPECT_GE(mixtures_only, 2);  // randomised rules meet the constraints, no deterministic one
  EXPECT_LE(infeasible, 30);
  EXPECT_GE(priced, 10);         // randomisation pays on most feasible cases
  EXPECT_GE(split, 10);          // and the search branches
  EXPECT_GE(swept, 8);           // two groups: the sweep
  EXPECT_GE(separable_many, 2);  // more groups, each row reading one: the per-group choice

  // The node budget: with one LP solve the root's rounding is returned, flagged as not proved.
  const Dataset ds = many_groups(60, 3, 7, false, false);
  const RateProblem problem = RateProblem::build(
      test::spec("error", {"parity(tpr, g) <= 0.01", "parity(fpr, g) <= 0.01"}), {{"train", &ds}});
  PostprocessOptions o;
  o.deterministic = true;
  o.max_nodes = 1;
  const PostprocessResult r = postprocess(problem, score_model(), o);
  EXPECT_TRUE(r.status == Termination::kFeasible || r.status == Termination::kMaxIterations);
  EXPECT_EQ(r.search.nodes, 1U);
  o.max_nodes = 100000;
  const PostprocessResult full = postprocess(problem, score_model(), o);
  EXPECT_EQ(full.status, Termination::kConverged);
  if (r.status == Termination::kFeasible) {
    EXPECT_LE(r.search.bound, full.lp_objective + 1e-9);
    EXPECT_GE(r.lp_objective, full.lp_objective - 1e-9);
  }
  // A stop request after the third LP solve: interrupted, one threshold per group all the same.
  int polls = 0;
  o.should_stop = [&] { return ++polls == 3; };
  const PostprocessResult stopped = postprocess(problem, score_model(), o);
  EXPECT_EQ(stopped.status, Termination::kInterrupted);
  EXPECT_EQ(stopped.search.nodes, 3U);
  for (const GroupRule& rule : stopped.classifier.group_rules)
    EXPECT_EQ(rule.thresholds.size(), 1U);
}

TEST(Postprocess, SavedModelReproducesTheTrainingRates) {
  const Dataset ds = two_groups(40, 11);
  const RateProblem problem = RateProblem::build(
      test::spec("error", {"max(abs(tpr[g=a] - tpr[g=b]), abs(fpr[g=a] - fpr[g=b])) <= 0.01"}),
      {{"train", &ds}});
  const PostprocessResult r = postprocess(problem, score_model());
  const Classifier saved = Classifier::from_json(r.classifier.to_json());
  EXPECT_EQ(saved.kind, "group_threshold");
  EXPECT_EQ(saved.to_json(), r.classifier.to_json());
  std::vector<std::vector<double>> p(1, std::vector<double>(ds.num_rows()));
  saved.predict(ds, PredictMode::kProbability, p[0]);
  const ProblemValues v = problem.evaluate(problem.atom_values(p));
  EXPECT_EQ(v.objective, r.stochastic.objective);
  EXPECT_EQ(v.constraints, r.stochastic.constraints);
  EXPECT_NEAR(v.objective, r.lp_objective, 1e-9);
  EXPECT_LE(v.max_violation(), 1e-9);
  saved.predict(ds, PredictMode::kDeterministic, p[0]);
  const ProblemValues d = problem.evaluate(problem.atom_values(p));
  EXPECT_EQ(d.objective, r.deterministic.objective);
  for (double h : p[0]) EXPECT_TRUE(h == 0.0 || h == 1.0);
  // Stochastic draws average to the probabilities.
  std::vector<double> prob(ds.num_rows()), mean(ds.num_rows(), 0.0), draw(ds.num_rows());
  saved.predict(ds, PredictMode::kProbability, prob);
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    saved.predict(ds, PredictMode::kStochastic, draw, seed);
    for (std::size_t i = 0; i < draw.size(); ++i) mean[i] += draw[i] / 2000;
  }
  for (std::size_t i = 0; i < draw.size(); ++i) EXPECT_NEAR(mean[i], prob[i], 0.05);
}

TEST(Postprocess, ExplicitGroupsAndSeveralDatasets) {
  // Groups given explicitly; a second dataset shares the rules (its rows join their groups).
  const Dataset train = two_groups(10, 3), other = two_groups(6, 4);
  const RateProblem problem =
      RateProblem::build(test::spec("error", {"ppr@other[g=a] - ppr@other[g=b] <= 0.0",
                                              "ppr@other[g=b] - ppr@other[g=a] <= 0.0"}),
                         {{"train", &train}, {"other", &other}});
  PostprocessOptions o;
  o.group_columns = {"g"};
  const PostprocessResult r = postprocess(problem, score_model(), o);
  EXPECT_EQ(r.status, Termination::kConverged);
  EXPECT_EQ(r.groups[0].rows + r.groups[1].rows, 32U);
  EXPECT_LE(r.stochastic.max_violation(), 1e-9);
  std::vector<std::vector<double>> p(2);
  p[0].resize(train.num_rows());
  p[1].resize(other.num_rows());
  r.classifier.predict(train, PredictMode::kProbability, p[0]);
  r.classifier.predict(other, PredictMode::kProbability, p[1]);
  EXPECT_NEAR(problem.evaluate(problem.atom_values(p)).objective, r.lp_objective, 1e-9);
  // No slice column in the problem: one group for all rows.
  const RateProblem plain =
      RateProblem::build(test::spec("error", {"ppr <= 0.3"}), {{"train", &train}});
  const PostprocessResult one = postprocess(plain, score_model());
  EXPECT_TRUE(one.group_columns.empty());
  ASSERT_EQ(one.groups.size(), 1U);
  EXPECT_LE(one.stochastic.max_violation(), 1e-9);
}

// base_scores: scores the caller holds (a booster's margins from its fit) give the same result as
// scoring the rows, and are really used (other scores, other thresholds); training_scores hold
// them, stacked, and Classifier::predict with them as KnownScores gives what scoring gives.
TEST(Postprocess, GivenBaseScoresAreUsedInPlaceOfScoring) {
  const Dataset train = two_groups(30, 21), other = two_groups(12, 22);
  const RateProblem problem =
      RateProblem::build(test::spec("error", {"ppr@other[g=a] - ppr@other[g=b] <= 0.05",
                                              "ppr@other[g=b] - ppr@other[g=a] <= 0.05"}),
                         {{"train", &train}, {"other", &other}});
  const Classifier base = score_model({1.5}, -0.25);
  const PostprocessResult scored = postprocess(problem, base);
  std::vector<double> stacked(train.num_rows() + other.num_rows());
  base.components[0].scores(train.features(), std::span(stacked).first(train.num_rows()));
  base.components[0].scores(other.features(), std::span(stacked).last(other.num_rows()));
  EXPECT_EQ(scored.training_scores, stacked);
  const PostprocessResult given = postprocess(problem, base, {}, stacked);
  EXPECT_EQ(given.classifier.to_json(), scored.classifier.to_json());
  EXPECT_EQ(given.stochastic.objective, scored.stochastic.objective);
  EXPECT_EQ(given.stochastic.constraints, scored.stochastic.constraints);
  EXPECT_EQ(given.deterministic.objective, scored.deterministic.objective);
  EXPECT_EQ(given.training_scores, stacked);
  // Other scores (the negated ones): other thresholds, so they are what the LP read.
  std::vector<double> negated = stacked;
  for (double& v : negated) v = -v;
  const PostprocessResult wrong = postprocess(problem, base, {}, negated);
  EXPECT_NE(wrong.classifier.to_json(), scored.classifier.to_json());
  EXPECT_THROW((void)postprocess(problem, base, {}, std::span(stacked).first(10)), InvalidArgument);
  // predict with known scores: the same as scoring, in every mode; other known scores differ.
  const Classifier& clf = scored.classifier;
  const KnownScores known{&train.features(), {std::span(stacked).first(train.num_rows())}};
  const KnownScores flipped{&train.features(), {std::span(negated).first(train.num_rows())}};
  for (const PredictMode mode :
       {PredictMode::kProbability, PredictMode::kDeterministic, PredictMode::kStochastic}) {
    std::vector<double> a(train.num_rows()), b(train.num_rows()), c(train.num_rows());
    clf.predict(train, mode, a, 7);
    clf.predict(train, mode, b, 7, 0, &known);
    clf.predict(train, mode, c, 7, 0, &flipped);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
  }
  const KnownScores short_scores{&train.features(), {std::span(stacked).first(5)}};
  std::vector<double> out(train.num_rows());
  EXPECT_THROW(clf.predict(train, PredictMode::kProbability, out, 0, 0, &short_scores),
               InvalidArgument);
}

TEST(Postprocess, InfeasibleConstraintsMinimiseTheViolation) {
  const Dataset ds = two_groups(8, 5);
  // Recall 1 and fpr 0 at once need a perfect score.
  const RateProblem problem = RateProblem::build(
      test::spec("error", {"recall >= 1", "fpr <= 0", "ppr[g=a] == ppr[g=b]"}), {{"train", &ds}});
  const PostprocessResult r = postprocess(problem, score_model());
  EXPECT_EQ(r.status, Termination::kInfeasible);
  const Brute b = brute_force(problem, ds);
  ASSERT_FALSE(b.lp.feasible);
  EXPECT_NEAR(r.violation_budget, b.lp.max_violation, 1e-6);  // bisection tolerance 1e-7
  EXPECT_NEAR(r.stochastic.max_violation(), r.violation_budget, 1e-8);
}

TEST(Postprocess, RejectsBadInputs) {
  const Dataset ds = two_groups(8, 7);
  const auto expect_message = [](auto&& fn, const std::string& fragment) {
    try {
      fn();
      ADD_FAILURE() << "no exception; expected one containing '" << fragment << "'";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  const RateProblem ratio =
      RateProblem::build(test::spec("f1 + precision", {"ppr[g=a] <= 0.5"}, true), {{"train", &ds}});
  EXPECT_THROW((void)postprocess(ratio, score_model()), InvalidArgument);
  expect_message([&] { (void)postprocess(ratio, score_model()); }, "linear in rates");
  const RateProblem general =
      RateProblem::build(test::spec("error", {"gmean >= 0.6"}), {{"train", &ds}});
  expect_message([&] { (void)postprocess(general, score_model()); }, "linear in rates");

  const RateProblem dp =
      RateProblem::build(test::spec("error", {"ppr[g=a] <= ppr[g=b]"}), {{"train", &ds}});
  PostprocessOptions missing;
  missing.group_columns = {"race"};
  EXPECT_THROW((void)postprocess(dp, score_model(), missing), NotFound);
  expect_message([&] { (void)postprocess(dp, score_model(), missing); },
                 "group column 'race' is not a column of dataset 'train'");
  EXPECT_THROW((void)postprocess(dp, score_model({1.0, 2.0})), InvalidArgument);
  expect_message(
      [&] {
        (void)postprocess(dp, score_model({1.0, 2.0}));
      },
      "the base model has 2 weights but dataset 'train' has 1 features");
  Classifier mixture = score_model();
  mixture.components.push_back({{2.0}, 0});
  mixture.mixture = {0.5, 0.5};
  expect_message([&] { (void)postprocess(dp, mixture); }, "has 2 components");
  const PostprocessResult r = postprocess(dp, score_model());
  expect_message([&] { (void)postprocess(dp, r.classifier); }, "already post-processed");
}

TEST(Postprocess, PredictNeedsTheGroupColumns) {
  const Dataset ds = two_groups(8, 9);
  const RateProblem dp =
      RateProblem::build(test::spec("error", {"ppr[g=a] <= ppr[g=b]"}), {{"train", &ds}});
  const Classifier c = postprocess(dp, score_model()).classifier;
  std::vector<double> out(ds.num_rows());
  EXPECT_THROW(c.predict(ds.features(), PredictMode::kProbability, out), InvalidArgument);
  EXPECT_THROW(c.decision_function(ds.features(), out), InvalidArgument);
  Dataset no_group(ds.features(), ds.labels());
  EXPECT_THROW(c.predict(no_group, PredictMode::kProbability, out), NotFound);
  Dataset unseen(ds.features(), ds.labels());
  std::vector<std::string> values(ds.num_rows(), "a");
  values[3] = "c";
  unseen.add_column(make_column("g", values));
  try {
    c.predict(unseen, PredictMode::kProbability, out);
    ADD_FAILURE() << "expected NotFound";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("row 3: group [g=c] has no threshold rule"),
              std::string::npos)
        << e.what();
  }
  // The decision function is the score minus the row's deterministic threshold.
  std::vector<double> det(ds.num_rows()), dec(ds.num_rows());
  c.predict(ds, PredictMode::kDeterministic, det);
  c.decision_function(ds, dec);
  for (std::size_t i = 0; i < det.size(); ++i) EXPECT_EQ(det[i], dec[i] > 0 ? 1.0 : 0.0);
}

}  // namespace
}  // namespace rateopt
