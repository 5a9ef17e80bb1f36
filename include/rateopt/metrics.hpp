// File: rateopt/metrics.hpp
// Exact, weighted rates and metrics on slices of data.
//
// A `Slice` is a conjunction of `column=value` conditions. Special columns:
//   label=1 / label=0       binary labels (label=<class name> for multiclass)
//   baseline=1 / baseline=0 the dataset's column named "baseline" (a deployed model's predictions)
//   f73=1                   a feature by name (LIBSVM features are named f<1-based index>)
// Any other name must be a Column of the dataset (see Dataset::columns()); an unknown column or
// a value the column never takes throws NotFound.
//
// Predictions are per-example probabilities of predicting positive, in [0, 1]; hard 0/1
// predictions are the special case. Counts are then the *expected* weighted confusion entries of
// the stochastic classifier (exact, linear in the probabilities).
//
// Units: counts are weighted sums; rates are proportions of the slice's total weight.
//
// Zero-denominator conventions (the same everywhere in rateopt; docs/metrics.md):
//   * a rate whose denominator is zero equals 1: tpr with no positives, tnr with no negatives,
//     precision of the empty prediction, fnr/fpr are then 0 (1 - the rate);
//   * f1, fbeta, jaccard with tp = fp = fn = 0 (empty prediction, empty truth) equal 1;
//   * hmean of two zero rates is 0; gmean, gtppr, qmean follow from the rates above;
//   * proportions (ppr, npr, error, accuracy, tp, ...) and churn/wins/losses on an empty slice
//     (zero total weight) equal 0, and kld on an empty slice equals 0;
//   * kld uses 0 log 0 = 0 and is +infinity when the label rate is in (0, 1) and the predicted
//     positive rate is 0 or 1 (a true divergence, not a convention);
//   * winloss (wins / losses) with no losses equals +infinity when there are wins, 1 otherwise;
//   * roc_auc and average_precision are undefined without positives (or, for AUC, negatives):
//     they throw InvalidArgument naming the slice.
//
// Thread-safety: all functions are pure.
//
// Example:
//   auto mask = rateopt::slice_mask(ds, rateopt::Slice::parse("sex=Female"));
//   rateopt::SliceCounts c = rateopt::count_slice(ds, mask, predictions);
//   double f1 = rateopt::compute_metric("f1", c);
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/dataset.hpp"

namespace rateopt {

struct Condition {
  std::string column;
  std::string value;
  friend bool operator==(const Condition&, const Condition&) = default;
};

struct Slice {
  std::vector<Condition> conditions;  // conjunction; empty = all rows

