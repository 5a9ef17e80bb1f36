// The post-processing LP's solver and the exact search for deterministic group thresholds
// (threshold_lp.hpp; rateopt/postprocess.hpp).
#include "train/threshold_lp.hpp"

#include <CoinHelperFunctions.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>

#include "common/gallop.hpp"
#include "common/numeric.hpp"
#include "train/lp_limits.hpp"

namespace rateopt::detail {

namespace {

constexpr std::size_t kRowsPerRound = 512;
constexpr double kLpTolerance = 1e-10;
// A deterministic rule meets a constraint when its row is at most the budget plus this.
constexpr double kRuleTolerance = 1e-9;

}  // namespace

double ThresholdLp::objective_at(const std::vector<double>& x, std::size_t held) const {
  double f = cost_constant;
  for (std::size_t a = 0; a < atoms; ++a) f += atom_cost[a] * x[held + a];
  if (fractional) f += t_cost * x[held + atoms];
  return f;
}

void hull_vertices(std::span<const std::array<std::uint64_t, 2>> points, std::vector<char>& keep) {
  keep.assign(points.size(), 0);
  if (points.empty()) return;
  // The turn o -> a -> b for o before a before b on the path: +1 left, -1 right, 0 straight.
  const auto cross = [&](std::size_t o, std::size_t a, std::size_t b) {
    const std::uint64_t left = (points[a][0] - points[o][0]) * (points[b][1] - points[o][1]);
    const std::uint64_t right = (points[a][1] - points[o][1]) * (points[b][0] - points[o][0]);
    return left > right ? 1 : left < right ? -1 : 0;
  };
  for (const int side : {1, -1}) {  // lower chain (left turns), then upper (right turns)
    std::vector<std::size_t> chain;
    for (std::size_t k = 0; k < points.size(); ++k) {
      if (!chain.empty() && points[chain.back()][0] == points[k][0] &&
          points[chain.back()][1] == points[k][1])
        continue;
      while (chain.size() >= 2 && cross(chain[chain.size() - 2], chain.back(), k) * side <= 0)
        chain.pop_back();
      chain.push_back(k);
    }
    for (const std::size_t k : chain) keep[k] = 1;
  }
}

ThresholdLpSolver::ThresholdLpSolver(const ThresholdLp& lp, bool minimize_violation, double budget,
                                     std::size_t eager, std::span<const std::size_t> subset)
    : lp_(lp),
      with_v_(minimize_violation),
      fractional_(lp.fractional && !minimize_violation),
      budget_(budget),
      n_(subset.empty() ? lp.columns() : subset.size()),
      last_(n_ + lp.atoms),
      in_(lp.constraints, 0) {
  const std::size_t n = n_, na = lp.atoms;
  const std::size_t extra = with_v_ || fractional_ ? 1 : 0;  // v, or t
  const std::size_t cols = n + na + extra;
  const std::size_t rows = lp.groups + na + (fractional_ ? 1 : 0);
  std::vector<CoinBigIndex> start(cols + 1, 0);
  std::vector<int> index;
  std::vector<double> value;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t c = subset.empty() ? k : subset[k];
    index.push_back(static_cast<int>(lp.group[c]));
    value.push_back(1.0);
    for (std::size_t e = lp.start[c]; e < lp.start[c + 1]; ++e) {
      index.push_back(static_cast<int>(lp.groups + lp.entry_atom[e]));
      value.push_back(-lp.entry_value[e]);
    }
    start[k + 1] = static_cast<CoinBigIndex>(index.size());
  }
  for (std::size_t a = 0; a < na; ++a) {
    index.push_back(static_cast<int>(lp.groups + a));
    value.push_back(1.0);
    if (fractional_ && lp.den_atom[a] != 0) {
      index.push_back(static_cast<int>(lp.groups + na));
      value.push_back(lp.den_atom[a]);
    }
    start[n + a + 1] = static_cast<CoinBigIndex>(index.size());
  }
  if (fractional_) {
    for (std::size_t g = 0; g < lp.groups; ++g) {
      index.push_back(static_cast<int>(g));
      value.push_back(-1.0);
    }
    index.push_back(static_cast<int>(lp.groups + na));
    value.push_back(lp.den_constant);
  }
  if (extra != 0) start[cols] = static_cast<CoinBigIndex>(index.size());
  std::vector<double> col_lo(cols, 0.0), col_hi(cols, COIN_DBL_MAX), obj(cols, 0.0);
  for (std::size_t a = 0; a < na; ++a) {
    col_lo[n + a] = -COIN_DBL_MAX;
    if (!with_v_) obj[n + a] = lp.atom_cost[a];
  }
  if (extra != 0) obj[last_] = with_v_ ? 1.0 : lp.t_cost;
  std::vector<double> row_lo(rows, 0.0), row_hi(rows, 0.0);
  for (std::size_t g = 0; g < lp.groups; ++g) row_lo[g] = row_hi[g] = fractional_ ? 0.0 : 1.0;
  if (fractional_) row_lo[rows - 1] = row_hi[rows - 1] = 1.0;
  simplex_.setLogLevel(0);
  simplex_.loadProblem(static_cast<int>(cols), static_cast<int>(rows), start.data(), index.data(),
                       value.data(), col_lo.data(), col_hi.data(), obj.data(), row_lo.data(),
                       row_hi.data());
  // Unscaled (scaled solves were found to miss the optimum of pool LPs; shrink.cpp), with tight
  // tolerances: the rules must reproduce the optimum to 1e-9.
  simplex_.scaling(0);
  simplex_.setPrimalTolerance(kLpTolerance);
  simplex_.setDualTolerance(kLpTolerance);
  if (lp.constraints <= eager) {
    std::vector<std::size_t> all(lp.constraints);
    for (std::size_t j = 0; j < all.size(); ++j) all[j] = j;
    add_rows(all);
  }
}

