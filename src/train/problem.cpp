// RateProblem: parsing, binding to datasets, atoms and the analysis of each function.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/enum_names.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"
#include "train/train_impl.hpp"

namespace rateopt {

namespace {
constexpr detail::EnumNames<FunctionKind, 4> kFunctionKindNames{
    {{{FunctionKind::kConstant, "constant"},
      {FunctionKind::kLinear, "linear"},
      {FunctionKind::kRatio, "ratio"},
      {FunctionKind::kGeneral, "general"}}},
    "?"};
}  // namespace

std::string_view to_string(FunctionKind kind) noexcept {
  return detail::name_of(kFunctionKindNames, kind);
}

RowSet::RowSet(std::vector<std::uint32_t> rows, std::size_t num_rows, bool allow_bitmap)
    : size_(rows.size()) {
  for (std::size_t i = 0; i < rows.size(); ++i)
    RATEOPT_CHECK(rows[i] < num_rows && (i == 0 || rows[i - 1] < rows[i]),
                  "RowSet: row {} at position {} is not increasing or not below {} rows", rows[i],
                  i, num_rows);
  const std::size_t words = (num_rows + 63) / 64;
  if (!allow_bitmap || words * sizeof(std::uint64_t) >= rows.size() * sizeof(std::uint32_t)) {
    list_ = std::move(rows);
    list_.shrink_to_fit();
    return;
  }
  bits_.assign(words, 0);
  for (const std::uint32_t r : rows) bits_[r / 64] |= std::uint64_t{1} << (r % 64);
}

std::size_t RowSet::first_at_least(std::size_t row) const noexcept {
  if (bits_.empty())
    return static_cast<std::size_t>(
        std::lower_bound(list_.begin(), list_.end(), row,
                         [](std::uint32_t a, std::size_t b) { return a < b; }) -
        list_.begin());
  std::size_t p = 0;
  const std::size_t whole = std::min(row / 64, bits_.size());
  for (std::size_t w = 0; w < whole; ++w) p += static_cast<std::size_t>(std::popcount(bits_[w]));
  if (whole < bits_.size() && row % 64 != 0)
    p += static_cast<std::size_t>(
        std::popcount(bits_[whole] & ((std::uint64_t{1} << (row % 64)) - 1)));
  return p;
}

std::vector<std::uint32_t> RowSet::to_vector() const {
  std::vector<std::uint32_t> out;
  out.reserve(size_);
  for_each([&](std::size_t /*position*/, std::uint32_t row) { out.push_back(row); });
  return out;
}

double AffineForm::evaluate(std::span<const double> atoms) const {
  double v = constant;
  for (const AtomTerm& t : terms) v += t.coef * atoms[t.atom];
  return v;
}

double ProblemValues::max_violation() const noexcept {
  double v = 0;
  for (double g : constraints) v = std::max(v, g);
  return v;
}

namespace {

constexpr double kZero = 1e-13;

// Adds coef * form into out.
void add_scaled(AffineForm& out, const AffineForm& form, double coef) {
  out.constant += coef * form.constant;
  for (const AtomTerm& t : form.terms) out.terms.push_back({t.atom, coef * t.coef});
}

// Merges duplicate atoms and drops zero coefficients.
AffineForm normalized(AffineForm f) {
  std::map<std::size_t, double> acc;
  for (const AtomTerm& t : f.terms) acc[t.atom] += t.coef;
  f.terms.clear();
  for (const auto& [a, c] : acc)
    if (std::fabs(c) > kZero) f.terms.push_back({a, c});
  return f;
}

std::string data_label(const RateProblem::Impl& p, std::size_t d) {
  return p.data[d].name.empty() ? fmt::format("dataset {}", d)
                                : fmt::format("dataset '{}'", p.data[d].name);
}

std::size_t find_dataset(const RateProblem::Impl& p, const RateRef& ref) {
  if (ref.dataset.empty()) return 0;
  for (std::size_t d = 0; d < p.data.size(); ++d)
    if (p.data[d].name == ref.dataset) return d;
  std::string names;
  for (const TrainingData& d : p.data) names += (names.empty() ? "'" : ", '") + d.name + "'";
  throw NotFound(fmt::format("unknown dataset '{}' in '{}' (datasets: {})", ref.dataset,
                             ref.to_string(), names));
}

// 0 / 1 baseline per row (-1 when missing); throws when values are not 0/1 or label names.
std::vector<int> baseline_values(const Dataset& ds, const std::string& label) {
  const Column& col = ds.column("baseline");
  std::vector<int> level(col.levels.size(), -2);
  for (std::size_t k = 0; k < col.levels.size(); ++k) {
    const std::string& v = col.levels[k];
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (end != v.c_str() && *end == '\0' && (x == 0 || x == 1)) level[k] = x == 1 ? 1 : 0;
    const auto& names = ds.labels().names;
    for (std::size_t c = 0; c < names.size() && c < 2; ++c)
      if (names[c] == v) level[k] = static_cast<int>(c);
  }
  std::vector<int> out(ds.num_rows(), -1);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int32_t code = col.codes[i];
    if (code < 0) continue;
    const int b = level[static_cast<std::size_t>(code)];
    RATEOPT_CHECK(b >= 0,
                  "training needs a 0/1 baseline column: {} has baseline value '{}' at row {}",
                  label, col.levels[static_cast<std::size_t>(code)], i);
    out[i] = b;
  }
  return out;
}

class Builder {
 public:
  explicit Builder(RateProblem::Impl& p) : p_(p) {}

