// kQuadratic: O(n^2) dynamic programmes for fractional-linear metrics (Ye et al. 2012; the
// reconstruction of Natarajan et al.'s Algorithm 2, decide-notes 4.5).
//
// With B_k = #positives among the items after k, the functions S_k[x] = E[1 / (x + step B_k)]
// obey S_n[x] = 1 / x and S_{k-1}[x] = (1 - p_k) S_k[x] + p_k S_k[x + step] (item k moves from
// the top into the rest), so they are produced for k = n, n-1, ..., 1 by multiplication only.
//   F-beta, beta^2 = q/r:  E[k] = (q + r) sum_a a C_k[a] S_k[r k + q a]     (step q)
//   Jaccard:               E[k] = (sum_{j<=k} p_j) S_k[k]                   (step 1, no C_k)
//   recall (tpr):          E[k] = P(no positive) + sum_a a C_k[a] S_k[a]    (step 1)
//   balanced accuracy:     (tpr_k(p) + tpr_{n-k}(reverse(1 - p))) / 2: the tnr of top-k is the
//                          recall of the complementary problem.
// C_k (prefix rows) are needed in decreasing k and come from ReversePbRows.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "common/compensated_sum.hpp"
#include "decide/independent_impl.hpp"
#include "decide/poisson_binomial.hpp"

namespace rateopt::detail {
namespace {

using Family = DecideMetric::Family;

// S[x] for x = 1..size-1 (S[0] unused), updated in place through a second buffer.
class InverseMoments {
 public:
  InverseMoments(std::size_t size, std::size_t step) : step_(step), cur_(size + step + 1, 0.0) {
    for (std::size_t x = 1; x < cur_.size(); ++x) cur_[x] = 1.0 / double(x);
    next_ = cur_;
  }
  [[nodiscard]] double operator[](std::size_t x) const { return cur_[x]; }
  // Moves one item of probability p out of the top: S[x] <- (1-p) S[x] + p S[x + step] for
  // x = 1..limit.
  void fold(double p, std::size_t limit) {
    const double q = 1.0 - p;
    const double* src = cur_.data();
    double* dst = next_.data();
    const std::size_t step = step_;
    for (std::size_t x = 1; x <= limit; ++x) dst[x] = q * src[x] + p * src[x + step];
    std::swap(cur_, next_);
  }

 private:
  std::size_t step_;
  std::vector<double> cur_;
  std::vector<double> next_;
};

double prob_none(std::span<const double> p) {
  return std::exp(log_prob_no_success(p));
}

// Neumaier prefix sums T[k] = sum_{j<=k} p_j.
std::vector<double> prefix_sums(std::span<const double> p) {
  std::vector<double> t(p.size() + 1, 0.0);
  CompensatedSum sum;
  for (std::size_t k = 0; k < p.size(); ++k) {
    sum.add(p[k]);
    t[k + 1] = sum.value();
  }
  return t;
}

std::vector<double> fbeta_dp(std::span<const double> p, int q, int r, std::size_t block) {
  const std::size_t n = p.size();
  const auto qs = static_cast<std::size_t>(q);
  const auto rs = static_cast<std::size_t>(r);
  std::vector<double> e(n + 1, 0.0);
  e[0] = prob_none(p);
  ReversePbRows prefix(p, block);
  InverseMoments s((qs + rs) * n, qs);
  for (std::size_t k = n; k >= 1; --k) {
    const PbRow& c = prefix.row(k);
    double total = 0;
    for (std::size_t i = 0; i < c.mass.size(); ++i) {
      const std::size_t a = c.lo + i;
      if (a == 0) continue;
      total += double(a) * c.mass[i] * s[rs * k + qs * a];
    }
    e[k] = double(q + r) * total;
    s.fold(p[k - 1], (qs + rs) * (k - 1));
  }
  return e;
}

std::vector<double> jaccard_dp(std::span<const double> p) {
  const std::size_t n = p.size();
  const std::vector<double> t = prefix_sums(p);
  std::vector<double> e(n + 1, 0.0);
  e[0] = prob_none(p);
  InverseMoments s(n, 1);
  for (std::size_t k = n; k >= 1; --k) {
    e[k] = t[k] * s[k];
    s.fold(p[k - 1], k - 1);
  }
  return e;
}

// E[recall of the first k items], k = 0..n, for items in any order.
std::vector<double> recall_dp(std::span<const double> p, std::size_t block) {
  const std::size_t n = p.size();
  std::vector<double> e(n + 1, 0.0);
  const double none = prob_none(p);
  e[0] = none;
  ReversePbRows prefix(p, block);
  InverseMoments s(n, 1);
  for (std::size_t k = n; k >= 1; --k) {
    const PbRow& c = prefix.row(k);
    double total = 0;
    for (std::size_t i = 0; i < c.mass.size(); ++i) {
      const std::size_t a = c.lo + i;
      if (a > 0) total += double(a) * c.mass[i] * s[a];
    }
    e[k] = none + total;
    s.fold(p[k - 1], k - 1);
  }
  return e;
}

}  // namespace

std::optional<std::pair<int, int>> rational_beta2(double beta) {
  const double b2 = beta * beta;
  if (!(b2 > 0) || !std::isfinite(b2)) return std::nullopt;
  for (int r = 1; r < kMaxRationalSum; ++r) {
    const double q = std::round(b2 * r);
    if (q < 1 || q + r > kMaxRationalSum) continue;
    if (std::abs(q - b2 * r) <= 8 * DBL_EPSILON * b2 * r)
      return std::pair<int, int>{static_cast<int>(q), r};
  }
  return std::nullopt;
}

std::optional<IndependentExpectations> expected_quadratic(std::span<const double> sorted,
                                                          const DecideMetric& metric,
                                                          std::size_t block) {
  IndependentExpectations out;
  out.method = DecideMethod::kQuadratic;
  switch (metric.family()) {
    case Family::kFBeta: {
      const auto qr = rational_beta2(metric.beta());
      if (!qr) return std::nullopt;
      out.expected = fbeta_dp(sorted, qr->first, qr->second, block);
      return out;
    }
    case Family::kJaccard:
      out.expected = jaccard_dp(sorted);
      return out;
    case Family::kBalancedAccuracy: {
      const std::size_t n = sorted.size();
      std::vector<double> complement(n);
      for (std::size_t i = 0; i < n; ++i) complement[i] = 1.0 - sorted[n - 1 - i];
      const std::vector<double> tpr = recall_dp(sorted, block);
      const std::vector<double> tnr = recall_dp(complement, block);
      out.expected.resize(n + 1);
      for (std::size_t k = 0; k <= n; ++k) out.expected[k] = (tpr[k] + tnr[n - k]) / 2;
      return out;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace rateopt::detail
