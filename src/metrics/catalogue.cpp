// The metric catalogue: named functions of slice counts with explicit zero-denominator
// conventions (rateopt/metrics.hpp, docs/metrics.md).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/numeric.hpp"
#include "metrics/metrics_impl.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {

namespace {

using detail::kInf;

// num / den with the given value when den == 0.
double ratio(double num, double den, double if_zero) noexcept {
  return den > 0 ? num / den : if_zero;
}

// ---- rates (denominator zero -> the rate is 1, its complement 0) ----
double tpr(const Confusion& c) noexcept {
  return ratio(c.tp, c.positives(), 1);
}
double fnr(const Confusion& c) noexcept {
  return ratio(c.fn, c.positives(), 0);
}
double tnr(const Confusion& c) noexcept {
  return ratio(c.tn, c.negatives(), 1);
}
double fpr(const Confusion& c) noexcept {
  return ratio(c.fp, c.negatives(), 0);
}
double precision(const Confusion& c) noexcept {
  return ratio(c.tp, c.predicted_positive(), 1);
}

// ---- proportions of the slice total (empty slice -> 0) ----
double share(double x, const Confusion& c) noexcept {
  return ratio(x, c.total(), 0);
}

double m_ppr(const SliceCounts& s, double) noexcept {
  return share(s.confusion.predicted_positive(), s.confusion);
}
double m_npr(const SliceCounts& s, double) noexcept {
  return share(s.confusion.predicted_negative(), s.confusion);
}
double m_tpr(const SliceCounts& s, double) noexcept {
  return tpr(s.confusion);
}
double m_fnr(const SliceCounts& s, double) noexcept {
  return fnr(s.confusion);
}
double m_fpr(const SliceCounts& s, double) noexcept {
  return fpr(s.confusion);
}
double m_tnr(const SliceCounts& s, double) noexcept {
  return tnr(s.confusion);
}
double m_precision(const SliceCounts& s, double) noexcept {
  return precision(s.confusion);
}
double m_npv(const SliceCounts& s, double) noexcept {
  return ratio(s.confusion.tn, s.confusion.predicted_negative(), 1);
}
double m_error(const SliceCounts& s, double) noexcept {
  return share(s.confusion.fp + s.confusion.fn, s.confusion);
}
double m_accuracy(const SliceCounts& s, double) noexcept {
  return share(s.confusion.tp + s.confusion.tn, s.confusion);
}
double m_tp(const SliceCounts& s, double) noexcept {
  return share(s.confusion.tp, s.confusion);
}
double m_fp(const SliceCounts& s, double) noexcept {
  return share(s.confusion.fp, s.confusion);
}
double m_fn(const SliceCounts& s, double) noexcept {
  return share(s.confusion.fn, s.confusion);
}
double m_tn(const SliceCounts& s, double) noexcept {
  return share(s.confusion.tn, s.confusion);
}
double m_f1(const SliceCounts& s, double) noexcept {
  return fbeta_score(s.confusion, 1);
}
double m_fbeta(const SliceCounts& s, double beta) noexcept {
  return fbeta_score(s.confusion, beta);
}
double m_jaccard(const SliceCounts& s, double) noexcept {
  const Confusion& c = s.confusion;
  return ratio(c.tp, c.tp + c.fp + c.fn, 1);
}
double m_balanced_accuracy(const SliceCounts& s, double) noexcept {
  return (tpr(s.confusion) + tnr(s.confusion)) / 2;
}
double m_gmean(const SliceCounts& s, double) noexcept {
  return std::sqrt(tpr(s.confusion) * tnr(s.confusion));
}
double m_hmean(const SliceCounts& s, double) noexcept {
  // 2 / (1/a + 1/b) = 2ab / (a + b); 0 when either rate is 0.
  const double a = tpr(s.confusion);
  const double b = tnr(s.confusion);
  return (a > 0 && b > 0) ? 2 * a * b / (a + b) : 0.0;
}
double m_qmean(const SliceCounts& s, double) noexcept {
  const double a = fpr(s.confusion);
  const double b = fnr(s.confusion);
  return 1 - std::sqrt((a * a + b * b) / 2);
}
double m_gtppr(const SliceCounts& s, double) noexcept {
  return std::sqrt(precision(s.confusion) * tpr(s.confusion));
}
double m_kld(const SliceCounts& s, double) noexcept {
  const Confusion& c = s.confusion;
  if (!(c.total() > 0)) return 0;
  return kl_divergence(c.positives() / c.total(), c.predicted_positive() / c.total());
}
double m_churn(const SliceCounts& s, double) noexcept {
  return ratio(s.changes, s.total, 0);
}
double m_wins(const SliceCounts& s, double) noexcept {
  return ratio(s.wins, s.total, 0);
}
double m_losses(const SliceCounts& s, double) noexcept {
  return ratio(s.losses, s.total, 0);
}
double m_winloss(const SliceCounts& s, double) noexcept {
  if (s.losses > 0) return s.wins / s.losses;
  return s.wins > 0 ? kInf : 1.0;
}

// ---- ratio forms (MetricShape::kRatio), in counts divided by the slice total ----
void r_precision(double, CountForm& num, CountForm& den) noexcept {
  num.tp = 1;
  den.tp = 1;
  den.fp = 1;
}
// tn / (fn + tn) = (negatives - fp) / (1 - tp - fp).
void r_npv(double, CountForm& num, CountForm& den) noexcept {
  num.negatives = 1;
  num.fp = -1;
  den.constant = 1;
  den.tp = -1;
  den.fp = -1;
}
// A beta above this is taken as this (decide caps it the same way): F_beta is then recall to
// double precision, and beta^2 stays finite.
constexpr double kMaxBeta = 1e100;

// (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp) = (1 + b^2) tp / (tp + fp + b^2 positives).
void r_fbeta(double beta, CountForm& num, CountForm& den) noexcept {
  const double b2 = std::min(beta, kMaxBeta) * std::min(beta, kMaxBeta);
  num.tp = 1 + b2;
  den.tp = 1;
  den.fp = 1;
  den.positives = b2;
}
void r_f1(double, CountForm& num, CountForm& den) noexcept {
  r_fbeta(1, num, den);
}
// tp / (tp + fp + fn) = tp / (fp + positives).
void r_jaccard(double, CountForm& num, CountForm& den) noexcept {
  num.tp = 1;
  den.fp = 1;
  den.positives = 1;
}
void r_winloss(double, CountForm& num, CountForm& den) noexcept {
  num.wins = 1;
  den.losses = 1;
}

// Another name for `target`: the same definition and properties.
constexpr MetricInfo alias(const MetricInfo& target, std::string_view name,
                           std::string_view summary) {
  MetricInfo m = target;
  m.name = name;
  m.summary = summary;
  m.alias_of = target.name;
  return m;
}

using S = MetricShape;
using D = DecideKernel;

// Proportions and rates: affine in the rates.
constexpr MetricInfo kPpr{.name = "ppr",
                          .summary = "predicted positive rate (tp+fp)/total; 0 on an empty slice",
                          .needs_labels = false,
                          .compute = &m_ppr,
                          .shape = S::kLinear,
                          .share_of = kCellTp | kCellFp,
                          .share_in = kCellAll};
constexpr MetricInfo kNpr{.name = "npr",
                          .summary = "predicted negative rate (fn+tn)/total; 0 on an empty slice",
                          .bigger_is_better = false,
                          .needs_labels = false,
                          .compute = &m_npr,
                          .shape = S::kLinear,
                          .share_of = kCellFn | kCellTn,
                          .share_in = kCellAll};
constexpr MetricInfo kTpr{.name = "tpr",
                          .summary = "true positive rate tp/(tp+fn); 1 without positives",
                          .compute = &m_tpr,
                          .shape = S::kLinear,
                          .monotone = true,
                          .decide = D::kGeneric,
                          .share_of = kCellTp,
                          .share_in = kCellTp | kCellFn};
constexpr MetricInfo kFnr{
    .name = "fnr",
    .summary = "false negative rate fn/(tp+fn) = 1 - tpr; 0 without positives",
    .bigger_is_better = false,
    .compute = &m_fnr,
    .shape = S::kLinear,
    .monotone = true,
    .complement = "tpr (recall)",
    .share_of = kCellFn,
    .share_in = kCellTp | kCellFn};
constexpr MetricInfo kFpr{
    .name = "fpr",
    .summary = "false positive rate fp/(fp+tn) = 1 - tnr; 0 without negatives",
    .bigger_is_better = false,
    .compute = &m_fpr,
    .shape = S::kLinear,
    .monotone = true,
    .complement = "tnr",
    .share_of = kCellFp,
    .share_in = kCellFp | kCellTn};
constexpr MetricInfo kTnr{.name = "tnr",
                          .summary = "true negative rate tn/(fp+tn); 1 without negatives",
                          .compute = &m_tnr,
                          .shape = S::kLinear,
                          .monotone = true,
                          .decide = D::kGeneric,
                          .share_of = kCellTn,
                          .share_in = kCellFp | kCellTn};
constexpr MetricInfo kPrecision{.name = "precision",
                                .summary = "tp/(tp+fp); 1 for the empty prediction (tp+fp = 0)",
                                .compute = &m_precision,
                                .shape = S::kRatio,
                                .ratio = &r_precision,
                                .monotone = true,
                                .decide = D::kGeneric,
                                .share_of = kCellTp,
                                .share_in = kCellTp | kCellFp};
constexpr MetricInfo kNpv{
    .name = "npv",
    .summary = "negative predictive value tn/(fn+tn); 1 when nothing is predicted negative",
    .compute = &m_npv,
    .shape = S::kRatio,
    .ratio = &r_npv,
    .monotone = true,
    .decide = D::kGeneric,
    .share_of = kCellTn,
    .share_in = kCellFn | kCellTn};
constexpr MetricInfo kError{.name = "error",
                            .summary = "error rate (fp+fn)/total; 0 on an empty slice",
                            .bigger_is_better = false,
                            .compute = &m_error,
                            .shape = S::kLinear,
                            .monotone = true,
                            .complement = "accuracy",
                            .share_of = kCellFp | kCellFn,
                            .share_in = kCellAll};
constexpr MetricInfo kAccuracy{.name = "accuracy",
                               .summary = "(tp+tn)/total; 0 on an empty slice",
                               .compute = &m_accuracy,
                               .shape = S::kLinear,
                               .monotone = true,
                               .decide = D::kAccuracy,
                               .share_of = kCellTp | kCellTn,
                               .share_in = kCellAll};
constexpr MetricInfo kTp{.name = "tp",
                         .summary = "true positives as a proportion tp/total; 0 on an empty slice",
                         .compute = &m_tp,
                         .shape = S::kLinear,
                         .monotone = true,
                         .decide = D::kGeneric,
                         .share_of = kCellTp,
                         .share_in = kCellAll};
constexpr MetricInfo kFp{.name = "fp",
                         .summary = "false positives as a proportion fp/total; 0 on an empty slice",
                         .bigger_is_better = false,
                         .compute = &m_fp,
                         .shape = S::kLinear,
                         .monotone = true,
                         .complement = "tn",
                         .share_of = kCellFp,
                         .share_in = kCellAll};
constexpr MetricInfo kFn{.name = "fn",
                         .summary = "false negatives as a proportion fn/total; 0 on an empty slice",
                         .bigger_is_better = false,
                         .compute = &m_fn,
                         .shape = S::kLinear,
                         .monotone = true,
                         .complement = "tp",
                         .share_of = kCellFn,
                         .share_in = kCellAll};
constexpr MetricInfo kTn{.name = "tn",
                         .summary = "true negatives as a proportion tn/total; 0 on an empty slice",
                         .compute = &m_tn,
                         .shape = S::kLinear,
                         .monotone = true,
                         .decide = D::kGeneric,
                         .share_of = kCellTn,
                         .share_in = kCellAll};
// F-measures and Jaccard: ratios.
constexpr MetricInfo kF1{.name = "f1",
                         .summary = "2tp/(2tp+fp+fn); 1 when tp = fp = fn = 0",
                         .compute = &m_f1,
                         .shape = S::kRatio,
                         .ratio = &r_f1,
                         .monotone = true,
                         .decide = D::kFBeta};
constexpr MetricInfo kFbeta{
    .name = "fbeta",
    .summary =
        "(1+b^2)tp/((1+b^2)tp+b^2 fn+fp), param beta > 0 (default 1); 1 when tp = fp = fn "
        "= 0",
    .has_param = true,
    .default_param = 1,
    .compute = &m_fbeta,
    .shape = S::kRatio,
    .ratio = &r_fbeta,
    .monotone = true,
    .decide = D::kFBeta};
constexpr MetricInfo kJaccard{.name = "jaccard",
                              .summary = "tp/(tp+fp+fn); 1 when tp = fp = fn = 0",
                              .compute = &m_jaccard,
                              .shape = S::kRatio,
                              .ratio = &r_jaccard,
                              .monotone = true,
                              .decide = D::kJaccard};
// Functions of two rates.
constexpr MetricInfo kBalancedAccuracy{.name = "balanced_accuracy",
                                       .summary = "(tpr+tnr)/2 with the tpr/tnr conventions",
                                       .compute = &m_balanced_accuracy,
                                       .shape = S::kLinear,
                                       .monotone = true,
                                       .decide = D::kBalancedAccuracy};
constexpr MetricInfo kGmean{.name = "gmean",
                            .summary = "sqrt(tpr*tnr) with the tpr/tnr conventions",
                            .compute = &m_gmean,
                            .shape = S::kGmean,
                            .monotone = true,
                            .decide = D::kGMean};
constexpr MetricInfo kHmean{.name = "hmean",
                            .summary = "2/(1/tpr+1/tnr); 0 when tpr or tnr is 0",
                            .compute = &m_hmean,
                            .shape = S::kHmean,
                            .monotone = true,
                            .decide = D::kHMean};
constexpr MetricInfo kQmean{.name = "qmean",
                            .summary = "1 - sqrt((fpr^2+fnr^2)/2), a utility; fpr/fnr conventions",
                            .compute = &m_qmean,
                            .shape = S::kQmean,
                            .monotone = true,
                            .decide = D::kGeneric};
constexpr MetricInfo kGtppr{.name = "gtppr",
                            .summary = "sqrt(precision*recall) with their conventions",
                            .compute = &m_gtppr,
                            .shape = S::kGeneric,
                            .monotone = true,
                            .decide = D::kGtppr};
constexpr MetricInfo kKld{
    .name = "kld",
    .summary =
        "KL(p||q), p = (tp+fn)/total, q = (tp+fp)/total, natural log; 0 log 0 = 0, +inf "
        "when q in {0,1} and p is not; 0 on an empty slice",
    .bigger_is_better = false,
    .compute = &m_kld,
    .shape = S::kKld};
// Against a baseline model (churn).
constexpr MetricInfo kChurn{
    .name = "churn",
    .summary = "changes/total (prediction differs from the baseline); 0 on an empty slice",
    .bigger_is_better = false,
    .needs_baseline = true,
    .needs_labels = false,
    .compute = &m_churn,
    .shape = S::kLinear};
constexpr MetricInfo kWins{.name = "wins",
                           .summary = "wins/total (new right, baseline wrong); 0 on an empty slice",
                           .needs_baseline = true,
                           .compute = &m_wins,
                           .shape = S::kLinear};
constexpr MetricInfo kLosses{
    .name = "losses",
    .summary = "losses/total (new wrong, baseline right); 0 on an empty slice",
    .bigger_is_better = false,
    .needs_baseline = true,
    .compute = &m_losses,
    .shape = S::kLinear};
constexpr MetricInfo kWinloss{
    .name = "winloss",
    .summary = "wins/losses; +inf when losses = 0 < wins, 1 when both are 0",
    .needs_baseline = true,
    .compute = &m_winloss,
    .shape = S::kRatio,
    .ratio = &r_winloss};

constexpr std::array kCatalogue{
    kPpr,
    alias(kPpr, "coverage", "alias of ppr: (tp+fp)/total; 0 on an empty slice"),
    kNpr,
    kTpr,
    alias(kTpr, "recall", "alias of tpr: tp/(tp+fn); 1 without positives"),
    kFnr,
    kFpr,
    kTnr,
    kPrecision,
    kNpv,
    kError,
    kAccuracy,
    kTp,
    kFp,
    kFn,
    kTn,
    kF1,
    kFbeta,
    kJaccard,
    kBalancedAccuracy,
    kGmean,
    kHmean,
    kQmean,
    kGtppr,
    kKld,
    kChurn,
    kWins,
    kLosses,
    kWinloss,
};

std::string metric_names() {
  std::string out;
  for (const auto& m : kCatalogue) {
    if (!out.empty()) out += ", ";
    out += m.name;
  }
  return out;
}

}  // namespace

