// Intervals for reported values (rateopt/intervals.hpp, expression_intervals): exact
// Clopper-Pearson intervals for single binomial proportions, and a stratified bootstrap over
// sufficient statistics with a simultaneous max-t band for everything else.
//
// The bootstrap. Rows are grouped into strata by the set of named slices they fall in (per
// dataset); a resample draws, in every stratum, as many rows as it holds, with replacement. Every
// confusion rate depends on rows only through sums over its slice, and a slice is a union of
// strata, so a resample is fully described by how many copies of each *distinct* row value
// (label, prediction, baseline, weight) each stratum drew: a multinomial draw over the stratum's
// distinct values, weighted by their counts. Those counts are summed over every rank and sorted,
// so the resamples, drawn from (seed, resample index), are the same for any thread and rank count.
#include <algorithm>
#include <boost/random/binomial_distribution.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "common/distributed.hpp"
#include "common/enum_names.hpp"
#include "common/numeric.hpp"
#include "common/parallel.hpp"
#include "common/random.hpp"
#include "metrics/metrics_impl.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/metrics.hpp"
#include "stats/stats_impl.hpp"

namespace rateopt {

namespace stats_impl {

std::size_t data_index(const RateRef& rate, std::span<const NamedData> data) {
  RATEOPT_CHECK(!data.empty(), "no datasets were given");
  if (rate.dataset.empty()) return 0;
  for (std::size_t k = 0; k < data.size(); ++k)
    if (data[k].name == rate.dataset) return k;
  throw NotFound(fmt::format("unknown dataset '{}' in '{}'", rate.dataset, rate.to_string()));
}

DataTraits data_traits(const NamedData& d) {
  const Predictions& p = *d.predictions;
  const Dataset& ds = *d.data;
  double soft = 0;
  double weighted = 0;
  if (!p.prob_positive.empty()) {
    for (double v : p.prob_positive) soft += (v != 0.0 && v != 1.0) ? 1 : 0;
  } else {
    for (double v : p.levels) soft += (v != 0.0 && v != 1.0) ? 1 : 0;
  }
  for (double w : ds.weights()) weighted += w != 1.0 ? 1 : 0;
  double flags[2] = {soft, weighted};
  sum_over_ranks(flags);
  return {flags[0] == 0, flags[1] == 0};
}

}  // namespace stats_impl

namespace {

using stats_impl::data_index;
using stats_impl::prediction_of;

using detail::kInf;
using detail::kNan;

// value = a * rate + b, when node `root` is affine in rate `rate` alone (constants, +, -, unary -,
// * and / by constants).
struct Affine {
  double a = 0;
  double b = 0;
};
std::optional<Affine> affine_in(const Expression& e, std::size_t root, std::size_t rate) {
  const ExprNode& n = e.nodes()[root];
  const auto child = [&](std::size_t k) { return affine_in(e, n.args[k], rate); };
  switch (n.op) {
    case NodeOp::kConstant:
      return Affine{0, n.value};
    case NodeOp::kRate:
      if (n.rate != rate) return std::nullopt;
      return Affine{1, 0};
    case NodeOp::kNeg: {
      auto x = child(0);
      if (!x) return std::nullopt;
      return Affine{-x->a, -x->b};
    }
    case NodeOp::kAdd:
    case NodeOp::kSub: {
      auto x = child(0);
      auto y = child(1);
      if (!x || !y) return std::nullopt;
      const double s = n.op == NodeOp::kAdd ? 1 : -1;
      return Affine{x->a + s * y->a, x->b + s * y->b};
    }
    case NodeOp::kMul: {
      auto x = child(0);
      auto y = child(1);
      if (!x || !y) return std::nullopt;
      if (x->a != 0 && y->a != 0) return std::nullopt;
      return Affine{x->a * y->b + y->a * x->b, x->b * y->b};
    }
    case NodeOp::kDiv: {
      auto x = child(0);
      auto y = child(1);
      if (!x || !y || y->a != 0 || y->b == 0) return std::nullopt;
      return Affine{x->a / y->b, x->b / y->b};
    }
    case NodeOp::kCall:
      return std::nullopt;
  }
  return std::nullopt;
}

// The value evaluate_text reports as an affine function of the expression's only rate, when it
// is one (a constraint's violation for <= and >=; |.| for == is not affine).
std::optional<Affine> value_affine(const Expression& e) {
  if (e.rates().size() != 1 || e.relation() == Relation::kEqual) return std::nullopt;
  auto lhs = affine_in(e, e.lhs_root(), 0);
  if (!lhs) return std::nullopt;
  if (!e.is_constraint()) return lhs;
  auto rhs = affine_in(e, e.rhs_root(), 0);
  if (!rhs) return std::nullopt;
  const double s = e.relation() == Relation::kLessEqual ? 1 : -1;
  return Affine{s * (lhs->a - rhs->a), s * (lhs->b - rhs->b)};
}

// Whether a leaf's value is a confusion metric the bootstrap can recompute from slice counts.
bool countable(const RateRef& rate, const NamedData& d) {
  const LabelKind kind = d.data->labels().kind;
  return (kind == LabelKind::kBinary || kind == LabelKind::kNone) &&
         find_metric(rate.metric) != nullptr;
}

std::string metric_spec(const RateRef& r) {
  return std::isnan(r.param) ? r.metric : fmt::format("{}:{}", r.metric, r.param);
}

// ---- the stratified tables ----

// One distinct row value and how many rows of a stratum hold it.
struct RowValue {
  std::int32_t label = 0;
  double p = 0;   // probability of predicting positive
  double b = -1;  // baseline's probability, -1 without a baseline column
  double w = 1;   // weight
  [[nodiscard]] auto key() const { return std::tie(label, p, b, w); }
  friend bool operator<(const RowValue& x, const RowValue& y) { return x.key() < y.key(); }
  friend bool operator==(const RowValue& x, const RowValue& y) { return x.key() == y.key(); }
};

struct RowValueHash {
  std::size_t operator()(const RowValue& v) const noexcept {
    std::uint64_t bits[3];
    std::memcpy(&bits[0], &v.p, 8);
    std::memcpy(&bits[1], &v.b, 8);
    std::memcpy(&bits[2], &v.w, 8);
    auto h = static_cast<std::uint64_t>(v.label);
    for (std::uint64_t x : bits) h = detail::mix64(h, x);
    return h;
  }
};

// The strata of one dataset: key = one byte per named slice (1 = the stratum lies in it).
using StratumTable = std::map<std::string, std::map<RowValue, double>>;

// This rank's table, serialised: per stratum the key, then its values with counts.
std::string serialise(const StratumTable& table) {
  std::string out;
  const auto put = [&out](const void* p, std::size_t n) {
    out.append(static_cast<const char*>(p), n);
  };
  for (const auto& [key, values] : table) {
    const std::uint64_t len = key.size();
    const std::uint64_t count = values.size();
    put(&len, 8);
    put(key.data(), key.size());
    put(&count, 8);
    for (const auto& [v, c] : values) {
      put(&v.label, 4);
      put(&v.p, 8);
      put(&v.b, 8);
      put(&v.w, 8);
      put(&c, 8);
    }
  }
  return out;
}

void merge_serialised(std::string_view text, StratumTable& table) {
  std::size_t at = 0;
  const auto get = [&](void* p, std::size_t n) {
    RATEOPT_CHECK(at + n <= text.size(), "corrupt stratum table from another rank");
    std::memcpy(p, text.data() + at, n);
    at += n;
  };
  while (at < text.size()) {
    std::uint64_t len = 0;
    std::uint64_t count = 0;
    get(&len, 8);
    RATEOPT_CHECK(at + len <= text.size(), "corrupt stratum table from another rank");
    std::string key(text.substr(at, len));
    at += len;
    get(&count, 8);
    auto& values = table[key];
    for (std::uint64_t k = 0; k < count; ++k) {
      RowValue v;
      double c = 0;
      get(&v.label, 4);
      get(&v.p, 8);
      get(&v.b, 8);
      get(&v.w, 8);
      get(&c, 8);
      values[v] += c;  // integer counts: exact in any order
    }
  }
}

// The strata of dataset `d` over `slices`, with every rank's rows.
StratumTable build_strata(const NamedData& d, const std::vector<Slice>& slices) {
  const Dataset& ds = *d.data;
  const Predictions& pred = *d.predictions;
  const std::size_t n = ds.num_rows();
  std::vector<std::vector<std::uint8_t>> masks;
  masks.reserve(slices.size());
  for (const Slice& s : slices) masks.push_back(slice_mask(ds, s));
  const Column* base = ds.find_column("baseline");
  const std::vector<double> level_prob = metrics_impl::baseline_level_probabilities(ds);
  const bool labelled = ds.labels().kind == LabelKind::kBinary;

  std::unordered_map<std::string, std::uint32_t> stratum_of;
  std::vector<std::string> keys;
  std::vector<std::unordered_map<RowValue, double, RowValueHash>> counts;
  std::string key(slices.size(), '\0');
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t s = 0; s < slices.size(); ++s) key[s] = static_cast<char>(masks[s][i]);
    auto [it, inserted] = stratum_of.try_emplace(key, static_cast<std::uint32_t>(keys.size()));
    if (inserted) {
      keys.push_back(key);
      counts.emplace_back();
    }
    RowValue v;
    v.label = labelled ? ds.labels().values[i] : 0;
    v.p = prediction_of(pred, i);
    v.w = ds.weight(i);
    if (base != nullptr) {
      const std::int32_t code = base->codes[i];
      v.b = code >= 0 ? level_prob[static_cast<std::size_t>(code)] : kNan;
      // A row outside every slice never counts; inside one, count_slice has checked its value.
      if (std::isnan(v.b)) v.b = 0;
    }
    counts[it->second][v] += 1;
  }
  StratumTable local;
  for (std::size_t s = 0; s < keys.size(); ++s) {
    auto& values = local[keys[s]];
    for (const auto& [v, c] : counts[s]) values[v] += c;
  }
  if (!is_distributed()) return local;
  StratumTable all;
  for (const std::string& part : gather_over_ranks(serialise(local))) merge_serialised(part, all);
  return all;
}

