// RateProblem: atoms reproduce the catalogue's values, the analysis of each function, errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

// RowSet against the plain list it stores: members, positions and ranges, for lists and bitmaps
// (chosen by size), dense and sparse sets, ranges on and off word boundaries.
TEST(RowSet, MatchesItsListForEveryRange) {
  std::mt19937 rng(7);
  for (const std::size_t n : {0UL, 1UL, 63UL, 64UL, 65UL, 200UL, 1000UL}) {
    for (const double density : {0.0, 0.01, 0.2, 0.9, 1.0}) {
      std::bernoulli_distribution in(density);
      std::vector<std::uint32_t> rows;
      for (std::size_t r = 0; r < n; ++r)
        if (in(rng)) rows.push_back(static_cast<std::uint32_t>(r));
      for (const bool allow : {false, true}) {
        const RowSet set(rows, n, allow);
        EXPECT_EQ(set.size(), rows.size());
        EXPECT_EQ(set.to_vector(), rows);
        // A bitmap when allowed and smaller than the list.
        EXPECT_EQ(set.is_bitmap(), allow && (n + 63) / 64 * 8 < rows.size() * 4)
            << n << " " << density;
        for (std::size_t begin = 0; begin <= n; begin += 13) {
          for (const std::size_t end : {begin, begin + 1, begin + 64, begin + 130, n + 5}) {
            std::vector<std::pair<std::size_t, std::uint32_t>> want, got;
            for (std::size_t p = 0; p < rows.size(); ++p)
              if (rows[p] >= begin && rows[p] < end) want.emplace_back(p, rows[p]);
            set.for_each_in(begin, end,
                            [&](std::size_t p, std::uint32_t r) { got.emplace_back(p, r); });
            EXPECT_EQ(got, want) << n << " " << density << " [" << begin << ", " << end << ")";
          }
        }
      }
    }
  }
  EXPECT_THROW(RowSet({3, 2}, 5), InvalidArgument);
  EXPECT_THROW(RowSet({1, 5}, 5), InvalidArgument);
}

// For random hard and soft predictions, every rate evaluated through atoms equals
// evaluate_expression on the same predictions (the catalogue is the oracle).
TEST(RateProblem, AtomsReproduceCatalogueValues) {
  const Dataset ds = test::synthetic(300, 7, true);
  const std::vector<std::string> exprs = {
      "ppr[g=a]",     "tpr[g=b]",       "fpr",
      "error[g=a]",   "precision[g=b]", "f1",
      "fbeta:2[g=a]", "jaccard",        "kld[g=a]",
      "gmean[g=b]",   "hmean",          "qmean[g=a]",
      "churn",        "wins[g=b]",      "losses",
      "winloss[g=a]", "gtppr",          "balanced_accuracy[g=b]",
      "accuracy",     "npr[g=a]"};
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u;
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<double> pred(ds.num_rows());
    for (double& p : pred) p = trial < 2 ? (u(rng) < 0.5 ? 1.0 : 0.0) : u(rng);
    Predictions P;
    P.prob_positive = pred;
    const NamedData nd[] = {{"train", &ds, &P}};
    for (const std::string& e : exprs) {
      const RateProblem problem = RateProblem::build(test::spec(e), {{"train", &ds}});
      const std::vector<std::vector<double>> preds{pred};
      const std::vector<double> atoms = problem.atom_values(preds);
      const ProblemValues v = problem.evaluate(atoms);
      const double expected = evaluate_expression(Expression::parse(e), nd).value;
      EXPECT_NEAR(v.objective, expected, 1e-12) << e << " trial " << trial;
      if (trial < 2) {  // hard predictions as bytes: the same bits
        std::vector<std::vector<std::uint8_t>> bytes(1);
        for (const double p : pred) bytes[0].push_back(p == 1.0 ? 1 : 0);
        EXPECT_TRUE(test::same_bits(problem.atom_values(bytes), atoms)) << e;
        bytes[0][0] = 2;
        EXPECT_THROW((void)problem.atom_values(bytes), InvalidArgument);
      }
    }
  }
}

