// Multiclass set-valued prediction (Natarajan et al. 2016, section 4.1; del Coz et al. 2009):
// the truth is one of n classes, the prediction a set of classes.
//
// For a set h of k classes holding probability mass Q, the truth is in h with probability Q,
// giving the confusion counts (tp, fp, fn, tn) = (1, k - 1, 0, n - k), and outside h otherwise,
// (0, k, 1, n - k - 1). So
//   E[k] = Q_k U(1, k - 1, 0, n - k) + (1 - Q_k) U(0, k, 1, n - k - 1),
// which is linear in Q; whenever the utility of a hit is at least that of a miss (every built-in
// metric: they are TP-monotone) the best set of size k is the top k classes. Sorting once and
// scanning k = 0..n costs O(n log n) plus 2n + 2 utility calls.
//
// The probabilities are divided by their sum (which must be 1 within 1e-6), and 1 - Q_k is taken
// as the suffix sum, so k = 0 and k = n use only their one feasible confusion matrix.
// Options: all_k fills expected_by_k; method must be auto or exact (the scan is exact and
// O(n)); early_stop and truncation do not apply and are ignored.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

#include "common/check.hpp"
#include "decide/conventions.hpp"
#include "decide/ties.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {

Decision decide_multiclass(std::span<const double> class_probabilities, const DecideMetric& metric,
                           const DecideOptions& options) {
  RATEOPT_CHECK(options.method == DecideMethod::kAuto || options.method == DecideMethod::kExact,
                "decide_multiclass: method '{}' is not available (this setting has one exact "
                "method: auto or exact)",
                to_string(options.method));
  // The truth is one class, never empty: empty_score changes nothing here (validated only).
  detail::check_conventions(metric, options, "decide_multiclass", false);
  const std::size_t n = class_probabilities.size();
  RATEOPT_CHECK(n > 0, "decide_multiclass: no class probabilities");
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double q = class_probabilities[i];
    RATEOPT_CHECK(std::isfinite(q) && q >= 0 && q <= 1,
                  "decide_multiclass: probability {} is {}, expected a value in [0, 1]", i, q);
    total += q;
  }
  RATEOPT_CHECK(std::abs(total - 1) <= 1e-6,
                "decide_multiclass: the class probabilities sum to {}, expected 1 (within 1e-6)",
                total);

  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return class_probabilities[a] > class_probabilities[b];
  });
  // suffix[k] = sum of the probabilities of the classes ranked k..n-1 (normalised).
  std::vector<double> suffix(n + 1, 0.0);
  for (std::size_t t = n; t-- > 0;) suffix[t] = suffix[t + 1] + class_probabilities[order[t]];
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t t = 0; t < n; ++t) prefix[t + 1] = prefix[t] + class_probabilities[order[t]];

  const auto nd = static_cast<double>(n);
  const auto utility = [&](double tp, double fp, double fn, double tn) {
    const double u = metric.utility(tp, fp, fn, tn);
    RATEOPT_CHECK(std::isfinite(u),
                  "decide_multiclass: metric '{}' is {} at tp={} fp={} fn={} tn={}", metric.name(),
                  u, tp, fp, fn, tn);
    return u;
  };
  std::vector<double> expected(n + 1, 0.0);
  for (std::size_t k = 0; k <= n; ++k) {
    const auto kd = static_cast<double>(k);
    const double hit = prefix[k] / total;
    const double miss = suffix[k] / total;
    double e = 0;
    if (k > 0) e += hit * utility(1, kd - 1, 0, nd - kd);
    if (k < n) e += miss * utility(0, kd, 1, nd - kd - 1);
    expected[k] = e;
  }
  const std::size_t best = detail::argmax_with_ties(expected);

  Decision out;
  out.method = DecideMethod::kExact;
  out.expected = expected[best];
  out.selected.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(best));
  if (options.all_k) out.expected_by_k = std::move(expected);
  return out;
}

}  // namespace rateopt
