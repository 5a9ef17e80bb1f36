// Expression::evaluate / value: forward evaluation of the node graph and reverse-mode gradients
// with respect to the rate leaves. Arithmetic is plain IEEE double arithmetic (1/0 = inf,
// 0/0 = NaN, log(0) = -inf); the zero-denominator conventions live in the metrics, not here.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "common/enum_names.hpp"
#include "common/numeric.hpp"
#include "rateopt/expr.hpp"

namespace rateopt {

namespace {

enum class Function { kMin, kMax, kAbs, kSqrt, kLog, kExp, kPow };

Function function_of(const ExprNode& node) {
  const std::string_view f = node.function;
  if (f == "min") return Function::kMin;
  if (f == "max") return Function::kMax;
  if (f == "abs") return Function::kAbs;
  if (f == "sqrt") return Function::kSqrt;
  if (f == "log") return Function::kLog;
  if (f == "exp") return Function::kExp;
  if (f == "pow") return Function::kPow;
  throw InvalidArgument(fmt::format("unknown function '{}' in an expression node", f));
}

// Position in node.args of the argument min / max selects: the first NaN if any (NaN in, NaN
// out), else the first extreme value (first on ties).
std::size_t chosen_argument(const ExprNode& node, const std::vector<double>& v, bool is_max) {
  std::size_t best = 0;
  for (std::size_t k = 0; k < node.args.size(); ++k) {
    const double x = v[node.args[k]];
    if (std::isnan(x)) return k;
    const double b = v[node.args[best]];
    if (is_max ? x > b : x < b) best = k;
  }
  return best;
}

double forward(const ExprNode& node, const std::vector<double>& v,
               std::span<const double> rate_values) {
  const auto arg = [&](std::size_t k) { return v[node.args[k]]; };
  switch (node.op) {
    case NodeOp::kConstant:
      return node.value;
    case NodeOp::kRate:
      return rate_values[node.rate];
    case NodeOp::kNeg:
      return -arg(0);
    case NodeOp::kAdd:
      return arg(0) + arg(1);
    case NodeOp::kSub:
      return arg(0) - arg(1);
    case NodeOp::kMul:
      return arg(0) * arg(1);
    case NodeOp::kDiv:
      return arg(0) / arg(1);
    case NodeOp::kCall:
      break;
  }
  switch (function_of(node)) {
    case Function::kMin:
      return arg(chosen_argument(node, v, false));
    case Function::kMax:
      return arg(chosen_argument(node, v, true));
    case Function::kAbs:
      return std::fabs(arg(0));
    case Function::kSqrt:
      return std::sqrt(arg(0));
    case Function::kLog:
      return std::log(arg(0));
    case Function::kExp:
      return std::exp(arg(0));
    case Function::kPow:
      return std::pow(arg(0), arg(1));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Adds the contributions of node `i` (adjoint g != 0) to its arguments' adjoints.
void backward(const ExprNode& node, double value, double g, const std::vector<double>& v,
              std::vector<double>& adjoint, std::span<double> grad) {
  const auto arg = [&](std::size_t k) { return v[node.args[k]]; };
  const auto add = [&](std::size_t k, double d) { adjoint[node.args[k]] += d; };
  switch (node.op) {
    case NodeOp::kConstant:
      return;
    case NodeOp::kRate:
      grad[node.rate] += g;
      return;
    case NodeOp::kNeg:
      add(0, -g);
      return;
    case NodeOp::kAdd:
      add(0, g);
      add(1, g);
      return;
    case NodeOp::kSub:
      add(0, g);
      add(1, -g);
      return;
    case NodeOp::kMul:
      add(0, g * arg(1));
      add(1, g * arg(0));
      return;
    case NodeOp::kDiv:
      add(0, g / arg(1));
      add(1, -g * arg(0) / (arg(1) * arg(1)));
      return;
    case NodeOp::kCall:
      break;
  }
  switch (function_of(node)) {
    case Function::kMin:
      add(chosen_argument(node, v, false), g);
      return;
    case Function::kMax:
      add(chosen_argument(node, v, true), g);
      return;
    case Function::kAbs: {
      const double x = arg(0);
      if (x > 0) add(0, g);
      if (x < 0) add(0, -g);
      if (std::isnan(x)) add(0, x);  // propagate NaN; 0 at x = 0 (a subgradient)
      return;
    }
    case Function::kSqrt:
      add(0, g * 0.5 / value);
      return;  // +inf at 0
    case Function::kLog:
      add(0, g / arg(0));
      return;  // +inf at 0
    case Function::kExp:
      add(0, g * value);
      return;
    case Function::kPow: {
      const double a = arg(0);
      const double b = arg(1);
      // d/da = b a^(b-1), exactly 0 when b = 0 (a^0 = 1 is constant, even at a = 0);
      // d/db = a^b log a, exactly 0 at a = 0 < b (0^b = 0 is constant there).
      add(0, b == 0 ? 0.0 : g * b * std::pow(a, b - 1));
      add(1, a == 0 && b > 0 ? 0.0 : g * value * std::log(a));
      return;
    }
  }
}

// ---- interval arithmetic (Expression::evaluate_range) ----

using detail::kInf;

bool has_nan(const Interval& x) noexcept {
  return std::isnan(x.low) || std::isnan(x.high);
}

// A product of two ends with 0 * inf = 0 (an end at infinity times an end at zero bounds nothing
// beyond the zero).
double end_product(double a, double b) noexcept {
  return (a == 0 || b == 0) ? 0.0 : a * b;
}

Interval multiply(const Interval& a, const Interval& b) noexcept {
  const double p[4] = {end_product(a.low, b.low), end_product(a.low, b.high),
                       end_product(a.high, b.low), end_product(a.high, b.high)};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

Interval divide(const Interval& a, const Interval& b) noexcept {
  if (b.low <= 0 && b.high >= 0) return {-kInf, kInf};  // the divisor may be 0
  return multiply(a, Interval{1 / b.high, 1 / b.low});
}

Interval forward_range(const ExprNode& node, const std::vector<Interval>& v,
                       std::span<const Interval> rates) {
  const auto arg = [&](std::size_t k) { return v[node.args[k]]; };
  constexpr double kNan = detail::kNan;
  for (std::size_t a : node.args)
    if (has_nan(v[a])) return {kNan, kNan};
  switch (node.op) {
    case NodeOp::kConstant:
      return {node.value, node.value};
    case NodeOp::kRate:
      return rates[node.rate];
    case NodeOp::kNeg:
      return {-arg(0).high, -arg(0).low};
    case NodeOp::kAdd:
      return {arg(0).low + arg(1).low, arg(0).high + arg(1).high};
    case NodeOp::kSub:
      return {arg(0).low - arg(1).high, arg(0).high - arg(1).low};
    case NodeOp::kMul:
      return multiply(arg(0), arg(1));
    case NodeOp::kDiv:
      return divide(arg(0), arg(1));
    case NodeOp::kCall:
      break;
  }
  switch (function_of(node)) {
    case Function::kMin:
    case Function::kMax: {
      const bool is_max = function_of(node) == Function::kMax;
      Interval out = arg(0);
      for (std::size_t k = 1; k < node.args.size(); ++k) {
        const Interval x = arg(k);
        out.low = is_max ? std::max(out.low, x.low) : std::min(out.low, x.low);
        out.high = is_max ? std::max(out.high, x.high) : std::min(out.high, x.high);
      }
      return out;
    }
    case Function::kAbs: {
      const Interval x = arg(0);
      if (x.low >= 0) return x;
      if (x.high <= 0) return {-x.high, -x.low};
      return {0.0, std::max(-x.low, x.high)};
    }
    case Function::kSqrt:
      if (arg(0).high < 0) return {kNan, kNan};
      return {std::sqrt(std::max(arg(0).low, 0.0)), std::sqrt(arg(0).high)};
    case Function::kLog:
      if (arg(0).high < 0) return {kNan, kNan};
      return {std::log(std::max(arg(0).low, 0.0)), std::log(arg(0).high)};
    case Function::kExp:
      return {std::exp(arg(0).low), std::exp(arg(0).high)};
    case Function::kPow: {
      const Interval a = arg(0);
      const Interval b = arg(1);
      // For a >= 0, a^b is monotone in a for fixed b and in b for fixed a: the extremes are at
      // the corners. A base that may be negative bounds nothing.
      if (a.low < 0) return {-kInf, kInf};
      const double c[4] = {std::pow(a.low, b.low), std::pow(a.low, b.high), std::pow(a.high, b.low),
                           std::pow(a.high, b.high)};
      return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
  }
  return {kNan, kNan};
}

}  // namespace

double Expression::evaluate(std::size_t root, std::span<const double> rate_values,
                            std::span<double> grad) const {
  RATEOPT_CHECK(root < nodes_.size(), "root is {}, expected a node index in [0, {}) of '{}'", root,
                nodes_.size(), text_);
  RATEOPT_CHECK(rate_values.size() == rates_.size(),
                "rate_values has {} entries, expected {} (one per rate of '{}')",
                rate_values.size(), rates_.size(), text_);
  RATEOPT_CHECK(grad.empty() || grad.size() == rates_.size(),
                "grad has {} entries, expected {} (one per rate of '{}') or none", grad.size(),
                rates_.size(), text_);

  // Nodes are in topological order, so the subgraph of `root` lies in [0, root]. Only the nodes
  // it reaches are evaluated (the other side of a constraint may be undefined at this point), in
  // O(reached) time: one piece of a max over many terms costs its own size, not the whole
  // expression's (per-thread scratch indexed by node; only reached entries are written or read).
  thread_local std::vector<char> mark;
  thread_local std::vector<double> v;
  thread_local std::vector<double> adjoint;
  if (mark.size() < nodes_.size()) {
    mark.resize(nodes_.size(), 0);
    v.resize(nodes_.size());
    adjoint.resize(nodes_.size());
  }
  std::vector<std::size_t> reached{root};
  mark[root] = 1;
  for (std::size_t k = 0; k < reached.size(); ++k)
    for (const std::size_t a : nodes_[reached[k]].args)
      if (mark[a] == 0) {
        mark[a] = 1;
        reached.push_back(a);
      }
  for (const std::size_t i : reached) mark[i] = 0;
  std::sort(reached.begin(), reached.end());
  for (const std::size_t i : reached) v[i] = forward(nodes_[i], v, rate_values);
  if (grad.empty()) return v[root];

  // Reverse sweep. A zero adjoint contributes nothing, so 0 * sqrt(x) has derivative 0 at x = 0
  // rather than 0 * inf = NaN.
  std::fill(grad.begin(), grad.end(), 0.0);
  for (const std::size_t i : reached) adjoint[i] = 0;
  adjoint[root] = 1;
  for (std::size_t k = reached.size(); k-- > 0;) {
    const std::size_t i = reached[k];
    if (adjoint[i] == 0) continue;
    backward(nodes_[i], v[i], adjoint[i], v, adjoint, grad);
  }
  return v[root];
}

Interval Expression::evaluate_range(std::size_t root, std::span<const Interval> rate_ranges) const {
  RATEOPT_CHECK(root < nodes_.size(), "root is {}, expected a node index in [0, {}) of '{}'", root,
                nodes_.size(), text_);
  RATEOPT_CHECK(rate_ranges.size() == rates_.size(),
                "rate_ranges has {} entries, expected {} (one per rate of '{}')",
                rate_ranges.size(), rates_.size(), text_);
  for (std::size_t j = 0; j < rate_ranges.size(); ++j)
    RATEOPT_CHECK(!(rate_ranges[j].low > rate_ranges[j].high),
                  "rate_ranges[{}] is [{}, {}], expected low <= high", j, rate_ranges[j].low,
                  rate_ranges[j].high);
  std::vector<Interval> v(root + 1);
  for (std::size_t i = 0; i <= root; ++i) v[i] = forward_range(nodes_[i], v, rate_ranges);
  return v[root];
}

Interval Expression::value_range(std::span<const Interval> rate_ranges) const {
  const Interval lhs = evaluate_range(lhs_, rate_ranges);
  if (relation_ == Relation::kNone) return lhs;
  const Interval rhs = evaluate_range(rhs_, rate_ranges);
  const Interval diff = relation_ == Relation::kGreaterEqual
                            ? Interval{rhs.low - lhs.high, rhs.high - lhs.low}
                            : Interval{lhs.low - rhs.high, lhs.high - rhs.low};
  if (relation_ != Relation::kEqual || has_nan(diff) || diff.low >= 0) return diff;
  if (diff.high <= 0) return {-diff.high, -diff.low};
  return {0.0, std::max(-diff.low, diff.high)};
}

namespace {

void upper_pieces(const std::vector<ExprNode>& nodes, std::size_t root, double sign,
                  std::vector<std::pair<std::size_t, double>>& out) {
  const ExprNode& n = nodes[root];
  if (n.op == NodeOp::kCall && n.function == "max") {
    for (std::size_t a : n.args) upper_pieces(nodes, a, sign, out);
  } else if (n.op == NodeOp::kCall && n.function == "abs" && n.args.size() == 1) {
    upper_pieces(nodes, n.args[0], sign, out);
    upper_pieces(nodes, n.args[0], -sign, out);
  } else {
    out.emplace_back(root, sign);
  }
}

void lower_pieces(const std::vector<ExprNode>& nodes, std::size_t root,
                  std::vector<std::size_t>& out) {
  const ExprNode& n = nodes[root];
  if (n.op == NodeOp::kCall && n.function == "min") {
    for (std::size_t a : n.args) lower_pieces(nodes, a, out);
  } else {
    out.push_back(root);
  }
}

}  // namespace

std::vector<Expression::Piece> Expression::pieces() const {
  std::vector<Piece> out;
  const auto split = [&](std::size_t below, std::size_t above) {
    std::vector<std::pair<std::size_t, double>> ups;
    std::vector<std::size_t> lows;
    upper_pieces(nodes_, below, 1, ups);
    lower_pieces(nodes_, above, lows);
    for (const auto& [node, sign] : ups)
      for (std::size_t low : lows) out.push_back({node, sign, low});
  };
  switch (relation_) {
    case Relation::kNone:
      break;
    case Relation::kLessEqual:
      split(lhs_, rhs_);
      break;
    case Relation::kGreaterEqual:
      split(rhs_, lhs_);
      break;
    case Relation::kEqual:
      out.push_back({lhs_, 1, rhs_});
      out.push_back({rhs_, 1, lhs_});
      break;
  }
  return out;
}

std::optional<Expression::Affine> Expression::affine(std::size_t root) const {
  RATEOPT_CHECK(root < nodes_.size(), "root is {}, expected a node index in [0, {}) of '{}'", root,
                nodes_.size(), text_);
  std::vector<std::optional<Affine>> v(root + 1);
  const auto constant = [](const std::optional<Affine>& a) {
    return std::all_of(a->coefs.begin(), a->coefs.end(), [](double c) { return c == 0; });
  };
  const auto combine = [](Affine x, const Affine& y, double s) {
    x.constant += s * y.constant;
    for (std::size_t j = 0; j < x.coefs.size(); ++j) x.coefs[j] += s * y.coefs[j];
    return x;
  };
  const auto scaled = [](Affine x, double s) {
    x.constant *= s;
    for (double& c : x.coefs) c *= s;
    return x;
  };
  for (std::size_t i = 0; i <= root; ++i) {
    const ExprNode& n = nodes_[i];
    const auto arg = [&](std::size_t k) -> const std::optional<Affine>& { return v[n.args[k]]; };
    const bool known = std::all_of(n.args.begin(), n.args.end(),
                                   [&](std::size_t a) { return a < i && v[a].has_value(); });
    if (!known) continue;
    switch (n.op) {
      case NodeOp::kConstant:
        v[i] = Affine{n.value, std::vector<double>(rates_.size(), 0.0)};
        break;
      case NodeOp::kRate:
        v[i] = Affine{0.0, std::vector<double>(rates_.size(), 0.0)};
        v[i]->coefs[n.rate] = 1;
        break;
      case NodeOp::kNeg:
        v[i] = scaled(*arg(0), -1);
        break;
      case NodeOp::kAdd:
        v[i] = combine(*arg(0), *arg(1), 1);
        break;
      case NodeOp::kSub:
        v[i] = combine(*arg(0), *arg(1), -1);
        break;
      case NodeOp::kMul:
        if (constant(arg(0))) v[i] = scaled(*arg(1), arg(0)->constant);
        if (constant(arg(1))) v[i] = scaled(*arg(0), arg(1)->constant);
        break;
      case NodeOp::kDiv:
        if (constant(arg(1)) && arg(1)->constant != 0) v[i] = scaled(*arg(0), 1 / arg(1)->constant);
        break;
      case NodeOp::kCall:
        break;
    }
  }
  return v[root];
}

std::string_view to_string(Relation relation) noexcept {
  return detail::name_of(detail::kRelationNames, relation);
}

double Expression::value(std::span<const double> rate_values) const {
  const double lhs = evaluate(lhs_, rate_values);
  switch (relation_) {
    case Relation::kNone:
      return lhs;
    case Relation::kLessEqual:
      return lhs - evaluate(rhs_, rate_values);
    case Relation::kGreaterEqual:
      return evaluate(rhs_, rate_values) - lhs;
    case Relation::kEqual:
      return std::fabs(lhs - evaluate(rhs_, rate_values));
  }
  return lhs;
}

}  // namespace rateopt
