// Hand-computed cases for every catalogue metric and every zero-denominator convention.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

SliceCounts make_counts(double tp, double fp, double fn, double tn) {
  SliceCounts s;
  s.confusion = Confusion{tp, fp, fn, tn};
  s.total = tp + fp + fn + tn;
  return s;
}

SliceCounts with_baseline(SliceCounts s, double changes, double wins, double losses) {
  s.changes = changes;
  s.wins = wins;
  s.losses = losses;
  return s;
}

// Checks `expected` (metric spec -> value) against compute_metric; infinities compare exactly.
void expect_metrics(const SliceCounts& counts, const std::map<std::string, double>& expected) {
  for (const auto& [spec, value] : expected) {
    SCOPED_TRACE(spec);
    const double got = compute_metric(spec, counts);
    if (std::isinf(value)) {
      EXPECT_EQ(got, value);
    } else {
      EXPECT_NEAR(got, value, 1e-14);
    }
  }
}

TEST(MetricCatalogue, EntriesAreCompleteAndUnique) {
  const auto cat = metric_catalogue();
  const std::set<std::string> expected_names{
      "ppr",   "coverage", "npr",    "tpr",       "recall",
      "fnr",   "fpr",      "tnr",    "precision", "npv",
      "error", "accuracy", "tp",     "fp",        "fn",
      "tn",    "f1",       "fbeta",  "jaccard",   "balanced_accuracy",
      "gmean", "hmean",    "qmean",  "gtppr",     "kld",
      "churn", "wins",     "losses", "winloss"};
  std::set<std::string> names;
  for (const auto& m : cat) {
    SCOPED_TRACE(std::string(m.name));
    EXPECT_TRUE(names.insert(std::string(m.name)).second) << "duplicate name";
    EXPECT_FALSE(m.summary.empty());
    EXPECT_NE(m.compute, nullptr);
    EXPECT_EQ(find_metric(m.name), &m);
  }
  EXPECT_EQ(names, expected_names);
  EXPECT_EQ(find_metric("nope"), nullptr);
  EXPECT_EQ(find_metric("fbeta:2"), nullptr);  // names only
}

TEST(MetricCatalogue, Flags) {
  for (const char* name : {"ppr", "coverage", "npr", "churn"})
    EXPECT_FALSE(find_metric(name)->needs_labels) << name;
  for (const char* name : {"tpr", "f1", "kld", "wins", "losses", "winloss", "accuracy"})
    EXPECT_TRUE(find_metric(name)->needs_labels) << name;
  for (const char* name : {"churn", "wins", "losses", "winloss"})
    EXPECT_TRUE(find_metric(name)->needs_baseline) << name;
  EXPECT_FALSE(find_metric("f1")->needs_baseline);
  for (const char* name : {"fpr", "fnr", "error", "kld", "churn", "losses", "fp", "fn"})
    EXPECT_FALSE(find_metric(name)->bigger_is_better) << name;
  for (const char* name : {"tpr", "tnr", "precision", "f1", "accuracy", "qmean", "wins", "winloss",
                           "gmean", "hmean", "gtppr", "jaccard"})
    EXPECT_TRUE(find_metric(name)->bigger_is_better) << name;
  const MetricInfo* fbeta = find_metric("fbeta");
  EXPECT_TRUE(fbeta->has_param);
  EXPECT_EQ(fbeta->default_param, 1.0);
  EXPECT_FALSE(find_metric("f1")->has_param);
}