void ThresholdLpSolver::add_rows(const std::vector<std::size_t>& which) {
  const std::size_t n = n_;
  std::vector<CoinBigIndex> row_start{0};
  std::vector<int> row_index;
  std::vector<double> row_value, lo, hi;
  for (const std::size_t j : which) {
    for (const AtomTerm& t : lp_.rows[j]) {
      row_index.push_back(static_cast<int>(n + t.atom));
      row_value.push_back(t.coef);
    }
    if (with_v_) {
      row_index.push_back(static_cast<int>(last_));
      row_value.push_back(-1.0);
    }
    if (fractional_ && lp_.rhs[j] + budget_ != 0) {
      row_index.push_back(static_cast<int>(last_));
      row_value.push_back(-(lp_.rhs[j] + budget_));
    }
    row_start.push_back(static_cast<CoinBigIndex>(row_index.size()));
    lo.push_back(-COIN_DBL_MAX);
    hi.push_back(fractional_ ? 0.0 : lp_.rhs[j] + budget_);
    in_[j] = 1;
  }
  simplex_.addRows(static_cast<int>(which.size()), lo.data(), hi.data(), row_start.data(),
                   row_index.data(), row_value.data());
}

std::optional<std::vector<double>> ThresholdLpSolver::solve() {
  const std::size_t n = n_;
  // The first solve by the primal simplex; later ones (bounds changed, rows added) from the last
  // basis by the dual, and by the primal when the dual proves neither outcome.
  // The first solve by the primal simplex, later ones (rows added) from the last basis by the
  // dual; when CLP proves neither outcome (it stops on numerical trouble, status 4, on some
  // badly conditioned LPs), the other method from there, then the primal from a fresh start.
  const auto settled = [&] {
    return simplex_.isProvenOptimal() || simplex_.isProvenPrimalInfeasible();
  };
  const auto run = [&] {
    limit_lp(simplex_);  // CLP's time limit counts from when it is set: per solve
    if (!solved_) {
      simplex_.primal();
      solved_ = true;
      if (!settled()) simplex_.dual();
    } else {
      simplex_.dual();
      if (!settled()) simplex_.primal();
    }
    if (!settled()) {
      simplex_.allSlackBasis(true);
      simplex_.primal();
    }
  };
  run();
  while (true) {
    if (!simplex_.isProvenOptimal()) return std::nullopt;
    const double* x = simplex_.getColSolution();
    // With t, the atoms are t times their values (t > 0: the den row).
    const double t = fractional_ ? x[last_] : 1.0;
    if (!(t > 0)) return std::nullopt;
    std::vector<std::pair<double, std::size_t>> violated;
    for (std::size_t j = 0; j < lp_.constraints; ++j) {
      if (in_[j] != 0) continue;
      double lhs = with_v_ ? -x[last_] : 0.0;
      for (const AtomTerm& t_j : lp_.rows[j]) lhs += t_j.coef * x[n + t_j.atom] / t;
      const double excess = lhs - (lp_.rhs[j] + budget_);
      if (excess > kLpTolerance) violated.emplace_back(excess, j);
    }
    if (violated.empty()) return std::vector<double>(x, x + simplex_.getNumCols());
    // The most violated first (ties: the first constraint), then in constraint order.
    const std::size_t take = std::min(violated.size(), kRowsPerRound);
    std::partial_sort(violated.begin(), violated.begin() + static_cast<std::ptrdiff_t>(take),
                      violated.end(), [](const auto& p, const auto& q) {
                        return p.first > q.first || (p.first == q.first && p.second < q.second);
                      });
    std::vector<std::size_t> which;
    for (std::size_t k = 0; k < take; ++k) which.push_back(violated[k].second);
    std::sort(which.begin(), which.end());
    add_rows(which);
    run();
  }
}

std::optional<std::vector<double>> solve(const ThresholdLp& lp, bool minimize_violation,
                                         double budget, std::size_t eager) {
  ThresholdLpSolver solver(lp, minimize_violation, budget, eager);
  return solver.solve();
}

// ---- the deterministic search ----

namespace {

// A rule's exact values: its atoms are the sums of its columns' prefixes.
class RuleValues {
 public:
  explicit RuleValues(const ThresholdLp& lp) : lp_(lp), z_(lp.atoms) {}
  void set(const std::vector<std::size_t>& column) {
    std::fill(z_.begin(), z_.end(), 0.0);
    for (const std::size_t c : column)
      for (std::size_t e = lp_.start[c]; e < lp_.start[c + 1]; ++e)
        z_[lp_.entry_atom[e]] += lp_.entry_value[e];
  }
  // The largest constraint row minus its right-hand side, at least 0.
  [[nodiscard]] double violation() const {
    double v = 0;
    for (std::size_t j = 0; j < lp_.constraints; ++j) {
      double lhs = 0;
      for (const AtomTerm& t : lp_.rows[j]) lhs += t.coef * z_[t.atom];
      v = std::max(v, lhs - lp_.rhs[j]);
    }
    return v;
  }
  [[nodiscard]] double objective() const {
    double f = 0;
    for (std::size_t a = 0; a < lp_.atoms; ++a) f += lp_.atom_cost[a] * z_[a];
    if (!lp_.fractional) return lp_.cost_constant + f;
    double den = lp_.den_constant;
    for (std::size_t a = 0; a < lp_.atoms; ++a) den += lp_.den_atom[a] * z_[a];
    return den > 0 ? lp_.cost_constant + (f + lp_.t_cost) / den
                   : std::numeric_limits<double>::infinity();
  }

