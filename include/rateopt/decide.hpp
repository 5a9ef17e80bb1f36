// File: rateopt/decide.hpp
// Bayes-optimal set prediction for non-decomposable metrics (Natarajan et al. 2016; Waegeman et
// al. 2014): given probability estimates, return the set of positive predictions that maximises
// the *expected* value of a metric of the confusion counts.
//
// Settings:
//   independent  n items with marginals p_1..p_n (a binary test set, or the labels of one instance
//                under label independence). The optimum is a top-k set by probability; what is
//                computed is E[metric(top-k)] for every k = 0..n.
//   gfm          any joint distribution over label vectors (F1 / F-beta only), given by the m x m
//                matrix P(y_i = 1, s_y = s) and P(y = 0), or counted from weighted samples.
//   multiclass   class probabilities summing to 1; the truth is one class, the prediction a set.
//
// Conventions (the same as metrics.hpp): a rate whose denominator is zero equals 1; F-beta and
// Jaccard of an empty prediction against an empty truth equal DecideOptions::empty_score (1 by
// default; scikit-learn's zero_division=0 and Kaggle's Instacart metric use 0); hmean of two zero
// rates is 0. The empty prediction (k = 0) is always a candidate. Ties between equal
// probabilities are broken by lower index; ties between equal expectations by smaller k, where
// expectations within the tie tolerance of the best count as equal (docs/decide.md 1.1: 8 ulp
// for GFM and multiclass; for the independent methods also twice the method's error bound plus
// twice a rounding allowance, so exact ties resolve the same way under every method).
//
// Methods (independent setting):
//   kBrute      all 2^n subsets, exact (n <= 20): the reference oracle.
//   kExact      Natarajan Algorithm 1 from Poisson-binomial tables (multiplication only), any
//               metric; optional truncation of probability mass below `truncation`.
//   kQuadratic  O(n^2) for fractional-linear metrics (F-beta with rational beta^2, Jaccard):
//               Natarajan Algorithm 2 / Ye et al. 2012.
//   kFast       quadrature on shared nodes for F-beta, Jaccard and balanced accuracy; reports a
//               bound on the error of every E[k] in Decision::error_bound.
//   kAuto       the fastest method that is exact to ~1e-10 for the metric and n.
//
// Thread-safety: all functions are pure; batch helpers parallelise over instances.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {

// A utility (bigger is better) of the confusion counts of one set prediction.
// The names DecideMetric::from_name accepts, in catalogue order: "tpr, recall, ..., fbeta:B, ...".
[[nodiscard]] std::string decide_metric_names();

class DecideMetric {
 public:
  enum class Family {
    kFBeta,
    kJaccard,
    kBalancedAccuracy,
    kGMean,
    kHMean,
    kGtppr,
    kAccuracy,
    kOther,  // another utility of the metric catalogue (precision, recall, ...): generic kernel
    kCustom
  };

  // "f1", "fbeta:B" (B > 0), "jaccard", "balanced_accuracy", "gmean", "hmean", "gtppr",
  // "accuracy", and every other utility of the metric catalogue (metrics.hpp) that depends on
  // the truth and needs no baseline, under rateopt eval's names: "precision", "recall" / "tpr",
  // "tnr", "tp", "tn", "qmean". Throws NotFound (unknown name) / InvalidArgument (a bad
  // parameter; a loss such as "error" or "fpr", naming its complement; a metric that needs no
  // labels or a baseline).
  static DecideMetric from_name(std::string_view spec);
  // Any function of (tp, fp, fn, tn) counts; it must handle zero denominators itself.
  static DecideMetric custom(std::string name,
                             std::function<double(double tp, double fp, double fn, double tn)> fn);

  [[nodiscard]] double utility(double tp, double fp, double fn, double tn) const;
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] Family family() const noexcept { return family_; }
  [[nodiscard]] double beta() const noexcept { return beta_; }

 private:
  std::string name_;
  Family family_ = Family::kFBeta;
  double beta_ = 1.0;
  std::function<double(double, double, double, double)> fn_;
};

