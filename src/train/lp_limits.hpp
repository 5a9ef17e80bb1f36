// Limits for every COIN-OR CLP solve in the train engine. A degenerate or badly scaled LP (huge
// or non-finite-derived coefficients) can make the simplex cycle without end; with these limits
// it stops, `isProvenOptimal()` is false and the caller takes its failure path (a typed status
// or a clear error) instead of hanging.
#pragma once

#include <ClpSimplex.hpp>
#include <algorithm>

namespace rateopt {

// Simplex iterations: 100 per row and column (at least 10^5; a healthy solve here needs a few
// per row); wall time: 120 s per solve.
inline void limit_lp(ClpSimplex& lp) {
  const long size = static_cast<long>(lp.numberRows()) + lp.numberColumns();
  lp.setMaximumIterations(static_cast<int>(std::clamp(100 * size, 100000L, 100000000L)));
  lp.setMaximumSeconds(120.0);
}

}  // namespace rateopt