 private:
  const ThresholdLp& lp_;
  std::vector<double> z_;
};

struct Rule {
  std::vector<std::size_t> column;
  double violation = std::numeric_limits<double>::infinity();
  double objective = std::numeric_limits<double>::infinity();
};

// Counts LP solves over the phases, reports progress at most once a second and polls the stop.
class Monitor {
 public:
  explicit Monitor(const SearchControl& control)
      : control_(control), last_(std::chrono::steady_clock::now()) {}
  // After an LP solve: true to stop.
  bool tick(double best, double bound) {
    ++nodes_;
    if (control_.progress) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_ >= std::chrono::seconds(1)) {
        last_ = now;
        control_.progress(nodes_, best, bound);
      }
    }
    return control_.should_stop && control_.should_stop();
  }

 private:
  const SearchControl& control_;
  std::chrono::steady_clock::time_point last_;
  std::size_t nodes_ = 0;
};

// One branch and bound: minimise the objective among rules within `budget` (minimize_violation:
// the largest violation among all rules).
class BranchAndBound {
 public:
  BranchAndBound(const ThresholdLp& lp, bool minimize_violation, double budget, std::size_t eager)
      : lp_(lp),
        mv_(minimize_violation),
        budget_(budget),
        eager_(eager),
        values_(lp),
        begin_(lp.groups, 0),
        end_(lp.groups, 0),
        range_(lp.groups),
        stamp_(lp.groups, 0) {
    for (std::size_t c = lp.columns(); c-- > 0;) begin_[lp.group[c]] = c;
    for (std::size_t c = 0; c < lp.columns(); ++c) end_[lp.group[c]] = c + 1;
  }

  // A rule known beforehand (e.g. the first phase's), to prune with.
  void seed(const std::vector<std::size_t>& column) { consider(column); }
  // The two constant rules (no row positive, every row positive): a first rule where they meet
  // the constraints (parity always does), which any non-constant rule of the same value replaces.
  void seed_constants() {
    consider(begin_);
    std::vector<std::size_t> last(end_);
    for (std::size_t& c : last) --c;
    consider(last);
  }

  // Runs until the tree is exhausted or `nodes` (decremented per LP solve) reaches 0.
  // Best bound first; while no non-constant rule is known, each node popped starts a plunge: into
  // the child holding the split group's heaviest cut, depth first, until a node is closed (a
  // rule, infeasible, or pruned), the siblings left open. Plunges find a first rule early.
  void run(std::size_t& nodes, Monitor& monitor) {
    if (nodes_.empty()) {
      nodes_.push_back({kNone, 0, 0, 0});
      open_.push({-std::numeric_limits<double>::infinity(), 0});
    }
    while (!open_.empty() && nodes > 0 && !stopped_) {
      std::optional<Open> next = open_.top();
      open_.pop();
      while (next && !prunes(next->bound) && nodes > 0 && !stopped_) {
        --nodes;
        ++solves_;
        next = expand(next->node);
        if (next && best_ && !best_constant_) {
          open_.push(*next);
          next.reset();
        }
        stopped_ = monitor.tick(best_ && !mv_ ? value(*best_) : kInf, bound_with(next));
      }
      if (next && !prunes(next->bound)) open_.push(*next);  // stopped in a plunge
    }
    // Prune what is left, so that exhausted() and bound() read the open nodes only.
    while (!open_.empty() && prunes(open_.top().bound)) open_.pop();
  }

