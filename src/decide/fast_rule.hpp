// Private: an exponential-sum rule for 1/lambda, the quadrature behind kFast (docs/decide.md).
//
// 1/lambda = int_0^inf e^{-lambda x} dx = int e^u exp(-lambda e^u) du. The rule is the trapezoid
// rule in u = log x with step h on the nodes x_j = x_lo e^{j h}, j = 0..J, plus the left tail
// (the nodes below x_lo) summed analytically to first order:
//   r(lambda) = sum_j w_j e^{-lambda x_j} + tail1 - lambda tail2,   w_j = h x_j,
//   tail1 = h sum_{j<0} x_j = h x_lo / (e^h - 1),   tail2 = h x_lo^2 / (e^{2h} - 1).
// For lambda in [lambda_min, lambda_max], |lambda r(lambda) - 1| <= disc + right + left with
//   disc  = 2 sum_{m>=1} |Gamma(1 + 2 pi i m / h)|   (Poisson summation; |Gamma(1+iy)|^2 =
//           pi y / sinh(pi y)); the infinite trapezoid sum lies within disc of 1 for every lambda,
//   right = exp(-lambda_min x_J)   (the integrand decreases beyond the last node),
//   left  = h (lambda_max x_lo)^3 / (2 (e^{3h} - 1))   (second-order remainder of the tail).
// For any lambda in (0, lambda_abs], |lambda r(lambda) - 1| <= k_out.
#pragma once

#include <cstddef>
#include <vector>

namespace rateopt::detail {

struct ExpSumRule {
  double h = 0;
  double x_lo = 0;
  std::vector<double> x;  // nodes, increasing
  std::vector<double> w;  // weights h x_j
  double tail1 = 0;
  double tail2 = 0;
  double lambda_min = 0;
  double lambda_max = 0;
  double lambda_abs = 0;
  double log_right = 0;  // -log(right)
  double disc = 0;
  double right = 0;
  double left = 0;
  double k_out = 0;

  // Bound on |lambda r(lambda) - 1| for lambda in [lambda_min, lambda_max].
  [[nodiscard]] double rel_error() const noexcept { return disc + right + left; }
  // Nodes needed when every lambda is >= lambda_low (>= lambda_min): those up to the first node
  // with lambda_low x_j >= log_right, plus one.
  [[nodiscard]] std::size_t nodes_for(double lambda_low) const noexcept;
  // r(lambda) (for tests).
  [[nodiscard]] double apply(double lambda) const noexcept;
};

// |Gamma|-sum bound on the discretisation error of the infinite trapezoid rule with step h.
[[nodiscard]] double trapezoid_discretisation_error(double h) noexcept;

// The coarsest rule with rel_error() <= tolerance on [lambda_min, lambda_max]
// (0 < lambda_min <= lambda_max <= lambda_abs, 0 < tolerance < 1).
[[nodiscard]] ExpSumRule make_exp_sum_rule(double lambda_min, double lambda_max, double lambda_abs,
                                           double tolerance);

}  // namespace rateopt::detail
