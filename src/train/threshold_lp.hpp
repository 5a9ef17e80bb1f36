// Private: the post-processing LP over group threshold columns and atom values
// (rateopt/postprocess.hpp), its solver, and the exact search for deterministic thresholds.
//
// ThresholdLp. Variables: pi_{g,c} >= 0, one per kept cut c of group g (columns; a group's
// columns contiguous, in increasing cut order), then z_a, one per atom the functions use (free),
// then v >= 0 (when minimising the violation) or t (Charnes-Cooper). Rows: per group
// sum_c pi_{g,c} = 1; per atom z_a - sum pi_{g,c} * prefix_a(g, c) = 0; per constraint j
// sum_a coef_ja z_a - v <= rhs_j. Objective sum_a coef_0a z_a (+ cost_constant), or v. Each
// column holds its group's row and the atoms its group's rows touch: sparse whatever the number
// of groups and constraints.
//
// ThresholdLpSolver solves it, over all threshold columns or a subset of them. Constraint
// generation (`eager`): with more
// constraints than that, the LP starts without them and takes, round after round, the most
// violated ones at its optimum (at most 512 a round) until none is violated by more than the LP's
// tolerance: the optimum of the LP with every constraint, where only a few of many bind.
//
// search_deterministic: the best rule with one cut per group (no randomisation) by LP-based
// branch and bound over ranges of each group's cuts (postprocess.hpp, "Deterministic mode"), or
// for two groups by a sweep over every pair of cuts where the constraints allow one.
#pragma once

#include <ClpSimplex.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "rateopt/status.hpp"
#include "rateopt/train.hpp"

namespace rateopt::detail {

struct ThresholdLp {
  std::size_t groups = 0, atoms = 0, constraints = 0;
  std::vector<std::size_t> group;           // per column
  std::vector<std::size_t> start{0};        // per column: its entries in [start[c], start[c + 1])
  std::vector<std::uint32_t> entry_atom;    // atom row (0-based among atoms)
  std::vector<double> entry_value;          // prefix_a(g, c)
  std::vector<double> atom_cost;            // objective coefficient of each z_a
  std::vector<std::vector<AtomTerm>> rows;  // per constraint: coef_ja over atom rows
  std::vector<double> rhs;
  double cost_constant = 0;
  // Charnes-Cooper for a ratio objective: the variables are t times the above (t = 1 / den) and
  // a column t >= 0: group rows sum to t, den row sum_a den_a z_a + den_constant t = 1,
  // constraints sum_a coef_ja z_a - rhs_j t <= 0, objective sum_a cost_a z_a + t_cost t.
  bool fractional = false;
  std::vector<double> den_atom;
  double den_constant = 0;
  double t_cost = 0;
  // For the deterministic search: per column, its group's two row-type counts above the cut,
  // where the group's rows enter the atoms in at most two ways (hull_group[g]; every atom value
  // of a cut is then linear in them). Empty: no group is.
  std::vector<std::array<std::uint64_t, 2>> point;
  std::vector<char> hull_group;
  [[nodiscard]] std::size_t columns() const noexcept { return group.size(); }
  // The objective (as minimised, constant included) at an LP solution `x` (as solve gives it)
  // of `held` threshold columns.
  [[nodiscard]] double objective_at(const std::vector<double>& x, std::size_t held) const;
};

// The vertices of the convex hull of a path of points whose coordinates never decrease along it
// (so sorted lexicographically; Andrew's monotone chain, exact: coordinates below 2^32, so every
// product of differences fits in 64 bits unsigned; collinear and repeated points are not
// vertices): keep[k] = 1 for a vertex.
void hull_vertices(std::span<const std::array<std::uint64_t, 2>> points, std::vector<char>& keep);

// Threshold weights (LP values of pi, relative to t) below this are dropped as LP noise.
inline constexpr double kZeroWeight = 1e-9;

class ThresholdLpSolver {
 public:
  // minimize_violation: min v >= 0 with every constraint's row relaxed by v (the objective and
  // Charnes-Cooper play no part: the same feasible set); otherwise min the objective with every
  // constraint's right-hand side raised by `budget`. `subset`: the threshold columns of `lp` the
  // LP holds (increasing; empty: all).
  ThresholdLpSolver(const ThresholdLp& lp, bool minimize_violation, double budget,
                    std::size_t eager, std::span<const std::size_t> subset = {});
  // The basic solution (pi of the columns held, z, then v or t) or nothing when CLP does not
  // prove optimality (the constraints cannot all hold, or the columns held leave no feasible
  // point).
  std::optional<std::vector<double>> solve();
  // After solve() gave nothing: whether CLP proved the LP infeasible (else it gave up).
  [[nodiscard]] bool proved_infeasible() const { return simplex_.isProvenPrimalInfeasible(); }

 private:
  void add_rows(const std::vector<std::size_t>& which);
  const ThresholdLp& lp_;
  bool with_v_, fractional_;
  double budget_;
  std::size_t n_;     // threshold columns held
  std::size_t last_;  // the v or t column
  std::vector<char> in_;
  bool solved_ = false;
  ClpSimplex simplex_;
};

// One solve of a fresh model (ThresholdLpSolver above).
std::optional<std::vector<double>> solve(const ThresholdLp& lp, bool minimize_violation,
                                         double budget, std::size_t eager);

struct DeterministicSearch {
  // One column per group: its cut, as a column of the LP.
  std::vector<std::size_t> column;
  // kConverged: the best rule meeting the constraints, optimality proved; kInfeasible: no rule
  // meets them; `column` minimises the largest violation (`violation_budget`, proved), then the
  // objective under it; kFeasible: the node budget ran out with a rule meeting the constraints
  // (`bound` <= objective: the search's proved lower bound); kMaxIterations: it ran out before
  // one was found (`column`: the rule of smallest largest violation seen).
  Termination status = Termination::kConverged;
  double objective = 0;  // of `column`, as minimised (constant included)
  double bound = 0;      // lower bound on the best deterministic objective (as minimised)
  double violation_budget = 0;
  std::size_t nodes = 0;  // LP solves of the branch and bound
  bool sweep = false;     // found by the two-group sweep (no LP solve), optimality proved
};

// The best deterministic rule of `lp` (built with every cut as a column, and `point` where the
// hull applies) by branch and bound on the LP relaxation (rateopt/postprocess.hpp, "Deterministic
// mode"). At most control.max_nodes LP solves in all (every phase).
// `progress` and `should_stop` as PostprocessOptions has them (either may be empty); a stop
// gives status kInterrupted with the best rule so far (or the least violating one).
struct SearchControl {
  std::size_t max_nodes = 100000;
  // Two groups whose constraint rows are monotone over one group's cuts: the exact sweep over
  // every pair of cuts instead of the branch and bound (false: the branch and bound, for tests).
  bool sweep = true;
  std::function<void(std::size_t nodes, double best, double bound)> progress;
  std::function<bool()> should_stop;
};
DeterministicSearch search_deterministic(const ThresholdLp& lp, std::size_t eager,
                                         const SearchControl& control);

}  // namespace rateopt::detail
