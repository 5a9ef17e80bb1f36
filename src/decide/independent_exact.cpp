// kExact: Natarajan et al. 2016 Algorithm 1 (decide-notes 4.2). For every k,
//   E[k] = sum_a sum_b C_k[a] D_k[b] U(tp = a, fp = k - a, fn = b, tn = n - k - b),
// C_k = Poisson-binomial of the top k items (built forward), D_k = that of the rest (served in
// increasing k by ReversePbRows: full table or checkpoints). The double sum runs over the stored
// windows of both rows (optionally truncated); per metric family the utility is written as
// alpha(a) * beta(b) * w(a + b) plus a few exceptional cells, so the inner loop is an axpy with no
// function call. Accuracy and Jaccard factorise completely.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/compensated_sum.hpp"
#include "decide/independent_impl.hpp"
#include "decide/poisson_binomial.hpp"

namespace rateopt::detail {
namespace {

using Family = DecideMetric::Family;

// One k of the double sum; scratch buffers are reused across k.
class ExactKernel {
 public:
  ExactKernel(const DecideMetric& metric, std::size_t n) : metric_(metric), n_(n) {}

  double expect(std::size_t k, const PbRow& c, const PbWindow& wa, const PbRow& d,
                const PbWindow& wb) {
    k_ = k;
    a0_ = wa.first;
    na_ = wa.last - wa.first;
    b0_ = wb.first;
    nb_ = wb.last - wb.first;
    f_ = c.mass.data() + (wa.first - c.lo);
    g_ = d.mass.data() + (wb.first - d.lo);
    switch (metric_.family()) {
      case Family::kFBeta:
        return fbeta();
      case Family::kJaccard:
        return jaccard();
      case Family::kBalancedAccuracy:
        return balanced_accuracy();
      case Family::kGMean:
        return gmean();
      case Family::kHMean:
        return hmean();
      case Family::kGtppr:
        return gtppr();
      case Family::kAccuracy:
      case Family::kOther:
      case Family::kCustom:
        break;
    }
    return generic();
  }

 private:
  [[nodiscard]] double nd() const { return double(n_); }
  [[nodiscard]] double kd() const { return double(k_); }
  // Mass of the cell (a, b) when both are inside the windows, else 0.
  [[nodiscard]] double cell(std::size_t a, std::size_t b) const {
    if (a < a0_ || a >= a0_ + na_ || b < b0_ || b >= b0_ + nb_) return 0.0;
    return f_[a - a0_] * g_[b - b0_];
  }

  // sum_a sum_b F[a] G[b] w[a + b - a0 - b0] over the windows (F, G already weighted).
  double correlate() {
    double total = 0;
    if (na_ >= nb_) {
      acc_.assign(na_, 0.0);
      double* acc = acc_.data();
      for (std::size_t j = 0; j < nb_; ++j) {
        const double gj = gw_[j];
        if (gj == 0) continue;
        const double* w = w_.data() + j;
        for (std::size_t i = 0; i < na_; ++i) acc[i] += gj * w[i];
      }
      for (std::size_t i = 0; i < na_; ++i) total += fw_[i] * acc[i];
    } else {
      acc_.assign(nb_, 0.0);
      double* acc = acc_.data();
      for (std::size_t i = 0; i < na_; ++i) {
        const double fi = fw_[i];
        if (fi == 0) continue;
        const double* w = w_.data() + i;
        for (std::size_t j = 0; j < nb_; ++j) acc[j] += fi * w[j];
      }
      for (std::size_t j = 0; j < nb_; ++j) total += gw_[j] * acc[j];
    }
    return total;
  }

