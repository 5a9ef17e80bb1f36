// UncF1 and PostShift baselines against brute force.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/train.hpp"

namespace rateopt {
namespace {

double f1_at(const std::vector<double>& s, const std::vector<std::int32_t>& y, double t) {
  double tp = 0, fp = 0, fn = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool p = s[i] > t;
    if (p && y[i] == 1) ++tp;
    if (p && y[i] == 0) ++fp;
    if (!p && y[i] == 1) ++fn;
  }
  return tp + fp + fn > 0 ? 2 * tp / (2 * tp + fp + fn) : 1.0;
}

TEST(Baselines, F1ThresholdIsBestOverAllCuts) {
  std::mt19937_64 rng(4);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> u;
  for (int t = 0; t < 5; ++t) {
    std::vector<double> s(300);
    std::vector<std::int32_t> y(300);
    for (std::size_t i = 0; i < s.size(); ++i) {
      s[i] = std::round(nd(rng) * 20) / 20;  // ties
      y[i] = u(rng) < 1 / (1 + std::exp(-2 * s[i] + 1)) ? 1 : 0;
    }
    double best = 0;
    for (double c : s) best = std::max(best, f1_at(s, y, c));
    best = std::max(best, f1_at(s, y, -1e9));
    EXPECT_NEAR(f1_at(s, y, f1_threshold(s, y)), best, 1e-12);
  }
  EXPECT_THROW((void)f1_threshold(std::vector<double>{1}, std::vector<std::int32_t>{2}),
               InvalidArgument);
}

TEST(Baselines, GroupCoverageThresholdsEqualiseCoverage) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> nd;
  std::vector<double> s(1000);
  std::vector<std::int32_t> g(1000);
  for (std::size_t i = 0; i < s.size(); ++i) {
    g[i] = static_cast<std::int32_t>(i % 3);
    s[i] = nd(rng) + g[i];
  }
  const std::vector<double> t = group_coverage_thresholds(s, g, 3, 0.3);
  for (std::int32_t k = 0; k < 3; ++k) {
    double n = 0, c = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (g[i] == k) {
        ++n;
        c += s[i] > t[static_cast<std::size_t>(k)];
      }
    EXPECT_LE(std::fabs(c / n - 0.3), 0.5 / n + 1e-12);  // distinct scores: within half a row
  }
}

}  // namespace
}  // namespace rateopt
