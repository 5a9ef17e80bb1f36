// decide_batch (owning rows and views) and decide_gfm_samples_batch, what the CLI and the Python
// binding call: the per-instance decisions in order for any thread count, and an invalid instance
// named by its index.
#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

void expect_same(const Decision& a, const Decision& b) {
  EXPECT_EQ(a.selected, b.selected);
  EXPECT_EQ(a.expected, b.expected);
  EXPECT_EQ(a.method, b.method);
}

TEST(DecideBatch, ViewsAndRowsGiveTheSingleDecisionsForAnyThreads) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u;
  std::vector<std::vector<double>> rows(37);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].resize(1 + i % 9);
    for (double& v : rows[i]) v = u(rng);
  }
  const DecideMetric f1 = DecideMetric::from_name("f1");
  const std::vector<std::span<const double>> views(rows.begin(), rows.end());
  for (int threads : {1, 2, 4}) {
    const auto a = decide_batch(DecideModel::kIndependent, rows, f1, {}, threads);
    const auto b = decide_batch(DecideModel::kIndependent,
                                std::span<const std::span<const double>>(views), f1, {}, threads);
    ASSERT_EQ(a.size(), rows.size());
    ASSERT_EQ(b.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Decision one = decide_independent(rows[i], f1);
      expect_same(a[i], one);
      expect_same(b[i], one);
    }
  }
  // Several invalid instances: the first one is named, for any thread count, every time.
  rows[3][0] = 1.5;
  rows[20][0] = -1;
  rows[36][0] = 2;
  for (int rep = 0; rep < 20; ++rep) {
    for (int threads : {1, 2, 4}) {
      const std::string err = test::error_of<InvalidArgument>(
          [&] { (void)decide_batch(DecideModel::kIndependent, rows, f1, {}, threads); });
      EXPECT_TRUE(test::contains(err, "instance 3:")) << err;
    }
  }
}

TEST(DecideBatch, GfmSamplesBatchEqualsOneByOne) {
  // Instance i: label sets over m = 5 labels, with or without weights.
  const std::vector<std::int64_t> indptr0{0, 2, 3, 3}, indptr1{0, 1, 4};
  const std::vector<std::int32_t> indices0{0, 3, 1}, indices1{2, 0, 1, 4};
  const std::vector<LabelSetsView> samples{{indptr0, indices0, 5}, {indptr1, indices1, 5}};
  const std::vector<double> w1{0.25, 2.0};
  const std::vector<std::span<const double>> weights{{}, w1};
  const DecideMetric f1 = DecideMetric::from_name("f1");
  for (int threads : {1, 2}) {
    const auto d = decide_gfm_samples_batch(samples, weights, 5, f1, {}, threads);
    ASSERT_EQ(d.size(), 2U);
    for (std::size_t i = 0; i < 2; ++i)
      expect_same(d[i], decide_gfm_samples(samples[i], weights[i], 5, f1));
  }
  const std::vector<std::span<const double>> too_few{{}};
  EXPECT_THROW((void)decide_gfm_samples_batch(samples, too_few, 5, f1), InvalidArgument);
}

}  // namespace
}  // namespace rateopt