std::span<const MetricInfo> metric_catalogue() noexcept {
  return kCatalogue;
}

const MetricInfo* find_metric(std::string_view name) noexcept {
  for (const auto& m : kCatalogue)
    if (m.name == name) return &m;
  return nullptr;
}

double compute_metric(std::string_view spec, const SliceCounts& counts) {
  const auto colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const MetricInfo* info = find_metric(name);
  if (info == nullptr)
    throw NotFound(fmt::format("unknown metric '{}' (metrics: {})", name, metric_names()));
  double param = info->default_param;
  if (colon != std::string_view::npos) {
    const std::string_view text = spec.substr(colon + 1);
    RATEOPT_CHECK(info->has_param, "metric '{}' takes no parameter, got '{}'", name, spec);
    double v = 0;
    RATEOPT_CHECK(metrics_impl::parse_number(text, v),
                  "metric '{}': parameter '{}' is not a finite number", spec, text);
    param = v;
  }
  if (info->has_param)
    RATEOPT_CHECK(param > 0 && std::isfinite(param),
                  "metric '{}': parameter is {}, expected a finite value > 0", spec, param);
  const Confusion& c = counts.confusion;
  for (double x : {c.tp, c.fp, c.fn, c.tn})
    RATEOPT_CHECK(x >= 0 && std::isfinite(x),
                  "metric '{}': confusion entries must be finite and >= 0, got tp={} fp={} fn={} "
                  "tn={}",
                  spec, c.tp, c.fp, c.fn, c.tn);
  if (info->needs_baseline) {
    RATEOPT_CHECK(counts.has_baseline(),
                  "metric '{}' needs baseline counts (a 'baseline' column or baseline predictions)",
                  name);
    for (double x : {counts.total, counts.changes, counts.wins, counts.losses})
      RATEOPT_CHECK(x >= 0 && std::isfinite(x),
                    "metric '{}': baseline counts must be finite and >= 0, got total={} "
                    "changes={} wins={} losses={}",
                    spec, counts.total, counts.changes, counts.wins, counts.losses);
  }
  return info->compute(counts, param);
}

