// The exact upper bound for a weighted difference of two binomial proportions
// (rateopt/intervals.hpp, binomial_difference_upper).
//
// For theta0, the null a p1 - b p2 >= theta0 is tested with the statistic T = a x1 / n1 -
// b x2 / n2: T grows with p1 and falls with p2, so Pr(T <= t) is largest on the null's boundary
// p1 = (theta0 + b p2) / a (or at p1 = 0), a curve in the nuisance p2 alone. Berger & Boos: with
// p2 restricted to a 1 - gamma confidence interval and gamma added, the supremum is a valid
// p-value. The interval is cut into cells; on the cell [u, v] every null point has p1 >=
// (theta0 + b u) / a and p2 <= v, so Pr(T <= t) there is at most its value at that corner, and
// the largest corner value bounds the supremum from above. Each cell's value falls as theta0
// grows; the bound is the largest theta0 at which some cell's value still exceeds delta - gamma,
// found per cell by bisection and reported at the bracket's upper end.
//
// Binomial probabilities come from a window of 8 standard deviations (plus 6) around the mean,
// by the ratio recurrence from the mode (one Boost.Math pdf call), with the mass outside the
// window counted in full (so truncation can only raise the p-value).
#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/check.hpp"
#include "rateopt/intervals.hpp"

namespace rateopt {

namespace {

constexpr int kCells = 64;           // cells of the nuisance interval
constexpr int kBisections = 36;      // steps of each cell's search
constexpr double kGammaShare = 0.1;  // Berger-Boos gamma as a share of delta
// Binomial probabilities in double precision (Boost.Math would otherwise promote to long double).
using Policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;

// Binomial(n, p) probabilities on the window [lo, lo + pmf.size()).
struct Window {
  std::int64_t lo = 0;
  std::vector<double> pmf;
  double outside = 0;  // 1 - sum of pmf (>= 0): the mass outside the window
};

Window binomial_window(std::uint64_t n, double p) {
  Window w;
  const auto nn = static_cast<std::int64_t>(n);
  if (p <= 0 || p >= 1) {
    w.lo = p <= 0 ? 0 : nn;
    w.pmf = {1.0};
    return w;
  }
  const double mean = static_cast<double>(n) * p;
  const double half = 8 * std::sqrt(mean * (1 - p)) + 6;
  w.lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(mean - half)));
  const std::int64_t hi = std::min(nn, static_cast<std::int64_t>(std::ceil(mean + half)));
  w.pmf.assign(static_cast<std::size_t>(hi - w.lo + 1), 0.0);
  const std::int64_t mode =
      std::clamp(static_cast<std::int64_t>(std::floor((static_cast<double>(n) + 1) * p)), w.lo, hi);
  const boost::math::binomial_distribution<double, Policy> dist(static_cast<double>(n), p);
  const double odds = p / (1 - p);
  auto at = [&](std::int64_t x) -> double& { return w.pmf[static_cast<std::size_t>(x - w.lo)]; };
  at(mode) = boost::math::pdf(dist, static_cast<double>(mode));
  for (std::int64_t x = mode; x < hi; ++x)
    at(x + 1) = at(x) * static_cast<double>(nn - x) / static_cast<double>(x + 1) * odds;
  for (std::int64_t x = mode; x > w.lo; --x)
    at(x - 1) = at(x) * static_cast<double>(x) / static_cast<double>(nn - x + 1) / odds;
  double sum = 0;
  for (double q : w.pmf) sum += q;
  w.outside = std::max(0.0, 1 - sum);
  return w;
}

// An upper bound of Pr(a X1 / n1 - b X2 / n2 <= t) for X1 ~ Bin(n1, p1) and X2 with the
// probabilities `w2` of Bin(n2, p2).
double tail_upper(std::uint64_t n1, double p1, double a, std::uint64_t n2, const Window& w2,
                  double b, double t) {
  const Window w1 = binomial_window(n1, p1);
  // Pr(X1 <= x) from below the window (all of the outside mass, an upper bound) upward.
  std::vector<double> cdf1(w1.pmf.size());
  double run = w1.outside;
  for (std::size_t i = 0; i < cdf1.size(); ++i) cdf1[i] = std::min(1.0, run += w1.pmf[i]);
  const double scale = static_cast<double>(n1) / a;
  double total = w2.outside;
  for (std::size_t i = 0; i < w2.pmf.size(); ++i) {
    const auto x2 = static_cast<double>(w2.lo + static_cast<std::int64_t>(i));
    // The largest x1 with T <= t, with a little slack so that rounding never drops a tie.
    const double limit = scale * (t + b * x2 / static_cast<double>(n2));
    const auto x1 = static_cast<std::int64_t>(std::floor(limit + 1e-9 * (1 + std::abs(limit))));
    if (x1 < w1.lo) {
      total += w2.pmf[i] * std::min(1.0, w1.outside);
    } else {
      const auto k = static_cast<std::size_t>(x1 - w1.lo);
      total += w2.pmf[i] * (k < cdf1.size() ? cdf1[k] : 1.0);
    }
  }
  return std::min(1.0, total);
}

}  // namespace

