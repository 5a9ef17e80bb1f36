// decide_independent: Bayes-optimal top-k set under label independence (decide-notes 3.1, 4).
// Validation, the one sort, method dispatch, the choice of k and brute force (the oracle).
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "decide/conventions.hpp"
#include "decide/independent_impl.hpp"
#include "decide/poisson_binomial.hpp"
#include "decide/ties.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {
namespace {

using detail::IndependentExpectations;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// kAuto: F-beta / Jaccard / balanced accuracy use the exact O(n^2) method up to these sizes and
// the quadrature above them (measured crossovers, docs/decide.md; the Jaccard programme needs no
// Poisson-binomial rows and stays cheaper longer).
constexpr std::size_t kFastCrossover = 160;
constexpr std::size_t kFastCrossoverJaccard = 768;
// kAuto on the other metrics: kExact with this truncation unless the caller set one.
constexpr double kAutoTruncation = 1e-15;
// Inputs of at least this size are sorted by a radix sort.
constexpr std::size_t kRadixMin = 2048;

// Natarajan's heuristic: the first k >= 1 with E[k] >= E[k+1] (n if none), against k = 0.
std::size_t early_stop_k(const std::vector<double>& e) {
  const std::size_t n = e.size() - 1;
  if (n == 0) return 0;
  std::size_t k = 1;
  while (k < n && !std::isnan(e[k + 1]) && e[k] < e[k + 1]) ++k;
  const double best = std::max(e[0], e[k]);
  return e[0] >= best - detail::tie_slack(best) ? 0 : k;
}

struct Sorted {
  std::vector<double> p;           // decreasing
  std::vector<std::size_t> order;  // original index of each sorted position
};

Sorted sort_probabilities(std::span<const double> probabilities) {
  const std::size_t n = probabilities.size();
  for (std::size_t i = 0; i < n; ++i) {
    const double v = probabilities[i];
    RATEOPT_CHECK(v >= 0.0 && v <= 1.0,
                  "decide_independent: probabilities[{}] = {} is not a probability in [0, 1]", i,
                  v);
  }
  Sorted s;
  s.p.resize(n);
  s.order.resize(n);
  if (n < kRadixMin) {
    std::vector<std::pair<double, std::size_t>> items(n);
    for (std::size_t i = 0; i < n; ++i) items[i] = {probabilities[i] + 0.0, i};
    // Decreasing probability, lower index first on ties: a strict total order, so this equals
    // a stable sort.
    std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    for (std::size_t i = 0; i < n; ++i) {
      s.p[i] = items[i].first;
      s.order[i] = items[i].second;
    }
    return s;
  }
  // Large n: stable LSD radix sort on the complemented bit patterns (for doubles >= +0 the bit
  // pattern orders like the value; + 0.0 turns -0 into +0), 11 bits per pass.
  struct Item {
    std::uint64_t key;
    std::size_t index;
  };
  constexpr int kBits = 11;
  constexpr int kPasses = (64 + kBits - 1) / kBits;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::vector<Item> items(n), scratch(n);
  std::vector<std::size_t> count(kPasses * kBuckets, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = ~std::bit_cast<std::uint64_t>(probabilities[i] + 0.0);
    items[i] = {k, i};
    for (int pass = 0; pass < kPasses; ++pass)
      ++count[pass * kBuckets + ((k >> (pass * kBits)) & (kBuckets - 1))];
  }
  for (int pass = 0; pass < kPasses; ++pass) {
    std::size_t* c = count.data() + pass * kBuckets;
    const int shift = pass * kBits;
    if (c[(items[0].key >> shift) & (kBuckets - 1)] == n) continue;  // one bucket: skip
    std::size_t total = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) total += std::exchange(c[b], total);
    for (std::size_t i = 0; i < n; ++i)
      scratch[c[(items[i].key >> shift) & (kBuckets - 1)]++] = items[i];
    std::swap(items, scratch);
  }
  for (std::size_t i = 0; i < n; ++i) {
    s.p[i] = std::bit_cast<double>(~items[i].key);
    s.order[i] = items[i].index;
  }
  return s;
}

