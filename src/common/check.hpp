// Private helpers for throwing rateopt errors with formatted messages (STYLE R6).
#pragma once

#include <fmt/format.h>

#include "rateopt/error.hpp"

// Throws InvalidArgument with a fmt-formatted message when `cond` is false.
//   RATEOPT_CHECK(w.size() == d, "weights have {} entries, expected {}", w.size(), d);
#define RATEOPT_CHECK(cond, ...)                                               \
  do {                                                                         \
    if (!(cond)) throw ::rateopt::InvalidArgument(::fmt::format(__VA_ARGS__)); \
  } while (false)

namespace rateopt::detail {

// Throws ParseError(file, line, column, formatted message).
template <typename... Args>
[[noreturn]] void throw_parse_error(const std::string& file, std::size_t line, std::size_t column,
                                    fmt::format_string<Args...> format, Args&&... args) {
  throw ParseError(file, line, column, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace rateopt::detail