  [[nodiscard]] bool exhausted() const noexcept { return open_.empty(); }
  [[nodiscard]] bool found() const noexcept { return best_.has_value(); }
  [[nodiscard]] const Rule& best() const { return *best_; }
  [[nodiscard]] double best_value() const { return value(*best_); }
  // A proved lower bound on the best rule's value (every open node's bound, the incumbent).
  [[nodiscard]] double bound() const { return bound_with(std::nullopt); }
  // An LP that CLP could neither solve nor prove infeasible was pruned: not proved.
  [[nodiscard]] bool uncertain() const noexcept { return uncertain_; }
  [[nodiscard]] bool stopped() const noexcept { return stopped_; }
  [[nodiscard]] std::size_t solves() const noexcept { return solves_; }
  // The rule of smallest (violation, objective) among all those evaluated.
  // (Nothing evaluated yet: every group's first cut.)
  [[nodiscard]] Rule least_violating() {
    if (!fallback_) consider(std::vector<std::size_t>(begin_));
    return *fallback_;
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  struct Node {
    std::size_t parent;
    std::size_t group, lo, hi;  // the group's columns [lo, hi) (root: none)
  };
  struct Open {
    double bound;
    std::size_t node;
    bool operator<(const Open& o) const {  // std::priority_queue pops the largest
      return bound > o.bound || (bound == o.bound && node > o.node);
    }
  };

  [[nodiscard]] double value(const Rule& r) const { return mv_ ? r.violation : r.objective; }
  // The bound with `extra` (a node in a plunge) still open.
  [[nodiscard]] double bound_with(const std::optional<Open>& extra) const {
    double b = best_ ? value(*best_) : kInf;
    if (!open_.empty()) b = std::min(b, open_.top().bound);
    if (extra) b = std::min(b, extra->bound);
    return b;
  }
  [[nodiscard]] static double slack(double b) { return 1e-9 * std::max(1.0, std::fabs(b)); }
  // Every group at its first cut (no row positive) or every group at its last (all positive).
  [[nodiscard]] bool constant(const std::vector<std::size_t>& column) const {
    bool none = true, all = true;
    for (std::size_t g = 0; g < lp_.groups; ++g) {
      none = none && column[g] == begin_[g];
      all = all && column[g] + 1 == end_[g];
    }
    return none || all;
  }
  // A node is pruned when its bound cannot beat the incumbent by more than the slack; while the
  // incumbent is a constant rule, only when it cannot tie it either (a non-constant rule of the
  // same value is preferred).
  [[nodiscard]] bool prunes(double bound) const {
    if (!best_) return false;
    const double b = value(*best_);
    return best_constant_ ? bound > b + slack(b) : bound >= b - slack(b);
  }

  Open child(std::size_t parent, std::size_t group, std::size_t lo, std::size_t hi, double bound) {
    nodes_.push_back({parent, group, lo, hi});
    return {bound, nodes_.size() - 1};
  }

  void consider(const std::vector<std::size_t>& column) {
    values_.set(column);
    Rule r{column, values_.violation(), 0};
    r.objective = values_.objective();
    if (!fallback_ || r.violation < fallback_->violation ||
        (r.violation == fallback_->violation && r.objective < fallback_->objective))
      fallback_ = r;
    if (!mv_ && r.violation > budget_ + kRuleTolerance) return;
    const bool is_constant = constant(r.column);
    if (!best_ || value(r) < value(*best_) ||
        (best_constant_ && !is_constant && value(r) <= value(*best_) + slack(value(*best_)))) {
      best_ = std::move(r);
      best_constant_ = is_constant;
    }
  }

  // The node's range of each group's columns: the deepest restriction on its path to the root.
  void ranges(std::size_t node) {
    ++walk_;
    for (std::size_t k = node; k != kNone; k = nodes_[k].parent) {
      const Node& nd = nodes_[k];
      if (nd.parent == kNone || stamp_[nd.group] == walk_) continue;
      stamp_[nd.group] = walk_;
      range_[nd.group] = {nd.lo, nd.hi};
    }
    for (std::size_t g = 0; g < lp_.groups; ++g)
      if (stamp_[g] != walk_) range_[g] = {begin_[g], end_[g]};
  }

  // The node's LP columns: per group, the vertices of the hull of its range's points (the same
  // relaxation), or every column of the range.
  // Each group's vertices are kept for its last range (a node changes one group's range).
  void held_columns() {
    held_.clear();
    if (vertex_cache_.empty()) vertex_cache_.resize(lp_.groups);
    for (std::size_t g = 0; g < lp_.groups; ++g) {
      const auto [lo, hi] = range_[g];
      if (lp_.hull_group.empty() || lp_.hull_group[g] == 0) {
        for (std::size_t c = lo; c < hi; ++c) held_.push_back(c);
        continue;
      }
      VertexCache& cache = vertex_cache_[g];
      if (cache.range != range_[g] || cache.columns.empty()) {
        hull_vertices({lp_.point.data() + lo, hi - lo}, keep_);
        cache.range = range_[g];
        cache.columns.clear();
        for (std::size_t c = lo; c < hi; ++c)
          if (keep_[c - lo] != 0) cache.columns.push_back(c);
      }
      held_.insert(held_.end(), cache.columns.begin(), cache.columns.end());
    }
  }

  // Solves the node's LP; returns the child to plunge into, if any (the other is left open).
  std::optional<Open> expand(std::size_t node) {
    ranges(node);
    held_columns();
    ThresholdLpSolver solver(lp_, mv_, budget_, eager_, held_);
    const std::optional<std::vector<double>> x = solver.solve();
    if (!x) {
      // An infeasible node is the usual case; one CLP gave up on is dropped too, and the answer
      // is then no longer proved optimal.
      if (!solver.proved_infeasible()) uncertain_ = true;
      return std::nullopt;
    }
    const std::size_t n = held_.size();
    const double lp_value = mv_ ? (*x)[n + lp_.atoms] : lp_.objective_at(*x, n);
    if (prunes(lp_value)) return std::nullopt;
    const double t = lp_.fractional && !mv_ ? (*x)[n + lp_.atoms] : 1.0;
    // Each group's heaviest column and how spread its weight is.
    std::vector<std::size_t> heaviest(lp_.groups, kNone);
    std::vector<double> top(lp_.groups, 0.0), sum(lp_.groups, 0.0);
    std::vector<std::size_t> support(lp_.groups, 0);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t c = held_[k];
      const double w = (*x)[k] / t;
      if (!(w > kZeroWeight)) continue;
      const std::size_t g = lp_.group[c];
      ++support[g];
      sum[g] += w;
      if (w > top[g]) {
        top[g] = w;
        heaviest[g] = c;
      }
    }
    std::size_t split = kNone;
    for (std::size_t g = 0; g < lp_.groups; ++g) {
      if (heaviest[g] == kNone) heaviest[g] = range_[g].first;  // LP noise: any allowed
      if (support[g] > 1 && (split == kNone || top[g] / sum[g] < top[split] / sum[split]))
        split = g;
    }
    consider(heaviest);  // the node's rounding; its rule when the LP chose one cut per group
    if (split == kNone) return std::nullopt;
    // Split the group's allowed range after its weighted-median supporting column.
    std::vector<std::size_t> cols;
    std::vector<double> cum;
    double acc = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const double w = (*x)[k] / t;
      if (held_[k] < range_[split].first || held_[k] >= range_[split].second || !(w > kZeroWeight))
        continue;
      acc += w;
      cols.push_back(held_[k]);
      cum.push_back(acc);
    }
    std::size_t k = 0;
    while (k + 2 < cols.size() && cum[k] < 0.5 * acc) ++k;
    const std::size_t at = cols[k] + 1;
    const Open left = child(node, split, range_[split].first, at, lp_value);
    const Open right = child(node, split, at, range_[split].second, lp_value);
    const bool go_left = heaviest[split] < at;
    open_.push(go_left ? right : left);
    return go_left ? left : right;
  }

  const ThresholdLp& lp_;
  bool mv_;
  double budget_;
  std::size_t eager_;
  RuleValues values_;
  std::vector<std::size_t> begin_, end_;
  std::vector<std::pair<std::size_t, std::size_t>> range_;  // of the node expanded
  std::vector<std::size_t> stamp_;
  std::vector<std::size_t> held_;  // its LP's columns
  std::vector<char> keep_;
  struct VertexCache {
    std::pair<std::size_t, std::size_t> range;
    std::vector<std::size_t> columns;
  };
  std::vector<VertexCache> vertex_cache_;
  std::size_t walk_ = 0;
  std::vector<Node> nodes_;
  std::priority_queue<Open> open_;
  std::optional<Rule> best_, fallback_;
  bool best_constant_ = false;
  bool uncertain_ = false;
  bool stopped_ = false;
  std::size_t solves_ = 0;
};

