// High-confidence ranges of constraint values (rateopt/intervals.hpp, high_confidence_ranges).
// Lower ends (and upper ends for expected rates): every distinct rate the constraints read is
// bounded at error delta / (number of rates) by a finite-sample bound, and the bounds are
// combined through each expression by interval arithmetic; by the union bound all hold at once
// with probability at least 1 - delta. Upper ends for hard predictions: per constraint at
// delta / (number of constraints), from its pieces (constraint_upper below).
//
// Why each rate's bound is exact. A share rate (ppr, tpr, precision, ...) on a slice is the share
// of the rows of its denominator cells (all rows, label-1 rows, predicted-positive rows, ...)
// that lie in its numerator cells. Conditional on which rows fall in the denominator, those rows
// are independent draws from the population's conditional distribution, so the count in the
// numerator is binomial (hard predictions: Clopper-Pearson), and for a stochastic classifier the
// expected indicator of each row is an independent value in [0, 1] (Hoeffding / Maurer-Pontil).
// A stochastic classifier's precision-like rate, whose denominator depends on the prediction, is
// the ratio of two such means over the slice's rows, each bounded at half the rate's error. Two
// rates on disjoint slices are independent given both slices' rows: their difference is bounded
// jointly (binomial_difference_upper).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/numeric.hpp"
#include "common/random.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/metrics.hpp"
#include "stats/stats_impl.hpp"

