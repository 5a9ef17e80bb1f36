// The group shorthands parity / max_over / min_over: their expansion text, their values against
// the hand-written expressions, training with parity equal to the pairwise constraints written
// out, and the errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
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