// ---- two groups: the exact sweep ----

// Range minimum over a fixed array by a sparse table: the first index of the smallest value in
// [lo, hi), O(1) a query after O(n log n) to build.
class RangeMin {
 public:
  explicit RangeMin(std::span<const double> value) : value_(value) {
    const std::size_t n = value.size();
    table_.emplace_back(n);
    for (std::size_t i = 0; i < n; ++i) table_[0][i] = static_cast<std::uint32_t>(i);
    for (std::size_t w = 1; 2 * w <= n; w *= 2) {
      const std::vector<std::uint32_t>& prev = table_.back();
      std::vector<std::uint32_t> next(n - 2 * w + 1);
      for (std::size_t i = 0; i < next.size(); ++i) next[i] = better(prev[i], prev[i + w]);
      table_.push_back(std::move(next));
    }
  }
  // lo < hi <= size.
  [[nodiscard]] std::size_t argmin(std::size_t lo, std::size_t hi) const {
    std::size_t level = 0;
    while ((std::size_t{2} << level) <= hi - lo) ++level;
    return better(table_[level][lo], table_[level][hi - (std::size_t{1} << level)]);
  }

 private:
  [[nodiscard]] std::uint32_t better(std::uint32_t a, std::uint32_t b) const {
    return value_[b] < value_[a] || (value_[b] == value_[a] && b < a) ? b : a;
  }
  std::span<const double> value_;
  std::vector<std::vector<std::uint32_t>> table_;
};

// The best rule of two groups whose every constraint row is monotone over one group's cuts
// (group "b"): each row is F_j(a) + G_j(b) <= rhs_j, and with G_j monotone the cuts of b a cut
// of a allows form an interval, found by binary search per row; the best cut of b in it is a
// range minimum of b's part of the objective. A linear objective is separable the same way; a
// ratio one is minimised by Dinkelbach's method (each step the linear sweep of num - lambda den,
// lambda the ratio of the last step's best rule, until no rule improves on it). Exact over every
// pair of cuts in O((n_a m log n_b + n_b log n_b) steps). The two constant rules are left out of
// the sweep (the caller weighs them). Nothing when the rows are not monotone over either group,
// a ratio's denominator can be 0, or no non-constant rule meets the constraints.
// Per constraint row and column (part[j * columns + c]): the row's part, coef * prefix summed over
// the column's entries; per column the objective's numerator part and (ratio objectives) its
// denominator part. A rule's row is the sum of its columns' parts (one column per group).
struct PartTables {
  std::vector<double> part, num, den;
};
PartTables tabulate(const ThresholdLp& lp) {
  std::vector<std::vector<std::pair<std::size_t, double>>> atom_rows(lp.atoms);
  for (std::size_t j = 0; j < lp.constraints; ++j)
    for (const AtomTerm& t : lp.rows[j]) atom_rows[t.atom].emplace_back(j, t.coef);
  const std::size_t n = lp.columns();
  PartTables t;
  t.part.assign(n * lp.constraints, 0.0);
  t.num.assign(n, 0.0);
  t.den.assign(n, 0.0);
  for (std::size_t c = 0; c < n; ++c)
    for (std::size_t e = lp.start[c]; e < lp.start[c + 1]; ++e) {
      const std::size_t a = lp.entry_atom[e];
      const double v = lp.entry_value[e];
      t.num[c] += lp.atom_cost[a] * v;
      if (lp.fractional) t.den[c] += lp.den_atom[a] * v;
      for (const auto& [j, coef] : atom_rows[a]) t.part[j * n + c] += coef * v;
    }
  return t;
}