// Unweighted data keeps one coefficient per atom (1 / slice weight), weighted data one per row;
// both give the catalogue's values, and the same atom values as every row's own coefficient.
TEST(RateProblem, UnweightedAtomsKeepOneCoefficient) {
  Dataset plain = test::synthetic(200, 5, true);
  Dataset weighted = test::synthetic(200, 5, true);
  std::vector<double> w(weighted.num_rows());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.5 + static_cast<double>(i % 3);
  weighted.set_weights(w);
  std::vector<double> pred(plain.num_rows());
  for (std::size_t i = 0; i < pred.size(); ++i) pred[i] = (i * 7) % 5 < 2 ? 1.0 : 0.0;
  Predictions P;
  P.prob_positive = pred;
  for (const Dataset* ds : {&plain, &weighted}) {
    const RateProblem problem =
        RateProblem::build(test::spec("error[g=a] + 0.3 * fpr + churn"), {{"train", ds}});
    for (const Atom& a : problem.atoms()) {
      EXPECT_EQ(a.coef.empty(), ds == &plain) << a.description;
      double direct = 0;
      a.rows.for_each([&](std::size_t r, std::uint32_t /*row*/) { direct += a.coef_at(r); });
      EXPECT_NEAR(a.capacity, direct, 1e-12) << a.description;
      if (ds == &plain) {
        EXPECT_GT(a.unit_coef, 0.0);
      }
    }
    const NamedData nd[] = {{"train", ds, &P}};
    const std::vector<std::vector<double>> preds{pred};
    EXPECT_NEAR(problem.evaluate(problem.atom_values(preds)).objective,
                evaluate_expression(Expression::parse("error[g=a] + 0.3 * fpr + churn"), nd).value,
                1e-12);
  }
}

// Linear forms reproduce the value exactly (they are affine in atoms).
TEST(RateProblem, LinearFormsMatchValues) {
  const Dataset ds = test::synthetic(200, 11, true);
  const RateProblem problem =
      RateProblem::build(test::spec("error + 0.5 * churn",
                                    {"tpr[g=a] - 0.9 * tpr[g=b] >= 0", "fpr <= 0.3 + ppr[g=b]"}),
                         {{"train", &ds}});
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u;
  std::vector<double> pred(ds.num_rows());
  for (double& p : pred) p = u(rng);
  const std::vector<std::vector<double>> preds{pred};
  const std::vector<double> atoms = problem.atom_values(preds);
  const ProblemValues v = problem.evaluate(atoms);
  ASSERT_TRUE(problem.objective().linear.has_value());
  EXPECT_NEAR(problem.objective().linear->evaluate(atoms), v.objective, 1e-12);
  ASSERT_EQ(problem.constraints().size(), 2u);
  for (std::size_t j = 0; j < 2; ++j) {
    ASSERT_EQ(problem.constraints()[j].kind, FunctionKind::kLinear);
    EXPECT_NEAR(problem.constraints()[j].linear->evaluate(atoms), v.constraints[j], 1e-12);
  }
}

TEST(RateProblem, Analysis) {
  const Dataset ds = test::synthetic(100, 1);
  const auto kind_of = [&](const std::string& e, bool maximize = false) {
    const RateProblem p = RateProblem::build(test::spec(e, {}, maximize), {{"", &ds}});
    return std::pair(p.objective().kind, p.objective().shape);
  };
  EXPECT_EQ(kind_of("error").first, FunctionKind::kLinear);
  EXPECT_EQ(kind_of("ppr[g=a] - 2 * ppr[g=b] / 4").first, FunctionKind::kLinear);
  EXPECT_EQ(kind_of("f1", true).first, FunctionKind::kRatio);
  EXPECT_EQ(kind_of("precision[g=a] - precision[g=b]").first, FunctionKind::kRatio);
  EXPECT_EQ(kind_of("kld[g=a] + kld[g=b]"),
            std::pair(FunctionKind::kGeneral, std::string("convex")));
  EXPECT_EQ(kind_of("gmean", true), std::pair(FunctionKind::kGeneral, std::string("convex")));
  EXPECT_EQ(kind_of("gmean"), std::pair(FunctionKind::kGeneral, std::string("concave")));
  EXPECT_EQ(kind_of("tpr[g=a] * tpr[g=b]").first, FunctionKind::kGeneral);
  EXPECT_EQ(kind_of("max(error[g=a], error[g=b])").first, FunctionKind::kGeneral);
}