// tp = 2, fp = 1, fn = 3, tn = 4 (total 10): positives 5, negatives 5, predicted positive 3.
TEST(MetricHand, EveryMetricOnOneConfusion) {
  const auto counts = with_baseline(make_counts(2, 1, 3, 4), 3, 2, 1);
  expect_metrics(counts, {
                             {"ppr", 3.0 / 10},
                             {"coverage", 3.0 / 10},
                             {"npr", 7.0 / 10},
                             {"tpr", 2.0 / 5},
                             {"recall", 2.0 / 5},
                             {"fnr", 3.0 / 5},
                             {"fpr", 1.0 / 5},
                             {"tnr", 4.0 / 5},
                             {"precision", 2.0 / 3},
                             {"error", 4.0 / 10},
                             {"accuracy", 6.0 / 10},
                             {"tp", 2.0 / 10},
                             {"fp", 1.0 / 10},
                             {"fn", 3.0 / 10},
                             {"tn", 4.0 / 10},
                             {"f1", 1.0 / 2},     // 4 / (4 + 1 + 3)
                             {"fbeta", 1.0 / 2},  // default beta = 1
                             {"fbeta:1", 1.0 / 2},
                             {"fbeta:2", 10.0 / 23},    // 5*2 / (5*2 + 4*3 + 1)
                             {"fbeta:0.5", 10.0 / 17},  // 1.25*2 / (2.5 + 0.25*3 + 1)
                             {"jaccard", 1.0 / 3},      // 2 / (2 + 1 + 3)
                             {"balanced_accuracy", 3.0 / 5},
                             {"gmean", std::sqrt(8.0 / 25)},
                             {"hmean", 8.0 / 15},                // 2 (2/5)(4/5) / (6/5)
                             {"qmean", 1 - std::sqrt(1.0 / 5)},  // ((1/25 + 9/25) / 2) = 1/5
                             {"gtppr", std::sqrt(4.0 / 15)},     // (2/3)(2/5)
                             // p = 5/10, q = 3/10
                             {"kld", 0.5 * std::log(5.0 / 3) + 0.5 * std::log(5.0 / 7)},
                             {"churn", 3.0 / 10},
                             {"wins", 2.0 / 10},
                             {"losses", 1.0 / 10},
                             {"winloss", 2.0},
                         });
  EXPECT_DOUBLE_EQ(fbeta_score(counts.confusion, 2), 10.0 / 23);
  EXPECT_DOUBLE_EQ(kl_divergence(0.5, 0.3), 0.5 * std::log(5.0 / 3) + 0.5 * std::log(5.0 / 7));
}

TEST(MetricHand, NoPositives) {
  // tp = fn = 0: tpr = recall = 1, fnr = 0; f1 = 0 since fp > 0.
  const auto counts = make_counts(0, 1, 0, 3);
  expect_metrics(counts, {
                             {"tpr", 1},
                             {"recall", 1},
                             {"fnr", 0},
                             {"fpr", 1.0 / 4},
                             {"tnr", 3.0 / 4},
                             {"precision", 0},
                             {"f1", 0},
                             {"jaccard", 0},
                             {"balanced_accuracy", 7.0 / 8},
                             {"gmean", std::sqrt(3.0 / 4)},
                             {"hmean", 6.0 / 7},  // 2 * 1 * 3/4 / (7/4)
                             {"qmean", 1 - std::sqrt(1.0 / 32)},
                             {"gtppr", 0},
                             {"kld", std::log(4.0 / 3)},  // p = 0, q = 1/4
                         });
  // No positives, empty prediction: every positive-side convention at once.
  expect_metrics(make_counts(0, 0, 0, 5), {
                                              {"tpr", 1},
                                              {"fnr", 0},
                                              {"precision", 1},
                                              {"f1", 1},
                                              {"fbeta:2", 1},
                                              {"fbeta:0.5", 1},
                                              {"jaccard", 1},
                                              {"gtppr", 1},
                                              {"hmean", 1},
                                              {"gmean", 1},
                                              {"qmean", 1},
                                              {"balanced_accuracy", 1},
                                              {"kld", 0},  // p = q = 0
                                              {"ppr", 0},
                                              {"accuracy", 1},
                                          });
}

TEST(MetricHand, NoNegatives) {
  const auto counts = make_counts(2, 0, 1, 0);
  expect_metrics(counts, {
                             {"tnr", 1},
                             {"fpr", 0},
                             {"tpr", 2.0 / 3},
                             {"precision", 1},
                             {"f1", 4.0 / 5},
                             {"balanced_accuracy", 5.0 / 6},
                             {"gmean", std::sqrt(2.0 / 3)},
                             {"hmean", 4.0 / 5},  // 2 (2/3) / (5/3)
                             {"qmean", 1 - std::sqrt(1.0 / 18)},
                             {"kld", std::log(3.0 / 2)},  // p = 1, q = 2/3
                         });
  // All positives predicted positive: p = q = 1.
  expect_metrics(make_counts(3, 0, 0, 0), {{"kld", 0}, {"f1", 1}, {"tnr", 1}, {"hmean", 1}});
}

TEST(MetricHand, EmptyPrediction) {
  // tp = fp = 0: precision = 1, ppr = 0; f1 = 0 (fn > 0); kld infinite (p = 2/5, q = 0).
  const auto counts = make_counts(0, 0, 2, 3);
  expect_metrics(counts, {
                             {"precision", 1},
                             {"ppr", 0},
                             {"npr", 1},
                             {"tpr", 0},
                             {"f1", 0},
                             {"jaccard", 0},
                             {"gtppr", 0},
                             {"hmean", 0},  // tpr = 0
                             {"gmean", 0},
                             {"balanced_accuracy", 1.0 / 2},
                             {"kld", kInf},
                         });
}