double cell_mass(const Confusion& c, std::uint8_t cells) noexcept {
  double m = 0;
  if ((cells & kCellTp) != 0) m += c.tp;
  if ((cells & kCellFp) != 0) m += c.fp;
  if ((cells & kCellFn) != 0) m += c.fn;
  if ((cells & kCellTn) != 0) m += c.tn;
  return m;
}

double CountForm::evaluate(const SliceCounts& counts) const noexcept {
  const Confusion& c = counts.confusion;
  const double total = c.total();
  double v = constant;
  // Terms with a zero coefficient are skipped (wins / losses are NaN without a baseline).
  const auto add = [&](double coef, double count) {
    if (coef != 0) v += coef * (count / total);
  };
  add(tp, c.tp);
  add(fp, c.fp);
  add(positives, c.positives());
  add(negatives, c.negatives());
  add(wins, counts.wins);
  add(losses, counts.losses);
  return v;
}

double fbeta_score(const Confusion& c, double beta) noexcept {
  if (!(beta > 0) || !std::isfinite(beta)) return std::numeric_limits<double>::quiet_NaN();
  const double b2 = std::min(beta, kMaxBeta) * std::min(beta, kMaxBeta);
  const double num = (1 + b2) * c.tp;
  return ratio(num, num + b2 * c.fn + c.fp, 1);
}

double kl_divergence(double label_rate, double predicted_rate) noexcept {
  const double p = label_rate;
  const double q = predicted_rate;
  if (!(p >= 0 && p <= 1 && q >= 0 && q <= 1)) return std::numeric_limits<double>::quiet_NaN();
  // a log(a/b) with 0 log 0 = 0 and a log(a/0) = +inf for a > 0.
  const auto term = [](double a, double b) {
    if (a == 0) return 0.0;
    if (b == 0) return kInf;
    return a * std::log(a / b);
  };
  const double d = term(p, q) + term(1 - p, 1 - q);
  return d > 0 ? d : 0.0;  // rounding can leave a tiny negative value near p = q
}

}  // namespace rateopt