bool has_quadratic(const DecideMetric& metric) {
  switch (metric.family()) {
    case DecideMetric::Family::kFBeta:
      return detail::rational_beta2(metric.beta()).has_value();
    case DecideMetric::Family::kJaccard:
    case DecideMetric::Family::kBalancedAccuracy:
      return true;
    default:
      return false;
  }
}

bool has_fast(const DecideMetric& metric) {
  switch (metric.family()) {
    case DecideMetric::Family::kFBeta:
    case DecideMetric::Family::kJaccard:
    case DecideMetric::Family::kBalancedAccuracy:
      return true;
    default:
      return false;
  }
}

IndependentExpectations run_exact(std::span<const double> p, const DecideMetric& metric,
                                  const DecideOptions& options, double truncation) {
  detail::ExactConfig config;
  config.truncation = truncation;
  config.early_stop = options.early_stop;
  return detail::expected_exact(p, metric, config);
}

IndependentExpectations run_quadratic(std::span<const double> p, const DecideMetric& metric,
                                      const DecideOptions& options) {
  if (auto r = detail::expected_quadratic(p, metric)) return std::move(*r);
  return run_exact(p, metric, options, options.truncation);
}

IndependentExpectations run_fast(std::span<const double> p, const DecideMetric& metric,
                                 const DecideOptions& options) {
  if (auto r = detail::expected_fast(p, metric, options.fast_tolerance)) return std::move(*r);
  return run_quadratic(p, metric, options);
}

IndependentExpectations run_auto(std::span<const double> p, const DecideMetric& metric,
                                 const DecideOptions& options) {
  const std::size_t n = p.size();
  if (has_fast(metric)) {
    const std::size_t crossover =
        metric.family() == DecideMetric::Family::kJaccard ? kFastCrossoverJaccard : kFastCrossover;
    if (n > crossover) return run_fast(p, metric, options);
    if (has_quadratic(metric)) return run_quadratic(p, metric, options);
    return run_exact(p, metric, options, options.truncation);
  }
  const bool builtin = metric.family() != DecideMetric::Family::kCustom;
  const double truncation =
      options.truncation > 0 ? options.truncation : (builtin ? kAutoTruncation : 0.0);
  return run_exact(p, metric, options, truncation);
}

IndependentExpectations run_method(DecideMethod method, std::span<const double> p,
                                   const DecideMetric& metric, const DecideOptions& options) {
  switch (method) {
    case DecideMethod::kExact:
      return run_exact(p, metric, options, options.truncation);
    case DecideMethod::kQuadratic:
      return run_quadratic(p, metric, options);
    case DecideMethod::kFast:
      return run_fast(p, metric, options);
    case DecideMethod::kBrute:
    case DecideMethod::kAuto:
      break;
  }
  return run_auto(p, metric, options);
}

// Twice the error bound plus twice the rounding allowance: expectations this close to the best
// count as tied (ties.hpp, docs/decide.md 1.1).
double tie_extra(std::size_t n, double error_bound) {
  return 2 * (error_bound + detail::rounding_allowance_independent(n));
}

// The choice among the candidates of none_item: top-k without None (size k) and top-k with None
// (size k + 1), ordered by size and, within a size, the set without None first; the first within
// the tie tolerance of the best wins. Returns (k, none).
std::pair<std::size_t, bool> choose_with_none(const std::vector<double>& without,
                                              const std::vector<double>& with, double extra) {
  const std::size_t n = without.size() - 1;
  std::vector<double> merged;
  std::vector<std::pair<std::size_t, bool>> label;
  merged.reserve(2 * n + 2);
  label.reserve(2 * n + 2);
  merged.push_back(without[0]);
  label.emplace_back(0, false);
  for (std::size_t size = 1; size <= n + 1; ++size) {
    if (size <= n) {
      merged.push_back(without[size]);
      label.emplace_back(size, false);
    }
    merged.push_back(with[size - 1]);
    label.emplace_back(size - 1, true);
  }
  return label[detail::argmax_with_ties(merged, extra)];
}