// Counts of one stratum, ready to resample.
struct Stratum {
  std::vector<std::size_t> slices;         // the named slices it lies in
  std::vector<SliceCounts> contributions;  // of one row of each distinct value
  std::vector<double> counts;              // rows holding each value
  std::vector<double> cumulative;          // running sums of counts (for row-by-row draws)
  double rows = 0;
};

SliceCounts scaled_sum(std::span<const SliceCounts> parts, std::span<const double> times,
                       bool has_baseline) {
  SliceCounts out;
  double changes = 0, wins = 0, losses = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const double t = times[k];
    if (t == 0) continue;
    const SliceCounts& c = parts[k];
    out.confusion.tp += t * c.confusion.tp;
    out.confusion.fp += t * c.confusion.fp;
    out.confusion.fn += t * c.confusion.fn;
    out.confusion.tn += t * c.confusion.tn;
    out.total += t * c.total;
    if (has_baseline) {
      changes += t * c.changes;
      wins += t * c.wins;
      losses += t * c.losses;
    }
  }
  if (has_baseline) {
    out.changes = changes;
    out.wins = wins;
    out.losses = losses;
  }
  return out;
}

void add_counts(SliceCounts& into, const SliceCounts& c, bool has_baseline) {
  into.confusion.tp += c.confusion.tp;
  into.confusion.fp += c.confusion.fp;
  into.confusion.fn += c.confusion.fn;
  into.confusion.tn += c.confusion.tn;
  into.total += c.total;
  if (has_baseline) {
    into.changes += c.changes;
    into.wins += c.wins;
    into.losses += c.losses;
  }
}