  std::size_t leaf_of(const RateRef& ref) {
    for (std::size_t k = 0; k < p_.leaves.size(); ++k)
      if (p_.leaves[k].ref == ref) return k;
    p_.leaves.push_back(make_leaf(ref));
    return p_.leaves.size() - 1;
  }

 private:
  std::size_t atom_of(std::size_t d, const std::string& slice_key, int y, int b,
                      std::vector<std::uint32_t> rows, std::vector<double> coef, double unit_coef,
                      const std::string& description) {
    const std::string key = fmt::format("{}|{}|{}|{}", d, slice_key, y, b);
    if (auto it = atom_index_.find(key); it != atom_index_.end()) return it->second;
    Atom a;
    a.dataset = d;
    // Weighted atoms keep a list (their coefficients take 8 bytes a member anyway).
    const bool unit = coef.empty();
    a.rows = RowSet(std::move(rows), p_.data[d].data->num_rows(), unit);
    a.coef = std::move(coef);
    a.unit_coef = unit_coef;
    // sum of coef over every part and rank (rows of later parts have larger indices).
    a.capacity = sum_over_parts(p_.data[d].data->row_parts(), p_.data[d].data->num_rows(), 1,
                                [&](std::size_t begin, std::size_t end, std::span<double> out) {
                                  a.rows.for_each_in(begin, end, [&](std::size_t r, std::uint32_t) {
                                    out[0] += a.coef_at(r);
                                  });
                                })[0];
    a.description = description;
    a.label = y;
    const std::size_t index = p_.atoms.size();
    if (p_.data[d].data->labels().kind == LabelKind::kBinary) {
      // Link the atom of the same cell with the other label (plug-in oracles swap labels).
      const std::string other = fmt::format("{}|{}|{}|{}", d, slice_key, 1 - y, b);
      if (auto it = atom_index_.find(other); it != atom_index_.end()) {
        a.sibling = it->second;
        p_.atoms[it->second].sibling = index;
      }
    }
    p_.atoms.push_back(std::move(a));
    atom_index_[key] = index;
    return index;
  }

  Leaf make_leaf(const RateRef& ref) {
    Leaf leaf;
    leaf.ref = ref;
    leaf.dataset = find_dataset(p_, ref);
    const Dataset& ds = *p_.data[leaf.dataset].data;
    const std::string label = data_label(p_, leaf.dataset);
    const MetricInfo* info = find_metric(ref.metric);
    if (info == nullptr)
      throw InvalidArgument(fmt::format(
          "'{}' cannot be trained: training supports the confusion metrics of the catalogue "
          "(ppr, tpr, fpr, error, precision, f1, kld, gmean, churn, ...), not ranking or "
          "multilabel scores",
          ref.to_string()));
    leaf.spec = std::isnan(ref.param) ? ref.metric : fmt::format("{}:{}", ref.metric, ref.param);
    RATEOPT_CHECK(!info->needs_labels || ds.labels().kind == LabelKind::kBinary,
                  "'{}' needs labels, but {} is unlabelled", ref.to_string(), label);
    const std::vector<std::uint8_t> mask = slice_mask(ds, ref.slice);  // NotFound on bad names
    leaf.has_baseline = info->needs_baseline;
    std::vector<int> base;
    if (leaf.has_baseline) {
      RATEOPT_CHECK(ds.find_column("baseline") != nullptr,
                    "'{}' compares with a baseline model, but {} has no column named "
                    "\"baseline\"",
                    ref.to_string(), label);
      base = baseline_values(ds, label);
    }
    const bool labelled = ds.labels().kind == LabelKind::kBinary;
    // cell index = 2 * label + baseline (or label alone).
    RATEOPT_CHECK(ds.num_rows() < (std::size_t{1} << 32),
                  "{} has {} rows; rate-constrained training takes fewer than 2^32 per dataset "
                  "(per rank over MPI)",
                  label, ds.num_rows());
    std::vector<std::uint32_t> rows[4];
    std::vector<double> wts[4];
    const auto cell_of = [&](std::size_t i) {
      const int y = labelled ? ds.labels().values[i] : 0;
      int b = 0;
      if (leaf.has_baseline) {
        RATEOPT_CHECK(base[i] >= 0, "'{}': row {} of {} has a missing baseline value",
                      ref.to_string(), i, label);
        b = base[i];
      }
      return leaf.has_baseline ? 2 * y + b : y;
    };
    // Each cell's rows, and their weights when the data has any (else every row weighs 1 and
    // each atom keeps one coefficient); reserved exactly, since they live through training.
    const bool weighted = !ds.weights().empty();
    std::size_t count[4] = {0, 0, 0, 0};
    for (std::size_t i = 0; i < mask.size(); ++i)
      if (mask[i] != 0) ++count[static_cast<std::size_t>(cell_of(i))];
    for (std::size_t c = 0; c < 4; ++c) {
      rows[c].reserve(count[c]);
      if (weighted) wts[c].reserve(count[c]);
    }
    for (std::size_t i = 0; i < mask.size(); ++i) {
      if (mask[i] == 0) continue;
      const auto c = static_cast<std::size_t>(cell_of(i));
      rows[c].push_back(static_cast<std::uint32_t>(i));
      if (weighted) wts[c].push_back(ds.weight(i));
    }
    // The weights per cell and of the slice over every part and rank (sum_over_parts): [cell
    // weight x4, total, positives, negatives, row count per cell x4].
    const std::vector<double> sums =
        sum_over_parts(p_.data[leaf.dataset].data->row_parts(), ds.num_rows(), 11,
                       [&](std::size_t begin, std::size_t end, std::span<double> out) {
                         for (std::size_t i = begin; i < end; ++i) {
                           if (mask[i] == 0) continue;
                           const auto c = static_cast<std::size_t>(cell_of(i));
                           const double w = ds.weight(i);
                           out[c] += w;
                           out[4] += w;
                           out[(leaf.has_baseline ? c / 2 : c) == 1 ? 5 : 6] += w;
                           out[7 + c] += 1;
                         }
                       });
    double cell_weight[4] = {sums[0], sums[1], sums[2], sums[3]};
    leaf.total = sums[4];
    leaf.positives = sums[5];
    leaf.negatives = sums[6];
    RATEOPT_CHECK(leaf.total > 0, "the slice of '{}' is empty in {} (no rows with positive weight)",
                  ref.to_string(), label);
    const std::string slice_key = ref.slice.to_string();
    for (int c = 0; c < (leaf.has_baseline ? 4 : 2); ++c) {
      if (sums[7 + static_cast<std::size_t>(c)] == 0) continue;  // no row on any rank
      for (double& w : wts[c]) w /= leaf.total;
      const double unit_coef = 1.0 / leaf.total;  // a weight of 1 over the slice's
      const int y = leaf.has_baseline ? c / 2 : c;
      const int b = leaf.has_baseline ? c % 2 : -1;
      std::string desc = fmt::format("{}[{}] {}", p_.data[leaf.dataset].name, slice_key,
                                     labelled ? fmt::format("label={}", y) : "unlabelled");
      if (b >= 0) desc += fmt::format(" baseline={}", b);
      const std::size_t atom = atom_of(leaf.dataset, slice_key, y, b, std::move(rows[c]),
                                       std::move(wts[c]), weighted ? 0.0 : unit_coef, desc);
      leaf.cells.push_back({atom, y, b, cell_weight[c]});
    }
    analyse(leaf);
    return leaf;
  }