TEST(RateProblem, WorstGroupAndEqualityConstraintsSplit) {
  const Dataset ds = test::synthetic(100, 2);
  const RateProblem p = RateProblem::build(
      test::spec("error", {"max(fpr[g=a], fpr[g=b]) <= 0.2", "ppr[g=a] == ppr[g=b]",
                           "0.7 <= min(tpr[g=a], tpr[g=b])"}),
      {{"", &ds}});
  ASSERT_EQ(p.constraints().size(), 6u);
  const std::vector<std::size_t> src(p.constraint_source().begin(), p.constraint_source().end());
  EXPECT_EQ(src, (std::vector<std::size_t>{0, 0, 1, 1, 2, 2}));
  std::vector<double> pred(ds.num_rows(), 1.0);  // all positive: fpr = 1, tpr = 1
  const std::vector<std::vector<double>> preds{pred};
  const ProblemValues v = p.evaluate(p.atom_values(preds));
  EXPECT_NEAR(v.constraints[0], 0.8, 1e-12);
  EXPECT_NEAR(v.constraints[1], 0.8, 1e-12);
  EXPECT_NEAR(v.constraints[2], 0.0, 1e-12);
  EXPECT_NEAR(v.constraints[4], -0.3, 1e-12);
}

// abs() and max() of linear terms are split into linear constraints (epigraph form), so a parity
// written as abs(a - b) <= c is the two linear constraints a - b <= c and b - a <= c.
TEST(RateProblem, AbsAndMaxSplitIntoLinearConstraints) {
  const Dataset ds = test::synthetic(200, 3);
  const RateProblem p =
      RateProblem::build(test::spec("error", {"abs(ppr[g=a] - ppr[g=b]) <= 0.05",
                                              "max(abs(tpr[g=a] - tpr[g=b]), fpr[g=a]) <= 0.3",
                                              "0.1 >= abs(fpr[g=a] - fpr[g=b])"}),
                         {{"", &ds}});
  ASSERT_EQ(p.constraints().size(), 7u);
  const std::vector<std::size_t> src(p.constraint_source().begin(), p.constraint_source().end());
  EXPECT_EQ(src, (std::vector<std::size_t>{0, 0, 1, 1, 1, 2, 2}));
  for (const FunctionInfo& f : p.constraints()) EXPECT_EQ(f.kind, FunctionKind::kLinear) << f.text;
  // Against the rates computed by the catalogue for random hard predictions.
  std::mt19937_64 rng(5);
  std::vector<double> pred(ds.num_rows());
  for (double& v : pred) v = static_cast<double>(rng() % 2);
  const std::vector<std::vector<double>> preds{pred};
  Predictions P;
  P.prob_positive = pred;
  const NamedData nd[] = {{"train", &ds, &P}};
  const auto rate = [&](const std::string& e) {
    return evaluate_expression(Expression::parse(e), nd).value;
  };
  const double dp = rate("ppr[g=a]") - rate("ppr[g=b]");
  const double dt = rate("tpr[g=a]") - rate("tpr[g=b]");
  const double df = rate("fpr[g=a]") - rate("fpr[g=b]");
  const ProblemValues v = p.evaluate(p.atom_values(preds));
  const std::vector<double> expect = {
      dp - 0.05, -dp - 0.05, dt - 0.3, -dt - 0.3, rate("fpr[g=a]") - 0.3, df - 0.1, -df - 0.1};
  for (std::size_t j = 0; j < expect.size(); ++j)
    EXPECT_NEAR(v.constraints[j], expect[j], 1e-12) << p.constraints()[j].text;
  EXPECT_NE(p.constraints()[1].text.find("-(ppr[g=a] - ppr[g=b])"), std::string::npos)
      << p.constraints()[1].text;
}