// A multinomial draw of `rows` rows over values with `counts` (conditional binomials), or row by
// row when the values are many (probabilities that differ on most rows).
void draw_multinomial(const Stratum& s, std::mt19937_64& rng, std::vector<double>& out) {
  const std::size_t k = s.counts.size();
  out.assign(k, 0.0);
  if (k == 1) {
    out[0] = s.rows;
    return;
  }
  if (k > 64 && static_cast<double>(k) * 8 > s.rows) {
    const auto rows = static_cast<std::uint64_t>(s.rows);
    std::uniform_int_distribution<std::uint64_t> pick(0, rows - 1);
    for (std::uint64_t r = 0; r < rows; ++r) {
      const auto at = static_cast<double>(pick(rng));
      const auto it = std::upper_bound(s.cumulative.begin(), s.cumulative.end(), at);
      out[static_cast<std::size_t>(it - s.cumulative.begin())] += 1;
    }
    return;
  }
  auto left = static_cast<std::int64_t>(s.rows);
  double mass = s.rows;
  for (std::size_t j = 0; j + 1 < k && left > 0; ++j) {
    const double p = std::min(1.0, s.counts[j] / mass);
    // Boost's sampler (table-based log-factorials): libstdc++'s calls lgamma, which writes the
    // global signgam, a data race between threads.
    boost::random::binomial_distribution<std::int64_t> bin(left, p);
    const std::int64_t x = bin(rng);
    out[j] = static_cast<double>(x);
    left -= x;
    mass -= s.counts[j];
  }
  out[k - 1] += static_cast<double>(left);
}

