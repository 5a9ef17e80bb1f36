// A recorded regression vector: 20 weighted examples with probabilistic predictions and a
// partly probabilistic baseline. The expected values were derived with exact rational
// arithmetic from the table below and the definitions in docs/metrics.md (independently of the
// code under test):
//   tp = sum w p y = 11/2      fp = sum w p (1-y) = 7/2      fn = 4      tn = 19/2
//   total = 45/2   positives = 19/2   negatives = 13   predicted positive = 9
//   changes = 21/2   wins = 55/8   losses = 29/8
// and every metric is then a formula in these counts (e.g. f1 = 11 / (11 + 7/2 + 4) = 22/37).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {
namespace {

struct Row {
  std::int32_t y;
  double p, w, b;
  const char* b_text;
};

// clang-format off
const std::vector<Row> kRows{
    {1, 1.00, 1.0, 1.00, "1"},   {1, 1.00, 2.0, 0.00, "0"},   {1, 0.75, 1.0, 1.00, "1.0"},
    {1, 0.50, 0.5, 0.00, "0"},   {1, 0.00, 1.0, 1.00, "1"},   {1, 0.25, 2.0, 0.00, "0"},
    {1, 1.00, 1.0, 0.50, "0.5"}, {1, 0.00, 1.0, 0.00, "0"},   {0, 0.00, 1.0, 0.00, "0"},
    {0, 0.00, 2.0, 0.00, "0"},   {0, 0.25, 1.0, 1.00, "1"},   {0, 1.00, 1.0, 0.00, "0"},
    {0, 0.50, 0.5, 1.00, "1"},   {0, 0.00, 1.0, 0.50, "0.5"}, {0, 0.75, 1.0, 0.00, "0"},
    {0, 0.00, 2.0, 1.00, "1"},   {0, 1.00, 0.5, 1.00, "1"},   {0, 0.25, 1.0, 0.00, "0"},
    {0, 0.00, 1.0, 0.00, "0"},   {0, 0.50, 1.0, 0.25, "0.25"},
};
// clang-format on

const std::map<std::string, double>& expected_metrics() {
  static const std::map<std::string, double> kExpected{
      {"ppr", 2.0 / 5.0},
      {"coverage", 2.0 / 5.0},
      {"npr", 3.0 / 5.0},
      {"tpr", 11.0 / 19.0},
      {"recall", 11.0 / 19.0},
      {"fnr", 8.0 / 19.0},
      {"fpr", 7.0 / 26.0},
      {"tnr", 19.0 / 26.0},
      {"precision", 11.0 / 18.0},
      {"npv", 19.0 / 27.0},
      {"error", 1.0 / 3.0},
      {"accuracy", 2.0 / 3.0},
      {"tp", 11.0 / 45.0},
      {"fp", 7.0 / 45.0},
      {"fn", 8.0 / 45.0},
      {"tn", 19.0 / 45.0},
      {"f1", 22.0 / 37.0},
      {"fbeta", 22.0 / 37.0},
      {"fbeta:2", 55.0 / 94.0},
      {"fbeta:0.5", 55.0 / 91.0},
      {"jaccard", 11.0 / 26.0},
      {"balanced_accuracy", 647.0 / 988.0},
      {"gmean", std::sqrt(11.0 / 26.0)},
      {"hmean", 418.0 / 647.0},
      {"qmean", 1 - std::sqrt(60953.0 / 488072.0)},
      {"gtppr", std::sqrt(121.0 / 342.0)},
      // p = 19/45, q = 2/5
      {"kld", 19.0 / 45.0 * std::log(19.0 / 18.0) + 26.0 / 45.0 * std::log(26.0 / 27.0)},
      {"churn", 7.0 / 15.0},
      {"wins", 11.0 / 36.0},
      {"losses", 29.0 / 180.0},
      {"winloss", 55.0 / 29.0},
  };
  return kExpected;
}

SliceCounts recorded_counts() {
  std::vector<std::int32_t> y;
  std::vector<double> p, w, b;
  for (const Row& r : kRows) {
    y.push_back(r.y);
    p.push_back(r.p);
    w.push_back(r.w);
    b.push_back(r.b);
  }
  return count_slice(y, p, w, {}, b);
}

TEST(MetricRegression, CountsOfTheRecordedVector) {
  const SliceCounts s = recorded_counts();
  EXPECT_DOUBLE_EQ(s.confusion.tp, 11.0 / 2);
  EXPECT_DOUBLE_EQ(s.confusion.fp, 7.0 / 2);
  EXPECT_DOUBLE_EQ(s.confusion.fn, 4.0);
  EXPECT_DOUBLE_EQ(s.confusion.tn, 19.0 / 2);
  EXPECT_DOUBLE_EQ(s.total, 45.0 / 2);
  EXPECT_DOUBLE_EQ(s.changes, 21.0 / 2);
  EXPECT_DOUBLE_EQ(s.wins, 55.0 / 8);
  EXPECT_DOUBLE_EQ(s.losses, 29.0 / 8);
}

TEST(MetricRegression, EveryCatalogueMetric) {
  const SliceCounts s = recorded_counts();
  const auto& expected = expected_metrics();
  for (const MetricInfo& m : metric_catalogue()) {
    const std::string name(m.name);
    SCOPED_TRACE(name);
    ASSERT_EQ(expected.count(name), 1u) << "no recorded value for catalogue metric " << name;
  }
  for (const auto& [spec, value] : expected) {
    SCOPED_TRACE(spec);
    EXPECT_NEAR(compute_metric(spec, s), value, 1e-13);
  }
}

TEST(MetricRegression, DatasetOverloadGivesTheSameValues) {
  Labels labels;
  labels.kind = LabelKind::kBinary;
  labels.names = {"0", "1"};
  std::vector<double> p, w;
  Column baseline;
  baseline.name = "baseline";
  for (const Row& r : kRows) {
    labels.values.push_back(r.y);
    p.push_back(r.p);
    w.push_back(r.w);
    baseline.push_back(r.b_text);
  }
  Dataset ds(FeatureMatrix::dense(std::vector<double>(kRows.size(), 0.0), kRows.size(), 1), labels);
  ds.set_weights(w);
  ds.add_column(baseline);
  const SliceCounts s = count_slice(ds, slice_mask(ds, Slice{}), p);
  for (const auto& [spec, value] : expected_metrics()) {
    SCOPED_TRACE(spec);
    EXPECT_NEAR(compute_metric(spec, s), value, 1e-13);
  }
}

TEST(MetricRegression, RankingOfTheRecordedVector) {
  // Predictions as scores (many ties): pairwise AUC 37/52, step AP 109489/178695.
  std::vector<std::int32_t> y;
  std::vector<double> p, w;
  for (const Row& r : kRows) {
    y.push_back(r.y);
    p.push_back(r.p);
    w.push_back(r.w);
  }
  EXPECT_NEAR(roc_auc(p, y, w), 37.0 / 52.0, 1e-14);
  EXPECT_NEAR(average_precision(p, y, w), 109489.0 / 178695.0, 1e-14);
}

}  // namespace
}  // namespace rateopt
