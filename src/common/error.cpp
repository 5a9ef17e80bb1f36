#include "rateopt/error.hpp"

#include <fmt/format.h>

#include <utility>

#include "common/enum_names.hpp"
#include "rateopt/status.hpp"
#include "rateopt/version.hpp"

namespace rateopt {

namespace {
std::string location(const std::string& file, std::size_t line, std::size_t column) {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) out += fmt::format(":{}", line);
  if (column > 0) out += fmt::format(":{}", column);
  return out;
}
}  // namespace

Error::Error(std::string id, const std::string& message)
    : std::runtime_error(fmt::format("[{}] {}", id, message)), id_(std::move(id)) {}

InvalidArgument::InvalidArgument(const std::string& message)
    : std::invalid_argument("[rateopt.invalid_argument] " + message) {}

ParseError::ParseError(std::string file, std::size_t line, std::size_t column,
                       const std::string& what)
    : Error("rateopt.parse_error", fmt::format("{}: {}", location(file, line, column), what)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      detail_(what) {}

IoError::IoError(const std::string& message) : Error("rateopt.io_error", message) {}

IoError::IoError(std::string id, const std::string& message) : Error(std::move(id), message) {}

WriteError::WriteError(const std::string& message) : IoError("rateopt.write_error", message) {}

NotFound::NotFound(const std::string& message) : Error("rateopt.not_found", message) {}

std::string_view to_string(Termination t) noexcept {
  return detail::name_of(detail::kTerminationNames, t);
}

std::string_view version() noexcept {
  return "0.1.0";
}

}  // namespace rateopt