TEST(RateProblem, ClearErrors) {
  Dataset ds = test::synthetic(50, 3);
  const auto build = [&](const std::string& obj, std::vector<std::string> cons = {}) {
    return RateProblem::build(test::spec(obj, std::move(cons)), {{"tr", &ds}});
  };
  EXPECT_TRUE(contains(error_of<NotFound>([&] { (void)build("ppr[sex=a]"); }), "sex"));
  EXPECT_TRUE(contains(error_of<NotFound>([&] { (void)build("ppr[g=zzz]"); }), "zzz"));
  EXPECT_TRUE(contains(error_of<NotFound>([&] { (void)build("ppr@other"); }), "other"));
  EXPECT_TRUE(contains(error_of<ParseError>([&] { (void)build("nosuchrate"); }), "nosuchrate"));
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] { (void)build("error", {"error - error <= 0.1"}); }),
               "constant"));
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] { (void)build("error", {"error"}); }), "no relation"));
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] { (void)build("roc_auc"); }), "roc_auc"));
  // Empty slice: zero weight on every row of group b.
  std::vector<double> w(ds.num_rows(), 1.0);
  const Column& g = ds.column("g");
  for (std::size_t i = 0; i < w.size(); ++i)
    if (g.levels[static_cast<std::size_t>(g.codes[i])] == "b") w[i] = 0;
  ds.set_weights(w);
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] { (void)build("ppr[g=b]"); }), "empty"));
  // Zero denominator: winloss where the baseline is always right has no losses form... use a
  // baseline that is always wrong: losses are identically zero.
  Dataset d2 = test::synthetic(40, 4);
  std::vector<std::string> base;
  for (std::int32_t y : d2.labels().values) base.push_back(y == 1 ? "0" : "1");
  d2.add_column(test::make_column("baseline", base));
  const std::string msg = error_of<InvalidArgument>([&] {
    (void)RateProblem::build(test::spec("winloss"), {{"", &d2}});
  });
  EXPECT_TRUE(contains(msg, "denominator")) << msg;
}

// Issue 10: non-finite or absurd coefficients and functions with no finite value are refused
// when the problem is built (they used to make the LPs spin forever).
TEST(RateProblem, NonFiniteAndAbsurdCoefficientsAreRefused) {
  const Dataset ds = test::synthetic(60, 5);
  const auto msg = [&](const std::string& obj, std::vector<std::string> cons = {}) {
    return error_of<InvalidArgument>([&] {
      (void)RateProblem::build(test::spec(obj, std::move(cons)), {{"tr", &ds}});
    });
  };
  for (const char* c : {"ppr / 0 <= 1", "1e308 * 10 * ppr <= 1", "-1e308 * 10 * ppr <= 1"}) {
    const std::string m = msg("error", {c});
    EXPECT_TRUE(contains(m, "constraint 1") && contains(m, c) && contains(m, "inf")) << m;
  }
  std::string m = msg("error", {"1e13 * ppr <= 1"});
  EXPECT_TRUE(contains(m, "1e+12")) << m;
  m = msg("error", {"ppr <= 1", "ppr / (ppr - ppr) <= 1"});
  EXPECT_TRUE(contains(m, "constraint 2") && contains(m, "no finite value")) << m;
  m = msg("error / 0");
  EXPECT_TRUE(contains(m, "objective 'error / 0'")) << m;
  m = msg("tpr / (fpr - fpr)");
  EXPECT_TRUE(contains(m, "no finite value")) << m;
  // Large but sane coefficients and a ratio of distinct rates still build.
  EXPECT_NO_THROW(
      (void)RateProblem::build(test::spec("error", {"1e6 * ppr <= 1e5"}), {{"tr", &ds}}));
  EXPECT_NO_THROW((void)RateProblem::build(test::spec("tpr / (ppr + fpr)"), {{"tr", &ds}}));
}

TEST(RateProblem, SeveralDatasets) {
  const Dataset a = test::synthetic(80, 5);
  Dataset u = test::synthetic(60, 6, true);
  u.labels() = Labels{};  // unlabelled
  const RateProblem p =
      RateProblem::build(test::spec("error", {"churn@unl <= 0.1"}), {{"train", &a}, {"unl", &u}});
  EXPECT_EQ(p.constraints()[0].kind, FunctionKind::kLinear);
  std::vector<std::vector<double>> preds{std::vector<double>(80, 0.0),
                                         std::vector<double>(60, 1.0)};
  const ProblemValues v = p.evaluate(p.atom_values(preds));
  // churn = share of baseline-0 rows.
  double zeros = 0;
  const Column& b = u.column("baseline");
  for (std::size_t i = 0; i < 60; ++i)
    zeros += b.levels[static_cast<std::size_t>(b.codes[i])] == "0";
  EXPECT_NEAR(v.constraints[0], zeros / 60 - 0.1, 1e-12);
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] {
                 (void)RateProblem::build(test::spec("tpr@unl"), {{"train", &a}, {"unl", &u}});
               }),
               "unlabelled"));
}

}  // namespace
}  // namespace rateopt
