// The tie rule shared by every decide algorithm: expectations within the tie tolerance of the best
// count as equal, and the smallest k among them wins (docs/decide.md 1.1). The tolerance is 8 ulp
// of the best (rounding differences between algebraically equal expectations of the exact
// O(n)-size computations are a few ulp), or `extra` when larger: the independent methods pass
// twice their error bound plus twice a rounding allowance that grows with n, so that exact ties
// resolve to the same k under every method.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>

namespace rateopt::detail {

inline double tie_slack(double best, double extra = 0) {
  return std::max(8 * DBL_EPSILON * std::abs(best), extra);
}

// The rounding allowance of the independent methods for n items (utilities in [0, 1]): the fast
// path's first-order estimate without its node terms, 4 u (448 + n / 4096) (2.0e-13 up to 4096
// items; u = 2^-53), times sqrt(n / 4096) above 4096 items. Measured spreads of algebraically
// tied expectations under kQuadratic: 9.4e-16 at n = 1000, 5.8e-15 at 2 10^4, 7.3e-14 at 10^5
// (allowance 1.0e-12); docs/decide.md 1.1.
inline double rounding_allowance_independent(std::size_t n) {
  constexpr double kUnit = 0x1p-53;
  const double base = 4 * kUnit * (448.0 + double(n) / 4096.0);
  return n > 4096 ? base * std::sqrt(double(n) / 4096.0) : base;
}

// argmax_k e[k], the smallest k among ties; NaN entries never win; 0 when e is empty or all NaN.
inline std::size_t argmax_with_ties(std::span<const double> e, double extra = 0) {
  double best = -std::numeric_limits<double>::infinity();
  for (const double v : e)
    if (v > best) best = v;
  const double slack = tie_slack(best, extra);
  for (std::size_t k = 0; k < e.size(); ++k)
    if (e[k] >= best - slack) return k;
  return 0;
}

}  // namespace rateopt::detail