  // Fills fw_ = f * alpha, gw_ = g * beta, w_ = w(s) for s = a0 + b0 .. a0 + b0 + na + nb - 2.
  template <typename Alpha, typename Beta, typename W>
  void prepare(Alpha alpha, Beta beta, W w) {
    fw_.resize(na_);
    gw_.resize(nb_);
    w_.resize(na_ + nb_ - 1);
    for (std::size_t i = 0; i < na_; ++i) fw_[i] = f_[i] * alpha(double(a0_ + i));
    for (std::size_t j = 0; j < nb_; ++j) gw_[j] = g_[j] * beta(double(b0_ + j));
    for (std::size_t s = 0; s < w_.size(); ++s) w_[s] = w(a0_ + b0_ + s);
  }

  // F-beta = (1 + b2) a / (b2 (a + b) + k) for k >= 1; k = 0: 1 iff b = 0.
  double fbeta() {
    if (k_ == 0) return cell(0, 0);
    const double b2 = metric_.beta() * metric_.beta();
    const double k = kd();
    prepare([&](double a) { return (1 + b2) * a; }, [](double) { return 1.0; },
            [&](std::size_t s) { return 1.0 / (b2 * double(s) + k); });
    return correlate();
  }

  // Jaccard = a / (k + b) for k >= 1 (separable); k = 0: 1 iff b = 0.
  double jaccard() {
    if (k_ == 0) return cell(0, 0);
    double num = 0;
    for (std::size_t i = 0; i < na_; ++i) num += f_[i] * double(a0_ + i);
    double inv = 0;
    for (std::size_t j = 0; j < nb_; ++j) inv += g_[j] / (kd() + double(b0_ + j));
    return num * inv;
  }

  // (tpr + tnr) / 2; tpr = a / s (1 if s = 0), tnr = (n - k - b) / (n - s) (1 if s = n).
  double balanced_accuracy() {
    const double n = nd();
    const double k = kd();
    prepare([](double a) { return a; }, [](double) { return 1.0; },
            [](std::size_t s) { return s == 0 ? 0.0 : 1.0 / double(s); });
    double total = correlate();
    prepare([](double) { return 1.0; }, [&](double b) { return n - k - b; },
            [&](std::size_t s) { return s >= n_ ? 0.0 : 1.0 / (n - double(s)); });
    total += correlate();
    total += cell(0, 0);         // tpr = 1 when there are no positives
    total += cell(k_, n_ - k_);  // tnr = 1 when there are no negatives
    return total / 2;
  }

  // sqrt(tpr * tnr) = sqrt(a) sqrt(n - k - b) / sqrt(s (n - s)) for 0 < s < n.
  double gmean() {
    const double n = nd();
    const double k = kd();
    prepare([](double a) { return std::sqrt(a); }, [&](double b) { return std::sqrt(n - k - b); },
            [&](std::size_t s) {
              return s == 0 || s >= n_ ? 0.0 : 1.0 / std::sqrt(double(s) * (n - double(s)));
            });
    double total = correlate();
    total += cell(0, 0) * std::sqrt((n - k) / n);   // s = 0: tpr = 1, tnr = (n - k) / n
    total += cell(k_, n_ - k_) * std::sqrt(k / n);  // s = n: tpr = k / n, tnr = 1
    return total;
  }

  // sqrt(precision * recall) = a / sqrt(k s) for k >= 1; k = 0: 1 iff b = 0.
  double gtppr() {
    if (k_ == 0) return cell(0, 0);
    const double k = kd();
    prepare([](double a) { return a; }, [](double) { return 1.0; },
            [&](std::size_t s) { return s == 0 ? 0.0 : 1.0 / std::sqrt(k * double(s)); });
    return correlate();
  }