  // "sex=Female,race=White" (also '&' as separator); values may be quoted with "..." or '...'.
  static Slice parse(std::string_view text);
  [[nodiscard]] std::string to_string() const;
  [[nodiscard]] bool empty() const noexcept { return conditions.empty(); }
  friend bool operator==(const Slice&, const Slice&) = default;
};

// 1 for rows in the slice, 0 otherwise. O(n * conditions). Throws NotFound.
[[nodiscard]] std::vector<std::uint8_t> slice_mask(const Dataset& data, const Slice& slice);

// Weighted confusion entries of a slice (expected entries for probabilistic predictions).
struct Confusion {
  double tp = 0, fp = 0, fn = 0, tn = 0;
  [[nodiscard]] double total() const noexcept { return tp + fp + fn + tn; }
  [[nodiscard]] double positives() const noexcept { return tp + fn; }  // labelled 1
  [[nodiscard]] double negatives() const noexcept { return fp + tn; }  // labelled 0
  [[nodiscard]] double predicted_positive() const noexcept { return tp + fp; }
  [[nodiscard]] double predicted_negative() const noexcept { return fn + tn; }
};

// Confusion plus agreement with a baseline (churn). Baseline fields are NaN when the dataset
// has no "baseline" column.
struct SliceCounts {
  Confusion confusion;
  double total = 0;                                           // total weight of the slice
  double changes = std::numeric_limits<double>::quiet_NaN();  // prediction != baseline
  double wins = std::numeric_limits<double>::quiet_NaN();     // new right, baseline wrong
  double losses = std::numeric_limits<double>::quiet_NaN();   // new wrong, baseline right
  [[nodiscard]] bool has_baseline() const noexcept { return changes == changes; }
};

// Counts from raw spans (labels 0/1; weights empty = 1; mask empty = all; baseline empty = none).
// Throws InvalidArgument on size mismatches and predictions outside [0, 1] or NaN.
[[nodiscard]] SliceCounts count_slice(std::span<const std::int32_t> labels,
                                      std::span<const double> predictions,
                                      std::span<const double> weights = {},
                                      std::span<const std::uint8_t> mask = {},
                                      std::span<const double> baseline = {});
// Counts for a binary dataset (uses its weights and its "baseline" column when present). Sums run
// per file part (Dataset::row_parts) in order; over several MPI ranks they are the counts of every
// rank's rows (a collective: rateopt/distributed.hpp), with the bits of one process reading the
// same files.
[[nodiscard]] SliceCounts count_slice(const Dataset& data, std::span<const std::uint8_t> mask,
                                      std::span<const double> predictions);
// The same for hard predictions at 1 byte a row: positive[i] is 1 when row i is predicted
// positive, 0 otherwise (any other value throws InvalidArgument). The counts equal, bit for bit,
// those of the double overload with predictions 0.0 / 1.0 (the same sums in the same order).
[[nodiscard]] SliceCounts count_slice(const Dataset& data, std::span<const std::uint8_t> mask,
                                      std::span<const std::uint8_t> positive);
// The same for probabilities coded at 1 byte a row: row i's is levels[codes[i]] (a stochastic
// mixture of a few threshold models takes a few distinct values). The bits of the double
// overload with those values. Throws InvalidArgument for a code not below levels.size() or a
// level outside [0, 1].
[[nodiscard]] SliceCounts count_slice(const Dataset& data, std::span<const std::uint8_t> mask,
                                      std::span<const std::uint8_t> codes,
                                      std::span<const double> levels);

// The counts of many slices at once, in one pass over the rows: group[i] in [0, groups) is row
// i's group (negative: none). Entry g has the bits count_slice gives with group g's rows as the
// mask (the same sums in the same order; over MPI ranks too, when every rank numbers the groups
// alike). Data with a "baseline" column are refused (InvalidArgument: churn counts are per
// slice); otherwise throws as count_slice does, and for a group not below `groups`.
[[nodiscard]] std::vector<SliceCounts> count_groups(const Dataset& data,
                                                    std::span<const std::int32_t> group,
                                                    std::size_t groups,
                                                    std::span<const double> predictions);
[[nodiscard]] std::vector<SliceCounts> count_groups(const Dataset& data,
                                                    std::span<const std::int32_t> group,
                                                    std::size_t groups,
                                                    std::span<const std::uint8_t> positive);
[[nodiscard]] std::vector<SliceCounts> count_groups(const Dataset& data,
                                                    std::span<const std::int32_t> group,
                                                    std::size_t groups,
                                                    std::span<const std::uint8_t> codes,
                                                    std::span<const double> levels);

// ---- metric catalogue -------------------------------------------------------------------------

// How the training engine sees a metric as a function of a slice's predicted-positive masses
// (src/train/problem.cpp; docs/train.md): its solvers linearise affine metrics, split ratios into
// numerator and denominator, and use closed-form slack responses for the named rate functions
// (Narasimhan et al. 2019, Table 1); anything else goes through finite differences.
enum class MetricShape {
  kLinear,   // affine in the rates: ppr, tpr, error, churn, ...
  kRatio,    // a ratio of two affine forms (MetricInfo::ratio): precision, f1, fbeta, jaccard, ...
  kKld,      // KL(p || q) of the label rate p and the predicted positive rate q = ppr
  kGmean,    // sqrt(tpr * tnr)
  kHmean,    // 2 tpr tnr / (tpr + tnr)
  kQmean,    // 1 - sqrt((fpr^2 + fnr^2) / 2)
  kGeneric,  // any other function of the counts (gtppr)
};

// An affine form in a slice's counts, each divided by the slice's total weight: tp and fp (the
// predicted-positive mass among label-1 and label-0 rows), the label rates positives and negatives
// (constants of the data), wins and losses against a baseline, and a constant.
struct CountForm {
  double constant = 0, tp = 0, fp = 0, positives = 0, negatives = 0, wins = 0, losses = 0;
  // The form on `counts` (total > 0).
  [[nodiscard]] double evaluate(const SliceCounts& counts) const noexcept;
};

// The decide kernel of a metric (rateopt/decide.hpp, DecideMetric::Family), kNone when decide does
// not maximise it: decide's metrics are the utilities of the truth that need no baseline.
enum class DecideKernel {
  kNone,
  kFBeta,
  kJaccard,
  kBalancedAccuracy,
  kGMean,
  kHMean,
  kGtppr,
  kAccuracy,
  kGeneric,  // any other utility, through its definition (`compute`)
};

// One metric, declared once (src/metrics/catalogue.cpp): everything eval, the expression
// language, train and decide know of it. tests/cpp/metrics/catalogue_consumers_test.cpp checks
// each consumer against `compute` for every entry.
struct MetricInfo {
  std::string_view name = {};     // "f1", "fbeta", "tpr", ...
  std::string_view summary = {};  // one line, with its zero-denominator convention
  bool bigger_is_better = true;
  bool has_param = false;  // "fbeta:2" (beta); default_param when omitted
  double default_param = 0;
  bool needs_baseline = false;  // churn, wins, losses, winloss
  bool needs_labels = true;     // false for ppr, npr, churn
  double (*compute)(const SliceCounts& counts, double param) = nullptr;  // the definition
  std::string_view alias_of = {};  // "" or the entry this name is another name of (recall: tpr)
  MetricShape shape = MetricShape::kGeneric;
  // kRatio: numerator and denominator for the parameter (fbeta's beta; default_param otherwise).
  // The ratio equals `compute` wherever its denominator is positive.
  void (*ratio)(double param, CountForm& numerator, CountForm& denominator) = nullptr;
  // Oriented so that bigger is better (negated when !bigger_is_better), the metric never decreases
  // when a label-1 row is predicted positive instead of negative and never increases when a
  // label-0 row is (fixed labels): the top-k structure decide's kernels rely on.
  bool monotone = false;
  DecideKernel decide = DecideKernel::kNone;
  std::string_view complement = {};  // a loss's utility 1 - loss ("tpr" for fnr), or ""
  // A share of confusion cells (kCellTp | kCellFp | kCellFn | kCellTn bits): the metric is the
  // mass of the cells `share_of` over the mass of the cells `share_in` (share_of a subset of
  // share_in), so that on unweighted rows with hard predictions it is a binomial proportion
  // (intervals.hpp: exact Clopper-Pearson bounds). 0 when the metric is not such a share.
  std::uint8_t share_of = 0;
  std::uint8_t share_in = 0;
};

// The cells of MetricInfo::share_of / share_in.
inline constexpr std::uint8_t kCellTp = 1, kCellFp = 2, kCellFn = 4, kCellTn = 8;
inline constexpr std::uint8_t kCellAll = kCellTp | kCellFp | kCellFn | kCellTn;
// The mass of `cells` in `c`.
[[nodiscard]] double cell_mass(const Confusion& c, std::uint8_t cells) noexcept;

// Every confusion-based metric, in documentation order. Aliases (recall = tpr, coverage = ppr) are
// entries of their own, copies of their target with alias_of set.
[[nodiscard]] std::span<const MetricInfo> metric_catalogue() noexcept;
// nullptr when unknown. `name` without a parameter.
[[nodiscard]] const MetricInfo* find_metric(std::string_view name) noexcept;
// "name" or "name:param" (e.g. "fbeta:0.5"). Throws NotFound / InvalidArgument.
[[nodiscard]] double compute_metric(std::string_view spec, const SliceCounts& counts);

// The individual conventions, for reuse by decide and train.
[[nodiscard]] double fbeta_score(const Confusion& c, double beta) noexcept;
[[nodiscard]] double kl_divergence(double label_rate, double predicted_rate) noexcept;

// ---- ranking metrics from scores --------------------------------------------------------------
// Exact, O(n log n): sort by score, tied scores form one threshold step (ties count half in AUC,
// as the trapezoid). Labels 0/1; weights empty = 1; mask empty = all rows.
[[nodiscard]] double roc_auc(std::span<const double> scores, std::span<const std::int32_t> labels,
                             std::span<const double> weights = {},
                             std::span<const std::uint8_t> mask = {});
// Step-wise average precision, sum_k (R_k - R_{k-1}) P_k over distinct thresholds (sklearn's
// definition).
[[nodiscard]] double average_precision(std::span<const double> scores,
                                       std::span<const std::int32_t> labels,
                                       std::span<const double> weights = {},
                                       std::span<const std::uint8_t> mask = {});

// ---- multilabel and multiclass ----------------------------------------------------------------

// Label sets in CSR form: set i is indices[indptr[i] .. indptr[i+1]), sorted, in [0, num_labels).
struct LabelSetsView {
  std::span<const std::int64_t> indptr;
  std::span<const std::int32_t> indices;
  std::size_t num_labels = 0;
  [[nodiscard]] std::size_t size() const noexcept { return indptr.empty() ? 0 : indptr.size() - 1; }
};

struct MultilabelScores {
  double instance_f1 = 0;       // mean over examples of F1(y_i, h_i); F1(empty, empty) = 1
  double instance_jaccard = 0;  // mean of |y & h| / |y | h|; J(empty, empty) = 1
  double micro_f1 = 0;          // F1 of the pooled confusion (1 when tp = fp = fn = 0)
  double macro_f1 = 0;          // mean over labels of per-label F1 (1 when tp = fp = fn = 0)
  double hamming_loss = 0;      // mean over examples and labels of [y_ij != h_ij]
  double subset_accuracy = 0;   // mean of [y_i == h_i]
};
// Weighted means over examples (weights empty = 1; mask empty = all). Throws on size mismatch.
[[nodiscard]] MultilabelScores multilabel_scores(LabelSetsView truth, LabelSetsView predicted,
                                                 std::span<const double> weights = {},
                                                 std::span<const std::uint8_t> mask = {});

struct MulticlassScores {
  double accuracy = 0;
  double macro_f1 = 0;  // mean over classes of one-vs-rest F1 (1 when tp = fp = fn = 0)
};
[[nodiscard]] MulticlassScores multiclass_scores(std::span<const std::int32_t> truth,
                                                 std::span<const std::int32_t> predicted,
                                                 std::size_t num_classes,
                                                 std::span<const double> weights = {},
                                                 std::span<const std::uint8_t> mask = {});

}  // namespace rateopt