struct BootstrapPlan {
  // Per dataset: its named slices and strata.
  struct Data {
    std::vector<Slice> slices;
    std::vector<Stratum> strata;
    bool has_baseline = false;
  };
  std::vector<Data> data;
  // Per leaf (over every bootstrap expression): dataset, slice and metric.
  struct Leaf {
    std::size_t data = 0;
    std::size_t slice = 0;
    std::string spec;
  };
  std::vector<Leaf> leaves;
  // Per bootstrap value: its expression, the leaf index of each of its rates and, for one
  // epigraph piece of a largest-of value (kBootstrapMax), that piece.
  struct Value {
    const Expression* expr = nullptr;
    std::vector<std::size_t> leaves;
    std::optional<Expression::Piece> piece;
    [[nodiscard]] double at(std::span<const double> rates) const {
      if (!piece) return expr->value(rates);
      return piece->plus_sign * expr->evaluate(piece->plus, rates) -
             expr->evaluate(piece->minus, rates);
    }
  };
  std::vector<Value> values;
};

std::size_t slice_index(std::vector<Slice>& slices, const Slice& s) {
  for (std::size_t k = 0; k < slices.size(); ++k)
    if (slices[k] == s) return k;
  slices.push_back(s);
  return slices.size() - 1;
}

// One resample's values (one per bootstrap value); with `point`, the values on the data itself
// (every stratum's counts as they are, no draw).
void resample_values(const BootstrapPlan& plan, std::uint64_t seed, std::size_t b,
                     std::span<double> out, bool point = false) {
  std::mt19937_64 rng(detail::mix64(seed, b));
  std::vector<std::vector<SliceCounts>> slice_counts(plan.data.size());
  std::vector<double> drawn;
  for (std::size_t d = 0; d < plan.data.size(); ++d) {
    const auto& pd = plan.data[d];
    auto& sc = slice_counts[d];
    SliceCounts zero;
    if (pd.has_baseline) zero.changes = zero.wins = zero.losses = 0;
    sc.assign(pd.slices.size(), zero);
    for (const Stratum& s : pd.strata) {
      if (point) {
        drawn = s.counts;
      } else {
        draw_multinomial(s, rng, drawn);
      }
      const SliceCounts agg = scaled_sum(s.contributions, drawn, pd.has_baseline);
      for (std::size_t k : s.slices) add_counts(sc[k], agg, pd.has_baseline);
    }
  }
  std::vector<double> leaf_values(plan.leaves.size());
  for (std::size_t l = 0; l < plan.leaves.size(); ++l) {
    const auto& leaf = plan.leaves[l];
    leaf_values[l] = compute_metric(leaf.spec, slice_counts[leaf.data][leaf.slice]);
  }
  std::vector<double> rates;
  for (std::size_t v = 0; v < plan.values.size(); ++v) {
    const auto& value = plan.values[v];
    rates.resize(value.leaves.size());
    for (std::size_t j = 0; j < value.leaves.size(); ++j) rates[j] = leaf_values[value.leaves[j]];
    out[v] = value.at(rates);
  }
}

bool has_kink(const Expression& e, std::size_t node) {
  const ExprNode& n = e.nodes()[node];
  if (n.op == NodeOp::kCall && (n.function == "abs" || n.function == "max" || n.function == "min"))
    return true;
  return std::any_of(n.args.begin(), n.args.end(), [&](std::size_t a) { return has_kink(e, a); });
}