TEST(MetricHand, EverythingPredictedPositive) {
  // q = 1 with p = 2/5: kld = +inf; tnr = 0 so hmean = gmean = 0.
  const auto counts = make_counts(2, 3, 0, 0);
  expect_metrics(counts, {{"kld", kInf},
                          {"tnr", 0},
                          {"hmean", 0},
                          {"gmean", 0},
                          {"ppr", 1},
                          {"precision", 2.0 / 5},
                          {"f1", 4.0 / 7}});
}

TEST(MetricHand, HmeanOfZeroRates) {
  // tpr = tnr = 0: hmean is 0 (not NaN); everything else follows.
  const auto counts = make_counts(0, 3, 2, 0);
  expect_metrics(counts, {{"hmean", 0},
                          {"gmean", 0},
                          {"balanced_accuracy", 0},
                          {"qmean", 0},
                          {"accuracy", 0},
                          {"error", 1}});
}

TEST(MetricHand, EmptySlice) {
  const auto counts = with_baseline(make_counts(0, 0, 0, 0), 0, 0, 0);
  expect_metrics(counts, {
                             {"ppr", 0},       {"coverage", 0},
                             {"npr", 0},       {"error", 0},
                             {"accuracy", 0},  {"tp", 0},
                             {"fp", 0},        {"fn", 0},
                             {"tn", 0},        {"kld", 0},
                             {"churn", 0},     {"wins", 0},
                             {"losses", 0},    {"winloss", 1},
                             {"tpr", 1},       {"tnr", 1},
                             {"fpr", 0},       {"fnr", 0},
                             {"precision", 1}, {"f1", 1},
                             {"jaccard", 1},   {"hmean", 1},
                             {"gmean", 1},     {"qmean", 1},
                             {"gtppr", 1},     {"balanced_accuracy", 1},
                         });
}

TEST(MetricHand, WinLoss) {
  auto base = make_counts(1, 1, 1, 1);
  EXPECT_EQ(compute_metric("winloss", with_baseline(base, 2, 2, 0)), kInf);
  EXPECT_EQ(compute_metric("winloss", with_baseline(base, 0, 0, 0)), 1.0);
  EXPECT_EQ(compute_metric("winloss", with_baseline(base, 1, 0, 1)), 0.0);
  EXPECT_DOUBLE_EQ(compute_metric("winloss", with_baseline(base, 4, 3, 1)), 3.0);
  EXPECT_DOUBLE_EQ(compute_metric("churn", with_baseline(base, 1, 0, 1)), 1.0 / 4);
}

TEST(MetricHand, KlDivergenceFreeFunction) {
  EXPECT_EQ(kl_divergence(0.5, 0.0), kInf);
  EXPECT_EQ(kl_divergence(0.5, 1.0), kInf);
  EXPECT_EQ(kl_divergence(1.0, 0.0), kInf);
  EXPECT_EQ(kl_divergence(0.0, 1.0), kInf);
  EXPECT_EQ(kl_divergence(0.0, 0.0), 0.0);
  EXPECT_EQ(kl_divergence(1.0, 1.0), 0.0);
  EXPECT_EQ(kl_divergence(0.3, 0.3), 0.0);
  EXPECT_DOUBLE_EQ(kl_divergence(0.0, 0.5), std::log(2.0));
  EXPECT_DOUBLE_EQ(kl_divergence(1.0, 0.25), std::log(4.0));
  EXPECT_DOUBLE_EQ(kl_divergence(0.25, 0.5), 0.25 * std::log(0.5) + 0.75 * std::log(1.5));
  EXPECT_TRUE(std::isnan(kl_divergence(1.5, 0.5)));
  EXPECT_TRUE(std::isnan(kl_divergence(0.5, std::nan(""))));
}