// E[top-k + None] for k = 0..n from a run of the same method on the items with a p = 0 item in
// front: that item, always predicted and never positive, stands for None when some item is
// positive (one more false positive); when none is, None is the one true positive, P(y = 0)
// times metric(tp = 1, fp = k, fn = 0). Exact as the method is (docs/decide.md 2.5).
std::vector<double> expected_with_none(const std::vector<double>& sorted, DecideMethod method,
                                       const DecideMetric& metric, const DecideOptions& options,
                                       double& error_bound) {
  const std::size_t n = sorted.size();
  std::vector<double> augmented(n + 1, 0.0);
  std::copy(sorted.begin(), sorted.end(), augmented.begin() + 1);
  IndependentExpectations r = run_method(method, augmented, metric, options);
  error_bound = std::max(error_bound, r.error_bound);
  const double p_zero = std::exp(detail::log_prob_no_success(sorted));
  std::vector<double> with(n + 1);
  for (std::size_t k = 0; k <= n; ++k)
    with[k] = r.expected[k + 1] + p_zero * metric.utility(1, double(k), 0, double(n - k));
  return with;
}

// Brute force: the best subset of every size; `selected` may be a set that is not top-k when the
// metric is not TP-monotone (then it is the true optimum, unlike every other method).
Decision decide_brute(const Sorted& s, const DecideMetric& metric, const DecideOptions& options) {
  const std::size_t n = s.p.size();
  RATEOPT_CHECK(n <= detail::kMaxBruteItems,
                "decide_independent: method 'brute' handles at most {} items, got {}",
                detail::kMaxBruteItems, n);
  const bool none = options.none_item;
  auto without = none ? detail::expected_brute_none(s.p, metric, false)
                      : detail::expected_brute(s.p, metric, n <= detail::kMaxOutcomeEnumeration);
  if (!none && detail::has_empty_convention(metric)) {  // the only set of size 0 is empty
    without.best_by_k[0] *= options.empty_score;
    without.top_k[0] *= options.empty_score;
  }
  const double extra = tie_extra(n, 0);
  std::size_t k = 0;
  bool with_none = false;
  detail::BruteExpectations with;
  if (none) {
    with = detail::expected_brute_none(s.p, metric, true);
    std::tie(k, with_none) = choose_with_none(without.best_by_k, with.best_by_k, extra);
  } else {
    k = options.early_stop ? early_stop_k(without.best_by_k)
                           : detail::argmax_with_ties(without.best_by_k, extra);
  }
  const detail::BruteExpectations& brute = with_none ? with : without;
  const double best = brute.best_by_k[k];
  Decision d;
  d.method = DecideMethod::kBrute;
  d.none = with_none;
  std::uint32_t set = brute.best_set_by_k[k];
  d.expected = best;
  // Theorem 1: for TP-monotone metrics the top-k set attains the maximum; prefer it (ties of
  // equal probabilities make several sets optimal) whenever it is optimal up to rounding.
  if (brute.top_k[k] >= best - 1e-12 * std::max(1.0, std::abs(best))) {
    set = k == 0 ? 0u : static_cast<std::uint32_t>((std::uint64_t{1} << k) - 1);
    d.expected = brute.top_k[k];
  }
  for (std::size_t i = 0; i < n; ++i)
    if ((set >> i) & 1u) d.selected.push_back(s.order[i]);
  if (options.all_k) {
    d.expected_by_k = without.best_by_k;
    if (none) d.expected_by_k_none = with.best_by_k;
  }
  return d;
}

}  // namespace

