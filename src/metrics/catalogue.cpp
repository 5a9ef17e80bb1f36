// The metric catalogue: named functions of slice counts with explicit zero-denominator
// conventions (rateopt/metrics.hpp, docs/metrics.md).
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "metrics/metrics_impl.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

// name, summary, bigger_is_better, has_param, default_param, needs_baseline, needs_labels, fn
constexpr std::array kCatalogue{
    MetricInfo{"ppr", "predicted positive rate (tp+fp)/total; 0 on an empty slice", true, false, 0,
               false, false, &m_ppr},
    MetricInfo{"coverage", "alias of ppr: (tp+fp)/total; 0 on an empty slice", true, false, 0,
               false, false, &m_ppr},
    MetricInfo{"npr", "predicted negative rate (fn+tn)/total; 0 on an empty slice", false, false, 0,
               false, false, &m_npr},
    MetricInfo{"tpr", "true positive rate tp/(tp+fn); 1 without positives", true, false, 0, false,
               true, &m_tpr},
    MetricInfo{"recall", "alias of tpr: tp/(tp+fn); 1 without positives", true, false, 0, false,
               true, &m_tpr},
    MetricInfo{"fnr", "false negative rate fn/(tp+fn) = 1 - tpr; 0 without positives", false, false,
               0, false, true, &m_fnr},
    MetricInfo{"fpr", "false positive rate fp/(fp+tn) = 1 - tnr; 0 without negatives", false, false,
               0, false, true, &m_fpr},
    MetricInfo{"tnr", "true negative rate tn/(fp+tn); 1 without negatives", true, false, 0, false,
               true, &m_tnr},
    MetricInfo{"precision", "tp/(tp+fp); 1 for the empty prediction (tp+fp = 0)", true, false, 0,
               false, true, &m_precision},
    MetricInfo{"error", "error rate (fp+fn)/total; 0 on an empty slice", false, false, 0, false,
               true, &m_error},
    MetricInfo{"accuracy", "(tp+tn)/total; 0 on an empty slice", true, false, 0, false, true,
               &m_accuracy},
    MetricInfo{"tp", "true positives as a proportion tp/total; 0 on an empty slice", true, false, 0,
               false, true, &m_tp},
    MetricInfo{"fp", "false positives as a proportion fp/total; 0 on an empty slice", false, false,
               0, false, true, &m_fp},
    MetricInfo{"fn", "false negatives as a proportion fn/total; 0 on an empty slice", false, false,
               0, false, true, &m_fn},
    MetricInfo{"tn", "true negatives as a proportion tn/total; 0 on an empty slice", true, false, 0,
               false, true, &m_tn},
    MetricInfo{"f1", "2tp/(2tp+fp+fn); 1 when tp = fp = fn = 0", true, false, 0, false, true,
               &m_f1},
    MetricInfo{"fbeta",
               "(1+b^2)tp/((1+b^2)tp+b^2 fn+fp), param beta > 0 (default 1); 1 when tp = fp = fn "
               "= 0",
               true, true, 1, false, true, &m_fbeta},
    MetricInfo{"jaccard", "tp/(tp+fp+fn); 1 when tp = fp = fn = 0", true, false, 0, false, true,
               &m_jaccard},
    MetricInfo{"balanced_accuracy", "(tpr+tnr)/2 with the tpr/tnr conventions", true, false, 0,
               false, true, &m_balanced_accuracy},
    MetricInfo{"gmean", "sqrt(tpr*tnr) with the tpr/tnr conventions", true, false, 0, false, true,
               &m_gmean},
    MetricInfo{"hmean", "2/(1/tpr+1/tnr); 0 when tpr or tnr is 0", true, false, 0, false, true,
               &m_hmean},
    MetricInfo{"qmean", "1 - sqrt((fpr^2+fnr^2)/2), a utility; fpr/fnr conventions", true, false, 0,
               false, true, &m_qmean},
    MetricInfo{"gtppr", "sqrt(precision*recall) with their conventions", true, false, 0, false,
               true, &m_gtppr},
    MetricInfo{"kld",
               "KL(p||q), p = (tp+fn)/total, q = (tp+fp)/total, natural log; 0 log 0 = 0, +inf "
               "when q in {0,1} and p is not; 0 on an empty slice",
               false, false, 0, false, true, &m_kld},
    MetricInfo{"churn", "changes/total (prediction differs from the baseline); 0 on an empty slice",
               false, false, 0, true, false, &m_churn},
    MetricInfo{"wins", "wins/total (new right, baseline wrong); 0 on an empty slice", true, false,
               0, true, true, &m_wins},
    MetricInfo{"losses", "losses/total (new wrong, baseline right); 0 on an empty slice", false,
               false, 0, true, true, &m_losses},
    MetricInfo{"winloss", "wins/losses; +inf when losses = 0 < wins, 1 when both are 0", true,
               false, 0, true, true, &m_winloss},
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

double fbeta_score(const Confusion& c, double beta) noexcept {
  if (!(beta > 0) || !std::isfinite(beta)) return std::numeric_limits<double>::quiet_NaN();
  const double b2 = beta * beta;
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
