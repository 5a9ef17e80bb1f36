// Baselines: select_threshold, select_top_k (ties, bounds) and tune_threshold against a naive
// O(n^2) search over every candidate threshold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(BaselineSelect, ThresholdOrderAndTies) {
  const std::vector<double> p{0.2, 0.7, 0.5, 0.7, 0.9, 0.5};
  EXPECT_EQ(select_threshold(p, 0.5), (std::vector<std::size_t>{4, 1, 3, 2, 5}));
  EXPECT_EQ(select_threshold(p, 0.7), (std::vector<std::size_t>{4, 1, 3}));  // >= threshold
  EXPECT_EQ(select_threshold(p, 0.71), (std::vector<std::size_t>{4}));
  EXPECT_TRUE(select_threshold(p, kInf).empty());
  EXPECT_EQ(select_threshold(p, -kInf).size(), p.size());
  EXPECT_TRUE(select_threshold({}, 0.5).empty());
  // Scores need not be probabilities.
  EXPECT_EQ(select_threshold(std::vector<double>{-3.0, 2.5, 0.0}, -1.0),
            (std::vector<std::size_t>{1, 2}));
}

TEST(BaselineSelect, TopKOrderAndTies) {
  const std::vector<double> p{0.2, 0.7, 0.5, 0.7, 0.9, 0.5};
  EXPECT_TRUE(select_top_k(p, 0).empty());
  EXPECT_EQ(select_top_k(p, 1), (std::vector<std::size_t>{4}));
  EXPECT_EQ(select_top_k(p, 2), (std::vector<std::size_t>{4, 1}));  // tie 1 vs 3: lower first
  EXPECT_EQ(select_top_k(p, 4), (std::vector<std::size_t>{4, 1, 3, 2}));
  EXPECT_EQ(select_top_k(p, 6), (std::vector<std::size_t>{4, 1, 3, 2, 5, 0}));
  const std::vector<double> flat(5, 0.3);
  EXPECT_EQ(select_top_k(flat, 3), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(BaselineSelect, BadInputThrows) {
  const std::vector<double> p{0.2, 0.7};
  EXPECT_THROW((void)select_top_k(p, 3), InvalidArgument);
  EXPECT_THROW((void)select_top_k(std::vector<double>{0.2, std::nan("")}, 1), InvalidArgument);
  EXPECT_THROW((void)select_threshold(std::vector<double>{0.2, kInf}, 0.5), InvalidArgument);
  EXPECT_THROW((void)select_threshold(p, std::nan("")), InvalidArgument);
}

// The naive search: every distinct score and +inf, counts recomputed from scratch, the largest
// threshold among equal metric values.
double naive_tune(const std::vector<double>& scores, const std::vector<std::int32_t>& labels,
                  const DecideMetric& metric, const std::vector<double>& weights) {
  std::vector<double> candidates(scores);
  candidates.push_back(kInf);
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  double best_threshold = kInf;
  double best = -kInf;
  for (const double theta : candidates) {
    double tp = 0, fp = 0, fn = 0, tn = 0;
    for (std::size_t i = 0; i < scores.size(); ++i) {
      const double w = weights.empty() ? 1.0 : weights[i];
      const bool positive = scores[i] >= theta;
      (labels[i] == 1 ? (positive ? tp : fn) : (positive ? fp : tn)) += w;
    }
    const double u = metric.utility(tp, fp, fn, tn);
    if (u > best) {
      best = u;
      best_threshold = theta;
    }
  }
  return best_threshold;
}

double metric_at(const std::vector<double>& scores, const std::vector<std::int32_t>& labels,
                 const DecideMetric& metric, const std::vector<double>& weights, double theta) {
  double tp = 0, fp = 0, fn = 0, tn = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const double w = weights.empty() ? 1.0 : weights[i];
    const bool positive = scores[i] >= theta;
    (labels[i] == 1 ? (positive ? tp : fn) : (positive ? fp : tn)) += w;
  }
  return metric.utility(tp, fp, fn, tn);
}

TEST(TuneThreshold, EqualsNaiveSearch) {
  const std::vector<std::string> metrics{
      "f1",    "fbeta:2", "fbeta:0.5", "jaccard", "balanced_accuracy",
      "gmean", "hmean",   "gtppr",     "accuracy"};
  std::mt19937_64 rng(616);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int t = 0; t < 150; ++t) {
    const std::size_t n = 1 + rng() % 80;
    const int levels = t % 3 == 0 ? 4 : 1000;  // many ties or few
    const double base_rate = unit(rng);
    std::vector<double> scores(n);
    std::vector<std::int32_t> labels(n);
    for (std::size_t i = 0; i < n; ++i) {
      scores[i] = std::floor(unit(rng) * levels) / levels - 0.3;
      labels[i] = unit(rng) < base_rate ? 1 : 0;
    }
    std::vector<double> weights;
    if (t % 2 == 1)  // integer weights keep every count exact
      for (std::size_t i = 0; i < n; ++i) weights.push_back(static_cast<double>(rng() % 4));
    for (const auto& name : metrics) {
      SCOPED_TRACE("trial " + std::to_string(t) + " " + name);
      const auto metric = DecideMetric::from_name(name);
      EXPECT_EQ(tune_threshold(scores, labels, metric, weights),
                naive_tune(scores, labels, metric, weights));
    }
    // Real-valued weights: counts differ in the last bits between the sweep and the naive sums,
    // so compare the metric reached.
    std::vector<double> real_weights(n);
    for (auto& w : real_weights) w = unit(rng);
    for (const auto& name : metrics) {
      SCOPED_TRACE("trial " + std::to_string(t) + " real weights " + name);
      const auto metric = DecideMetric::from_name(name);
      const double got = tune_threshold(scores, labels, metric, real_weights);
      const double want = naive_tune(scores, labels, metric, real_weights);
      EXPECT_NEAR(metric_at(scores, labels, metric, real_weights, got),
                  metric_at(scores, labels, metric, real_weights, want), 1e-12);
    }
  }
}

