// Process groups and the rank-ordered reductions of rateopt/distributed.hpp. The reductions run
// along the chain of ranks 0 -> 1 -> ... -> size-1 (each rank adds its part to what the previous
// one sent, so the sum is ((r0 + r1) + r2) + ... whatever the timing), then the last rank
// broadcasts the result along a binomial tree. Cost per reduction: size - 1 sequential messages
// of the payload plus log2(size) broadcast steps.
#include "common/distributed.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "common/check.hpp"

namespace rateopt {
namespace {

class SingleProcess final : public ProcessGroup {
 public:
  [[nodiscard]] int rank() const noexcept override { return 0; }
  [[nodiscard]] int size() const noexcept override { return 1; }
  void send(int to, std::span<const std::byte> /*bytes*/) override {
    throw InvalidArgument(fmt::format("send to rank {}: this process is alone (rank 0 of 1)", to));
  }
  std::vector<std::byte> receive(int from) override {
    throw InvalidArgument(
        fmt::format("receive from rank {}: this process is alone (rank 0 of 1)", from));
  }
  [[noreturn]] void abort(int code) override {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  [[nodiscard]] std::string name() const override { return "single process"; }
};

std::mutex& group_mutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<ProcessGroup>& installed_group() {
  static std::shared_ptr<ProcessGroup> group = std::make_shared<SingleProcess>();
  return group;
}
thread_local ProcessGroup* thread_group = nullptr;

std::vector<std::byte> to_bytes(std::span<const double> values) {
  std::vector<std::byte> out(values.size_bytes());
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Length-prefixed strings: [u64 count] then per string [u64 length][bytes].
std::vector<std::byte> pack_strings(const std::vector<std::string>& strings) {
  std::size_t size = sizeof(std::uint64_t);
  for (const std::string& s : strings) size += sizeof(std::uint64_t) + s.size();
  std::vector<std::byte> out(size);
  std::size_t at = 0;
  auto put = [&](const void* p, std::size_t n) {
    if (n > 0) std::memcpy(out.data() + at, p, n);
    at += n;
  };
  const std::uint64_t count = strings.size();
  put(&count, sizeof count);
  for (const std::string& s : strings) {
    const std::uint64_t len = s.size();
    put(&len, sizeof len);
    put(s.data(), s.size());
  }
  return out;
}
std::vector<std::string> unpack_strings(std::span<const std::byte> bytes) {
  std::size_t at = 0;
  auto read_u64 = [&] {
    RATEOPT_CHECK(bytes.size() - at >= sizeof(std::uint64_t),
                  "a message between ranks ends early ({} bytes)", bytes.size());
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
  };
  const std::uint64_t count = read_u64();
  std::vector<std::string> out;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t len = read_u64();
    RATEOPT_CHECK(bytes.size() - at >= len, "a message between ranks ends early ({} bytes)",
                  bytes.size());
    out.emplace_back(reinterpret_cast<const char*>(bytes.data() + at), len);
    at += len;
  }
  return out;
}

}  // namespace

ProcessGroup& process_group() noexcept {
  if (thread_group != nullptr) return *thread_group;
  const std::lock_guard lock(group_mutex());
  return *installed_group();
}

void set_process_group(std::shared_ptr<ProcessGroup> group) {
  const std::lock_guard lock(group_mutex());
  installed_group() = group ? std::move(group) : std::make_shared<SingleProcess>();
}

bool is_distributed() noexcept {
  return process_group().size() > 1;
}

void sum_over_ranks(std::span<double> values) {
  ProcessGroup& g = process_group();
  const int n = g.size();
  if (n == 1) return;
  const int r = g.rank();
  if (r > 0) {
    const std::vector<std::byte> prev = g.receive(r - 1);
    RATEOPT_CHECK(prev.size() == values.size_bytes(),
                  "a sum over ranks has {} values on rank {} but {} on rank {}",
                  prev.size() / sizeof(double), r - 1, values.size(), r);
    for (std::size_t k = 0; k < values.size(); ++k) {
      double p = 0;
      std::memcpy(&p, prev.data() + k * sizeof(double), sizeof p);
      values[k] = p + values[k];
    }
  }
  std::vector<std::byte> mine = to_bytes(values);
  if (r + 1 < n) g.send(r + 1, mine);
  const std::vector<std::byte> total =
      detail::broadcast_bytes(g, n - 1, r == n - 1 ? std::move(mine) : std::vector<std::byte>{});
  RATEOPT_CHECK(total.size() == values.size_bytes(),
                "a sum over ranks has {} values on rank {} but {} on the last rank", values.size(),
                r, total.size() / sizeof(double));
  if (!values.empty()) std::memcpy(values.data(), total.data(), total.size());
}

std::vector<double> fold_over_ranks(
    std::vector<double> state, const std::function<void(std::vector<double>&)>& continue_fold) {
  ProcessGroup& g = process_group();
  const int n = g.size();
  const int r = g.rank();
  const std::size_t length = state.size();
  if (r > 0) {
    const std::vector<std::byte> prev = g.receive(r - 1);
    RATEOPT_CHECK(prev.size() == length * sizeof(double),
                  "a fold over ranks has {} values on rank {} but {} on rank {}",
                  prev.size() / sizeof(double), r - 1, length, r);
    if (length > 0) std::memcpy(state.data(), prev.data(), prev.size());
  }
  continue_fold(state);
  RATEOPT_CHECK(state.size() == length, "a fold over ranks changed its state from {} to {} values",
                length, state.size());
  if (n == 1) return state;
  std::vector<std::byte> mine = to_bytes(state);
  if (r + 1 < n) g.send(r + 1, mine);
  const std::vector<std::byte> total =
      detail::broadcast_bytes(g, n - 1, r == n - 1 ? std::move(mine) : std::vector<std::byte>{});
  if (length > 0) std::memcpy(state.data(), total.data(), length * sizeof(double));
  return state;
}

std::vector<std::string> gather_over_ranks(std::string_view local) {
  ProcessGroup& g = process_group();
  const int n = g.size();
  if (n == 1) return {std::string(local)};
  const int r = g.rank();
  std::vector<std::string> so_far;
  if (r > 0) so_far = unpack_strings(g.receive(r - 1));
  so_far.emplace_back(local);
  std::vector<std::byte> packed = pack_strings(so_far);
  if (r + 1 < n) g.send(r + 1, packed);
  return unpack_strings(
      detail::broadcast_bytes(g, n - 1, r == n - 1 ? std::move(packed) : std::vector<std::byte>{}));
}

std::vector<std::string> union_over_ranks(const std::vector<std::string>& local) {
  ProcessGroup& g = process_group();
  const int n = g.size();
  const int r = g.rank();
  std::vector<std::string> so_far;
  if (r > 0) so_far = unpack_strings(g.receive(r - 1));
  std::set<std::string, std::less<>> seen(so_far.begin(), so_far.end());
  for (const std::string& s : local)
    if (seen.insert(s).second) so_far.push_back(s);
  if (n == 1) return so_far;
  std::vector<std::byte> packed = pack_strings(so_far);
  if (r + 1 < n) g.send(r + 1, packed);
  return unpack_strings(
      detail::broadcast_bytes(g, n - 1, r == n - 1 ? std::move(packed) : std::vector<std::byte>{}));
}

std::string broadcast_from(int root, std::string_view value) {
  ProcessGroup& g = process_group();
  RATEOPT_CHECK(root >= 0 && root < g.size(), "root rank {} is not in [0, {})", root, g.size());
  if (g.size() == 1) return std::string(value);
  const auto* p = reinterpret_cast<const std::byte*>(value.data());
  std::vector<std::byte> bytes;
  if (g.rank() == root) bytes.assign(p, p + value.size());
  bytes = detail::broadcast_bytes(g, root, std::move(bytes));
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

void broadcast_from(int root, std::vector<double>& values) {
  ProcessGroup& g = process_group();
  RATEOPT_CHECK(root >= 0 && root < g.size(), "root rank {} is not in [0, {})", root, g.size());
  if (g.size() == 1) return;
  std::vector<std::byte> bytes = detail::broadcast_bytes(
      g, root, g.rank() == root ? to_bytes(values) : std::vector<std::byte>{});
  values.resize(bytes.size() / sizeof(double));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
}

std::vector<double> sum_over_parts(
    std::span<const std::size_t> parts, std::size_t rows, std::size_t width,
    const std::function<void(std::size_t, std::size_t, std::span<double>)>& sum_part) {
  std::size_t in_parts = 0;
  for (const std::size_t p : parts) in_parts += p;
  RATEOPT_CHECK(parts.empty() || in_parts == rows, "the parts add up to {} rows, expected {}",
                in_parts, rows);
  const std::array<std::size_t, 1> one_part{rows};
  const std::span<const std::size_t> list = parts.empty() ? std::span(one_part) : parts;
  // Each part's sums first (the rows' work), then the cheap fold of the parts in order.
  std::vector<std::vector<double>> part_sums(list.size(), std::vector<double>(width, 0.0));
  std::size_t begin = 0;
  for (std::size_t k = 0; k < list.size(); ++k) {
    sum_part(begin, begin + list[k], part_sums[k]);
    begin += list[k];
  }
  return fold_over_ranks(std::vector<double>(width, 0.0), [&](std::vector<double>& total) {
    for (const std::vector<double>& s : part_sums)
      for (std::size_t j = 0; j < width; ++j) total[j] += s[j];
  });
}

bool launched_by_mpi() noexcept {
  constexpr std::array<const char*, 3> kLauncherVariables{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                                          "PMIX_RANK"};
  return std::ranges::any_of(kLauncherVariables, [](const char* var) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read at start-up, before any thread starts.
    return std::getenv(var) != nullptr;
  });
}

namespace detail {

void set_thread_process_group(ProcessGroup* group) noexcept {
  thread_group = group;
}

std::vector<std::byte> broadcast_bytes(ProcessGroup& group, int root,
                                       std::vector<std::byte> bytes) {
  const int n = group.size();
  const int rel = (group.rank() - root + n) % n;
  // Step `mask`: ranks [0, mask) (relative to the root) hold the data and send it mask further.
  for (int mask = 1; mask < n; mask <<= 1) {
    if (rel < mask) {
      if (rel + mask < n) group.send((rel + mask + root) % n, bytes);
    } else if (rel < 2 * mask) {
      bytes = group.receive((rel - mask + root) % n);
    }
  }
  return bytes;
}

}  // namespace detail
}  // namespace rateopt
