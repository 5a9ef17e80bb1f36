// Private: the one parallel loop of rateopt (STYLE R7).
//
// parallel_for(n, n_threads, fn) calls fn(i) for i in [0, n) on the process-wide thread pool
// (common/thread_pool.hpp: sleeping workers, the caller takes part, tasks claimed dynamically).
// Exceptions thrown by fn are captured and the first one is rethrown after the region.
// n_threads <= 0 means all cores this process may use.
//
// Work threshold: one task holds at least `grain` iterations, and a loop with fewer than two tasks
// runs serially on the caller, as do nested loops (parallel_for inside fn) and loops started while
// another thread's loop holds the pool. Callers whose iterations are single rows pass a grain of a
// few thousand; callers that loop over blocks of rows keep grain = 1.
//
// Deterministic reductions: block_reduce splits [0, n) into blocks of a fixed size that does not
// depend on the thread count, reduces each block sequentially, then combines the partial results
// in block order, so floating-point results are bit-identical for any n_threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "common/thread_pool.hpp"

namespace rateopt::detail {

inline int resolve_threads(int n_threads) {
  return std::min(n_threads > 0 ? n_threads : hardware_threads(), kMaxThreads);
}

// Tasks per thread that parallel_for aims for (load balance against per-task overhead).
inline constexpr std::size_t kTasksPerThread = 16;

template <typename Fn>
void parallel_for(std::size_t n, int n_threads, Fn&& fn, std::size_t grain = 1) {
  const int threads = resolve_threads(n_threads);
  grain = std::max<std::size_t>(grain, 1);
  if (threads == 1 || n < 2 * grain) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  const std::size_t chunk =
      std::max(grain, n / (static_cast<std::size_t>(threads) * kTasksPerThread));
  using F = std::remove_reference_t<Fn>;
  const TaskFn body{[](void* ctx, std::size_t begin, std::size_t end) {
                      F& f = *static_cast<F*>(ctx);
                      for (std::size_t i = begin; i < end; ++i) f(i);
                    },
                    const_cast<void*>(static_cast<const void*>(&fn))};
  run_tasks(n, chunk, threads, body);
}

inline constexpr std::size_t kReduceBlock = 4096;

// Reduces [0, n) with block_fn(begin, end) -> T per fixed block, combined with combine(T&, T)
// in block order. T must be default-constructible to the identity. Parallel over blocks, so
// fewer than two blocks run serially.
template <typename T, typename BlockFn, typename Combine>
T block_reduce(std::size_t n, int n_threads, BlockFn&& block_fn, Combine&& combine,
               std::size_t block = kReduceBlock) {
  const std::size_t blocks = (n + block - 1) / block;
  std::vector<T> partial(blocks);
  parallel_for(blocks, n_threads, [&](std::size_t b) {
    const std::size_t begin = b * block;
    partial[b] = block_fn(begin, std::min(n, begin + block));
  });
  T total{};
  for (auto& p : partial) combine(total, p);
  return total;
}

}  // namespace rateopt::detail
