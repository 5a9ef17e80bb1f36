// evaluate_rate / evaluate_expression on small hand-built datasets with hand-computed values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::make_column;

RateRef named(const char* metric) {
  RateRef r;
  r.metric = metric;
  return r;
}

FeatureMatrix zeros(std::size_t rows) {
  return FeatureMatrix::dense(std::vector<double>(rows), rows, 1);
}

// Binary, 6 rows:      row   0  1  2  3  4  5
//   sex                      F  F  F  M  M  M
//   label                    1  0  1  1  0  0
//   prediction               1  0  0  1  1  0
//   score                   .9 .2 .4 .8 .6 .1
// sex=F: tp 1, fn 1, tn 1 -> tpr 1/2, ppr 1/3, precision 1.
// sex=M: tp 1, fp 1, tn 1 -> tpr 1, fpr 1/2, ppr 2/3, precision 1/2.
// all:   tp 2, fp 1, fn 1, tn 2 -> error 1/3.
Dataset binary_data() {
  Labels y;
  y.kind = LabelKind::kBinary;
  y.values = {1, 0, 1, 1, 0, 0};
  y.names = {"0", "1"};
  Dataset ds(zeros(6), y);
  ds.add_column(make_column("sex", {"F", "F", "F", "M", "M", "M"}));
  return ds;
}
Predictions binary_predictions() {
  Predictions p;
  p.prob_positive = {1, 0, 0, 1, 1, 0};
  p.scores = {0.9, 0.2, 0.4, 0.8, 0.6, 0.1};
  return p;
}

// Unlabelled, 4 rows: sex F F M M, probabilities .5 1 0 .25 -> ppr 7/16, ppr[sex=F] 3/4.
Dataset unlabelled_data() {
  Dataset ds(zeros(4), Labels{});
  ds.add_column(make_column("sex", {"F", "F", "M", "M"}));
  return ds;
}
Predictions unlabelled_predictions() {
  Predictions p;
  p.prob_positive = {0.5, 1, 0, 0.25};
  return p;
}

class ExprBind : public ::testing::Test {
 protected:
  double rate(const std::string& text) {
    const Expression e = Expression::parse(text);
    EXPECT_EQ(e.rates().size(), 1u) << text;
    return evaluate_rate(e.rates()[0], data());
  }
  ExpressionValue expr(const std::string& text) {
    return evaluate_expression(Expression::parse(text), data());
  }
  std::vector<NamedData> data() {
    return {{"train", &binary_, &binary_pred_}, {"unlabeled", &unlabelled_, &unlabelled_pred_}};
  }

  Dataset binary_ = binary_data();
  Predictions binary_pred_ = binary_predictions();
  Dataset unlabelled_ = unlabelled_data();
  Predictions unlabelled_pred_ = unlabelled_predictions();
};