// Each group's columns [begin[g], end[g]) (a group's columns are contiguous; begin = columns,
// end = 0 for a group without any).
struct GroupRanges {
  std::vector<std::size_t> begin, end;
};
GroupRanges group_ranges(const ThresholdLp& lp) {
  GroupRanges r{std::vector<std::size_t>(lp.groups, lp.columns()),
                std::vector<std::size_t>(lp.groups, 0)};
  for (std::size_t c = 0; c < lp.columns(); ++c) {
    r.begin[lp.group[c]] = std::min(r.begin[lp.group[c]], c);
    r.end[lp.group[c]] = std::max(r.end[lp.group[c]], c + 1);
  }
  return r;
}

// Whether a ratio objective's denominator is positive on every rule: the groups' smallest parts
// (`den` per column) and the constant summed.
bool denominator_positive(const ThresholdLp& lp, const std::vector<double>& den,
                          const GroupRanges& r) {
  double low = lp.den_constant;
  for (std::size_t g = 0; g < lp.groups; ++g)
    low += *std::min_element(den.begin() + static_cast<std::ptrdiff_t>(r.begin[g]),
                             den.begin() + static_cast<std::ptrdiff_t>(r.end[g]));
  return low > 0;
}

// The exact searches' objective: best_at(0) for a linear one; for a ratio num / den, Dinkelbach's
// method from it: each step best_at(lambda), the rule of smallest num - lambda den, at lambda the
// last rule's ratio, until no rule improves on it (lambda falls strictly while a rule of smaller
// ratio exists: finitely many). Nothing when best_at finds no rule or after 200 steps.
template <typename Rule, typename BestAt, typename Num, typename Den>
std::optional<Rule> minimise_objective(const ThresholdLp& lp, const BestAt& best_at, const Num& num,
                                       const Den& den) {
  std::optional<Rule> best = best_at(0.0);
  if (!best || !lp.fractional) return best;
  for (int step = 0; step < 200; ++step) {
    const double lambda = num(*best) / den(*best);
    std::optional<Rule> next = best_at(lambda);
    if (!next) return std::nullopt;
    const double gain = num(*next) - lambda * den(*next);  // at the step's best
    if (!(gain < -1e-12 * std::max(1.0, std::fabs(num(*best))))) return best;
    best = std::move(next);
  }
  return std::nullopt;
}

class TwoGroupSweep {
 public:
  TwoGroupSweep(const ThresholdLp& lp, const PartTables& t, const GroupRanges& r)
      : lp_(lp), m_(lp.constraints), ranges_(r), part_(t.part), num_(t.num), den_(t.den) {}

  std::optional<std::array<std::size_t, 2>> run() {
    if (lp_.groups != 2) return std::nullopt;
    const GroupRanges& r = ranges_;
    begin_ = {r.begin[0], r.begin[1]};
    end_ = {r.end[0], r.end[1]};
    // b: the group with more cuts if its rows are monotone, else the other.
    b_ = end_[1] - begin_[1] >= end_[0] - begin_[0] ? 1 : 0;
    if (!monotone(b_)) b_ = 1 - b_;
    if (!monotone(b_)) return std::nullopt;
    if (lp_.fractional && !denominator_positive(lp_, den_, r)) return std::nullopt;
    using Pair = std::array<std::size_t, 2>;
    return minimise_objective<Pair>(
        lp_, [&](double lambda) { return best_pair(lambda); },
        [&](const Pair& p) { return num_of(p); },
        [&](const Pair& p) { return den_[p[0]] + den_[p[1]] + lp_.den_constant; });
  }

 private:
  // Whether every row's part never both rises and falls over group g's cuts; direction_ per row:
  // +1 never falls, -1 never rises, 0 constant.
  bool monotone(std::size_t g) {
    direction_.assign(m_, 0);
    for (std::size_t j = 0; j < m_; ++j) {
      bool up = false, down = false;
      for (std::size_t c = begin_[g] + 1; c < end_[g]; ++c) {
        up = up || part(j, c) > part(j, c - 1);
        down = down || part(j, c) < part(j, c - 1);
      }
      if (up && down) return false;
      direction_[j] = up ? 1 : down ? -1 : 0;
    }
    return true;
  }
  [[nodiscard]] double part(std::size_t j, std::size_t c) const {
    return part_[j * lp_.columns() + c];
  }
  [[nodiscard]] double num_of(const std::array<std::size_t, 2>& p) const {
    return num_[p[0]] + num_[p[1]] + (lp_.fractional ? lp_.t_cost : 0.0);
  }