enum class DecideMethod { kAuto, kBrute, kExact, kQuadratic, kFast };
[[nodiscard]] std::string_view to_string(DecideMethod method) noexcept;
[[nodiscard]] DecideMethod parse_decide_method(std::string_view name);

struct DecideOptions {
  DecideMethod method = DecideMethod::kAuto;
  bool all_k = false;             // fill Decision::expected_by_k
  double truncation = 0.0;        // kExact: drop Poisson-binomial mass below this (0 = exact)
  bool early_stop = false;        // Natarajan's heuristic: stop at the first k where E falls
                                  // (NOT exact, opt-in only)
  double fast_tolerance = 1e-12;  // kFast: target bound on |E[k] - exact| for every k, raised
                                  // to the rounding floor for n items where that is larger
                                  // (above ~1.7M items: 1.25e-12 + 4.4e-19 n; error_bound says
                                  // what held)
  // F-beta and Jaccard of an empty prediction against an empty truth, in [0, 1]: 1 (default) or 0
  // (scikit-learn's f1_score(average='samples', zero_division=0), Kaggle's Instacart metric).
  // Changes E of the empty set only: E[0] = empty_score * P(y = 0) (independent, GFM); the
  // multiclass truth is never empty. A value other than 1 with another metric: InvalidArgument.
  double empty_score = 1.0;
  // Independent model, F-beta / Jaccard (InvalidArgument otherwise): the `None` pseudo-item of
  // the Instacart kernels. None is one more label, true iff no item is; the prediction is a set
  // of items, optionally with None, scored by the metric over items + None (so the truth is
  // never empty and empty_score does not apply). Decision::none says whether None is predicted.
  // Methods as without it (two runs of the method); not with early_stop.
  bool none_item = false;
};

struct Decision {
  std::vector<std::size_t> selected;  // 0-based indices, by decreasing probability
  double expected = 0;                // E[metric] of the selected set
  std::vector<double> expected_by_k;  // E for k = 0..n (options.all_k; GFM and multiclass too)
  DecideMethod method = DecideMethod::kAuto;  // the method that ran
  double error_bound = 0;  // kFast: bound on |E[k] - exact| for every k; 0 if exact
                           // (kExact with truncation > 0, incl. kAuto's 1e-15 for
                           // non-fractional metrics: the dropped probability mass)
  bool none = false;       // none_item: the None pseudo-item is predicted (with `selected`)
  std::vector<double> expected_by_k_none;  // none_item and all_k: E of top-k + None, k = 0..n
};

// Independent items. Probabilities must be finite and in [0, 1] (InvalidArgument otherwise).
// n = 0 gives the empty set with E = metric(0, 0, 0, 0) (empty_score for F-beta / Jaccard;
// with none_item, {None} with E = 1). With early_stop, kExact leaves the
// expected_by_k entries it did not evaluate as NaN. Complexity and measured times:
// docs/decide.md.
[[nodiscard]] Decision decide_independent(std::span<const double> probabilities,
                                          const DecideMetric& metric,
                                          const DecideOptions& options = {});

// Multiclass set-valued prediction; probabilities sum to 1 (within 1e-6).
[[nodiscard]] Decision decide_multiclass(std::span<const double> class_probabilities,
                                         const DecideMetric& metric,
                                         const DecideOptions& options = {});

// GFM input: p[i * m + (s - 1)] = P(y_i = 1, s_y = s) for i, s in [1, m]; p_zero = P(y = 0).
struct GfmInput {
  std::size_t m = 0;
  std::vector<double> p;
  double p_zero = 0;
};
// Counts P from weighted label-vector samples (weights empty = 1).
[[nodiscard]] GfmInput gfm_from_samples(LabelSetsView samples, std::span<const double> weights,
                                        std::size_t m);