namespace rateopt {

namespace {

using stats_impl::prediction_of;

// The probability that a row with label y and prediction probability p lies in `cells`.
double cell_probability(std::uint8_t cells, bool y, double p) noexcept {
  double out = 0;
  if (y) {
    if ((cells & kCellTp) != 0) out += p;
    if ((cells & kCellFn) != 0) out += 1 - p;
  } else {
    if ((cells & kCellFp) != 0) out += p;
    if ((cells & kCellTn) != 0) out += 1 - p;
  }
  return out;
}

// Whether membership of `cells` depends on the label alone (not on the prediction).
bool label_determined(std::uint8_t cells) noexcept {
  const bool tp = (cells & kCellTp) != 0;
  const bool fn = (cells & kCellFn) != 0;
  const bool fp = (cells & kCellFp) != 0;
  const bool tn = (cells & kCellTn) != 0;
  return tp == fn && fp == tn;
}

// The population value of a rate for a classifier predicting `positive` for every row, when the
// rate has one: its denominator is fixed by the labels, and each label in it puts a row in the
// numerator with the same probability (ppr, tpr, fpr, ...; not error, whose value is the base
// rate).
std::optional<double> constant_rate(const RateRef& r, bool positive) {
  const MetricInfo* info = find_metric(r.metric);
  if (info == nullptr || info->share_of == 0 || !label_determined(info->share_in))
    return std::nullopt;
  const double p = positive ? 1.0 : 0.0;
  std::optional<double> value;
  for (const bool y : {false, true}) {
    if (cell_probability(info->share_in, y, p) == 0) continue;
    const double v = cell_probability(info->share_of, y, p);
    if (value && *value != v) return std::nullopt;
    value = v;
  }
  return value;
}

// A piece of `e` (Expression::pieces) as one affine form in e.rates(): constant + sum of
// coefs[j] * rate j. Throws when the piece is not affine.
Expression::Affine piece_affine(const Expression& e, const Expression::Piece& piece) {
  const std::optional<Expression::Affine> plus = e.affine(piece.plus);
  const std::optional<Expression::Affine> minus = e.affine(piece.minus);
  RATEOPT_CHECK(plus && minus, "'{}': a piece is not affine in its rates", e.text());
  Expression::Affine out;
  out.constant = piece.plus_sign * plus->constant - minus->constant;
  out.coefs.resize(e.rates().size());
  for (std::size_t j = 0; j < out.coefs.size(); ++j)
    out.coefs[j] = piece.plus_sign * plus->coefs[j] - minus->coefs[j];
  return out;
}

// Each piece's value at the rate values `x` (in e.rates() order).
std::vector<double> piece_values(const Expression& e, std::span<const double> x) {
  std::vector<double> out;
  for (const Expression::Piece& piece : e.pieces()) {
    const Expression::Affine a = piece_affine(e, piece);
    double v = a.constant;
    for (std::size_t j = 0; j < x.size(); ++j) v += a.coefs[j] * x[j];
    out.push_back(v);
  }
  return out;
}

// Every rank's sums over the rows of `mask` of (rows, a, a^2, b, b^2), with a and b the
// probabilities of the numerator and denominator cells; the bits of one process.
std::vector<double> share_sums(const NamedData& d, std::span<const std::uint8_t> mask,
                               const MetricInfo& info) {
  const Dataset& ds = *d.data;
  const Predictions& pred = *d.predictions;
  const bool labelled = ds.labels().kind == LabelKind::kBinary;
  return sum_over_parts(ds.row_parts(), ds.num_rows(), 5,
                        [&](std::size_t begin, std::size_t end, std::span<double> s) {
                          for (std::size_t i = begin; i < end; ++i) {
                            if (mask[i] == 0) continue;
                            const bool y = labelled && ds.labels().values[i] != 0;
                            const double p = prediction_of(pred, i);
                            const double a = cell_probability(info.share_of, y, p);
                            const double b = cell_probability(info.share_in, y, p);
                            s[0] += 1;
                            s[1] += a;
                            s[2] += a * a;
                            s[3] += b;
                            s[4] += b * b;
                          }
                        });
}

// The catalogue entry of a rate a guarantee can bound (a share of confusion cells on unweighted
// binary data). Throws InvalidArgument naming the rate otherwise.
const MetricInfo& bounded_share(const RateRef& r, const NamedData& d,
                                const stats_impl::DataTraits& traits) {
  const MetricInfo* info = find_metric(r.metric);
  const LabelKind kind = d.data->labels().kind;
  if (info == nullptr || info->share_of == 0 ||
      !(kind == LabelKind::kBinary || (kind == LabelKind::kNone && !info->needs_labels)))
    throw InvalidArgument(fmt::format(
        "'{}': a guarantee bounds rates that are shares of confusion cells on binary data (ppr, "
        "npr, tpr, fnr, fpr, tnr, precision, npv, error, accuracy, tp, fp, fn, tn); this one is "
        "not",
        r.to_string()));
  RATEOPT_CHECK(traits.unweighted,
                "'{}': a guarantee needs unweighted rows (each row one independent draw); this "
                "dataset has row weights",
                r.to_string());
  return *info;
}

// A hard rate's binomial count: `k` of `n` denominator rows lie in the numerator; `mask` marks
// the slice's rows (of this rank).
struct ShareCount {
  std::uint64_t k = 0;
  std::uint64_t n = 0;
  std::vector<std::uint8_t> mask;
};
ShareCount share_count(const RateRef& r, const NamedData& d, const stats_impl::DataTraits& traits) {
  const MetricInfo& info = bounded_share(r, d, traits);
  ShareCount out;
  out.mask = slice_mask(*d.data, r.slice);
  const std::vector<double> s = share_sums(d, out.mask, info);
  // Counts of 0/1 values: exact integers.
  out.k = static_cast<std::uint64_t>(std::llround(s[1]));
  out.n = static_cast<std::uint64_t>(std::llround(s[3]));
  return out;
}

// The rate's range at error `delta`.
Interval rate_range(const RateRef& r, const NamedData& d, const stats_impl::DataTraits& traits,
                    double delta) {
  if (traits.hard) {
    const ShareCount c = share_count(r, d, traits);
    if (c.n == 0) return {0.0, 1.0};
    return {clopper_pearson_lower(c.k, c.n, delta / 2), clopper_pearson_upper(c.k, c.n, delta / 2)};
  }
  const MetricInfo* info = &bounded_share(r, d, traits);
  const std::vector<std::uint8_t> mask = slice_mask(*d.data, r.slice);
  const std::vector<double> s = share_sums(d, mask, *info);
  if (label_determined(info->share_in)) {
    // The mean of a over the rows of the denominator: there b is 1, and elsewhere b = 0, so
    // a = 0 too (share_of lies within share_in): the slice's sums of a are the denominator's.
    return bounded_mean_range({s[1], s[2], s[3]}, delta);
  }
  // A ratio of two means over the slice's rows, each at half the error.
  const Interval num = bounded_mean_range({s[1], s[2], s[0]}, delta / 2);
  const Interval den = bounded_mean_range({s[3], s[4], s[0]}, delta / 2);
  const double low = den.high > 0 ? num.low / den.high : 0.0;
  const double high = den.low > 0 ? std::min(1.0, num.high / den.low) : 1.0;
  return {std::min(low, high), high};
}

// The constraints parsed on `data` (shorthands expanded), checked to be constraints, and their
// distinct rates.
struct ParsedConstraints {
  std::vector<Expression> parsed;
  std::vector<RateRef> rates;
};
ParsedConstraints parse_constraints(std::span<const std::string> constraints,
                                    std::span<const NamedData> data) {
  ParsedConstraints out;
  out.parsed.reserve(constraints.size());
  for (const std::string& text : constraints) {
    out.parsed.push_back(Expression::parse(expand_group_shorthands(text, data)));
    RATEOPT_CHECK(out.parsed.back().is_constraint(),
                  "'{}' is not a constraint (expected lhs <= rhs, lhs >= rhs or lhs == rhs)", text);
    for (const RateRef& r : out.parsed.back().rates())
      if (std::find(out.rates.begin(), out.rates.end(), r) == out.rates.end())
        out.rates.push_back(r);
  }
  return out;
}

// Each constraint's value from its rates' values, and its range from its rates' ranges.
std::vector<ConstraintRange> combine(std::span<const std::string> constraints,
                                     const ParsedConstraints& pc, std::span<const double> values,
                                     std::span<const Interval> ranges) {
  std::vector<ConstraintRange> out;
  out.reserve(pc.parsed.size());
  for (std::size_t c = 0; c < pc.parsed.size(); ++c) {
    const Expression& e = pc.parsed[c];
    std::vector<Interval> mine;
    std::vector<double> point;
    for (const RateRef& r : e.rates()) {
      const auto k = static_cast<std::size_t>(std::find(pc.rates.begin(), pc.rates.end(), r) -
                                              pc.rates.begin());
      mine.push_back(ranges[k]);
      point.push_back(values[k]);
    }
    out.push_back({constraints[c], e.value(point), e.value_range(mine)});
  }
  return out;
}

// Whether two slices' row masks share no row on any rank (a collective).
bool disjoint(std::span<const std::uint8_t> x, std::span<const std::uint8_t> y) {
  double both[1] = {0};
  for (std::size_t i = 0; i < x.size(); ++i) both[0] += (x[i] & y[i]) != 0 ? 1 : 0;
  sum_over_ranks(both);
  return both[0] == 0;
}

// One constraint's upper end at error `delta` for hard predictions (docs/guarantees.md, "How the
// safety test bounds a constraint"). Its violation is the largest of its pieces (epigraph form);
// if it exceeds U = the largest of the pieces' upper bounds, the piece that is largest in the
// population exceeds its own bound, so each piece's bound at error delta suffices (no union over
// pieces). An affine piece is bounded exactly: a constant as is; one rate by Clopper-Pearson; the
// difference of two rates on disjoint slices of one dataset (independent binomials given the
// slices' rows) by binomial_difference_upper; any other affine piece by one-sided Clopper-Pearson
// bounds at delta / rates. A constraint with a piece that is not affine (ratios, sqrt, ...) is
// bounded by interval arithmetic over two-sided ranges of its rates at delta / rates.
// Whether every piece of the constraint is affine in the rates (Expression::affine).
bool pieces_affine(const Expression& e) {
  const std::vector<Expression::Piece> pieces = e.pieces();
  return std::all_of(pieces.begin(), pieces.end(), [&](const Expression::Piece& p) {
    return e.affine(p.plus).has_value() && e.affine(p.minus).has_value();
  });
}

// Each piece's upper bound at error `delta` (hard predictions); every piece affine
// (pieces_affine).
std::vector<double> piece_uppers(const Expression& e, std::span<const NamedData> data,
                                 std::span<const stats_impl::DataTraits> traits, double delta) {
  const std::vector<RateRef>& rates = e.rates();
  std::vector<std::size_t> where(rates.size());
  for (std::size_t j = 0; j < rates.size(); ++j) where[j] = stats_impl::data_index(rates[j], data);
  std::vector<ShareCount> counts(rates.size());
  std::vector<std::uint8_t> counted(rates.size(), 0);
  const auto count = [&](std::size_t j) -> const ShareCount& {
    if (counted[j] == 0) {
      counts[j] = share_count(rates[j], data[where[j]], traits[where[j]]);
      counted[j] = 1;
    }
    return counts[j];
  };
  const auto one_sided = [&](std::size_t j, double coef, double err) {
    const ShareCount& c = count(j);
    return coef > 0 ? coef * clopper_pearson_upper(c.k, c.n, err)
                    : coef * clopper_pearson_lower(c.k, c.n, err);
  };
  std::vector<double> out;
  for (const Expression::Piece& piece : e.pieces()) {
    const Expression::Affine form = piece_affine(e, piece);
    double bound = form.constant;
    const std::vector<double>& coef = form.coefs;
    std::vector<std::size_t> used;
    for (std::size_t j = 0; j < rates.size(); ++j)
      if (coef[j] != 0) used.push_back(j);
    if (used.size() == 2 && (coef[used[0]] > 0) != (coef[used[1]] > 0) &&
        where[used[0]] == where[used[1]] && disjoint(count(used[0]).mask, count(used[1]).mask)) {
      const std::size_t i = coef[used[0]] > 0 ? used[0] : used[1];
      const std::size_t j = coef[used[0]] > 0 ? used[1] : used[0];
      bound += binomial_difference_upper(count(i).k, count(i).n, coef[i], count(j).k, count(j).n,
                                         -coef[j], delta);
    } else {
      for (std::size_t j : used)
        bound += one_sided(j, coef[j], delta / static_cast<double>(used.size()));
    }
    out.push_back(bound);
  }
  return out;
}

// Interval arithmetic over two-sided ranges of the constraint's rates at delta / rates: the upper
// end of a constraint that is not affine piece by piece.
double fallback_upper(const Expression& e, std::span<const NamedData> data,
                      std::span<const stats_impl::DataTraits> traits, double delta) {
  const std::vector<RateRef>& rates = e.rates();
  std::vector<Interval> ranges;
  const double each = delta / static_cast<double>(std::max<std::size_t>(rates.size(), 1));
  for (const RateRef& r : rates) {
    const std::size_t d = stats_impl::data_index(r, data);
    ranges.push_back(rate_range(r, data[d], traits[d], each));
  }
  return e.value_range(ranges).high;
}

double constraint_upper(const Expression& e, std::span<const NamedData> data,
                        std::span<const stats_impl::DataTraits> traits, double delta) {
  if (!pieces_affine(e)) return fallback_upper(e, data, traits, delta);
  const std::vector<double> pieces = piece_uppers(e, data, traits, delta);
  return pieces.empty() ? -detail::kInf : *std::max_element(pieces.begin(), pieces.end());
}

void check_delta(double delta) {
  RATEOPT_CHECK(delta > 0 && delta < 1, "delta is {}, expected a probability in (0, 1)", delta);
}

// high_confidence_ranges with the bounds from `data` and the values from `valued` (the same
// datasets with other predictions: a mixture's expected ones where `data` holds its draws).
std::vector<ConstraintRange> ranges_of(std::span<const std::string> constraints,
                                       std::span<const NamedData> data,
                                       std::span<const NamedData> valued, double delta) {
  check_delta(delta);
  const ParsedConstraints pc = parse_constraints(constraints, data);
  std::vector<stats_impl::DataTraits> traits;
  traits.reserve(data.size());
  for (const NamedData& d : data) traits.push_back(stats_impl::data_traits(d));
  const double each = delta / static_cast<double>(std::max<std::size_t>(pc.rates.size(), 1));
  std::vector<Interval> ranges;
  std::vector<double> values;
  for (const RateRef& r : pc.rates) {
    const std::size_t d = stats_impl::data_index(r, data);
    ranges.push_back(rate_range(r, data[d], traits[d], each));
    values.push_back(evaluate_rate(r, valued));
  }
  std::vector<ConstraintRange> out = combine(constraints, pc, values, ranges);
  // Hard predictions: each constraint's upper end from its pieces, at delta / constraints.
  const bool hard = std::all_of(traits.begin(), traits.end(),
                                [](const stats_impl::DataTraits& t) { return t.hard; });
  if (hard) {
    const double per = delta / static_cast<double>(std::max<std::size_t>(out.size(), 1));
    for (std::size_t c = 0; c < out.size(); ++c) {
      out[c].range.high = constraint_upper(pc.parsed[c], data, traits, per);
      out[c].range.low = std::min(out[c].range.low, out[c].range.high);
    }
  }
  return out;
}

// One hard prediction per row drawn from the components `from` of `m` (MixtureData::draws): the
// component whose cumulative weight interval holds draws[i] x their total weight, and, for one
// with a probability p, positive when the draw's position within that interval (again uniform
// in [0, 1), independent of the pick) is below p.
Predictions draw_predictions(const MixtureData& m, std::span<const std::size_t> from) {
  double total = 0;
  for (std::size_t j : from) total += m.weights[j];
  Predictions out;
  const std::size_t n = m.draws.size();
  out.positive.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double target = m.draws[i] * total;
    double before = 0;
    std::size_t pick = from.back();
    for (std::size_t j : from) {
      if (target < before + m.weights[j]) {
        pick = j;
        break;
      }
      before += m.weights[j];
    }
    const double p = prediction_of(m.components[pick], i);
    const double w = m.weights[pick];
    const double within =
        w > 0 ? std::clamp((target - before) / w, 0.0, std::nextafter(1.0, 0.0)) : 0.0;
    out.positive[i] = static_cast<std::uint8_t>(within < p ? 1 : 0);
  }
  return out;
}

}  // namespace

