// Finite-sample bounds for proportions and means (rateopt/intervals.hpp): Clopper-Pearson through
// Boost.Math's inverse incomplete beta function, Hoeffding and Maurer-Pontil radii.
#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/check.hpp"
#include "common/numeric.hpp"
#include "rateopt/intervals.hpp"

namespace rateopt {

namespace {

using detail::kInf;

void check_delta(double delta, const char* name) {
  RATEOPT_CHECK(delta > 0 && delta < 1, "{} is {}, expected a probability in (0, 1)", name, delta);
}

void check_counts(std::uint64_t successes, std::uint64_t trials) {
  RATEOPT_CHECK(successes <= trials, "successes is {}, expected at most trials ({})", successes,
                trials);
}

}  // namespace

double clopper_pearson_upper(std::uint64_t successes, std::uint64_t trials, double delta) {
  check_counts(successes, trials);
  check_delta(delta, "delta");
  if (successes == trials) return 1.0;
  // The p at which Pr(Bin(n, p) <= k) = delta: the upper delta-quantile of Beta(k + 1, n - k),
  // through the complement for accuracy when delta is small.
  return boost::math::ibetac_inv(static_cast<double>(successes) + 1,
                                 static_cast<double>(trials - successes), delta);
}

double clopper_pearson_lower(std::uint64_t successes, std::uint64_t trials, double delta) {
  check_counts(successes, trials);
  check_delta(delta, "delta");
  if (successes == 0) return 0.0;
  return boost::math::ibeta_inv(static_cast<double>(successes),
                                static_cast<double>(trials - successes) + 1, delta);
}

Interval clopper_pearson(std::uint64_t successes, std::uint64_t trials, double level) {
  check_delta(level, "level");
  const double tail = (1 - level) / 2;
  return {clopper_pearson_lower(successes, trials, tail),
          clopper_pearson_upper(successes, trials, tail)};
}

double hoeffding_radius(double count, double delta) {
  check_delta(delta, "delta");
  RATEOPT_CHECK(count >= 0, "count is {}, expected >= 0", count);
  if (count < 2) return kInf;
  return std::sqrt(std::log(1 / delta) / (2 * count));
}

double empirical_bernstein_radius(const BoundedSample& sample, double delta) {
  check_delta(delta, "delta");
  const double n = sample.count;
  RATEOPT_CHECK(n >= 0, "count is {}, expected >= 0", n);
  if (n < 2) return kInf;
  const double mean = sample.sum / n;
  // Sample variance with the n - 1 denominator (Maurer & Pontil's V_n), never below 0.
  const double variance = std::max(0.0, (sample.sum_squares - n * mean * mean) / (n - 1));
  const double log_term = std::log(2 / delta);
  return std::sqrt(2 * variance * log_term / n) + 7 * log_term / (3 * (n - 1));
}

Interval bounded_mean_range(const BoundedSample& sample, double delta) {
  check_delta(delta, "delta");
  if (sample.count <= 0) return {0.0, 1.0};
  const double mean = sample.sum / sample.count;
  // delta / 2 per side, shared by the two radii (a union bound over four events).
  const double each = delta / 4;
  const double radius =
      std::min(hoeffding_radius(sample.count, each), empirical_bernstein_radius(sample, each));
  return {std::max(0.0, mean - radius), std::min(1.0, mean + radius)};
}

}  // namespace rateopt
