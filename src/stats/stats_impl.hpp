// Private: what the interval and guarantee code reads of named data, row by row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rateopt/expr.hpp"

namespace rateopt::stats_impl {

// Row i's probability of being predicted positive, whichever form the predictions take
// (prob_positive, 0/1 bytes, or codes into levels). The caller checked the sizes.
[[nodiscard]] inline double prediction_of(const Predictions& p, std::size_t i) noexcept {
  if (!p.prob_positive.empty()) return p.prob_positive[i];
  if (!p.levels.empty()) return p.levels[p.positive[i]];
  return static_cast<double>(p.positive[i]);
}

// The entry of `data` a rate reads (its @dataset, or the first). Throws NotFound.
[[nodiscard]] std::size_t data_index(const RateRef& rate, std::span<const NamedData> data);

// Whether every rank's predictions of `d` are 0/1 (hard) and its rows unweighted (all weights 1):
// the same answer on every rank (a collective).
struct DataTraits {
  bool hard = true;
  bool unweighted = true;
};
[[nodiscard]] DataTraits data_traits(const NamedData& d);

}  // namespace rateopt::stats_impl
