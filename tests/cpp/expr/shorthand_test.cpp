// The group shorthands parity / max_over / min_over: their expansion text, their values against
// the hand-written expressions, training with parity equal to the pairwise constraints written
// out, and the errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/train.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

ColumnLevels fixed(std::vector<std::string> values) {
  return [values](std::string_view, std::string_view) { return values; };
}

TEST(GroupShorthands, ExpandOverEveryValue) {
  const ColumnLevels abc = fixed({"a", "b", "c"});
  EXPECT_EQ(expand_group_shorthands("parity(ppr, g) <= 0.1", abc),
            "max(abs(ppr[g=a] - ppr[g=b]), abs(ppr[g=a] - ppr[g=c]), abs(ppr[g=b] - ppr[g=c])) "
            "<= 0.1");
  EXPECT_EQ(expand_group_shorthands("max_over(tpr@valid[label=1], g) - 0.5", fixed({"a", "b"})),
            "max(tpr@valid[label=1, g=a], tpr@valid[label=1, g=b]) - 0.5");
  EXPECT_EQ(expand_group_shorthands("min_over( fbeta:2 , \"my col\" )", fixed({"x"})),
            "min(fbeta:2[my col=x])");
  // Values the slice grammar cannot read bare are quoted.
  EXPECT_EQ(expand_group_shorthands("max_over(ppr, g)", fixed({"a,b", "x]\"y"})),
            "max(ppr[g=\"a,b\"], ppr[g=\"x]\\\"y\"])");
  // No shorthand: unchanged; names inside slices and quotes are never calls.
  for (const char* t : {"error", "ppr[parity=1] <= 0.2", "tpr[g='max_over(a, b)']"})
    EXPECT_EQ(expand_group_shorthands(t, abc), t);
  // The dataset of the rate picks the levels.
  std::string seen;
  (void)expand_group_shorthands("parity(ppr@other, g)",
                                [&](std::string_view d, std::string_view c) {
                                  seen = std::string(d) + "/" + std::string(c);
                                  return std::vector<std::string>{"a", "b"};
                                });
  EXPECT_EQ(seen, "other/g");
}

TEST(GroupShorthands, Errors) {
  const ColumnLevels ab = fixed({"a", "b"});
  EXPECT_THROW((void)expand_group_shorthands("parity(ppr) <= 0.1", ab), ParseError);
  EXPECT_THROW((void)expand_group_shorthands("parity(ppr, g, h) <= 0.1", ab), ParseError);
  EXPECT_THROW((void)expand_group_shorthands("parity(ppr, g <= 0.1", ab), ParseError);
  EXPECT_THROW((void)expand_group_shorthands("parity(ppr - tpr, g) <= 0.1", ab), ParseError);
  EXPECT_THROW((void)expand_group_shorthands("parity(ppr, 3) <= 0.1", ab), ParseError);
  try {
    (void)expand_group_shorthands("parity(ppr, g) <= 0.1", fixed({"a"}));
    FAIL() << "one value";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("takes 1 value(s)"), std::string::npos) << e.what();
  }
}

// 9 rows in three groups; predictions 0/1.
struct Three {
  Dataset ds;
  Predictions pred;
};
Three three_groups() {
  Labels y;
  y.kind = LabelKind::kBinary;
  y.names = {"0", "1"};
  y.values = {1, 0, 1, 1, 0, 0, 1, 1, 0};
  Three t{Dataset(FeatureMatrix::dense(std::vector<double>(9), 9, 1), y), {}};
  t.ds.add_column(test::make_column("g", {"a", "a", "a", "b", "b", "b", "c", "c", "c"}));
  t.pred.prob_positive = {1, 0, 0, 1, 1, 0, 1, 1, 1};  // ppr: a 1/3, b 2/3, c 1
  return t;
}

TEST(GroupShorthands, ValuesEqualTheWrittenOutExpressions) {
  const Three t = three_groups();
  const NamedData named[] = {{"", &t.ds, &t.pred}};
  EXPECT_EQ(column_levels(t.ds, "g"), (std::vector<std::string>{"a", "b", "c"}));
  const auto value = [&](const std::string& text) {
    return evaluate_expression(Expression::parse(expand_group_shorthands(text, named)), named)
        .value;
  };
  EXPECT_NEAR(value("max_over(ppr, g)"), 1.0, 1e-15);
  EXPECT_NEAR(value("min_over(ppr, g)"), 1.0 / 3, 1e-15);
  EXPECT_NEAR(value("parity(ppr, g)"), 2.0 / 3, 1e-15);
  EXPECT_NEAR(value("max_over(tpr, g)"), 1.0, 1e-15);
  EXPECT_THROW((void)value("parity(ppr, h)"), NotFound);
  EXPECT_THROW((void)value("parity(ppr@nope, g)"), NotFound);
}

