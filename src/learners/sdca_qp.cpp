// Exact QP reference for hinge problems via CLP (see sdca_qp.hpp).
#include "learners/sdca_qp.hpp"

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <limits>
#include <vector>

#include "common/check.hpp"
#include "train/lp_limits.hpp"

namespace rateopt::detail {

HingeQpResult solve_hinge_qp(const FeatureMatrix& x, std::span<const SvmExample> examples,
                             double lambda, double bias_feature,
                             std::span<const double> linear_term,
                             std::span<const std::vector<double>> constraint_weights,
                             std::span<const double> bounds) {
  RATEOPT_CHECK(constraint_weights.size() == bounds.size(),
                "constraint_weights has {} rows, expected {} (one per bound)",
                constraint_weights.size(), bounds.size());
  const int d = static_cast<int>(x.cols());
  const bool has_bias = bias_feature > 0;
  const int nw = d + (has_bias ? 1 : 0);
  const int n = static_cast<int>(examples.size());
  const int cols = nw + n;
  constexpr double kInf = std::numeric_limits<double>::max();

  std::vector<double> obj(cols, 0.0), col_lb(cols, -kInf), col_ub(cols, kInf);
  for (int j = 0; j < d && !linear_term.empty(); ++j) obj[j] = linear_term[j];
  for (int i = 0; i < n; ++i) {
    obj[nw + i] = examples[i].weight;
    col_lb[nw + i] = 0;
  }
  // Rows: xi_i + y_i <w, x_i> + y_i beta w_b >= 1; then sum_i a_ji xi_i <= b_j.
  CoinPackedMatrix m(false, 0, 0);  // row-ordered
  m.setDimensions(0, cols);
  std::vector<double> row_lb, row_ub;
  for (int i = 0; i < n; ++i) {
    const SvmExample& e = examples[i];
    std::vector<int> idx;
    std::vector<double> val;
    for (int j = 0; j < d; ++j) {
      const double v = x.at(e.row, static_cast<std::size_t>(j));
      if (v != 0) {
        idx.push_back(j);
        val.push_back(e.label * v);
      }
    }
    if (has_bias) {
      idx.push_back(d);
      val.push_back(e.label * bias_feature);
    }
    idx.push_back(nw + i);
    val.push_back(1.0);
    m.appendRow(static_cast<int>(idx.size()), idx.data(), val.data());
    row_lb.push_back(1.0);
    row_ub.push_back(kInf);
  }
  for (std::size_t c = 0; c < bounds.size(); ++c) {
    RATEOPT_CHECK(constraint_weights[c].size() == examples.size(),
                  "constraint_weights[{}] has {} entries, expected {}", c,
                  constraint_weights[c].size(), examples.size());
    std::vector<int> idx;
    std::vector<double> val;
    for (int i = 0; i < n; ++i)
      if (constraint_weights[c][i] != 0) {
        idx.push_back(nw + i);
        val.push_back(constraint_weights[c][i]);
      }
    m.appendRow(static_cast<int>(idx.size()), idx.data(), val.data());
    row_lb.push_back(-kInf);
    row_ub.push_back(bounds[c]);
  }
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(m, col_lb.data(), col_ub.data(), obj.data(), row_lb.data(), row_ub.data());
  // Quadratic part 0.5 x'Qx with Q = lambda on the weight coordinates (diagonal).
  std::vector<CoinBigIndex> start(cols + 1, 0);
  std::vector<int> qcol;
  std::vector<double> qval;
  for (int j = 0; j < cols; ++j) {
    start[j] = static_cast<CoinBigIndex>(qcol.size());
    if (j < nw) {
      qcol.push_back(j);
      qval.push_back(lambda);
    }
  }
  start[cols] = static_cast<CoinBigIndex>(qcol.size());
  model.loadQuadraticObjective(cols, start.data(), qcol.data(), qval.data());
  model.setPrimalTolerance(1e-10);
  model.setDualTolerance(1e-10);
  limit_lp(model);
  model.primal();

  HingeQpResult r;
  r.solved = model.isProvenOptimal();
  const double* sol = model.primalColumnSolution();
  r.model.weights.assign(sol, sol + d);
  r.model.bias = has_bias ? bias_feature * sol[d] : 0.0;
  r.slack.assign(sol + nw, sol + cols);
  double norm2 = 0, lin = 0, hinge = 0;
  for (int j = 0; j < nw; ++j) norm2 += sol[j] * sol[j];
  for (int j = 0; j < d && !linear_term.empty(); ++j) lin += linear_term[j] * sol[j];
  for (int i = 0; i < n; ++i) hinge += examples[i].weight * sol[nw + i];
  r.objective = 0.5 * lambda * norm2 + lin + hinge;
  return r;
}

}  // namespace rateopt::detail