Decision decide_independent(std::span<const double> probabilities, const DecideMetric& metric,
                            const DecideOptions& options) {
  RATEOPT_CHECK(options.truncation >= 0 && options.truncation < 1,
                "decide_independent: truncation must be in [0, 1), got {}", options.truncation);
  RATEOPT_CHECK(options.fast_tolerance > 0 && std::isfinite(options.fast_tolerance),
                "decide_independent: fast_tolerance must be finite and > 0, got {}",
                options.fast_tolerance);
  detail::check_conventions(metric, options, "decide_independent", true);
  const Sorted s = sort_probabilities(probabilities);
  const std::size_t n = s.p.size();
  if (options.method == DecideMethod::kBrute) return decide_brute(s, metric, options);

  const bool convention = detail::has_empty_convention(metric);
  Decision d;
  if (n == 0) {  // the empty set is the only candidate: E = metric of empty vs empty
    d.method = options.method == DecideMethod::kAuto ? DecideMethod::kExact : options.method;
    if (options.none_item) {  // {None} against the truth {None}
      d.none = true;
      d.expected = metric.utility(1, 0, 0, 0);
      if (options.all_k) {
        d.expected_by_k.assign(1, 0.0);
        d.expected_by_k_none.assign(1, d.expected);
      }
      return d;
    }
    d.expected = metric.utility(0, 0, 0, 0) * (convention ? options.empty_score : 1.0);
    if (options.all_k) d.expected_by_k.assign(1, d.expected);
    return d;
  }
  IndependentExpectations r = run_method(options.method, s.p, metric, options);
  std::size_t k = 0;
  if (options.none_item) {
    // Without None the empty prediction misses the truth {None} when no item is positive: 0.
    r.expected[0] = 0;
    std::vector<double> with = expected_with_none(s.p, r.method, metric, options, r.error_bound);
    std::tie(k, d.none) = choose_with_none(r.expected, with, tie_extra(n, r.error_bound));
    d.expected = d.none ? with[k] : r.expected[k];
    if (options.all_k) d.expected_by_k_none = std::move(with);
  } else {
    if (convention) r.expected[0] *= options.empty_score;  // E[0] = P(y = 0) * F(empty, empty)
    k = options.early_stop ? early_stop_k(r.expected)
                           : detail::argmax_with_ties(r.expected, tie_extra(n, r.error_bound));
    d.expected = r.expected[k];
  }
  d.method = r.method;
  d.error_bound = r.error_bound;
  d.selected.assign(s.order.begin(), s.order.begin() + static_cast<std::ptrdiff_t>(k));
  if (options.all_k) d.expected_by_k = std::move(r.expected);
  return d;
}

namespace detail {
namespace {

// Poisson-binomial of `p` by plain multiplication, without any trimming (oracle code kept
// independent of poisson_binomial.cpp).
void plain_pb(const std::vector<double>& p, std::vector<double>& out) {
  out.assign(p.size() + 1, 0.0);
  out[0] = 1.0;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j-- > 0;) out[j + 1] += p[i] * out[j], out[j] *= 1.0 - p[i];
}

BruteExpectations empty_expectations(std::size_t n) {
  RATEOPT_CHECK(n <= kMaxBruteItems, "brute force handles at most {} items, got {}", kMaxBruteItems,
                n);
  BruteExpectations out;
  out.best_by_k.assign(n + 1, -std::numeric_limits<double>::infinity());
  out.best_set_by_k.assign(n + 1, 0);
  out.top_k.assign(n + 1, kNaN);
  return out;
}

// Records E of `set` (bit i = sorted item i): the best set of its size, and the top-k set's E.
void record(BruteExpectations& out, std::uint32_t set, double e) {
  const auto k = static_cast<std::size_t>(std::popcount(set));
  if (e > out.best_by_k[k]) {
    out.best_by_k[k] = e;
    out.best_set_by_k[k] = set;
  }
  if (set == (k == 0 ? 0u : static_cast<std::uint32_t>((std::uint64_t{1} << k) - 1)))
    out.top_k[k] = e;
}

// Every subset of the sorted items with E = sum_{a, b} P(a positives inside, b outside) *
// utility(a, b, k), the two counts' distributions by plain multiplication.
template <typename Utility>
BruteExpectations enumerate_sets(std::span<const double> sorted, Utility&& utility) {
  const std::size_t n = sorted.size();
  BruteExpectations out = empty_expectations(n);
  const std::uint32_t count = std::uint32_t{1} << n;
  std::vector<double> inside, outside, pin, pout;
  for (std::uint32_t set = 0; set < count; ++set) {
    inside.clear();
    outside.clear();
    for (std::size_t i = 0; i < n; ++i) ((set >> i) & 1u ? inside : outside).push_back(sorted[i]);
    plain_pb(inside, pin);
    plain_pb(outside, pout);
    const std::size_t k = inside.size();
    double e = 0;
    for (std::size_t a = 0; a <= k; ++a)
      for (std::size_t b = 0; b <= n - k; ++b) {
        const double w = pin[a] * pout[b];
        if (w != 0) e += w * utility(a, b, k);
      }
    record(out, set, e);
  }
  return out;
}

}  // namespace