double binomial_difference_upper(std::uint64_t k1, std::uint64_t n1, double a, std::uint64_t k2,
                                 std::uint64_t n2, double b, double delta) {
  RATEOPT_CHECK(k1 <= n1, "k1 is {}, expected at most n1 ({})", k1, n1);
  RATEOPT_CHECK(k2 <= n2, "k2 is {}, expected at most n2 ({})", k2, n2);
  RATEOPT_CHECK(std::isfinite(a) && a > 0, "a is {}, expected a positive finite weight", a);
  RATEOPT_CHECK(std::isfinite(b) && b > 0, "b is {}, expected a positive finite weight", b);
  RATEOPT_CHECK(delta > 0 && delta < 1, "delta is {}, expected a probability in (0, 1)", delta);
  if (n1 == 0 || n2 == 0) {
    // No exact joint test: each proportion at delta / 2 ([0, 1] for an empty sample).
    return a * (n1 == 0 ? 1.0 : clopper_pearson_upper(k1, n1, delta / 2)) -
           b * (n2 == 0 ? 0.0 : clopper_pearson_lower(k2, n2, delta / 2));
  }
  const double gamma = kGammaShare * delta;
  const double level = delta - gamma;
  const Interval nuisance = clopper_pearson(k2, n2, 1 - gamma);
  const double t = a * static_cast<double>(k1) / static_cast<double>(n1) -
                   b * static_cast<double>(k2) / static_cast<double>(n2);
  // The bound of a cell's probability at theta0 (0 where the cell holds no null point).
  const double width = (nuisance.high - nuisance.low) / kCells;
  const auto cell_low = [&](int c) { return nuisance.low + width * c; };
  const auto cell_high = [&](int c) {
    return c + 1 == kCells ? nuisance.high : nuisance.low + width * (c + 1);
  };
  // The cell's bound at theta0, with the probabilities of X2 at its corner computed once.
  const auto tail = [&](int c, const Window& w2, double theta0) {
    const double p1 = (theta0 + b * cell_low(c)) / a;
    if (p1 > 1) return 0.0;
    return tail_upper(n1, std::max(0.0, p1), a, n2, w2, b, t);
  };
  // The null is rejected at theta0 when every cell's bound is <= level; each bound falls as
  // theta0 grows, so the bound is the largest over cells of the theta0 where that cell's falls
  // to the level. Cells are visited from the observed p2 outward (the largest threshold is
  // usually near it), and a cell already at or below the level at the running largest needs no
  // search.
  const int first = std::clamp(
      static_cast<int>((static_cast<double>(k2) / static_cast<double>(n2) - nuisance.low) /
                       std::max(width, 1e-300)),
      0, kCells - 1);
  double bound = -b;  // the smallest value a p1 - b p2 can take
  for (int step = 0; step < 2 * kCells; ++step) {
    const int c = step % 2 == 0 ? first + step / 2 : first - (step + 1) / 2;
    if (c < 0 || c >= kCells) continue;
    const Window w2 = binomial_window(n2, cell_high(c));
    if (tail(c, w2, bound) <= level) continue;
    // The cell holds no null point above a - b u: its threshold lies in (bound, a - b u].
    double low = bound;
    double high = a - b * cell_low(c) + 1e-12 * (a + b);
    for (int i = 0; i < kBisections && high - low > 1e-9; ++i) {
      const double mid = 0.5 * (low + high);
      (tail(c, w2, mid) <= level ? high : low) = mid;
    }
    bound = high;
  }
  return std::min(a, bound);
}

}  // namespace rateopt