TEST_F(ExprBind, BinaryConfusionMetrics) {
  EXPECT_DOUBLE_EQ(rate("error"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(rate("accuracy@train"), 2.0 / 3);
  EXPECT_DOUBLE_EQ(rate("tpr[sex=F]"), 0.5);
  EXPECT_DOUBLE_EQ(rate("fpr[sex=M]"), 0.5);
  EXPECT_DOUBLE_EQ(rate("f1"), 2.0 / 3);
  // F-beta with beta = 2 on sex=M (tp 1, fp 1, fn 0): 5 tp / (5 tp + 4 fn + fp) = 5/6.
  EXPECT_DOUBLE_EQ(rate("fbeta:2[sex=M]"), 5.0 / 6);
  EXPECT_DOUBLE_EQ(rate("tpr[sex=F, label=1]"), 0.5);
  EXPECT_DOUBLE_EQ(expr("tpr[sex=F] - tpr[sex=M]").value, -0.5);
  EXPECT_DOUBLE_EQ(expr("precision[sex=F] / precision[sex=M]").value, 2.0);
  EXPECT_DOUBLE_EQ(expr("max(fpr[sex=F], fpr[sex=M])").value, 0.5);
}

TEST_F(ExprBind, WeightsAreUsed) {
  binary_.set_weights({1, 1, 3, 1, 1, 1});
  // Errors on rows 2 (weight 3) and 4: 4 / 8. tpr[sex=F]: tp 1, fn 3.
  EXPECT_DOUBLE_EQ(rate("error"), 0.5);
  EXPECT_DOUBLE_EQ(rate("tpr[sex=F]"), 0.25);
}

TEST_F(ExprBind, RankingMetrics) {
  // Positives score .9 .4 .8, negatives .2 .6 .1: 8 of 9 pairs ordered.
  EXPECT_DOUBLE_EQ(rate("roc_auc"), 8.0 / 9);
  EXPECT_DOUBLE_EQ(rate("auc[sex=F]"), 1.0);
  // Ranked: P P N P N N -> precisions 1, 1, 3/4 at the positives.
  EXPECT_DOUBLE_EQ(rate("average_precision"), 11.0 / 12);
  EXPECT_DOUBLE_EQ(rate("ap"), 11.0 / 12);
  // Without scores the probabilities rank: positives 1 0 1, negatives 0 1 0, ties count half.
  binary_pred_.scores.clear();
  EXPECT_DOUBLE_EQ(rate("auc"), 6.0 / 9);
}

TEST_F(ExprBind, UnlabelledData) {
  EXPECT_DOUBLE_EQ(rate("ppr@unlabeled"), 7.0 / 16);
  EXPECT_DOUBLE_EQ(rate("ppr@unlabeled[sex=F]"), 0.75);
  EXPECT_DOUBLE_EQ(rate("npr@unlabeled[sex=M]"), 0.875);
  EXPECT_DOUBLE_EQ(expr("ppr@unlabeled - ppr").value, 7.0 / 16 - 0.5);
  // The unlabelled dataset as the default (first) one.
  const std::vector<NamedData> d{{"u", &unlabelled_, &unlabelled_pred_}};
  EXPECT_DOUBLE_EQ(evaluate_expression(Expression::parse("ppr <= 0.5"), d).value, 7.0 / 16);
}

TEST_F(ExprBind, Constraints) {
  const ExpressionValue violated = expr("ppr[sex=F] >= 0.8 * ppr[sex=M]");
  EXPECT_TRUE(violated.is_constraint);
  EXPECT_DOUBLE_EQ(violated.value, 1.0 / 3);
  EXPECT_DOUBLE_EQ(violated.rhs, 0.8 * 2 / 3);
  EXPECT_NEAR(violated.violation, 0.2, 1e-15);
  EXPECT_FALSE(violated.satisfied);
  EXPECT_EQ(violated.text, "ppr[sex=F] >= 0.8 * ppr[sex=M]");

  const ExpressionValue ok = expr("error <= 0.4");
  EXPECT_DOUBLE_EQ(ok.value, 1.0 / 3);
  EXPECT_DOUBLE_EQ(ok.rhs, 0.4);
  EXPECT_NEAR(ok.violation, 1.0 / 3 - 0.4, 1e-15);
  EXPECT_TRUE(ok.satisfied);

  const ExpressionValue eq = expr("tpr[sex=M] == 1");
  EXPECT_EQ(eq.violation, 0.0);
  EXPECT_TRUE(eq.satisfied);

  const ExpressionValue plain = expr("error");
  EXPECT_FALSE(plain.is_constraint);
  EXPECT_TRUE(plain.satisfied);
  EXPECT_EQ(plain.violation, 0.0);
}

TEST_F(ExprBind, Baseline) {
  try {
    (void)rate("churn");
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("column named \"baseline\""), std::string::npos)
        << e.what();
  }
  // Baseline = the labels: it is always right, so the new model only loses (rows 2 and 4).
  binary_.add_column(make_column("baseline", {"1", "0", "1", "1", "0", "0"}));
  EXPECT_DOUBLE_EQ(rate("churn"), 2.0 / 6);
  EXPECT_DOUBLE_EQ(rate("losses"), 2.0 / 6);
  EXPECT_DOUBLE_EQ(rate("wins"), 0.0);
  EXPECT_DOUBLE_EQ(rate("churn[sex=M]"), 1.0 / 3);
}

// Hard predictions as bytes (Predictions::positive, read when prob_positive is empty): the same
// values as the 0/1 doubles, weights, slices and a baseline included; ranking metrics still read
// scores.
TEST_F(ExprBind, BytePredictions) {
  binary_.set_weights({1, 0.3, 3, 1, 1.7, 1});
  binary_.add_column(make_column("baseline", {"1", "0", "1", "0.5", "0", "0"}));
  const char* texts[] = {"error",  "tpr[sex=F]",  "fbeta:2[sex=M]",
                         "churn",  "wins[sex=M]", "ppr[sex=F] >= 0.8 * ppr[sex=M]",
                         "roc_auc"};
  std::vector<ExpressionValue> want;
  for (const char* t : texts) want.push_back(expr(t));
  binary_pred_.positive.assign(binary_pred_.prob_positive.begin(),
                               binary_pred_.prob_positive.end());
  binary_pred_.prob_positive.clear();
  for (std::size_t k = 0; k < std::size(texts); ++k) {
    const ExpressionValue got = expr(texts[k]);
    EXPECT_EQ(got.value, want[k].value) << texts[k];
    EXPECT_EQ(got.rhs, want[k].rhs) << texts[k];
    EXPECT_EQ(got.violation, want[k].violation) << texts[k];
  }
  // prob_positive, when not empty, is the one read.
  binary_pred_.prob_positive.assign(6, 1.0);
  EXPECT_DOUBLE_EQ(rate("ppr"), 1.0);
  // Neither with one entry per row: the error names both.
  binary_pred_.prob_positive.clear();
  binary_pred_.positive.pop_back();
  try {
    (void)rate("tpr");
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("prob_positive has 0 entries and positive 5, expected 6"),
              std::string::npos)
        << e.what();
  }
  binary_pred_.positive.clear();
  EXPECT_THROW((void)rate("tpr"), InvalidArgument);
  // Ranking metrics read scores (or prob_positive), never the bytes.
  binary_pred_.positive.assign(6, 1);
  binary_pred_.scores.clear();
  EXPECT_THROW((void)rate("roc_auc"), InvalidArgument);
}