std::vector<ConstraintRange> high_confidence_ranges(std::span<const std::string> constraints,
                                                    std::span<const NamedData> data, double delta) {
  return ranges_of(constraints, data, data, delta);
}

std::vector<ConstraintRange> high_confidence_ranges(std::span<const std::string> constraints,
                                                    const MixtureData& mixture, double delta) {
  check_delta(delta);
  RATEOPT_CHECK(mixture.data != nullptr, "MixtureData::data is null");
  RATEOPT_CHECK(!mixture.components.empty() && mixture.components.size() == mixture.weights.size(),
                "MixtureData has {} components and {} weights, expected the same number (>= 1)",
                mixture.components.size(), mixture.weights.size());
  RATEOPT_CHECK(mixture.constant.empty() || mixture.constant.size() == mixture.components.size(),
                "MixtureData has {} constant flags for {} components, expected none or one each",
                mixture.constant.size(), mixture.components.size());
  // The mixture's probabilities: its expected rates, and the fallback.
  const std::size_t n = mixture.data->num_rows();
  RATEOPT_CHECK(mixture.draws.empty() || mixture.draws.size() == n,
                "MixtureData has {} draws for {} rows, expected none or one per row",
                mixture.draws.size(), n);
  for (std::size_t i = 0; i < mixture.draws.size(); ++i)
    RATEOPT_CHECK(mixture.draws[i] >= 0 && mixture.draws[i] < 1,
                  "MixtureData draw {} is {}, expected a uniform in [0, 1)", i, mixture.draws[i]);
  Predictions mixed;
  mixed.prob_positive.assign(n, 0.0);
  std::vector<std::size_t> used;
  for (std::size_t j = 0; j < mixture.components.size(); ++j) {
    RATEOPT_CHECK(mixture.weights[j] >= 0, "mixture weight {} is {}, expected >= 0", j,
                  mixture.weights[j]);
    RATEOPT_CHECK(mixture.components[j].prob_positive.size() == n ||
                      mixture.components[j].positive.size() == n,
                  "mixture component {} has no prediction for each of the {} rows", j, n);
    const int flag = mixture.constant.empty() ? -1 : mixture.constant[j];
    RATEOPT_CHECK(flag >= -1 && flag <= 1,
                  "mixture component {} has constant flag {}, expected "
                  "-1 (not constant), 0 or 1",
                  j, flag);
    if (flag >= 0)
      for (std::size_t i = 0; i < n; ++i)
        RATEOPT_CHECK(prediction_of(mixture.components[j], i) == flag,
                      "mixture component {} is flagged constant {} but predicts {} for row {}", j,
                      flag, prediction_of(mixture.components[j], i), i);
    if (mixture.weights[j] == 0) continue;
    used.push_back(j);
    for (std::size_t i = 0; i < n; ++i)
      mixed.prob_positive[i] += mixture.weights[j] * prediction_of(mixture.components[j], i);
  }
  for (double& p : mixed.prob_positive) p = std::clamp(p, 0.0, 1.0);
  const NamedData whole[] = {{mixture.name, mixture.data, &mixed}};
  const ParsedConstraints pc = parse_constraints(constraints, whole);
  bool linear = true;
  for (const RateRef& r : pc.rates) {
    const MetricInfo* info = find_metric(r.metric);
    linear = linear && info != nullptr && info->share_of != 0 && label_determined(info->share_in) &&
             (r.dataset.empty() || r.dataset == mixture.name);
  }
  // Components whose every rate is known (MixtureData::constant), with those rates; the others
  // are bounded from the rows.
  std::vector<std::size_t> bounded;
  std::vector<std::pair<std::size_t, std::vector<double>>> known;
  for (std::size_t j : used) {
    const int flag = mixture.constant.empty() ? -1 : mixture.constant[j];
    std::vector<double> exact;
    for (const RateRef& r : pc.rates) {
      const std::optional<double> v = flag >= 0 ? constant_rate(r, flag == 1) : std::nullopt;
      if (!v) break;
      exact.push_back(*v);
    }
    if (exact.size() == pc.rates.size() && linear) {
      known.emplace_back(j, std::move(exact));
    } else {
      bounded.push_back(j);
    }
  }
  // Whether each component has probabilities other than 0 and 1 (one scan of its rows each, a
  // collective; not needed for the mixture's probabilities alone).
  std::vector<std::uint8_t> is_soft(mixture.components.size(), 0);
  if (linear || !mixture.draws.empty())
    for (std::size_t j : used) {
      const NamedData one[] = {{mixture.name, mixture.data, &mixture.components[j]}};
      is_soft[j] = stats_impl::data_traits(one[0]).hard ? 0 : 1;
    }
  const auto soft = [&](std::size_t j) { return is_soft[j] != 0; };
  if (!linear || (bounded.size() == 1 && known.empty())) {
    // Every component bounded from the rows: as drawn, or the mixture's probabilities.
    if (mixture.draws.empty() || (used.size() == 1 && !soft(used[0])))
      return high_confidence_ranges(constraints, whole, delta);
    const Predictions d = draw_predictions(mixture, used);
    const NamedData drawn[] = {{mixture.name, mixture.data, &d}};
    return ranges_of(constraints, drawn, whole, delta);
  }
  std::vector<double> values(pc.rates.size(), 0.0);
  const bool draw = !mixture.draws.empty() &&
                    (bounded.size() >= 2 || std::any_of(bounded.begin(), bounded.end(), soft));
  for (std::size_t j : bounded) {
    RATEOPT_CHECK(draw || !soft(j), "mixture component {} has predictions other than 0 and 1", j);
    const NamedData one[] = {{mixture.name, mixture.data, &mixture.components[j]}};
    for (std::size_t k = 0; k < pc.rates.size(); ++k)
      values[k] += mixture.weights[j] * evaluate_rate(pc.rates[k], one);
  }
  // The components bounded from the rows as tested: each, or the one drawn from them.
  std::vector<const Predictions*> tested;
  std::vector<double> tested_weight;
  Predictions drawn;
  if (draw) {
    drawn = draw_predictions(mixture, bounded);
    tested = {&drawn};
    tested_weight = {0.0};
    for (std::size_t j : bounded) tested_weight[0] += mixture.weights[j];
  } else {
    for (std::size_t j : bounded) {
      tested.push_back(&mixture.components[j]);
      tested_weight.push_back(mixture.weights[j]);
    }
  }
  const std::size_t shares = std::max<std::size_t>(tested.size(), 1);
  const double each =
      delta / static_cast<double>(std::max<std::size_t>(pc.rates.size(), 1) * shares);
  std::vector<Interval> ranges(pc.rates.size(), Interval{0, 0});
  for (std::size_t u = 0; u < tested.size(); ++u) {
    const NamedData one[] = {{mixture.name, mixture.data, tested[u]}};
    const stats_impl::DataTraits traits = stats_impl::data_traits(one[0]);
    for (std::size_t k = 0; k < pc.rates.size(); ++k) {
      const Interval r = rate_range(pc.rates[k], one[0], traits, each);
      ranges[k].low += tested_weight[u] * r.low;
      ranges[k].high += tested_weight[u] * r.high;
    }
  }
  for (const auto& [j, exact] : known) {
    // The rows are still checked to be what a guarantee can read (binary labels, unweighted).
    const NamedData one[] = {{mixture.name, mixture.data, &mixture.components[j]}};
    const stats_impl::DataTraits traits = stats_impl::data_traits(one[0]);
    for (const RateRef& r : pc.rates) (void)bounded_share(r, one[0], traits);
    const double w = mixture.weights[j];
    for (std::size_t k = 0; k < pc.rates.size(); ++k) {
      ranges[k].low += w * exact[k];
      ranges[k].high += w * exact[k];
      values[k] += w * exact[k];
    }
  }
  for (Interval& r : ranges) r = {std::clamp(r.low, 0.0, 1.0), std::clamp(r.high, 0.0, 1.0)};
  std::vector<ConstraintRange> out = combine(constraints, pc, values, ranges);
  // Upper ends per constraint at delta / constraints, from its pieces: the mixture's piece is the
  // weighted sum of its components' (the rates are), each bounded at delta / (constraints x
  // components tested from the rows: the drawn one counts once), a known component's piece taken
  // as it is. Bounding the drawn component's piece bounds the expected piece of the components
  // it is drawn from: each row's drawn prediction is, independently of the others, positive with
  // that sub-mixture's probability, so its rates are binomial with the expected rates. A constraint
  // with a piece that is not affine: interval arithmetic over the components' weighted rate
  // ranges at that error.
  const double per = delta / static_cast<double>(std::max<std::size_t>(out.size(), 1) * shares);
  std::vector<NamedData> ones;
  std::vector<stats_impl::DataTraits> one_traits;
  for (const Predictions* p : tested) {
    ones.push_back({mixture.name, mixture.data, p});
    one_traits.push_back(stats_impl::data_traits(ones.back()));
  }
  for (std::size_t c = 0; c < out.size(); ++c) {
    const Expression& e = pc.parsed[c];
    // This constraint's rates' positions in pc.rates.
    std::vector<std::size_t> at;
    for (const RateRef& r : e.rates())
      at.push_back(static_cast<std::size_t>(std::find(pc.rates.begin(), pc.rates.end(), r) -
                                            pc.rates.begin()));
    const std::size_t rates = std::max<std::size_t>(e.rates().size(), 1);
    if (pieces_affine(e)) {
      std::vector<double> sums;
      const auto add = [&](const std::vector<double>& pieces, double w) {
        sums.resize(pieces.size(), 0.0);
        for (std::size_t p = 0; p < pieces.size(); ++p) sums[p] += w * pieces[p];
      };
      for (std::size_t u = 0; u < tested.size(); ++u)
        add(piece_uppers(e, {&ones[u], 1}, {&one_traits[u], 1}, per), tested_weight[u]);
      for (const auto& [j, exact] : known) {
        std::vector<double> x;
        x.reserve(at.size());
        for (std::size_t k : at) x.push_back(exact[k]);
        add(piece_values(e, x), mixture.weights[j]);
      }
      out[c].range.high =
          sums.empty() ? -detail::kInf : *std::max_element(sums.begin(), sums.end());
    } else {
      std::vector<Interval> mixed_ranges(e.rates().size(), Interval{0, 0});
      for (std::size_t u = 0; u < tested.size(); ++u) {
        const double w = tested_weight[u];
        for (std::size_t k = 0; k < e.rates().size(); ++k) {
          const Interval r =
              rate_range(e.rates()[k], ones[u], one_traits[u], per / static_cast<double>(rates));
          mixed_ranges[k].low += w * r.low;
          mixed_ranges[k].high += w * r.high;
        }
      }
      for (const auto& [j, exact] : known)
        for (std::size_t k = 0; k < e.rates().size(); ++k) {
          mixed_ranges[k].low += mixture.weights[j] * exact[at[k]];
          mixed_ranges[k].high += mixture.weights[j] * exact[at[k]];
        }
      out[c].range.high = e.value_range(mixed_ranges).high;
    }
    out[c].range.low = std::min(out[c].range.low, out[c].range.high);
  }
  return out;
}