  // The non-constant pair of smallest num - lambda den (den = 0 for a linear objective) among
  // those meeting every row to kRuleTolerance; nothing when none does.
  std::optional<std::array<std::size_t, 2>> best_pair(double lambda) {
    const std::size_t a = 1 - b_;
    const std::size_t b0 = begin_[b_], nb = end_[b_] - begin_[b_];
    std::vector<double> value(nb);
    for (std::size_t k = 0; k < nb; ++k) value[k] = num_[b0 + k] - lambda * den_[b0 + k];
    const RangeMin range_min(value);
    std::optional<std::array<std::size_t, 2>> best;
    double best_value = std::numeric_limits<double>::infinity();
    // Each row's last boundary: the next cut of a moves it little, so each search gallops from it.
    std::vector<std::size_t> last(m_, nb / 2);
    for (std::size_t ca = begin_[a]; ca < end_[a]; ++ca) {
      std::size_t lo = 0, hi = nb;
      for (std::size_t j = 0; j < m_ && lo < hi; ++j) {
        const double room = lp_.rhs[j] + kRuleTolerance - part(j, ca);
        // The row's parts over b's cuts, for the searches.
        const std::span<const double> g(part_.data() + j * lp_.columns() + b0, nb);
        if (direction_[j] > 0) {  // a prefix of b's cuts: those whose part fits the room
          last[j] = gallop_partition(g, last[j], [&](double v) { return v <= room; });
          hi = std::min(hi, last[j]);
        } else if (direction_[j] < 0) {  // a suffix
          last[j] = gallop_partition(g, last[j], [&](double v) { return v > room; });
          lo = std::max(lo, last[j]);
        } else if (nb > 0 && g[0] > room) {
          hi = lo;
        }
      }
      // The constant rules: both groups at their first cut, or both at their last.
      if (ca == begin_[a] && lo == 0) ++lo;
      if (ca + 1 == end_[a] && hi == nb) --hi;
      if (lo >= hi) continue;
      const std::size_t kb = range_min.argmin(lo, hi);
      const double v = num_[ca] - lambda * den_[ca] + value[kb];
      if (v < best_value) {
        best_value = v;
        std::array<std::size_t, 2> p{};
        p[a] = ca;
        p[b_] = b0 + kb;
        best = p;
      }
    }
    return best;
  }

  const ThresholdLp& lp_;
  std::size_t m_;
  const GroupRanges& ranges_;
  std::array<std::size_t, 2> begin_{}, end_{};
  std::size_t b_ = 1;
  const std::vector<double>&part_, &num_, &den_;
  std::vector<int> direction_;
};

// Every constraint row reading one group's cuts only (per-group bounds: min_over / max_over of a
// rate, a rate on one group's slice): a group's rows hold or not by its own cut, and the objective
// is a sum over the groups, so the best rule takes each group's best allowed cut (a ratio objective
// by Dinkelbach's method, each step the same choice for num - lambda den). The constant rules
// (every group at its first cut, or every group at its last) are left out as by the sweep: when
// the groups' best cuts make one, the best rule that differs from it takes the cheapest other cut
// of one group. Exact, for any number of groups, in O(columns x rows). Nothing when a row reads
// two groups, a group has no allowed cut (the branch and bound then finds the least violation), a
// ratio's denominator can be 0, or no non-constant rule is allowed.
class SeparableSearch {
 public:
  SeparableSearch(const ThresholdLp& lp, const PartTables& t, const GroupRanges& r)
      : lp_(lp),
        part_(t.part),
        num_(t.num),
        den_(t.den),
        ranges_(r),
        begin_(r.begin),
        end_(r.end) {}

  std::optional<std::vector<std::size_t>> run() {
    const std::size_t n = lp_.columns();
    const std::size_t m = lp_.constraints;
    if (lp_.groups == 0 || n == 0) return std::nullopt;
    // Each row's group, and whether each cut meets its group's rows.
    allowed_.assign(n, 1);
    for (std::size_t j = 0; j < m; ++j) {
      std::optional<std::size_t> owner;
      for (std::size_t c = 0; c < n; ++c) {
        if (part_[j * n + c] == 0.0) continue;
        if (owner && *owner != lp_.group[c]) return std::nullopt;
        owner = lp_.group[c];
      }
      const double room = lp_.rhs[j] + kRuleTolerance;
      if (!owner) {
        if (0.0 > room) return std::nullopt;
        continue;
      }
      for (std::size_t c = begin_[*owner]; c < end_[*owner]; ++c)
        if (part_[j * n + c] > room) allowed_[c] = 0;
    }
    for (std::size_t g = 0; g < lp_.groups; ++g)
      if (begin_[g] >= end_[g] ||
          std::none_of(allowed_.begin() + static_cast<std::ptrdiff_t>(begin_[g]),
                       allowed_.begin() + static_cast<std::ptrdiff_t>(end_[g]),
                       [](char a) { return a != 0; }))
        return std::nullopt;
    if (lp_.fractional && !denominator_positive(lp_, den_, ranges_)) return std::nullopt;
    using Rule = std::vector<std::size_t>;
    return minimise_objective<Rule>(
        lp_, [&](double lambda) { return choose(lambda); },
        [&](const Rule& rule) { return num_of(rule); },
        [&](const Rule& rule) { return den_of(rule); });
  }

 private:
  [[nodiscard]] double num_of(const std::vector<std::size_t>& rule) const {
    double v = lp_.fractional ? lp_.t_cost : 0.0;
    for (const std::size_t c : rule) v += num_[c];
    return v;
  }
  [[nodiscard]] double den_of(const std::vector<std::size_t>& rule) const {
    double v = lp_.den_constant;
    for (const std::size_t c : rule) v += den_[c];
    return v;
  }