// The epigraph pieces of a value that is the largest of several smooth ones (a constraint's
// violation, or an expression read as `(expr) <= 0`), when it has more than one and none holds
// an abs, max or min; empty otherwise.
std::vector<Expression::Piece> smooth_pieces(const Expression& e) {
  std::vector<Expression::Piece> pieces = e.pieces();
  const bool smooth = std::all_of(pieces.begin(), pieces.end(), [&](const Expression::Piece& p) {
    return !has_kink(e, p.plus) && !has_kink(e, p.minus);
  });
  if (pieces.size() < 2 || !smooth) pieces.clear();
  return pieces;
}

}  // namespace

namespace {

// A share rate of hard predictions on unweighted rows as its binomial count: `k` of the `n` rows
// of its denominator in its numerator; nothing for any other rate.
std::optional<std::pair<std::uint64_t, std::uint64_t>> hard_share_count(
    const RateRef& r, const NamedData& d, const stats_impl::DataTraits& traits) {
  const MetricInfo* info = find_metric(r.metric);
  if (info == nullptr || info->share_of == 0 || !countable(r, d) || !traits.hard ||
      !traits.unweighted)
    return std::nullopt;
  const std::vector<std::uint8_t> mask = slice_mask(*d.data, r.slice);
  const Predictions& p = *d.predictions;
  const SliceCounts c = !p.prob_positive.empty() ? count_slice(*d.data, mask, p.prob_positive)
                        : p.levels.empty()       ? count_slice(*d.data, mask, p.positive)
                                                 : count_slice(*d.data, mask, p.positive, p.levels);
  return std::make_pair(
      static_cast<std::uint64_t>(std::llround(cell_mass(c.confusion, info->share_of))),
      static_cast<std::uint64_t>(std::llround(cell_mass(c.confusion, info->share_in))));
}

// A share rate on unweighted rows as layers of binomial counts. Row i of the rate's denominator
// puts q_i in [0, 1] of itself into the numerator (0 or 1 for hard predictions; p or 1 - p for a
// mixture's probability), and the rate is the mean of q over the denominator's population. With
// u_0 = 0 < u_1 < ... < u_L = 1 the distinct q values of the rows (and 0 and 1), that mean is
// sum_j (u_j - u_{j-1}) Pr(q >= u_j) from below and sum_j (u_j - u_{j-1}) Pr(q > u_{j-1}) from
// above, and on the rows both probabilities are count[j] / rows: binomial proportions, exact
// ranges whatever the population holds between two levels.
struct ShareLayers {
  std::uint64_t rows = 0;
  std::vector<double> width;         // u_j - u_{j-1}
  std::vector<std::uint64_t> count;  // rows with q >= u_j
};

// At most this many distinct values of q in a rate's denominator (a mixture of few hard models);
// more (a probability per row) leaves the rate to the bootstrap.
constexpr std::size_t kMaxShareLevels = 16;

// Whether a row's label decides if it is in the denominator (`share_in` whole label rows).
bool label_denominator(std::uint8_t share_in) noexcept {
  return share_in == kCellAll || share_in == (kCellTp | kCellFn) || share_in == (kCellFp | kCellTn);
}

std::optional<ShareLayers> share_layers(const RateRef& r, const NamedData& d,
                                        const stats_impl::DataTraits& traits) {
  if (traits.hard) {
    const auto count = hard_share_count(r, d, traits);
    if (!count) return std::nullopt;
    return ShareLayers{count->second, {1.0}, {count->first}};
  }
  const MetricInfo* info = find_metric(r.metric);
  if (info == nullptr || info->share_of == 0 || !label_denominator(info->share_in) ||
      !countable(r, d) || !traits.unweighted || d.data->find_column("baseline") != nullptr)
    return std::nullopt;
  const Dataset& ds = *d.data;
  const Predictions& p = *d.predictions;
  const std::vector<std::uint8_t> mask = slice_mask(ds, r.slice);
  const Labels& y = ds.labels();
  // q of a row of label `label` given its probability of a positive prediction.
  const auto q_of = [&](std::int32_t label, double prob) -> std::optional<double> {
    const std::uint8_t pos = label == 1 ? kCellTp : kCellFp;
    const std::uint8_t neg = label == 1 ? kCellFn : kCellTn;
    if ((info->share_in & (pos | neg)) == 0) return std::nullopt;
    double q = 0;
    if ((info->share_of & pos) != 0) q += prob;
    if ((info->share_of & neg) != 0) q += 1 - prob;
    return q;
  };
  // q of each denominator row of this rank, in row order.
  const auto for_each_q = [&](auto&& visit) {
    for (std::size_t i = 0; i < ds.num_rows(); ++i) {
      if (!mask.empty() && mask[i] == 0) continue;
      const std::int32_t label = y.kind == LabelKind::kBinary ? y.values[i] : 0;
      if (const auto q = q_of(label, stats_impl::prediction_of(p, i))) visit(*q);
    }
  };
  // The distinct values over every rank (at most kMaxShareLevels + 1 from each).
  std::vector<double> levels;
  for_each_q([&](double q) {
    if (levels.size() > kMaxShareLevels) return;
    const auto at = std::lower_bound(levels.begin(), levels.end(), q);
    if (at == levels.end() || *at != q) levels.insert(at, q);
  });
  levels = detail::gather_to_first_rank(std::move(levels));
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  broadcast_from(0, levels);
  if (levels.size() > kMaxShareLevels) return std::nullopt;

  // The grid: 0, the levels strictly inside (0, 1), 1.
  std::vector<double> grid{0.0};
  for (double v : levels)
    if (v > 0 && v < 1) grid.push_back(v);
  grid.push_back(1.0);
  std::vector<double> counts(grid.size(), 0.0);  // [0]: rows; [j]: rows with q >= grid[j]
  for_each_q([&](double q) {
    counts[0] += 1;
    for (std::size_t j = 1; j < grid.size() && q >= grid[j]; ++j) counts[j] += 1;
  });
  sum_over_ranks(counts);
  ShareLayers out;
  out.rows = static_cast<std::uint64_t>(counts[0]);
  for (std::size_t j = 1; j < grid.size(); ++j) {
    out.width.push_back(grid[j] - grid[j - 1]);
    out.count.push_back(static_cast<std::uint64_t>(counts[j]));
  }
  return out;
}

// The value's range from its rates' exact ranges when every rate is a share rate on unweighted
// rows in layers (share_layers) and one layer of one of them counts fewer than kRareCount rows
// on one side: nothing otherwise. Each rate takes (1 - level) / rates of the error, split evenly
// over its layers' one-sided Clopper-Pearson bounds (a union bound).
std::optional<Interval> rare_value_range(const Expression& e, std::span<const NamedData> data,
                                         std::span<const stats_impl::DataTraits> traits,
                                         double level) {
  const std::vector<RateRef>& rates = e.rates();
  if (rates.empty()) return std::nullopt;
  std::vector<ShareLayers> layers;
  bool rare = false;
  for (const RateRef& r : rates) {
    const std::size_t d = data_index(r, data);
    auto l = share_layers(r, data[d], traits[d]);
    if (!l) return std::nullopt;
    for (const std::uint64_t k : l->count) rare = rare || std::min(k, l->rows - k) < kRareCount;
    layers.push_back(std::move(*l));
  }
  if (!rare) return std::nullopt;
  const double each = (1 - level) / static_cast<double>(rates.size());
  std::vector<Interval> ranges;
  ranges.reserve(layers.size());
  for (const ShareLayers& l : layers) {
    if (l.rows == 0) {
      ranges.push_back({0.0, 1.0});
      continue;
    }
    const double layer_level = 1 - each / static_cast<double>(l.width.size());
    Interval range{0.0, 0.0};
    for (std::size_t j = 0; j < l.width.size(); ++j) {
      const Interval cp = clopper_pearson(l.count[j], l.rows, layer_level);
      range.low += l.width[j] * cp.low;
      range.high += l.width[j] * cp.high;
    }
    ranges.push_back({std::clamp(range.low, 0.0, 1.0), std::clamp(range.high, 0.0, 1.0)});
  }
  return e.value_range(ranges);
}

}  // namespace

