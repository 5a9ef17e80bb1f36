// Private: the counter-based random numbers of rateopt. A draw is a pure function of a seed and a
// counter (a row, a resample), so results do not depend on thread or rank counts.
#pragma once

#include <cstdint>

namespace rateopt::detail {

// splitmix64 (Steele, Lea & Flood 2014): the counter-th output of the generator seeded with seed.
[[nodiscard]] inline std::uint64_t mix64(std::uint64_t seed, std::uint64_t counter) noexcept {
  std::uint64_t z = seed + (counter + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) from the top 53 bits.
[[nodiscard]] inline double unit_uniform(std::uint64_t bits) noexcept {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace rateopt::detail