  // Affine forms (normalised by the slice total) of the predicted-positive mass per label and
  // of wins / losses.
  [[nodiscard]] static AffineForm mass(const Leaf& leaf, int y) {
    AffineForm f;
    for (const Leaf::Cell& c : leaf.cells)
      if (c.label == y) f.terms.push_back({c.atom, 1.0});
    return f;
  }
  [[nodiscard]] static AffineForm wins_losses(const Leaf& leaf, bool wins) {
    AffineForm f;
    for (const Leaf::Cell& c : leaf.cells) {
      const double share = c.weight / leaf.total;
      // wins: new right, baseline wrong; losses: new wrong, baseline right.
      const bool baseline_right = c.baseline == c.label;
      if (wins == baseline_right) continue;
      // New predicts positive: right iff label 1.
      if ((c.label == 1) == wins) {
        f.terms.push_back({c.atom, 1.0});
      } else {
        f.constant += share;
        f.terms.push_back({c.atom, -1.0});
      }
    }
    return f;
  }

  // The leaf's form from the metric's catalogue entry (MetricInfo::shape, ratio).
  void analyse(Leaf& leaf) {
    const MetricInfo& info = *find_metric(leaf.ref.metric);  // checked when the leaf was bound
    const double pos = leaf.positives / leaf.total;
    const double neg = leaf.negatives / leaf.total;
    if (info.shape == MetricShape::kLinear) {
      leaf.kind = Leaf::Kind::kLinear;
      std::vector<double> atoms(p_.atoms.size(), 0.0);
      const double base = leaf.value_from_atoms(atoms);
      leaf.linear.constant = base;
      for (const Leaf::Cell& c : leaf.cells) {
        const double cap = p_.atoms[c.atom].capacity;
        atoms[c.atom] = cap;
        const double slope = (leaf.value_from_atoms(atoms) - base) / cap;
        atoms[c.atom] = 0;
        if (std::fabs(slope) > kZero) leaf.linear.terms.push_back({c.atom, slope});
      }
      leaf.args = {leaf.linear};
      return;
    }
    if (info.shape == MetricShape::kRatio) {
      leaf.kind = Leaf::Kind::kRatio;
      const double param = std::isnan(leaf.ref.param) ? info.default_param : leaf.ref.param;
      if (info.has_param)
        RATEOPT_CHECK(param > 0, "'{}': the parameter must be > 0", leaf.ref.to_string());
      CountForm num_counts, den_counts;
      info.ratio(param, num_counts, den_counts);
      const AffineForm tp = mass(leaf, 1);
      const AffineForm fp = mass(leaf, 0);
      // The ratio's affine forms in the atoms: tp and fp are masses of cells, wins and losses
      // affine in them; the label rates are constants of the slice.
      const auto form = [&](const CountForm& c) {
        AffineForm f;
        f.constant = c.constant + c.positives * pos + c.negatives * neg;
        if (c.tp != 0) add_scaled(f, tp, c.tp);
        if (c.fp != 0) add_scaled(f, fp, c.fp);
        if (c.wins != 0) add_scaled(f, wins_losses(leaf, true), c.wins);
        if (c.losses != 0) add_scaled(f, wins_losses(leaf, false), c.losses);
        return normalized(f);
      };
      const AffineForm num = form(num_counts);
      const AffineForm den = form(den_counts);
      RATEOPT_CHECK(!(den.terms.empty() && std::fabs(den.constant) <= kZero),
                    "the denominator of '{}' is identically zero on its slice (no rows it could "
                    "count)",
                    leaf.ref.to_string());
      leaf.args = {num, den};
      return;
    }
    const AffineForm tp = mass(leaf, 1);
    const AffineForm fp = mass(leaf, 0);
    AffineForm tpr, tnr, fpr, fnr, ppr, npr;
    if (pos > 0) {
      add_scaled(tpr, tp, 1 / pos);
      add_scaled(fnr, tp, -1 / pos);
      fnr.constant += 1;
    } else {
      tpr.constant = 1;
    }
    if (neg > 0) {
      add_scaled(fpr, fp, 1 / neg);
      add_scaled(tnr, fp, -1 / neg);
      tnr.constant += 1;
    } else {
      tnr.constant = 1;
    }
    add_scaled(ppr, tp, 1);
    add_scaled(ppr, fp, 1);
    add_scaled(npr, ppr, -1);
    npr.constant += 1;
    leaf.kind = Leaf::Kind::kNamed;
    switch (info.shape) {
      case MetricShape::kKld:
        leaf.named = SlackLoss::kKld;
        leaf.label_rate = pos;
        leaf.args = {normalized(ppr), normalized(npr)};
        break;
      case MetricShape::kGmean:
        leaf.named = SlackLoss::kGmean;
        leaf.args = {normalized(tpr), normalized(tnr)};
        break;
      case MetricShape::kHmean:
        leaf.named = SlackLoss::kHmean;
        leaf.args = {normalized(tpr), normalized(tnr)};
        break;
      case MetricShape::kQmean:
        leaf.named = SlackLoss::kQmean;
        leaf.args = {normalized(fpr), normalized(fnr)};
        break;
      default:
        leaf.kind = Leaf::Kind::kGeneric;
        for (const Leaf::Cell& c : leaf.cells) leaf.args.push_back(AffineForm{0, {{c.atom, 1.0}}});
    }
  }

