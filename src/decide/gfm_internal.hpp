// Private: consistency checks of a GFM input (the invariants every exact P satisfies; notes
// section 4.6). Estimated P (EFP, noisy counts) may violate them; decide_gfm does not require
// them, it only needs entries in [0, 1].
#pragma once

#include <algorithm>

#include "rateopt/decide.hpp"

namespace rateopt::detail {

// Violations (0 when the invariant holds exactly; rounding leaves ~1e-16), with
// P(s_y = s) := (1/s) sum_i p_is. Entries are in [0, 1] (validated), so P(s_y = s) >= 0.
struct GfmConsistency {
  double max_row_above_card = 0;      // max_{i,s} p_is - P(s_y = s)  (P(y_i=1, s) <= P(s))
  double max_marginal_above_one = 0;  // max_i sum_s p_is - 1          (marginals <= 1)
  double full_column_spread = 0;      // max_i p_im - min_i p_im       (all equal P(y = 1_m))
  double p_zero_error = 0;            // |p_zero - (1 - sum_s P(s_y = s))|
  [[nodiscard]] double max_violation() const noexcept {
    return std::max({max_row_above_card, max_marginal_above_one, full_column_spread, p_zero_error});
  }
};

// Validates like decide_gfm (InvalidArgument), then measures the violations. O(m^2).
[[nodiscard]] GfmConsistency gfm_consistency(const GfmInput& input);

}  // namespace rateopt::detail