std::string_view to_string(IntervalMethod method) noexcept {
  return detail::name_of(detail::kIntervalMethodNames, method);
}

std::vector<ValueInterval> expression_intervals(std::span<const std::string> texts,
                                                std::span<const NamedData> data,
                                                const IntervalOptions& options) {
  RATEOPT_CHECK(options.level > 0 && options.level < 1,
                "IntervalOptions::level is {}, expected a confidence in (0, 1) (e.g. 0.9)",
                options.level);
  const double min_resamples = std::ceil(10 / (1 - options.level) - 1e-9);
  RATEOPT_CHECK(static_cast<double>(options.resamples) >= min_resamples,
                "IntervalOptions::resamples is {}, expected at least {} for level {} (10 / (1 - "
                "level))",
                options.resamples, min_resamples, options.level);

  // Point values first: they raise every error about names, slices and predictions.
  std::vector<ExpressionValue> point;
  std::vector<Expression> parsed;
  point.reserve(texts.size());
  parsed.reserve(texts.size());
  // An expression that is not a constraint also as `(expr) <= 0`, whose violation it is: its
  // epigraph pieces split a largest-of value (kBootstrapMax).
  std::vector<std::optional<Expression>> as_constraint(texts.size());
  for (std::size_t t = 0; t < texts.size(); ++t) {
    point.push_back(evaluate_text(texts[t], data));
    const std::string expanded = expand_group_shorthands(texts[t], data);
    parsed.push_back(Expression::parse(expanded));
    if (!parsed.back().is_constraint())
      as_constraint[t] = Expression::parse("(" + expanded + ") <= 0");
  }
  std::vector<stats_impl::DataTraits> traits;
  traits.reserve(data.size());
  for (const NamedData& d : data) {
    const LabelKind kind = d.data->labels().kind;
    traits.push_back((kind == LabelKind::kBinary || kind == LabelKind::kNone)
                         ? stats_impl::data_traits(d)
                         : stats_impl::DataTraits{false, false});
  }

  std::vector<ValueInterval> out(texts.size(), ValueInterval{{kNan, kNan}, IntervalMethod::kNone});
  BootstrapPlan plan;
  plan.data.resize(data.size());
  std::vector<std::size_t> bootstrap_of;  // text index of each bootstrap value
  for (std::size_t t = 0; t < texts.size(); ++t) {
    const Expression& e = parsed[t];
    const double estimate = point[t].is_constraint ? point[t].violation : point[t].value;
    // Exact: one share rate of hard predictions on unweighted rows.
    if (const auto affine = value_affine(e)) {
      const RateRef& r = e.rates()[0];
      const std::size_t d = data_index(r, data);
      if (const auto count = hard_share_count(r, data[d], traits[d])) {
        const Interval rate = clopper_pearson(count->first, count->second, options.level);
        double lo = affine->a * rate.low + affine->b;
        double hi = affine->a * rate.high + affine->b;
        if (lo > hi) std::swap(lo, hi);
        out[t] = {{lo, hi}, IntervalMethod::kClopperPearson};
        continue;
      }
    }
    bool all_countable = !std::isnan(estimate);
    for (const RateRef& r : e.rates())
      all_countable = all_countable && countable(r, data[data_index(r, data)]);
    if (!all_countable) continue;
    // Exact by a union bound: every rate a share of hard predictions on unweighted rows, and one
    // of them rare (fewer than kRareCount rows of a kind).
    if (const auto exact = rare_value_range(e, data, traits, options.level)) {
      out[t] = {*exact, IntervalMethod::kExactUnion};
      continue;
    }
    const Expression& split = as_constraint[t] ? *as_constraint[t] : e;
    const std::vector<Expression::Piece> pieces = smooth_pieces(split);
    BootstrapPlan::Value value;
    value.expr = pieces.empty() ? &e : &split;
    for (const RateRef& r : value.expr->rates()) {
      const std::size_t d = data_index(r, data);
      const std::size_t s = slice_index(plan.data[d].slices, r.slice);
      const std::string spec = metric_spec(r);
      std::size_t leaf = plan.leaves.size();
      for (std::size_t l = 0; l < plan.leaves.size(); ++l)
        if (plan.leaves[l].data == d && plan.leaves[l].slice == s && plan.leaves[l].spec == spec)
          leaf = l;
      if (leaf == plan.leaves.size()) plan.leaves.push_back({d, s, spec});
      value.leaves.push_back(leaf);
    }
    if (pieces.empty()) {
      plan.values.push_back(std::move(value));
      bootstrap_of.push_back(t);
      continue;
    }
    for (const Expression::Piece& p : pieces) {
      value.piece = p;
      plan.values.push_back(value);
      bootstrap_of.push_back(t);
    }
  }
  if (plan.values.empty()) return out;

  for (std::size_t d = 0; d < data.size(); ++d) {
    auto& pd = plan.data[d];
    if (pd.slices.empty()) continue;
    pd.has_baseline = data[d].data->find_column("baseline") != nullptr;
    const StratumTable table = build_strata(data[d], pd.slices);
    for (const auto& [key, values] : table) {
      Stratum s;
      for (std::size_t k = 0; k < key.size(); ++k)
        if (key[k] != 0) s.slices.push_back(k);
      if (s.slices.empty()) continue;  // rows no value reads
      double running = 0;
      for (const auto& [v, c] : values) {
        const std::int32_t label[1] = {v.label};
        const double p[1] = {v.p};
        const double w[1] = {v.w};
        const double b[1] = {v.b};
        s.contributions.push_back(
            count_slice(label, p, w, {},
                        pd.has_baseline ? std::span<const double>(b) : std::span<const double>()));
        s.counts.push_back(c);
        running += c;
        s.cumulative.push_back(running);
      }
      s.rows = running;
      pd.strata.push_back(std::move(s));
    }
  }

  const std::size_t resamples = options.resamples;
  const std::size_t width = plan.values.size();
  std::vector<double> reps(resamples * width);
  detail::parallel_for(resamples, options.n_threads, [&](std::size_t b) {
    resample_values(plan, options.seed, b, std::span<double>(reps).subspan(b * width, width));
  });

  // Max-t band: each value +- c * se, c the level-quantile over resamples of the largest
  // standardised deviation. A piece's estimate is its value on the data.
  std::vector<double> piece_point(width);
  resample_values(plan, options.seed, 0, piece_point, true);
  std::vector<double> estimate(width), se(width);
  for (std::size_t k = 0; k < width; ++k) {
    const ExpressionValue& v = point[bootstrap_of[k]];
    estimate[k] = plan.values[k].piece ? piece_point[k] : v.is_constraint ? v.violation : v.value;
    double n = 0, mean = 0, m2 = 0;
    for (std::size_t b = 0; b < resamples; ++b) {
      const double x = reps[b * width + k];
      if (!std::isfinite(x)) continue;
      n += 1;
      const double delta = x - mean;
      mean += delta / n;
      m2 += delta * (x - mean);
    }
    se[k] = n > 1 ? std::sqrt(m2 / (n - 1)) : 0.0;
  }
  std::vector<double> worst(resamples, 0.0);
  for (std::size_t b = 0; b < resamples; ++b) {
    for (std::size_t k = 0; k < width; ++k) {
      const double x = reps[b * width + k];
      const double dev = std::fabs(x - estimate[k]);
      // Deviations at rounding level (a replicate summed in another order) count as none; a
      // non-finite replicate, or a deviation where the others do not vary, as unbounded.
      const double rounding = 1e-12 * (1 + std::fabs(estimate[k]));
      double t = kInf;
      if (std::isfinite(x) && dev <= rounding) {
        t = 0;
      } else if (std::isfinite(x) && se[k] > 0) {
        t = dev / se[k];
      }
      worst[b] = std::max(worst[b], t);
    }
  }
  std::sort(worst.begin(), worst.end());
  const auto at =
      static_cast<std::size_t>(std::ceil(options.level * static_cast<double>(resamples))) - 1;
  const double c = worst[std::min(at, resamples - 1)];
  for (std::size_t k = 0; k < width; ++k) {
    Interval r{kNan, kNan};
    if (std::isfinite(c)) {
      r = {estimate[k] - c * se[k], estimate[k] + c * se[k]};
    } else if (!std::isnan(estimate[k])) {
      r = {-kInf, kInf};
    }
    ValueInterval& o = out[bootstrap_of[k]];
    if (!plan.values[k].piece) {
      o = {r, IntervalMethod::kBootstrap};
    } else if (o.method != IntervalMethod::kBootstrapMax) {  // the text's first piece
      o = {r, IntervalMethod::kBootstrapMax};
    } else {  // the largest of the pieces lies between their largest ends
      o.range = {std::max(o.range.low, r.low), std::max(o.range.high, r.high)};
    }
  }
  return out;
}

}  // namespace rateopt
