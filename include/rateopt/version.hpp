// File: rateopt/version.hpp
#pragma once

#include <string_view>

namespace rateopt {

inline constexpr int kVersionMajor = 0;
inline constexpr int kVersionMinor = 1;
inline constexpr int kVersionPatch = 0;
[[nodiscard]] std::string_view version() noexcept;

}  // namespace rateopt
