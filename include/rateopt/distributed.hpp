// File: one job over several processes (MPI ranks), each holding a shard of the rows.
//
// A ProcessGroup is the set of processes a job runs on. By default it is this process alone (rank
// 0 of 1), and the library behaves exactly as if groups did not exist. Under
// `mpirun -n N rateopt ...` the command line installs the MPI group (MpiSession); from then on the
// sums over rows that the library makes (confusion counts of eval, the column statistics that
// agree one encoding) are sums over every rank's rows.
//
// Determinism: every reduction combines the ranks' partial results in rank order,
// ((r0 + r1) + r2) + ..., so a given rank count gives the same bits on every run; one rank gives
// the single-process bits.
//
// Collectives: every rank must make the same sequence of calls (the library does, given the same
// options and expressions on every rank). An error on one rank leaves the others waiting: the
// command line ends the whole group (ProcessGroup::abort) after printing it.
//
// Thread-safety: set_process_group before any work; the reductions are called from one thread
// per rank.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rateopt {

class ProcessGroup {
 public:
  ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;
  virtual ~ProcessGroup() = default;

  [[nodiscard]] virtual int rank() const noexcept = 0;
  [[nodiscard]] virtual int size() const noexcept = 0;
  // Blocking point-to-point messages of any length between two ranks (in order per pair).
  virtual void send(int to, std::span<const std::byte> bytes) = 0;
  [[nodiscard]] virtual std::vector<std::byte> receive(int from) = 0;
  // Ends every process of the group with exit status `code` (a fatal error on one rank).
  [[noreturn]] virtual void abort(int code) = 0;
  // A short name for messages ("MPI", "threads").
  [[nodiscard]] virtual std::string name() const = 0;
};

// The installed group; this process alone unless set_process_group installed another.
[[nodiscard]] ProcessGroup& process_group() noexcept;
// Installs `group` for the rest of the process; nullptr goes back to this process alone.
void set_process_group(std::shared_ptr<ProcessGroup> group);
// True when the installed group has more than one process.
[[nodiscard]] bool is_distributed() noexcept;

// ---- reductions over the installed group (collectives: every rank calls them) ------------------

// values[k] <- the sum over ranks of values[k], combined in rank order; the result on every rank.
// Throws InvalidArgument when the ranks pass different lengths.
void sum_over_ranks(std::span<double> values);
// A left fold over every rank's rows in rank order: rank 0 runs continue_fold(state) from
// `state`, each next rank from what the previous one left, and the last rank's result comes back
// on every rank. When each rank's continue_fold folds its rows (or its blocks) in order, the
// result is the bits one process folding all the rows in that order would get, whatever the rank
// count. continue_fold must keep the state's length.
[[nodiscard]] std::vector<double> fold_over_ranks(
    std::vector<double> state, const std::function<void(std::vector<double>&)>& continue_fold);
// Every rank's `local`, in rank order, on every rank.
[[nodiscard]] std::vector<std::string> gather_over_ranks(std::string_view local);
// The distinct strings of every rank's `local`, in order of first appearance over ranks in rank
// order (what one process holding all the rows in rank order would list); on every rank.
[[nodiscard]] std::vector<std::string> union_over_ranks(const std::vector<std::string>& local);
// Rank `root`'s `value` on every rank.
[[nodiscard]] std::string broadcast_from(int root, std::string_view value);
// Rank `root`'s `values` on every rank (resized to the root's length).
void broadcast_from(int root, std::vector<double>& values);
// Sums of per-row terms over this rank's rows, split in parts (the rows of each file, in order;
// empty: one part of `rows` rows), continued over every rank: each part's rows are summed from
// zero in row order by sum_part(begin, end, sums) (`sums` has `width` zeros), and the parts'
// sums are added to the total in part order, rank after rank. The result, on every rank, has
// the bits one process holding every part in that order gets, for any rank count; one part in
// one process gives the plain sequential sum. A collective.
[[nodiscard]] std::vector<double> sum_over_parts(
    std::span<const std::size_t> parts, std::size_t rows, std::size_t width,
    const std::function<void(std::size_t, std::size_t, std::span<double>)>& sum_part);

// ---- MPI
// -----------------------------------------------------------------------------------------

// True when this build has MPI (CMake found it: RATEOPT_MPI).
[[nodiscard]] bool mpi_available() noexcept;
// True when this process was started by an MPI launcher (mpirun/mpiexec set OMPI_COMM_WORLD_SIZE,
// PMI_SIZE or PMIX_RANK).
[[nodiscard]] bool launched_by_mpi() noexcept;

// Initialises MPI and installs MPI_COMM_WORLD as the process group for its lifetime (finalises
// and uninstalls it on destruction). Throws std::runtime_error when this build has no MPI.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession();
};

}  // namespace rateopt