// F-beta only (metric family kFBeta). Exact for any joint distribution.
// P need not be consistent (estimates may violate the invariants; entries in [0, 1] suffice).
// `selected` is ordered by decreasing Delta[i][k*] = E[(1 + b^2) y_i / (b^2 s_y + k*)] (the
// label's share of E), ties by lower index; methods: auto or exact. O(m^2 + r^2 c), r = labels
// with a non-zero row, c = cardinalities with a non-zero column.
[[nodiscard]] Decision decide_gfm(const GfmInput& input, const DecideMetric& metric,
                                  const DecideOptions& options = {});
// The same decision, bit for bit, as decide_gfm(gfm_from_samples(samples, weights, m), ...),
// without forming the m x m matrix: O(labels in the samples + m + r^2 c), r = distinct labels
// seen, c = distinct sample sizes (e.g. the labels of l nearest neighbours, or ancestral samples
// of a classifier chain).
[[nodiscard]] Decision decide_gfm_samples(LabelSetsView samples, std::span<const double> weights,
                                          std::size_t m, const DecideMetric& metric,
                                          const DecideOptions& options = {});

// ---- batches ----------------------------------------------------------------------------------
enum class DecideModel { kIndependent, kMulticlass };

// What the batch functions throw for an invalid instance: InvalidArgument "instance i: detail",
// with i and the detail kept so that a caller can name the instance its own way (file and line).
class BatchInstanceError : public InvalidArgument {
 public:
  BatchInstanceError(std::size_t instance, std::string detail);
  [[nodiscard]] std::size_t instance() const noexcept { return instance_; }
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }

 private:
  std::size_t instance_;
  std::string detail_;
};

// One Decision per instance, in order; instances may differ in length. Parallel over instances
// (n_threads <= 0: all cores); results do not depend on the thread count. An invalid instance
// throws BatchInstanceError naming its index.
[[nodiscard]] std::vector<Decision> decide_batch(DecideModel model,
                                                 std::span<const std::vector<double>> instances,
                                                 const DecideMetric& metric,
                                                 const DecideOptions& options = {},
                                                 int n_threads = 0);
// The same over views (numpy rows, memory-mapped files): instances[i] must outlive the call.
[[nodiscard]] std::vector<Decision> decide_batch(DecideModel model,
                                                 std::span<const std::span<const double>> instances,
                                                 const DecideMetric& metric,
                                                 const DecideOptions& options = {},
                                                 int n_threads = 0);
// decide_gfm_samples for each instance: samples[i] with weights[i] (empty: every sample weighs 1),
// labels < m.
[[nodiscard]] std::vector<Decision> decide_gfm_samples_batch(
    std::span<const LabelSetsView> samples, std::span<const std::span<const double>> weights,
    std::size_t m, const DecideMetric& metric, const DecideOptions& options = {},
    int n_threads = 0);
[[nodiscard]] std::vector<Decision> decide_gfm_batch(std::span<const GfmInput> instances,
                                                     const DecideMetric& metric,
                                                     const DecideOptions& options = {},
                                                     int n_threads = 0);

// ---- baselines for experiments ----------------------------------------------------------------
// Indices with probability >= threshold (by decreasing probability).
[[nodiscard]] std::vector<std::size_t> select_threshold(std::span<const double> probabilities,
                                                        double threshold);
// The k most probable indices (ties: lower index first).
[[nodiscard]] std::vector<std::size_t> select_top_k(std::span<const double> probabilities,
                                                    std::size_t k);
// EUM plug-in (Koyejo et al. 2014): the threshold on scores that maximises the empirical metric
// on a labelled validation set (predict positive when score >= threshold).
[[nodiscard]] double tune_threshold(std::span<const double> scores,
                                    std::span<const std::int32_t> labels,
                                    const DecideMetric& metric,
                                    std::span<const double> weights = {});

}  // namespace rateopt
