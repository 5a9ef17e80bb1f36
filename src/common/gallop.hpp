// Private: a search of a partitioned sequence that starts from a guess (the sweeps of
// src/train/threshold_lp.cpp move their boundaries little from one step to the next).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

namespace rateopt::detail {

// The partition point of `v` for `pred` (true on a prefix of v, false after it), searched from
// `hint` outward by doubling steps, then bisection: O(log d) for an answer d away from the hint
// (std::partition_point's answer, for any hint).
template <class Pred>
std::size_t gallop_partition(std::span<const double> v, std::size_t hint, const Pred& pred) {
  const std::size_t n = v.size();
  hint = std::min(hint, n);
  std::size_t lo = 0, hi = n;       // the answer is in [lo, hi]
  if (hint < n && pred(v[hint])) {  // at or right of hint + 1
    lo = hint + 1;
    for (std::size_t step = 1; lo < n && pred(v[lo]); step *= 2) {
      const std::size_t next = std::min(n, lo + step);
      if (next < n && pred(v[next])) {
        lo = next + 1;
      } else {
        hi = next;
        break;
      }
    }
    if (lo >= n || !pred(v[lo])) hi = std::min(hi, lo);
  } else {  // at or left of hint
    hi = hint;
    for (std::size_t step = 1; hi > 0 && !pred(v[hi - 1]); step *= 2) {
      const std::size_t next = hi > step ? hi - step : 0;
      if (!pred(v[next])) {
        hi = next;
      } else {
        lo = next + 1;
        break;
      }
    }
    if (hi == 0 || pred(v[hi - 1])) lo = std::max(lo, hi);
  }
  const auto first = v.begin() + static_cast<std::ptrdiff_t>(lo);
  const auto last = v.begin() + static_cast<std::ptrdiff_t>(std::max(lo, hi));
  return static_cast<std::size_t>(std::partition_point(first, last, pred) - v.begin());
}

}  // namespace rateopt::detail