TEST(TuneThreshold, HandCases) {
  const auto f1 = DecideMetric::from_name("f1");
  // Separable: the threshold is the lowest positive score.
  EXPECT_EQ(tune_threshold(std::vector<double>{0.1, 0.8, 0.3, 0.9},
                           std::vector<std::int32_t>{0, 1, 0, 1}, f1),
            0.8);
  // No positives: F1 of the empty prediction is 1 (convention), so +inf (predict nothing).
  EXPECT_EQ(tune_threshold(std::vector<double>{0.1, 0.8}, std::vector<std::int32_t>{0, 0}, f1),
            kInf);
  // All positives: predict everything.
  EXPECT_EQ(tune_threshold(std::vector<double>{0.4, 0.8}, std::vector<std::int32_t>{1, 1}, f1),
            0.4);
  // Ties in the metric: accuracy of {0.9: 1, 0.5: 0, 0.2: 1}: theta = inf 1/3, 0.9 2/3, 0.5 1/3,
  // 0.2 2/3 -> the largest of the tied thresholds, 0.9.
  EXPECT_EQ(tune_threshold(std::vector<double>{0.9, 0.5, 0.2}, std::vector<std::int32_t>{1, 0, 1},
                           DecideMetric::from_name("accuracy")),
            0.9);
  // Weights move the optimum: a heavy negative at 0.5 pushes the threshold above it.
  EXPECT_EQ(tune_threshold(std::vector<double>{0.9, 0.5, 0.2}, std::vector<std::int32_t>{1, 0, 1},
                           f1, std::vector<double>{1, 10, 1}),
            0.9);
  EXPECT_EQ(tune_threshold(std::vector<double>{0.9, 0.5, 0.2}, std::vector<std::int32_t>{1, 0, 1},
                           f1, std::vector<double>{1, 0.1, 1}),
            0.2);
}