TEST(MetricHand, FbetaFreeFunction) {
  const Confusion c{2, 1, 3, 4};
  EXPECT_DOUBLE_EQ(fbeta_score(c, 1), 0.5);
  EXPECT_DOUBLE_EQ(fbeta_score(c, 0.5), 10.0 / 17);
  EXPECT_DOUBLE_EQ(fbeta_score(Confusion{0, 0, 0, 7}, 3), 1.0);
  EXPECT_TRUE(std::isnan(fbeta_score(c, 0)));
  EXPECT_TRUE(std::isnan(fbeta_score(c, -1)));
  EXPECT_TRUE(std::isnan(fbeta_score(c, std::nan(""))));
  // Large beta tends to recall (2/5), small beta to precision (2/3).
  EXPECT_NEAR(fbeta_score(c, 1e4), 2.0 / 5, 1e-7);
  EXPECT_NEAR(fbeta_score(c, 1e-4), 2.0 / 3, 1e-7);
  // A beta whose square overflows is recall, not NaN (issue 29), as in decide.
  EXPECT_DOUBLE_EQ(fbeta_score(c, 1e200), 2.0 / 5);
  EXPECT_DOUBLE_EQ(fbeta_score(c, 1e300), 2.0 / 5);
}

TEST(MetricErrors, UnknownNameListsTheCatalogue) {
  const auto counts = make_counts(1, 1, 1, 1);
  try {
    (void)compute_metric("f2", counts);
    FAIL() << "expected NotFound";
  } catch (const NotFound& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("[rateopt.not_found]"), std::string::npos);
    EXPECT_NE(what.find("'f2'"), std::string::npos);
    EXPECT_NE(what.find("fbeta"), std::string::npos);
    EXPECT_NE(what.find("winloss"), std::string::npos);
  }
  EXPECT_THROW((void)compute_metric("", counts), NotFound);
  EXPECT_THROW((void)compute_metric("nope:2", counts), NotFound);
}

TEST(MetricErrors, BadParameters) {
  const auto counts = make_counts(1, 1, 1, 1);
  for (const char* spec : {"fbeta:0", "fbeta:-1", "fbeta:nan", "fbeta:inf", "fbeta:abc",
                           "fbeta:", "fbeta:2x", "f1:2", "tpr:0.5", "kld:1"}) {
    SCOPED_TRACE(spec);
    EXPECT_THROW((void)compute_metric(spec, counts), InvalidArgument);
  }
  EXPECT_DOUBLE_EQ(compute_metric("fbeta: 2", counts), 0.5);  // spaces around the number
  // A huge beta is recall (its square would overflow to inf and the value to NaN).
  EXPECT_DOUBLE_EQ(compute_metric("fbeta:1e200", make_counts(2, 1, 3, 4)), 2.0 / 5);
}

TEST(MetricErrors, BaselineMetricsNeedBaselineCounts) {
  const auto counts = make_counts(1, 1, 1, 1);
  for (const char* spec : {"churn", "wins", "losses", "winloss"}) {
    SCOPED_TRACE(spec);
    try {
      (void)compute_metric(spec, counts);
      FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("baseline"), std::string::npos);
    }
  }
  EXPECT_NO_THROW((void)compute_metric("f1", counts));
}

TEST(MetricErrors, RejectsInvalidCounts) {
  EXPECT_THROW((void)compute_metric("f1", make_counts(-1, 1, 1, 1)), InvalidArgument);
  EXPECT_THROW((void)compute_metric("ppr", make_counts(std::nan(""), 1, 1, 1)), InvalidArgument);
  EXPECT_THROW((void)compute_metric("churn", with_baseline(make_counts(1, 1, 1, 1), -1, 0, 0)),
               InvalidArgument);
}

// MetricInfo::share_of / share_in: a declared share equals its definition wherever its
// denominator is positive, the numerator's cells lie in the denominator's, and the proportions
// the intervals treat as binomial are exactly these.
TEST(MetricCatalogue, DeclaredSharesEqualTheDefinition) {
  std::set<std::string_view> shares;
  for (const MetricInfo& m : metric_catalogue()) {
    if (m.share_of == 0) continue;
    SCOPED_TRACE(std::string(m.name));
    shares.insert(m.alias_of.empty() ? m.name : m.alias_of);
    EXPECT_EQ(m.share_of & m.share_in, m.share_of);
    for (const auto& c :
         {make_counts(3, 1, 4, 7), make_counts(0, 2, 5, 1), make_counts(6, 0, 0, 2)}) {
      const double den = cell_mass(c.confusion, m.share_in);
      if (den > 0) {
        EXPECT_DOUBLE_EQ(m.compute(c, m.default_param), cell_mass(c.confusion, m.share_of) / den);
      }
    }
  }
  EXPECT_EQ(shares,
            (std::set<std::string_view>{"ppr", "npr", "tpr", "fnr", "fpr", "tnr", "precision",
                                        "npv", "error", "accuracy", "tp", "fp", "fn", "tn"}));
}

}  // namespace
}  // namespace rateopt