  RateProblem::Impl& p_;
  std::map<std::string, std::size_t> atom_index_;
};

// 0 constant, 1 affine in the rates, 2 other; per node.
std::vector<int> node_levels(const Expression& e) {
  const auto& nodes = e.nodes();
  std::vector<int> level(nodes.size(), 2);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const ExprNode& n = nodes[k];
    const auto a = [&](std::size_t j) { return level[n.args[j]]; };
    switch (n.op) {
      case NodeOp::kConstant:
        level[k] = 0;
        break;
      case NodeOp::kRate:
        level[k] = 1;
        break;
      case NodeOp::kNeg:
        level[k] = a(0);
        break;
      case NodeOp::kAdd:
      case NodeOp::kSub:
        level[k] = std::max(a(0), a(1));
        break;
      case NodeOp::kMul:
        level[k] = a(0) == 0 ? a(1) : (a(1) == 0 ? a(0) : 2);
        break;
      case NodeOp::kDiv:
        level[k] = a(1) == 0 ? a(0) : 2;
        break;
      case NodeOp::kCall: {
        int m = 0;
        for (std::size_t j = 0; j < n.args.size(); ++j) m = std::max(m, a(j));
        level[k] = m == 0 ? 0 : 2;
        break;
      }
    }
  }
  return level;
}

void collect_leaves(const Expression& e, std::size_t node, const std::vector<std::size_t>& map,
                    std::set<std::size_t>& out) {
  const ExprNode& n = e.nodes()[node];
  if (n.op == NodeOp::kRate) out.insert(map[n.rate]);
  for (std::size_t a : n.args) collect_leaves(e, a, map, out);
}

// `levels`: node_levels of each expression met so far (the pieces of one constraint share its
// expression: computed once, not once per piece).
void finish_function(const RateProblem::Impl& p, Function& f, const std::string& text,
                     std::map<std::size_t, std::vector<int>>& levels) {
  f.info.text = text;
  std::set<std::size_t> leaves;
  bool affine = true;
  for (const Function::Term& t : f.terms) {
    const Expression& e = p.exprs[t.expr];
    collect_leaves(e, t.node, p.expr_leaves[t.expr], leaves);
    auto it = levels.find(t.expr);
    if (it == levels.end()) it = levels.emplace(t.expr, node_levels(e)).first;
    if (it->second[t.node] > 1) affine = false;
  }
  f.leaves.assign(leaves.begin(), leaves.end());
  f.affine_in_leaves = affine;
  if (affine) {
    // Coefficients: the (constant) gradient; constant: the value at zero leaves.
    std::vector<double> zeros(p.leaves.size(), 0.0);
    std::vector<double> grad(p.leaves.size(), 0.0);
    f.leaf_constant = p.value(f, zeros, grad);
    for (std::size_t l : f.leaves)
      if (grad[l] != 0) f.leaf_coef.emplace_back(l, grad[l]);
  }
  FunctionInfo& info = f.info;
  if (!affine) {
    info.kind = FunctionKind::kGeneral;
    info.shape = "unknown";
    return;
  }
  bool any_ratio = false, any_general = false, convex = true, concave = true;
  AffineForm lin;
  lin.constant = f.leaf_constant;
  for (const auto& [l, c] : f.leaf_coef) {
    const Leaf& leaf = p.leaves[l];
    switch (leaf.kind) {
      case Leaf::Kind::kLinear:
        add_scaled(lin, leaf.linear, c);
        break;
      case Leaf::Kind::kRatio:
        any_ratio = true;
        convex = concave = false;
        break;
      case Leaf::Kind::kNamed: {
        any_general = true;
        // kld is convex in the rates; gmean, hmean, qmean are concave utilities.
        const bool leaf_convex = leaf.named == SlackLoss::kKld;
        if ((c > 0) != leaf_convex) convex = false;
        if ((c > 0) == leaf_convex) concave = false;
        break;
      }
      case Leaf::Kind::kGeneric:
        any_general = true;
        convex = concave = false;
        break;
    }
  }
  if (any_general) {
    info.kind = FunctionKind::kGeneral;
    info.shape = convex ? "convex" : (concave ? "concave" : "unknown");
  } else if (any_ratio) {
    info.kind = FunctionKind::kRatio;
    info.shape = "sum of ratios";
    if (f.leaf_coef.size() == 1 && p.leaves[f.leaf_coef[0].first].kind == Leaf::Kind::kRatio &&
        p.leaves[f.leaf_coef[0].first].args.size() == 2) {
      const Leaf& leaf = p.leaves[f.leaf_coef[0].first];
      info.ratio =
          FunctionInfo::Ratio{f.leaf_constant, f.leaf_coef[0].second, leaf.args[0], leaf.args[1]};
    }
  } else {
    lin = normalized(lin);
    info.kind = lin.terms.empty() ? FunctionKind::kConstant : FunctionKind::kLinear;
    info.shape = lin.terms.empty() ? "constant" : "linear";
    info.linear = lin;
  }
}

