#include <fmt/format.h>

#include "commands.hpp"
#include "rateopt/version.hpp"

namespace rateopt::cli {

int run_version(int /*argc*/, const char* const* /*argv*/) {
  fmt::print("rateopt {}\n", version());
  return 0;
}

}  // namespace rateopt::cli
