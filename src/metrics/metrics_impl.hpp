// Private helpers shared by the metrics sources: argument validation and message formatting.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/check.hpp"
#include "rateopt/dataset.hpp"

namespace rateopt::metrics_impl {

// Parses a finite number (surrounding spaces and a leading '+' allowed), as Column does.
inline bool parse_number(std::string_view s, double& out) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && std::isfinite(out);
}

// "a, b, c, ... (12 more)": at most `max_items` names.
inline std::string join_truncated(const std::vector<std::string>& items,
                                  std::size_t max_items = 20) {
  if (items.empty()) return "none";
  std::string out;
  const std::size_t shown = items.size() < max_items ? items.size() : max_items;
  for (std::size_t k = 0; k < shown; ++k) {
    if (k > 0) out += ", ";
    out += items[k];
  }
  if (shown < items.size()) out += fmt::format(", ... ({} more)", items.size() - shown);
  return out;
}

// weights: empty or n finite values >= 0.
inline void check_weights(std::span<const double> weights, std::size_t n) {
  RATEOPT_CHECK(weights.empty() || weights.size() == n,
                "weights have {} entries, expected {} (one per example) or none", weights.size(),
                n);
  for (std::size_t i = 0; i < weights.size(); ++i)
    RATEOPT_CHECK(std::isfinite(weights[i]) && weights[i] >= 0,
                  "weights[{}] is {}, expected a finite value >= 0", i, weights[i]);
}

// mask: empty or n entries (nonzero = selected).
inline void check_mask(std::span<const std::uint8_t> mask, std::size_t n) {
  RATEOPT_CHECK(mask.empty() || mask.size() == n,
                "mask has {} entries, expected {} (one per example) or none", mask.size(), n);
}

// labels: n values in {0, 1}.
inline void check_binary_labels(std::span<const std::int32_t> labels, std::size_t n) {
  RATEOPT_CHECK(labels.size() == n, "labels have {} entries, expected {} (one per example)",
                labels.size(), n);
  for (std::size_t i = 0; i < n; ++i)
    RATEOPT_CHECK(labels[i] == 0 || labels[i] == 1, "labels[{}] is {}, expected 0 or 1", i,
                  labels[i]);
}

inline bool selected(std::span<const std::uint8_t> mask, std::size_t i) noexcept {
  return mask.empty() || mask[i] != 0;
}

inline double weight_of(std::span<const double> weights, std::size_t i) noexcept {
  return weights.empty() ? 1.0 : weights[i];
}

// The probability of predicting positive of each level of `data`'s "baseline" column: numeric
// values in [0, 1] as they are, a binary label name as its class (0 or 1), NaN for any other
// value. Empty when the dataset has no baseline column.
[[nodiscard]] std::vector<double> baseline_level_probabilities(const Dataset& data);

}  // namespace rateopt::metrics_impl