// The spread form of parity (ParityForm::kSpread), `(max(r_1, ..., r_k) - min(r_1, ..., r_k)) <=
// b` with every r_v a rate linear in atoms and b a constant, as the piece of expression e it is;
// nothing for any other piece.
std::optional<FunctionInfo::Spread> spread_of(const RateProblem::Impl& p, std::size_t e,
                                              const Expression::Piece& pc) {
  const Expression& ex = p.exprs[e];
  const std::vector<ExprNode>& nodes = ex.nodes();
  const ExprNode& top = nodes[pc.plus];
  if (ex.relation() != Relation::kLessEqual || pc.plus_sign != 1 || top.op != NodeOp::kSub ||
      top.args.size() != 2)
    return std::nullopt;
  const ExprNode& hi = nodes[top.args[0]];
  const ExprNode& lo = nodes[top.args[1]];
  if (hi.op != NodeOp::kCall || hi.function != "max" || lo.op != NodeOp::kCall ||
      lo.function != "min" || hi.args.size() != lo.args.size() || hi.args.size() < 2)
    return std::nullopt;
  // The bound: a subtree without rates (Expression::affine would hold a coefficient per rate at
  // every node, k^2 numbers).
  std::vector<std::size_t> todo{pc.minus};
  while (!todo.empty()) {
    const ExprNode& node = nodes[todo.back()];
    todo.pop_back();
    if (node.op == NodeOp::kRate) return std::nullopt;
    todo.insert(todo.end(), node.args.begin(), node.args.end());
  }
  FunctionInfo::Spread out;
  out.bound = ex.evaluate(pc.minus, std::vector<double>(ex.rates().size(), 0.0));
  for (std::size_t v = 0; v < hi.args.size(); ++v) {
    const ExprNode& a = nodes[hi.args[v]];
    const ExprNode& b = nodes[lo.args[v]];
    if (a.op != NodeOp::kRate || b.op != NodeOp::kRate || a.rate != b.rate) return std::nullopt;
    const Leaf& leaf = p.leaves[p.expr_leaves[e][a.rate]];
    if (leaf.kind != Leaf::Kind::kLinear) return std::nullopt;
    out.members.push_back(normalized(leaf.linear));
  }
  return out;
}

// Rejects what no solver can handle (the LPs and games would spin or return garbage): a
// coefficient that is not finite or larger than kMaxCoefficient in magnitude (rates lie in
// [0, 1]; such a weight drowns every other term in double precision), a non-finite constant,
// and a function that takes no finite value at all (a division by an expression that is
// identically zero), found by evaluating it at three spread-out points of the rates.
constexpr double kMaxCoefficient = 1e12;

void check_numbers(const RateProblem::Impl& p, const Function& f, const std::string& what) {
  const auto check_form = [&](const AffineForm& form) {
    RATEOPT_CHECK(std::isfinite(form.constant),
                  "{}: its constant term is {}, expected a finite number (a division by zero "
                  "or an overflow?)",
                  what, form.constant);
    for (const AtomTerm& t : form.terms)
      RATEOPT_CHECK(std::isfinite(t.coef) && std::fabs(t.coef) <= kMaxCoefficient,
                    "{}: the coefficient of {} is {}, expected a finite number of magnitude at "
                    "most {:g} (a division by zero or an overflow? rescale the expression)",
                    what, p.atoms[t.atom].description, t.coef, kMaxCoefficient);
  };
  if (f.affine_in_leaves) {
    for (const auto& [l, c] : f.leaf_coef)
      RATEOPT_CHECK(std::isfinite(c) && std::fabs(c) <= kMaxCoefficient,
                    "{}: the coefficient of rate '{}' is {}, expected a finite number of "
                    "magnitude at most {:g}",
                    what, p.leaves[l].spec, c, kMaxCoefficient);
    RATEOPT_CHECK(std::isfinite(f.leaf_constant),
                  "{}: its constant term is {}, expected a finite number", what, f.leaf_constant);
  }
  if (f.info.linear) check_form(*f.info.linear);
  for (std::size_t l : f.leaves)
    for (const AffineForm& a : p.leaves[l].args) check_form(a);
  std::vector<double> probe(p.leaves.size());
  for (int k = 0; k < 3; ++k) {
    for (std::size_t l = 0; l < probe.size(); ++l)  // distinct values in (0, 1) per leaf
      probe[l] =
          0.05 + 0.9 * std::fmod(0.618033988749895 * static_cast<double>(l + 1) + 0.25 * k, 1.0);
    if (std::isfinite(p.value(f, probe))) return;
  }
  throw InvalidArgument(
      fmt::format("{}: takes no finite value for any rates tried (it divides "
                  "by an expression that is identically zero?)",
                  what));
}