TEST(TuneThreshold, BadInputThrows) {
  const auto f1 = DecideMetric::from_name("f1");
  const std::vector<double> s{0.1, 0.8};
  const std::vector<std::int32_t> y{0, 1};
  EXPECT_THROW((void)tune_threshold({}, {}, f1), InvalidArgument);
  EXPECT_THROW((void)tune_threshold(s, std::vector<std::int32_t>{1}, f1), InvalidArgument);
  EXPECT_THROW((void)tune_threshold(s, std::vector<std::int32_t>{0, 2}, f1), InvalidArgument);
  EXPECT_THROW((void)tune_threshold(std::vector<double>{0.1, std::nan("")}, y, f1),
               InvalidArgument);
  EXPECT_THROW((void)tune_threshold(s, y, f1, std::vector<double>{1}), InvalidArgument);
  EXPECT_THROW((void)tune_threshold(s, y, f1, std::vector<double>{1, -1}), InvalidArgument);
  EXPECT_THROW((void)tune_threshold(s, y, f1, std::vector<double>{1, std::nan("")}),
               InvalidArgument);
}

}  // namespace
}  // namespace rateopt

namespace rateopt {
namespace {

// Every catalogue metric is either a decide metric under rateopt eval's name or refused with a
// reason that names what to use instead (issue 12 item 6: metric names shared with eval).
TEST(DecideMetricNames, EveryCatalogueMetricIsAcceptedOrRefusedWithAReason) {
  for (const MetricInfo& info : metric_catalogue()) {
    const std::string name(info.name);
    SCOPED_TRACE(name);
    const bool utility = info.bigger_is_better && info.needs_labels && !info.needs_baseline;
    if (utility) {
      const DecideMetric m = DecideMetric::from_name(info.has_param ? name + ":2" : name);
      // The decide utility is the catalogue's function of the counts.
      SliceCounts c;
      c.confusion = Confusion{3, 1, 2, 4};
      c.total = 10;
      EXPECT_EQ(m.utility(3, 1, 2, 4), info.compute(c, info.has_param ? 2.0 : 0.0));
      continue;
    }
    try {
      (void)DecideMetric::from_name(name);
      ADD_FAILURE() << "accepted";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(name), std::string::npos) << what;
      EXPECT_NE(what.find("decide metrics: "), std::string::npos) << what;
      EXPECT_NE(what.find("precision"), std::string::npos) << what;
    }
  }
  EXPECT_THROW((void)DecideMetric::from_name("no_such_metric"), NotFound);
  try {
    (void)DecideMetric::from_name("error");
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("use accuracy"), std::string::npos) << e.what();
  }
}

// precision and recall are exact decide metrics (brute force covers them in
// independent_brute_test.cpp); here the closed forms of their expectations by k.
TEST(DecideMetricNames, PrecisionAndRecallByK) {
  const std::vector<double> p{0.9, 0.6, 0.3, 0.1};
  DecideOptions o;
  o.all_k = true;
  const Decision prec = decide_independent(p, DecideMetric::from_name("precision"), o);
  // E[tp / k] = mean of the top-k probabilities; the empty prediction has precision 1.
  ASSERT_EQ(prec.expected_by_k.size(), 5U);
  EXPECT_DOUBLE_EQ(prec.expected_by_k[0], 1.0);
  EXPECT_NEAR(prec.expected_by_k[1], 0.9, 1e-12);
  EXPECT_NEAR(prec.expected_by_k[2], 0.75, 1e-12);
  EXPECT_NEAR(prec.expected_by_k[4], 0.475, 1e-12);
  EXPECT_TRUE(prec.selected.empty());  // by the convention: predict nothing
  const Decision rec = decide_independent(p, DecideMetric::from_name("recall"), o);
  EXPECT_DOUBLE_EQ(rec.expected_by_k[4], 1.0);  // everything predicted: recall 1
  EXPECT_EQ(rec.selected.size(), 4U);
  // k = 0: recall 1 only when there is no positive.
  EXPECT_NEAR(rec.expected_by_k[0], 0.1 * 0.4 * 0.7 * 0.9, 1e-15);
  // Multiclass: recall of the set = P(truth in the set).
  const Decision mc =
      decide_multiclass(std::vector<double>{0.5, 0.3, 0.2}, DecideMetric::from_name("recall"), o);
  EXPECT_NEAR(mc.expected_by_k[2], 0.8, 1e-12);
}

}  // namespace
}  // namespace rateopt
