// Private: an exact QP reference for hinge-loss problems (COIN-OR CLP's quadratic simplex), used
// by the tests of the SDCA and ramp solvers as an independent oracle on small problems.
//
//   minimise  (lambda/2)(|w|^2 + w_b^2) + <q, w> + sum_i c_i xi_i
//   s.t.      xi_i >= 1 - y_i (<w, x_i> + beta w_b),  xi_i >= 0,
//             sum_i a_{j,i} xi_i <= b_j                 (optional hinge constraints j)
//
// Dense rows only (examples index rows of one dense matrix); meant for a few hundred variables.
#pragma once

#include <span>
#include <vector>

#include "rateopt/model.hpp"
#include "rateopt/sdca.hpp"

namespace rateopt::detail {

struct HingeQpResult {
  bool solved = false;  // CLP reported an optimal solution
  LinearModel model;
  std::vector<double> slack;  // xi_i at the solution
  double objective = 0;
};

// constraint_weights: one row of n entries per constraint (a_{j,.}); bounds: b_j.
[[nodiscard]] HingeQpResult solve_hinge_qp(
    const FeatureMatrix& x, std::span<const SvmExample> examples, double lambda,
    double bias_feature, std::span<const double> linear_term = {},
    std::span<const std::vector<double>> constraint_weights = {},
    std::span<const double> bounds = {});

}  // namespace rateopt::detail
