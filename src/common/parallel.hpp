// Private: the one parallel loop of rateopt (STYLE R7).
//
// parallel_for(n, n_threads, fn) calls fn(i) for i in [0, n). Exceptions thrown by fn are
// captured and the first one is rethrown after the region. n_threads <= 0 means all cores.
//
// Deterministic reductions: block_reduce splits [0, n) into blocks of a fixed size that does not
// depend on the thread count, reduces each block sequentially, then combines the partial results
// in block order, so floating-point results are bit-identical for any n_threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <vector>

#ifdef RATEOPT_HAVE_OPENMP
#include <omp.h>
#endif

namespace rateopt::detail {

inline int resolve_threads(int n_threads) {
#ifdef RATEOPT_HAVE_OPENMP
  return n_threads > 0 ? n_threads : omp_get_max_threads();
#else
  (void)n_threads;
  return 1;
#endif
}

template <typename Fn>
void parallel_for(std::size_t n, int n_threads, Fn&& fn) {
  const int threads = resolve_threads(n_threads);
  if (threads == 1 || n < 2) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto count = static_cast<std::ptrdiff_t>(n);
#ifdef RATEOPT_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    try {
      fn(static_cast<std::size_t>(i));
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

inline constexpr std::size_t kReduceBlock = 4096;

// Reduces [0, n) with block_fn(begin, end) -> T per fixed block, combined with combine(T&, T)
// in block order. T must be default-constructible to the identity.
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