  // The allowed non-constant rule of smallest num - lambda den; nothing when none is.
  [[nodiscard]] std::optional<std::vector<std::size_t>> choose(double lambda) const {
    const auto value = [&](std::size_t c) { return num_[c] - lambda * den_[c]; };
    // Per group: its best allowed cut, and its best allowed cut other than the first (last).
    constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
    const std::size_t groups = lp_.groups;
    std::vector<std::size_t> best(groups, kNone), not_first(groups, kNone), not_last(groups, kNone);
    const auto better = [&](std::size_t c, std::size_t than) {
      return than == kNone || value(c) < value(than);
    };
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t c = begin_[g]; c < end_[g]; ++c) {
        if (allowed_[c] == 0) continue;
        if (better(c, best[g])) best[g] = c;
        if (c != begin_[g] && better(c, not_first[g])) not_first[g] = c;
        if (c + 1 != end_[g] && better(c, not_last[g])) not_last[g] = c;
      }
    std::vector<std::size_t> rule = best;
    const auto all_first = [&](const std::vector<std::size_t>& r) {
      for (std::size_t g = 0; g < groups; ++g)
        if (r[g] != begin_[g]) return false;
      return true;
    };
    const auto all_last = [&](const std::vector<std::size_t>& r) {
      for (std::size_t g = 0; g < groups; ++g)
        if (r[g] + 1 != end_[g]) return false;
      return true;
    };
    const auto constant = [&](const std::vector<std::size_t>& r) {
      return all_first(r) || all_last(r);
    };
    if (constant(rule)) {
      // The cheapest way away from it: one group at its best other cut.
      const bool at_first = all_first(rule);
      const std::vector<std::size_t>& other = at_first ? not_first : not_last;
      std::size_t pick = kNone;
      for (std::size_t g = 0; g < groups; ++g) {
        if (other[g] == kNone) continue;
        if (pick == kNone ||
            value(other[g]) - value(best[g]) < value(other[pick]) - value(best[pick]))
          pick = g;
      }
      if (pick == kNone) return std::nullopt;
      rule[pick] = other[pick];
      if (constant(rule)) return std::nullopt;  // groups of one cut: leave it to the search
    }
    return rule;
  }

  const ThresholdLp& lp_;
  const std::vector<double>&part_, &num_, &den_;
  const GroupRanges& ranges_;
  const std::vector<std::size_t>&begin_, &end_;
  std::vector<char> allowed_;
};

}  // namespace

DeterministicSearch search_deterministic(const ThresholdLp& lp, std::size_t eager,
                                         const SearchControl& control) {
  DeterministicSearch out;
  // An exact rule found without LP solves, against the constant rules (a non-constant rule of
  // the same value preferred), when the rule's own values confirm it.
  const auto take = [&](const std::vector<std::size_t>& column) {
    RuleValues values(lp);
    values.set(column);
    if (values.violation() > kRuleTolerance) return false;
    BranchAndBound pick(lp, false, 0.0, eager);
    pick.seed_constants();
    pick.seed(column);
    out.column = pick.best().column;
    out.objective = out.bound = pick.best().objective;
    out.sweep = true;
    return true;
  };
  if (control.sweep) {
    // Rows of one group each (any number of groups), then two groups with monotone rows; both
    // read the same tables of the columns' parts.
    const PartTables tables = tabulate(lp);
    const GroupRanges ranges = group_ranges(lp);
    if (const auto rule = SeparableSearch(lp, tables, ranges).run(); rule && take(*rule))
      return out;
    if (const auto pair = TwoGroupSweep(lp, tables, ranges).run();
        pair && take({(*pair)[0], (*pair)[1]}))
      return out;
  }
  std::size_t nodes = std::max<std::size_t>(control.max_nodes, 1);
  Monitor monitor(control);
  const auto finish = [&](BranchAndBound& bb, const Rule& r, Termination status) {
    out.column = r.column;
    out.objective = r.objective;
    out.status = bb.stopped() ? Termination::kInterrupted : status;
    out.nodes += bb.solves();
    return out;
  };
  BranchAndBound strict(lp, false, 0.0, eager);
  strict.seed_constants();
  strict.run(nodes, monitor);
  if (strict.found()) {
    out.bound = strict.bound();
    const bool proved = strict.exhausted() && !strict.uncertain();
    return finish(strict, strict.best(), proved ? Termination::kConverged : Termination::kFeasible);
  }
  if (!strict.exhausted() || strict.uncertain() || nodes == 0) {
    const Rule r = strict.least_violating();
    out.bound = -kInf;
    out.violation_budget = r.violation;
    return finish(strict, r, Termination::kMaxIterations);
  }
  // No rule meets the constraints: the smallest largest violation, then the objective under it.
  out.nodes += strict.solves();
  BranchAndBound least(lp, true, 0.0, eager);
  least.seed_constants();
  least.run(nodes, monitor);
  const Rule first = least.found() ? least.best() : least.least_violating();
  const double v = first.violation;
  out.violation_budget = v;
  if (!least.exhausted() || least.uncertain() || nodes == 0) {
    out.bound = -kInf;
    return finish(least, first, Termination::kMaxIterations);
  }
  out.nodes += least.solves();
  BranchAndBound under(lp, false, v + std::max(1e-12, 1e-9 * std::fabs(v)), eager);
  under.seed(first.column);
  under.seed_constants();
  under.run(nodes, monitor);
  out.bound = under.bound();
  return finish(under, under.best(), Termination::kInfeasible);
}

}  // namespace rateopt::detail