// Many groups, weighted rows, probabilities, a numeric group column with values written two ways,
// rows with no group: evaluate_text (parity as max - min, the rates of one column counted in one
// pass) gives the bits of the pairwise expansion with every rate counted on its own.
TEST(GroupShorthands, SpreadFormAndGroupedCountsGiveThePairwiseBits) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> unif;
  const std::size_t n = 3000, k = 60;
  Labels y;
  y.kind = LabelKind::kBinary;
  y.names = {"0", "1"};
  std::vector<std::string> g, num;
  std::vector<double> w;
  Predictions prob, hard, coded;
  coded.levels = {0.0, 0.25, 1.0};
  for (std::size_t i = 0; i < n; ++i) {
    y.values.push_back(unif(rng) < 0.4 ? 1 : 0);
    g.push_back(i % 97 == 0 ? "" : "v" + std::to_string(rng() % k));  // "": missing
    num.push_back(i % 3 == 0 ? "2" : i % 3 == 1 ? "2.0" : "7");       // numeric: 2 == 2.0
    w.push_back(0.5 + unif(rng));
    prob.prob_positive.push_back(unif(rng));
    hard.positive.push_back(unif(rng) < 0.3 ? 1 : 0);
    coded.positive.push_back(static_cast<std::uint8_t>(rng() % 3));
  }
  Dataset ds(FeatureMatrix::dense(std::vector<double>(n), n, 1), y);
  Column gc = test::make_column("g", g);
  ds.add_column(std::move(gc));
  ds.add_column(test::make_column("num", num));
  ds.set_weights(std::move(w));
  const std::vector<std::string> texts = {
      "parity(ppr, g)",
      "parity(tpr, g) <= 0.05",
      "max_over(fpr, g)",
      "min_over(precision, g)",
      "parity(f1, g)",
      "parity(ppr, num)",
      "ppr[num=2] + ppr[num=7] + ppr[num=2.0] + ppr[num=7.0] - error"};
  for (const Predictions* p : {&prob, &hard, &coded}) {
    const NamedData named[] = {{"", &ds, p}};
    for (const std::string& text : texts) {
      SCOPED_TRACE(text);
      const ExpressionValue fast = evaluate_text(text, named);
      // The reference: the pairwise text, every rate counted on its own mask.
      const Expression e = Expression::parse(expand_group_shorthands(text, named));
      std::vector<double> values;
      for (const RateRef& r : e.rates()) values.push_back(evaluate_rate(r, named));
      const double value = e.evaluate(e.lhs_root(), values);
      EXPECT_EQ(fast.value, value);
      if (e.is_constraint()) {
        EXPECT_EQ(fast.violation, e.value(values));
      }
    }
  }
  // The spread form's text.
  EXPECT_EQ(
      expand_group_shorthands("parity(ppr, g) <= 0.1", fixed({"a", "b", "c"}), ParityForm::kSpread),
      "(max(ppr[g=a], ppr[g=b], ppr[g=c]) - min(ppr[g=a], ppr[g=b], ppr[g=c])) <= 0.1");
  // A value the column never takes is still the per-rate error.
  const NamedData named[] = {{"", &ds, &prob}};
  EXPECT_THROW((void)evaluate_text("ppr[g=v1] + ppr[g=v2] + ppr[g=v3] + ppr[g=nope]", named),
               NotFound);
}

// parity(ppr, g) <= 0.1 trains exactly like the six one-sided pairwise constraints.
TEST(GroupShorthands, ParityTrainsAsThePairwiseConstraints) {
  Dataset ds = test::synthetic(500, 41);
  std::vector<std::string> g3;
  for (std::size_t i = 0; i < ds.num_rows(); ++i)
    g3.push_back(i % 3 == 0 ? "x" : i % 3 == 1 ? "y" : "z");
  ds.add_column(test::make_column("h", g3));
  const RateProblem short_form =
      RateProblem::build(test::spec("error", {"parity(ppr, h) <= 0.02"}), {{"train", &ds}});
  std::vector<std::string> pairs;
  for (const char* a : {"x", "y", "z"})
    for (const char* b : {"x", "y", "z"})
      if (std::string(a) != b) pairs.push_back(fmt::format("ppr[h={}] - ppr[h={}] <= 0.02", a, b));
  const RateProblem long_form = RateProblem::build(test::spec("error", pairs), {{"train", &ds}});
  EXPECT_EQ(short_form.constraints().size(), 6u);
  TrainOptions o;
  o.n_threads = 1;
  const TrainResult a = train_rate_constrained(short_form, o);
  const TrainResult b = train_rate_constrained(long_form, o);
  EXPECT_LE(a.stochastic.max_violation(), o.tolerance);
  EXPECT_NEAR(a.stochastic.objective, b.stochastic.objective, 1e-9);
}

// The slice columns of a text: conditions and shorthand columns, once each, in order of first
// appearance; a text that does not parse throws.
TEST(SliceColumns, NamesConditionAndShorthandColumnsOnce) {
  EXPECT_EQ(slice_columns("error"), std::vector<std::string>{});
  EXPECT_EQ(slice_columns("ppr[sex=Female] >= 0.8 * ppr[sex=Male]"),
            std::vector<std::string>{"sex"});
  EXPECT_EQ(slice_columns("parity(tpr[age=old], race) + fpr@valid[sex=F & \"my col\"=x]"),
            (std::vector<std::string>{"race", "age", "sex", "my col"}));
  EXPECT_THROW((void)slice_columns("ppr[sex=Female"), ParseError);
  EXPECT_THROW((void)slice_columns("parity(ppr)"), ParseError);
}

}  // namespace
}  // namespace rateopt