// The source text of a node: from its position to the first ')' or ',' that closes nothing, or a
// relation at depth 0 (so "abs(a - b) <= c" names its argument "a - b").
std::string node_text(const Expression& e, std::size_t node) {
  const std::string& t = e.text();
  // A binary node's position is its operator's: start at the leftmost node of the subtree.
  std::size_t start = t.size();
  std::vector<std::size_t> stack{node};
  while (!stack.empty()) {
    const ExprNode& n = e.nodes()[stack.back()];
    stack.pop_back();
    start = std::min(start, n.position);
    stack.insert(stack.end(), n.args.begin(), n.args.end());
  }
  int depth = 0;
  std::size_t end = start;
  for (; end < t.size(); ++end) {
    const char ch = t[end];
    if (ch == '(' || ch == '[') ++depth;
    if (ch == ')' || ch == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (depth == 0 && (ch == ',' || ch == '<' || ch == '>' || ch == '=')) break;
  }
  std::string out = t.substr(start, end - start);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::vector<double> RateProblem::Impl::leaf_values(std::span<const double> atom_vals) const {
  std::vector<double> v(leaves.size());
  for (std::size_t l = 0; l < leaves.size(); ++l) v[l] = leaves[l].value_from_atoms(atom_vals);
  return v;
}

double RateProblem::Impl::value(const Function& f, std::span<const double> leaf_vals,
                                std::span<double> leaf_grad, double scale) const {
  double total = f.constant;
  std::vector<double> rates, grad;
  for (const Function::Term& t : f.terms) {
    const Expression& e = exprs[t.expr];
    const auto& map = expr_leaves[t.expr];
    rates.resize(map.size());
    for (std::size_t r = 0; r < map.size(); ++r) rates[r] = leaf_vals[map[r]];
    if (leaf_grad.empty()) {
      total += t.coef * e.evaluate(t.node, rates);
    } else {
      grad.assign(map.size(), 0.0);
      total += t.coef * e.evaluate(t.node, rates, grad);
      for (std::size_t r = 0; r < map.size(); ++r) leaf_grad[map[r]] += scale * t.coef * grad[r];
    }
  }
  return total;
}

double Leaf::value_from_atoms(std::span<const double> atoms) const {
  SliceCounts s;
  double tp = 0, fp = 0;
  double changes = 0, wins = 0, losses = 0;
  for (const Cell& c : cells) {
    const double pos = std::clamp(atoms[c.atom] * total, 0.0, c.weight);
    (c.label == 1 ? tp : fp) += pos;
    if (c.baseline >= 0) {
      const double neg = c.weight - pos;
      changes += c.baseline == 1 ? neg : pos;
      const bool base_right = c.baseline == c.label;
      const double new_right = c.label == 1 ? pos : neg;
      const double new_wrong = c.weight - new_right;
      if (!base_right) wins += new_right;
      if (base_right) losses += new_wrong;
    }
  }
  s.confusion.tp = tp;
  s.confusion.fp = fp;
  s.confusion.fn = std::max(0.0, positives - tp);
  s.confusion.tn = std::max(0.0, negatives - fp);
  s.total = total;
  if (has_baseline) {
    s.changes = changes;
    s.wins = wins;
    s.losses = losses;
  }
  return compute_metric(spec, s);
}

double Leaf::value_from_args(std::span<const double> a, std::span<double> grad) const {
  const bool g = !grad.empty();
  switch (kind) {
    case Kind::kLinear:
      if (g) grad[0] = 1;
      return a[0];
    case Kind::kRatio: {
      const double den = a[1];
      if (g) {
        grad[0] = 1 / den;
        grad[1] = -a[0] / (den * den);
      }
      return a[0] / den;
    }
    case Kind::kNamed: {
      const double u1 = a[0], u2 = a[1];
      constexpr double kTiny = 1e-12;
      switch (named) {
        case SlackLoss::kKld: {
          const double p = label_rate;
          const double x1 = std::max(u1, kTiny), x2 = std::max(u2, kTiny);
          if (g) {
            grad[0] = p > 0 ? -p / x1 : 0;
            grad[1] = p < 1 ? -(1 - p) / x2 : 0;
          }
          double v = 0;
          if (p > 0) v += p * std::log(p / x1);
          if (p < 1) v += (1 - p) * std::log((1 - p) / x2);
          return v;
        }
        case SlackLoss::kGmean: {
          const double r = std::sqrt(std::max(u1 * u2, 0.0));
          if (g) {
            const double rr = std::max(r, kTiny);
            grad[0] = u2 / (2 * rr);
            grad[1] = u1 / (2 * rr);
          }
          return r;
        }
        case SlackLoss::kHmean: {
          const double s = u1 + u2;
          if (s <= kTiny) {
            if (g) grad[0] = grad[1] = 0;
            return 0;
          }
          if (g) {
            grad[0] = 2 * u2 * u2 / (s * s);
            grad[1] = 2 * u1 * u1 / (s * s);
          }
          return 2 * u1 * u2 / s;
        }
        case SlackLoss::kQmean: {
          const double r = std::sqrt((u1 * u1 + u2 * u2) / 2);
          if (g) {
            const double rr = std::max(r, kTiny);
            grad[0] = -u1 / (2 * rr);
            grad[1] = -u2 / (2 * rr);
          }
          return 1 - r;
        }
      }
      return 0;
    }
    case Kind::kGeneric: {
      std::vector<double> atoms;
      std::size_t top = 0;
      for (const Cell& c : cells) top = std::max(top, c.atom + 1);
      atoms.assign(top, 0.0);
      for (std::size_t k = 0; k < cells.size(); ++k) atoms[cells[k].atom] = a[k];
      const double v = value_from_atoms(atoms);
      if (g) {
        for (std::size_t k = 0; k < cells.size(); ++k) {
          const double cap = cells[k].weight / total;
          const double h = 1e-6 * std::max(cap, 1e-3);
          const double lo = std::max(0.0, a[k] - h), hi = std::min(cap, a[k] + h);
          atoms[cells[k].atom] = hi;
          const double vh = value_from_atoms(atoms);
          atoms[cells[k].atom] = lo;
          const double vl = value_from_atoms(atoms);
          atoms[cells[k].atom] = a[k];
          grad[k] = hi > lo ? (vh - vl) / (hi - lo) : 0;
        }
      }
      return v;
    }
  }
  return 0;
}

RateProblem RateProblem::build(const ProblemSpec& spec, std::vector<TrainingData> data) {
  RATEOPT_CHECK(!data.empty(), "RateProblem needs at least one dataset");
  auto impl = std::make_shared<Impl>();
  Impl& p = *impl;
  p.spec = spec;
  p.data = std::move(data);
  for (std::size_t d = 0; d < p.data.size(); ++d) {
    RATEOPT_CHECK(p.data[d].data != nullptr, "training data {} ('{}') is null", d, p.data[d].name);
    const LabelKind kind = p.data[d].data->labels().kind;
    RATEOPT_CHECK(kind == LabelKind::kBinary || kind == LabelKind::kNone,
                  "training needs binary or unlabelled data; {} has {} labels", data_label(p, d),
                  to_string(kind));
    for (std::size_t e = 0; e < d; ++e)
      RATEOPT_CHECK(p.data[e].name != p.data[d].name, "two datasets are named '{}'",
                    p.data[d].name);
    p.num_features = std::max(p.num_features, p.data[d].data->num_features());
  }
  Builder builder(p);
  // Group shorthands (parity, max_over, min_over) expand over the training data's columns.
  const ColumnLevels levels = [&](std::string_view dataset,
                                  std::string_view column) -> std::vector<std::string> {
    for (const TrainingData& td : p.data) {
      if (!dataset.empty() && td.name != dataset) continue;
      // Over several ranks: the levels of every rank's rows, in first-appearance order.
      if (is_distributed()) return union_over_ranks(column_levels(*td.data, column));
      return column_levels(*td.data, column);
    }
    throw NotFound(fmt::format("no dataset named '{}'", dataset));
  };
  const auto add_expr = [&](const std::string& text) {
    p.exprs.push_back(Expression::parse(expand_group_shorthands(text, levels, spec.parity)));
    std::vector<std::size_t> map;
    for (const RateRef& r : p.exprs.back().rates()) map.push_back(builder.leaf_of(r));
    p.expr_leaves.push_back(std::move(map));
    return p.exprs.size() - 1;
  };

  // Objective.
  RATEOPT_CHECK(!spec.objective.empty(), "the objective is empty (use e.g. \"error\")");
  const std::size_t oe = add_expr(spec.objective);
  RATEOPT_CHECK(!p.exprs[oe].is_constraint(),
                "the objective '{}' is a constraint; pass it with --constraint", spec.objective);
  p.objective_sign = spec.maximize ? -1 : 1;
  p.objective.terms.push_back({oe, p.exprs[oe].lhs_root(), p.objective_sign});
  std::map<std::size_t, std::vector<int>> node_levels_of;
  finish_function(p, p.objective, (spec.maximize ? "-(" + spec.objective + ")" : spec.objective),
                  node_levels_of);
  check_numbers(p, p.objective, fmt::format("the objective '{}'", spec.objective));

  // Constraints.
  for (std::size_t c = 0; c < spec.constraints.size(); ++c) {
    const std::size_t e = add_expr(spec.constraints[c]);
    const Expression& ex = p.exprs[e];
    RATEOPT_CHECK(ex.is_constraint(),
                  "constraint {} '{}' has no relation; write 'lhs <= rhs', 'lhs >= rhs' or "
                  "'lhs == rhs'",
                  c + 1, spec.constraints[c]);
    const std::size_t lhs = ex.lhs_root();
    const std::vector<Expression::Piece> list = ex.pieces();
    for (const Expression::Piece& pc : list) {
      Function f;
      f.terms.push_back({e, pc.plus, pc.plus_sign});
      f.terms.push_back({e, pc.minus, -1});
      std::string text = spec.constraints[c];
      if (list.size() > 1) {
        const auto part = [&](std::size_t node, double sign) {
          return sign < 0 ? "-(" + node_text(ex, node) + ")" : node_text(ex, node);
        };
        text = fmt::format("{} [{} - {}]", spec.constraints[c], part(pc.plus, pc.plus_sign),
                           part(pc.minus, 1));
        if (ex.relation() == Relation::kEqual)
          text = fmt::format("{} ({})", spec.constraints[c], pc.plus == lhs ? "<=" : ">=");
      }
      finish_function(p, f, text, node_levels_of);
      f.info.spread = spread_of(p, e, pc);
      if (f.info.spread) f.info.shape = "convex";
      check_numbers(p, f, fmt::format("constraint {} '{}'", c + 1, spec.constraints[c]));
      RATEOPT_CHECK(f.info.kind != FunctionKind::kConstant,
                    "constraint {} '{}' is constant: it does not depend on the model's "
                    "predictions (value {} <= 0 is {}); check its slices and metrics",
                    c + 1, spec.constraints[c], f.info.linear ? f.info.linear->constant : 0.0,
                    (f.info.linear && f.info.linear->constant <= 0) ? "always true" : "never true");
      p.constraints.push_back(f);
      p.constraint_infos.push_back(f.info);
      p.constraint_source.push_back(c);
    }
  }
  RateProblem out;
  out.impl_ = std::move(impl);
  return out;
}

const ProblemSpec& RateProblem::spec() const noexcept {
  return impl_->spec;
}
std::span<const TrainingData> RateProblem::data() const noexcept {
  return impl_->data;
}
std::span<const Atom> RateProblem::atoms() const noexcept {
  return impl_->atoms;
}
const FunctionInfo& RateProblem::objective() const noexcept {
  return impl_->objective.info;
}
std::span<const FunctionInfo> RateProblem::constraints() const noexcept {
  return impl_->constraint_infos;
}
std::span<const std::size_t> RateProblem::constraint_source() const noexcept {
  return impl_->constraint_source;
}
std::size_t RateProblem::num_features() const noexcept {
  return impl_->num_features;
}

namespace {

// RateProblem::atom_values for predictions of type T (double, or 0/1 bytes: the same bits).
template <typename T>
std::vector<double> atom_values_of(const RateProblem::Impl& p,
                                   std::span<const std::vector<T>> predictions) {
  RATEOPT_CHECK(predictions.size() == p.data.size(),
                "atom_values needs one prediction vector per dataset: got {}, expected {}",
                predictions.size(), p.data.size());
  for (std::size_t d = 0; d < p.data.size(); ++d)
    RATEOPT_CHECK(predictions[d].size() == p.data[d].data->num_rows(),
                  "predictions for {} have {} entries, expected {}", data_label(p, d),
                  predictions[d].size(), p.data[d].data->num_rows());
  // Per dataset: its atoms summed over its parts and every rank (sum_over_parts).
  std::vector<double> out(p.atoms.size(), 0.0);
  for (std::size_t d = 0; d < p.data.size(); ++d) {
    std::vector<std::size_t> mine;
    for (std::size_t k = 0; k < p.atoms.size(); ++k)
      if (p.atoms[k].dataset == d) mine.push_back(k);
    if (mine.empty()) continue;
    const std::vector<T>& pred = predictions[d];
    const std::vector<double> sums =
        sum_over_parts(p.data[d].data->row_parts(), p.data[d].data->num_rows(), mine.size(),
                       [&](std::size_t begin, std::size_t end, std::span<double> part) {
                         for (std::size_t j = 0; j < mine.size(); ++j) {
                           const Atom& a = p.atoms[mine[j]];
                           double s = 0;
                           a.rows.for_each_in(begin, end, [&](std::size_t r, std::uint32_t row) {
                             s += a.coef_at(r) * static_cast<double>(pred[row]);
                           });
                           part[j] = s;
                         }
                       });
    for (std::size_t j = 0; j < mine.size(); ++j) out[mine[j]] = sums[j];
  }
  return out;
}

}  // namespace

std::vector<double> RateProblem::atom_values(
    std::span<const std::vector<double>> predictions) const {
  return atom_values_of(*impl_, predictions);
}

std::vector<double> RateProblem::atom_values(
    std::span<const std::vector<std::uint8_t>> predictions) const {
  for (const std::vector<std::uint8_t>& pred : predictions)
    for (const std::uint8_t v : pred)
      RATEOPT_CHECK(v <= 1, "atom_values: a hard prediction is {}, expected 0 or 1", v);
  return atom_values_of(*impl_, predictions);
}

ProblemValues RateProblem::evaluate(std::span<const double> atoms) const {
  const Impl& p = *impl_;
  RATEOPT_CHECK(atoms.size() == p.atoms.size(), "evaluate needs {} atoms, got {}", p.atoms.size(),
                atoms.size());
  const std::vector<double> leaves = p.leaf_values(atoms);
  ProblemValues v;
  v.objective = p.objective_sign * p.value(p.objective, leaves);
  for (const Function& f : p.constraints) v.constraints.push_back(p.value(f, leaves));
  return v;
}

std::string RateProblem::describe() const {
  const Impl& p = *impl_;
  std::string out =
      fmt::format("objective ({}): {} [{}, {}]\n", p.spec.maximize ? "max" : "min",
                  p.spec.objective, to_string(p.objective.info.kind), p.objective.info.shape);
  for (std::size_t j = 0; j < p.constraints.size(); ++j)
    out += fmt::format("constraint {}: {} [{}, {}]\n", j + 1, p.constraints[j].info.text,
                       to_string(p.constraints[j].info.kind), p.constraints[j].info.shape);
  out += fmt::format("{} atoms over {} dataset(s), {} rates\n", p.atoms.size(), p.data.size(),
                     p.leaves.size());
  return out;
}

}  // namespace rateopt