  // 2 tpr tnr / (tpr + tnr), 0 if either is 0. Inside (0 < s < n):
  // 2 a (n - k - b) / (a n + s (n - k - s)); the denominator is 0 only when the numerator is.
  double hmean() {
    const double n = nd();
    const double k = kd();
    acc_.assign(nb_, 0.0);
    double* acc = acc_.data();
    for (std::size_t i = 0; i < na_; ++i) {
      const double fi = f_[i];
      const auto a = double(a0_ + i);
      if (fi == 0 || a == 0) continue;
      for (std::size_t j = 0; j < nb_; ++j) {
        const auto b = double(b0_ + j);
        const double s = a + b;
        const double num = 2 * a * (n - k - b);
        const double den = a * n + s * (n - k - s);
        acc[j] += fi * (num / std::max(den, 1.0));
      }
    }
    double total = 0;
    for (std::size_t j = 0; j < nb_; ++j) total += g_[j] * acc[j];
    // s = n (a = k, b = n - k): tpr = k / n, tnr = 1; the loop above added 0 for it.
    total += cell(k_, n_ - k_) * (2 * k / (n + k));
    // s = 0 (a = 0, b = 0): tpr = 1, tnr = (n - k) / n; skipped above (a = 0).
    total += cell(0, 0) * (2 * (n - k) / (2 * n - k));
    return total;
  }

  // Any metric through DecideMetric::utility.
  double generic() {
    double total = 0;
    for (std::size_t i = 0; i < na_; ++i) {
      const double fi = f_[i];
      const auto a = double(a0_ + i);
      for (std::size_t j = 0; j < nb_; ++j) {
        const double m = fi * g_[j];
        if (m == 0) continue;
        const auto b = double(b0_ + j);
        total += m * metric_.utility(a, kd() - a, b, nd() - kd() - b);
      }
    }
    return total;
  }

  const DecideMetric& metric_;
  std::size_t n_;
  std::size_t k_ = 0;
  std::size_t a0_ = 0, na_ = 0, b0_ = 0, nb_ = 0;
  const double* f_ = nullptr;
  const double* g_ = nullptr;
  std::vector<double> fw_, gw_, w_, acc_;
};

// Accuracy = (tp + tn) / n is linear: E[k] = (E[A_k] + (n - k) - E[B_k]) / n.
IndependentExpectations exact_accuracy(std::span<const double> p) {
  const std::size_t n = p.size();
  CompensatedSum total;
  for (const double v : p) total.add(v);
  IndependentExpectations out;
  out.method = DecideMethod::kExact;
  out.expected.resize(n + 1);
  CompensatedSum prefix;
  for (std::size_t k = 0; k <= n; ++k) {
    if (k > 0) prefix.add(p[k - 1]);
    const double a = prefix.value();
    const double b = total.value() - a;
    out.expected[k] = (a + (double(n - k) - b)) / double(n);
  }
  return out;
}

}  // namespace

IndependentExpectations expected_exact(std::span<const double> sorted, const DecideMetric& metric,
                                       const ExactConfig& config) {
  const std::size_t n = sorted.size();
  if (metric.family() == Family::kAccuracy && n > 0) return exact_accuracy(sorted);
  IndependentExpectations out;
  out.method = DecideMethod::kExact;
  out.expected.assign(n + 1, std::numeric_limits<double>::quiet_NaN());
  // D_k = rows of the reversed items: row j of the reversed recursion is D_{n-j}.
  std::vector<double> reversed(sorted.rbegin(), sorted.rend());
  ReversePbRows suffix(reversed, config.block);
  const double tail = config.truncation / 4;
  ExactKernel kernel(metric, n);
  PbRow prefix = pb_unit_row();
  PbRow next;
  for (std::size_t k = 0; k <= n; ++k) {
    if (k > 0) {
      pb_extend(prefix, sorted[k - 1], next);
      std::swap(prefix, next);
    }
    const PbRow& rest = suffix.row(n - k);
    const PbWindow wa = pb_window(prefix, tail);
    const PbWindow wb = pb_window(rest, tail);
    out.error_bound = std::max(out.error_bound, wa.dropped + wb.dropped);
    out.expected[k] = kernel.expect(k, prefix, wa, rest, wb);
    if (config.early_stop && k >= 2 && out.expected[k - 1] >= out.expected[k]) break;
  }
  return out;
}

}  // namespace rateopt::detail
