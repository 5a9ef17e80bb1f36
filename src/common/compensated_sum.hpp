// Neumaier's compensated running sum (the improved Kahan-Babuska sum), for the decision kernels
// in src/decide/ whose sums of many small probabilities must not lose their low bits.
#pragma once

#include <cmath>

namespace rateopt::detail {

// sum + comp is the running total; comp collects the low-order bits that each addition to sum
// rounds away, whichever of the two operands is the larger. Add in a fixed order for
// reproducible results. Not thread-safe (one per thread, combined in a fixed order).
struct CompensatedSum {
  double sum = 0;
  double comp = 0;
  void add(double v) {
    const double t = sum + v;
    comp += std::abs(sum) >= std::abs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  [[nodiscard]] double value() const { return sum + comp; }
};

}  // namespace rateopt::detail
