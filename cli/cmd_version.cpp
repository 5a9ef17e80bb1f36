#include <fmt/format.h>

#include "commands.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/version.hpp"

namespace rateopt::cli {

int run_version(int /*argc*/, const char* const* /*argv*/) {
  fmt::print("rateopt {}\n", version());
  // What this build can do beyond one process (docs/scale.md).
  fmt::print("mpi: {}\n", mpi_available() ? "yes (mpirun -n N rateopt eval ...)" : "no");
  return 0;
}

}  // namespace rateopt::cli
