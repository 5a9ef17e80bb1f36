// Numeric constants shared by the library's files (one definition, so that files compiled together
// in a unity batch do not each bring their own).
#pragma once

#include <limits>

namespace rateopt::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

}  // namespace rateopt::detail
