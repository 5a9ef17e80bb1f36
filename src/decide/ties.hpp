// The tie rule shared by every decide algorithm: expectations within 8 ulp of the best count as
// equal, and the smallest k among them wins (docs/decide.md). Rounding differences between
// algebraically equal expectations are a few ulp; real differences are far larger.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <span>

namespace rateopt::detail {

inline double tie_slack(double best) {
  return 8 * DBL_EPSILON * std::abs(best);
}

// argmax_k e[k], the smallest k among ties; NaN entries never win; 0 when e is empty or all NaN.
inline std::size_t argmax_with_ties(std::span<const double> e) {
  double best = -INFINITY;
  for (const double v : e)
    if (v > best) best = v;
  const double slack = tie_slack(best);
  for (std::size_t k = 0; k < e.size(); ++k)
    if (e[k] >= best - slack) return k;
  return 0;
}

}  // namespace rateopt::detail