BruteExpectations expected_brute(std::span<const double> sorted, const DecideMetric& metric,
                                 bool enumerate_outcomes) {
  const std::size_t n = sorted.size();
  // tp = positives inside the set (a), fn = positives outside it (b).
  const auto utility = [&](std::size_t tp, std::size_t fn, std::size_t k) {
    return metric.utility(double(tp), double(k - tp), double(fn), double(n - k - fn));
  };
  if (!enumerate_outcomes) return enumerate_sets(sorted, utility);

  BruteExpectations out = empty_expectations(n);
  const std::uint32_t count = std::uint32_t{1} << n;
  const std::uint32_t all = count - 1;
  // P(y) for every label vector y (bit i = label of sorted item i), by multiplication.
  std::vector<double> prob(count, 0.0);
  prob[0] = 1.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t half = std::uint32_t{1} << i;
    for (std::uint32_t y = 0; y < half; ++y) {
      prob[y | half] = prob[y] * sorted[i];
      prob[y] *= 1.0 - sorted[i];
    }
  }
  const std::size_t m = n + 1;
  std::vector<double> mass(m * m);
  for (std::uint32_t set = 0; set < count; ++set) {
    std::fill(mass.begin(), mass.end(), 0.0);
    for (std::uint32_t y = 0; y < count; ++y) {
      const auto tp = static_cast<std::size_t>(std::popcount(set & y));
      const auto fn = static_cast<std::size_t>(std::popcount(y & (all ^ set)));
      mass[tp * m + fn] += prob[y];
    }
    const auto k = static_cast<std::size_t>(std::popcount(set));
    double e = 0;
    for (std::size_t tp = 0; tp <= k; ++tp)
      for (std::size_t fn = 0; fn <= n - k; ++fn)
        if (mass[tp * m + fn] != 0) e += mass[tp * m + fn] * utility(tp, fn, k);
    record(out, set, e);
  }
  return out;
}

BruteExpectations expected_brute_none(std::span<const double> sorted, const DecideMetric& metric,
                                      bool with_none) {
  const std::size_t n = sorted.size();
  // Confusion counts over the items and None: with a = positives inside the set and b outside,
  // None is true iff a + b = 0.
  return enumerate_sets(sorted, [&](std::size_t a, std::size_t b, std::size_t k) {
    if (a + b == 0)
      return with_none ? metric.utility(1, double(k), 0, double(n - k))
                       : metric.utility(0, double(k), 1, double(n - k));
    return with_none ? metric.utility(double(a), double(k - a + 1), double(b), double(n - k - b))
                     : metric.utility(double(a), double(k - a), double(b), double(n - k - b + 1));
  });
}

}  // namespace detail
}  // namespace rateopt