TEST_F(ExprBind, Errors) {
  // Unknown dataset: NotFound listing the names.
  try {
    (void)rate("tpr@nope");
    FAIL() << "no error";
  } catch (const NotFound& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown dataset 'nope'"), std::string::npos) << what;
    EXPECT_NE(what.find("'train', 'unlabeled'"), std::string::npos) << what;
  }
  // Metrics that need labels on unlabelled data.
  for (const char* text : {"tpr@unlabeled", "auc@unlabeled", "error@unlabeled[sex=F]"}) {
    try {
      (void)rate(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("unlabelled"), std::string::npos) << e.what();
    }
  }
  // Multilabel scores on binary data.
  EXPECT_THROW((void)rate("instance_f1"), InvalidArgument);
  EXPECT_THROW((void)rate("macro_f1"), InvalidArgument);
  // Unknown slice column: NotFound from the metrics layer, naming the rate.
  try {
    (void)rate("tpr[race=X]");
    FAIL() << "no error";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("(evaluating 'tpr[race=X]')"), std::string::npos)
        << e.what();
  }
  // The first failing rate aborts evaluate_expression.
  EXPECT_THROW((void)expr("error + tpr@nope"), NotFound);
  // Predictions of the wrong size or missing.
  binary_pred_.prob_positive.pop_back();
  EXPECT_THROW((void)rate("tpr"), InvalidArgument);
  binary_pred_.scores.pop_back();
  EXPECT_THROW((void)rate("auc"), InvalidArgument);
  const std::vector<NamedData> no_predictions{{"train", &binary_, nullptr}};
  EXPECT_THROW((void)evaluate_rate(named("tpr"), no_predictions), InvalidArgument);
  EXPECT_THROW((void)evaluate_rate(named("tpr"), {}), InvalidArgument);
  // A hand-made RateRef with an unknown metric.
  EXPECT_THROW((void)evaluate_rate(named("nonsense"), data()), NotFound);
}

