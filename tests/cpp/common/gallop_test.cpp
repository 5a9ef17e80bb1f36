// gallop_partition against std::partition_point: every hint (including past the end) on sorted
// sequences with runs of ties, the empty sequence, all-true and all-false predicates.
#include "common/gallop.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

namespace rateopt::detail {
namespace {

TEST(GallopPartition, EqualsPartitionPointForEveryHint) {
  std::mt19937_64 rng(7);
  std::size_t checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = trial % 40;
    std::vector<double> v(n);
    for (double& x : v) x = static_cast<double>(rng() % 12);  // runs of ties
    std::sort(v.begin(), v.end());
    for (double room = -1.0; room <= 12.0; room += 0.5) {
      const auto below = [&](double x) { return x <= room; };  // a prefix of a rising sequence
      const auto expect =
          static_cast<std::size_t>(std::partition_point(v.begin(), v.end(), below) - v.begin());
      for (std::size_t hint = 0; hint <= n + 2; ++hint) {
        ASSERT_EQ(gallop_partition(v, hint, below), expect)
            << "n " << n << " room " << room << " hint " << hint;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100000U);
}

TEST(GallopPartition, FallingSequenceAndConstantPredicates) {
  const std::vector<double> down{9, 7, 7, 5, 3, 3, 3, 1};
  for (std::size_t hint = 0; hint <= down.size(); ++hint) {
    EXPECT_EQ(gallop_partition(down, hint, [](double x) { return x > 4; }), 4U);
    EXPECT_EQ(gallop_partition(down, hint, [](double) { return true; }), down.size());
    EXPECT_EQ(gallop_partition(down, hint, [](double) { return false; }), 0U);
  }
  EXPECT_EQ(gallop_partition({}, 3, [](double) { return true; }), 0U);
}

}  // namespace
}  // namespace rateopt::detail