void validate(const GuaranteeOptions& options) {
  RATEOPT_CHECK(options.confidence > 0 && options.confidence < 1,
                "confidence is {}, expected 1 - delta in (0, 1), e.g. 0.95", options.confidence);
  RATEOPT_CHECK(options.safety_fraction > 0 && options.safety_fraction < 1,
                "safety fraction is {}, expected a share of the rows in (0, 1), e.g. 0.4",
                options.safety_fraction);
  RATEOPT_CHECK(std::isfinite(options.width_factor) && options.width_factor >= 0,
                "width factor is {}, expected a finite value >= 0", options.width_factor);
}

std::vector<std::uint8_t> safety_rows(std::size_t rows, std::size_t first_row,
                                      const GuaranteeOptions& options) {
  validate(options);
  std::vector<std::uint8_t> out(rows);
  for (std::size_t i = 0; i < rows; ++i)
    out[i] = detail::unit_uniform(detail::mix64(options.seed ^ 0x5AFE5AFEULL, first_row + i)) <
                     options.safety_fraction
                 ? 1
                 : 0;
  return out;
}

namespace {

std::vector<double> margins_from(const std::vector<ConstraintRange>& ranges,
                                 const GuaranteeOptions& options) {
  const double scale = std::sqrt((1 - options.safety_fraction) / options.safety_fraction);
  std::vector<double> out;
  out.reserve(ranges.size());
  for (const ConstraintRange& r : ranges) {
    const double width = r.range.high - r.value;
    out.push_back(std::isfinite(width) ? std::max(0.0, options.width_factor * scale * width) : 0.0);
  }
  return out;
}

}  // namespace

std::vector<double> predicted_safety_margins(std::span<const std::string> constraints,
                                             std::span<const NamedData> candidate,
                                             const GuaranteeOptions& options) {
  validate(options);
  return margins_from(high_confidence_ranges(constraints, candidate, 1 - options.confidence),
                      options);
}

std::vector<double> predicted_safety_margins(std::span<const std::string> constraints,
                                             const MixtureData& candidate,
                                             const GuaranteeOptions& options) {
  validate(options);
  return margins_from(high_confidence_ranges(constraints, candidate, 1 - options.confidence),
                      options);
}

std::vector<double> predicted_safety_upper(std::span<const std::string> constraints,
                                           const MixtureData& candidate,
                                           const GuaranteeOptions& options) {
  validate(options);
  const std::vector<ConstraintRange> ranges =
      high_confidence_ranges(constraints, candidate, 1 - options.confidence);
  const std::vector<double> margins = margins_from(ranges, options);
  std::vector<double> out(ranges.size());
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    const bool finite = std::isfinite(ranges[k].value) && std::isfinite(ranges[k].range.high);
    out[k] = finite ? ranges[k].value + margins[k] : std::numeric_limits<double>::infinity();
  }
  return out;
}

}  // namespace rateopt