// Multilabel, 3 rows, labels x y z:  truth {x,y} {z} {},  predicted {x} {z} {y}, group A A B.
//   instance F1: 2/3, 1, 0 -> 5/9;   Jaccard: 1/2, 1, 0 -> 1/2;   subset accuracy 1/3;
//   Hamming: 1 + 0 + 1 wrong of 9 -> 2/9;   pooled tp 2 fp 1 fn 1 -> micro F1 2/3;
//   per label F1: x 1, y 0, z 1 -> macro F1 2/3.
TEST(ExprBindMultilabel, Scores) {
  Labels y;
  y.kind = LabelKind::kMultilabel;
  y.set_indptr = {0, 2, 3, 3};
  y.set_indices = {0, 1, 2};
  y.names = {"x", "y", "z"};
  Dataset ds(zeros(3), y);
  ds.add_column(make_column("group", {"A", "A", "B"}));
  Predictions p;
  p.set_indptr = {0, 1, 2, 3};
  p.set_indices = {0, 2, 1};
  const std::vector<NamedData> d{{"ml", &ds, &p}};
  const auto value = [&](const char* text) {
    return evaluate_expression(Expression::parse(text), d).value;
  };
  EXPECT_DOUBLE_EQ(value("instance_f1"), 5.0 / 9);
  EXPECT_DOUBLE_EQ(value("instance_jaccard@ml"), 0.5);
  EXPECT_DOUBLE_EQ(value("subset_accuracy"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(value("hamming_loss"), 2.0 / 9);
  EXPECT_DOUBLE_EQ(value("hamming"), 2.0 / 9);
  EXPECT_DOUBLE_EQ(value("micro_f1"), 2.0 / 3);
  EXPECT_DOUBLE_EQ(value("macro_f1"), 2.0 / 3);
  EXPECT_DOUBLE_EQ(value("instance_f1[group=A]"), 5.0 / 6);
  const ExpressionValue c = evaluate_expression(Expression::parse("instance_f1 >= 0.6"), d);
  EXPECT_FALSE(c.satisfied);
  EXPECT_NEAR(c.violation, 0.6 - 5.0 / 9, 1e-15);

  try {
    (void)value("tpr");
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("instance_f1"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)value("auc"), InvalidArgument);
  p.set_indptr.pop_back();
  EXPECT_THROW((void)value("micro_f1"), InvalidArgument);
}

// Multiclass, 4 rows, classes a b c: truth 0 1 2 1, predicted 0 2 2 1, group A A B B.
//   accuracy 3/4, error 1/4; one-vs-rest F1: a 1, b 2/3, c 2/3 -> macro F1 7/9.
TEST(ExprBindMulticlass, Scores) {
  Labels y;
  y.kind = LabelKind::kMulticlass;
  y.values = {0, 1, 2, 1};
  y.names = {"a", "b", "c"};
  Dataset ds(zeros(4), y);
  ds.add_column(make_column("group", {"A", "A", "B", "B"}));
  Predictions p;
  p.classes = {0, 2, 2, 1};
  const std::vector<NamedData> d{{"mc", &ds, &p}};
  const auto value = [&](const char* text) {
    return evaluate_expression(Expression::parse(text), d).value;
  };
  EXPECT_DOUBLE_EQ(value("accuracy"), 0.75);
  EXPECT_DOUBLE_EQ(value("error"), 0.25);
  EXPECT_DOUBLE_EQ(value("macro_f1"), 7.0 / 9);
  EXPECT_DOUBLE_EQ(value("accuracy[label=b]"), 0.5);
  EXPECT_DOUBLE_EQ(value("error[group=A]"), 0.5);
  // Empty slice (no row of class c in group A): error is 0 like every proportion.
  EXPECT_DOUBLE_EQ(value("error[group=A, label=c]"), 0.0);
  EXPECT_DOUBLE_EQ(value("accuracy[group=A] - accuracy[group=B]"), -0.5);

  try {
    (void)value("tpr");
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("accuracy, error, macro_f1"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)value("roc_auc"), InvalidArgument);
  EXPECT_THROW((void)value("instance_f1"), InvalidArgument);
  p.classes.pop_back();
  EXPECT_THROW((void)value("accuracy"), InvalidArgument);
}

}  // namespace
}  // namespace rateopt
