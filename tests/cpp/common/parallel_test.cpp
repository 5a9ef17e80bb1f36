#include "common/parallel.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace rateopt::detail {
namespace {

constexpr int kThreadCounts[] = {1, 2, 3, 8, 0};

TEST(ParallelFor, VisitsEveryIndexOnce) {
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1000}, std::size_t{1000000}}) {
    for (const int threads : kThreadCounts) {
      std::vector<std::atomic<int>> hits(n);
      parallel_for(n, threads, [&](std::size_t i) { hits[i].fetch_add(1); });
      std::size_t wrong = 0;
      for (const auto& h : hits) wrong += h.load() != 1 ? 1 : 0;
      EXPECT_EQ(wrong, 0u) << "n = " << n << ", threads = " << threads;
    }
  }
}

TEST(ParallelFor, GrainKeepsSmallLoopsOnTheCaller) {
  const auto caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  parallel_for(
      1000, 8,
      [&](std::size_t) {
        if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
      },
      /*grain=*/1000);
  EXPECT_EQ(elsewhere.load(), 0);
  std::vector<std::atomic<int>> hits(5000);
  parallel_for(
      hits.size(), 3, [&](std::size_t i) { hits[i].fetch_add(1); }, 1000);
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ParallelFor, RethrowsTheFirstException) {
  for (const int threads : kThreadCounts) {
    std::atomic<int> calls{0};
    EXPECT_THROW(parallel_for(1000, threads,
                              [&](std::size_t i) {
                                calls.fetch_add(1);
                                if (i % 100 == 7) throw std::runtime_error("boom");
                              }),
                 std::runtime_error)
        << "threads = " << threads;
    EXPECT_GE(calls.load(), 1);
    // The pool is usable again afterwards.
    std::atomic<std::size_t> sum{0};
    parallel_for(1000, threads, [&](std::size_t i) { sum.fetch_add(i); });
    EXPECT_EQ(sum.load(), 999u * 1000u / 2);
  }
}

TEST(ParallelFor, NestedLoopsDoNotDeadlock) {
  for (const int threads : kThreadCounts) {
    std::vector<std::atomic<int>> hits(64 * 100);
    parallel_for(64, threads, [&](std::size_t i) {
      parallel_for(100, threads, [&](std::size_t j) { hits[i * 100 + j].fetch_add(1); });
    });
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1) << "threads = " << threads;
  }
}

TEST(ParallelFor, ConcurrentCallersFromManyThreads) {
  constexpr int kCallers = 4;
  constexpr std::size_t kN = 20000;
  std::vector<std::vector<int>> hits(kCallers, std::vector<int>(kN, 0));
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&hits, c] {
      for (int round = 0; round < 50; ++round)
        parallel_for(kN, c % 2 == 0 ? 0 : 3, [&](std::size_t i) { ++hits[c][i]; });
    });
  }
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c)
    for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(hits[c][i], 50) << c << " " << i;
}

// A forked child has none of the parent's workers: it must get a fresh pool, not hang on the old.
TEST(ParallelFor, WorksInAForkedChild) {
  std::atomic<std::size_t> sum{0};
  parallel_for(10000, 2, [&](std::size_t i) { sum.fetch_add(i); });
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::atomic<std::size_t> child_sum{0};
    parallel_for(10000, 2, [&](std::size_t i) { child_sum.fetch_add(i); });
    _exit(child_sum.load() == sum.load() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ResolveThreads, ZeroMeansEveryCore) {
  EXPECT_GE(resolve_threads(0), 1);
  EXPECT_EQ(resolve_threads(0), resolve_threads(-1));
  EXPECT_EQ(resolve_threads(3), 3);
}

// A sum whose value depends on the order of additions.
double ill_conditioned_sum(std::size_t n, int threads) {
  return block_reduce<double>(
      n, threads,
      [](std::size_t begin, std::size_t end) {
        double s = 0;
        for (std::size_t i = begin; i < end; ++i)
          s += std::sin(static_cast<double>(i)) * std::pow(10.0, static_cast<double>(i % 17) - 8);
        return s;
      },
      [](double& total, double part) { total += part; }, 1000);
}

TEST(BlockReduce, BitIdenticalForAnyThreadCount) {
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{999}, std::size_t{1001}, std::size_t{250000}}) {
    const double one = ill_conditioned_sum(n, 1);
    std::uint64_t one_bits = 0;
    std::memcpy(&one_bits, &one, sizeof one);
    for (const int threads : kThreadCounts) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        const double v = ill_conditioned_sum(n, threads);
        std::uint64_t bits = 0;
        std::memcpy(&bits, &v, sizeof v);
        ASSERT_EQ(bits, one_bits) << "n = " << n << ", threads = " << threads;
      }
    }
  }
}

TEST(BlockReduce, VectorPartialsCombineInBlockOrder) {
  const std::size_t n = 100000;
  auto run = [&](int threads) {
    return block_reduce<std::vector<std::size_t>>(
        n, threads,
        [](std::size_t begin, std::size_t end) {
          return std::vector<std::size_t>{begin, end};
        },
        [](std::vector<std::size_t>& all, const std::vector<std::size_t>& part) {
          all.insert(all.end(), part.begin(), part.end());
        });
  };
  const auto expected = run(1);
  ASSERT_EQ(expected.size(), 2 * ((n + kReduceBlock - 1) / kReduceBlock));
  for (std::size_t i = 0; i + 2 < expected.size(); i += 2)
    EXPECT_EQ(expected[i + 1], expected[i + 2]);
  for (const int threads : kThreadCounts) EXPECT_EQ(run(threads), expected) << threads;
}

}  // namespace
}  // namespace rateopt::detail
