// Private: installing a process group for the calling thread only, so that tests can run a group
// of ranks as threads of one process (tests/cpp/common/distributed_test.cpp). Library code uses
// the public rateopt/distributed.hpp.
#pragma once

#include "rateopt/distributed.hpp"

namespace rateopt::detail {

// While set (non-null), process_group() on this thread returns `group` instead of the installed
// one. The caller keeps `group` alive until it resets the override to nullptr.
void set_thread_process_group(ProcessGroup* group) noexcept;

// `bytes` from rank `root` to every rank of `group` along a binomial tree (depth log2(size)).
[[nodiscard]] std::vector<std::byte> broadcast_bytes(ProcessGroup& group, int root,
                                                     std::vector<std::byte> bytes);

}  // namespace rateopt::detail
