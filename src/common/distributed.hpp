// Private: installing a process group for the calling thread only, so that tests can run a group
// of ranks as threads of one process (tests/cpp/common/distributed_test.cpp). Library code uses
// the public rateopt/distributed.hpp.
#pragma once

#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "rateopt/distributed.hpp"

namespace rateopt::detail {

// While set (non-null), process_group() on this thread returns `group` instead of the installed
// one. The caller keeps `group` alive until it resets the override to nullptr.
void set_thread_process_group(ProcessGroup* group) noexcept;

// `bytes` from rank `root` to every rank of `group` along a binomial tree (depth log2(size)).
[[nodiscard]] std::vector<std::byte> broadcast_bytes(ProcessGroup& group, int root,
                                                     std::vector<std::byte> bytes);

// Every rank's `mine`, in rank order, on rank 0; the other ranks get an empty vector. For data
// too large to copy to every rank (the rows a threshold search sorts): rank 0 holds the result
// and one rank's message at a time. T must be trivially copyable. A collective.
template <typename T>
[[nodiscard]] std::vector<T> gather_to_first_rank(std::vector<T> mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  ProcessGroup& g = process_group();
  if (g.size() == 1) return mine;
  if (g.rank() != 0) {
    g.send(0, std::as_bytes(std::span<const T>(mine)));
    return {};
  }
  for (int r = 1; r < g.size(); ++r) {
    const std::vector<std::byte> bytes = g.receive(r);
    const std::size_t n = bytes.size() / sizeof(T);
    const std::size_t at = mine.size();
    mine.resize(at + n);
    if (n > 0) std::memcpy(mine.data() + at, bytes.data(), n * sizeof(T));
  }
  return mine;
}

}  // namespace rateopt::detail
