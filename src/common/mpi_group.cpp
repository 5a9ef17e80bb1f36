// The MPI process group of rateopt/distributed.hpp (MPI_COMM_WORLD), compiled with MPI when CMake
// finds it (RATEOPT_MPI); without, MpiSession throws and mpi_available() is false.
#include <climits>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "common/check.hpp"
#include "rateopt/distributed.hpp"

#if RATEOPT_WITH_MPI
#include <mpi.h>
#endif

namespace rateopt {

#if RATEOPT_WITH_MPI
namespace {

constexpr int kTag = 7411;  // every rateopt message; MPI keeps order per (sender, tag)

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(fmt::format("MPI: {} failed: {}", what, std::string_view(text, len)));
}

class MpiGroup final : public ProcessGroup {
 public:
  MpiGroup() {
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  void send(int to, std::span<const std::byte> bytes) override {
    RATEOPT_CHECK(bytes.size() <= static_cast<std::size_t>(INT_MAX),
                  "a message of {} bytes between ranks exceeds MPI's int count", bytes.size());
    check_mpi(
        MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, kTag, MPI_COMM_WORLD),
        "MPI_Send");
  }
  std::vector<std::byte> receive(int from) override {
    MPI_Status status;
    check_mpi(MPI_Probe(from, kTag, MPI_COMM_WORLD, &status), "MPI_Probe");
    int count = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    std::vector<std::byte> bytes(static_cast<std::size_t>(count));
    check_mpi(
        MPI_Recv(bytes.data(), count, MPI_BYTE, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
    return bytes;
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
  }
  [[nodiscard]] std::string name() const override { return "MPI"; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

bool mpi_available() noexcept {
  return true;
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  // Only the thread that called MpiSession makes MPI calls (the reductions' contract).
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  set_process_group(std::make_shared<MpiGroup>());
}

MpiSession::~MpiSession() {
  set_process_group(nullptr);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Finalize();
}

#else

bool mpi_available() noexcept {
  return false;
}

MpiSession::MpiSession(int* /*argc*/, char*** /*argv*/) {
  throw std::runtime_error(
      "this rateopt was built without MPI; install Debian's libopenmpi-dev and rebuild "
      "(CMake finds it: RATEOPT_MPI)");
}

MpiSession::~MpiSession() = default;

#endif

}  // namespace rateopt
