// File: rateopt/model.hpp
// Models: linear scorers and the saved classifier, a (possibly stochastic) mixture of scorers.
//
// A `Classifier` predicts P(positive | x) = sum_m mixture[m] * link(score_m(x)), where link is
//   kLogistic:  1 / (1 + exp(-s))        (logistic regression probabilities)
//   kThreshold: 1 if s > 0 else 0        (a mixture of deterministic classifiers)
//   kRamp:      clamp((1 + s) / 2, 0, 1) (Goh et al.'s ramp-randomised classifier)
// Prediction modes:
//   deterministic: component `best` thresholded at score > 0;
//   stochastic:    a 0/1 draw with that probability, from a counter-based generator keyed by
//                  (seed, row), so results do not depend on the thread count;
//   probability:   P(positive | x) itself.
//
// Saved as versioned JSON ({"format": "rateopt.model", "version": 1, ...}) that embeds the
// feature encoding and the training options, so `predict` needs no training flags.
//
// Group thresholds (kind "group_threshold", written by post-processing, rateopt/postprocess.hpp):
// one score s(x) = components[0] and, per group of rows (a combination of values of the data's
// `group_columns`, which need not be features), a distribution over thresholds:
//   P(positive | x) = sum_j weights[j] * 1{s(x) > thresholds[j]}   (the rule of x's group).
// Deterministic mode predicts 1{P(positive | x) > 1/2}, i.e. the group's weighted-median
// threshold (with two thresholds: the one of higher weight; the higher one on a tie). Such a
// classifier reads the group columns, so it predicts from a Dataset (without group columns: one
// rule, with an empty key, for every row); a row whose group has no rule, or whose group value is
// missing, is an error (NotFound). Saved as version 2 (other models stay version 1, so that
// earlier builds still read them).
//
// Components of other families (ScoreModel): boosted trees (rateopt/gbdt.hpp) score by their
// margin; each is saved as {"family": "gbdt", "features": d, "booster": "<XGBoost's JSON model>"}
// (the booster's own text, so it loads back to the same bits), in a model of version 3. A linear
// component is {"weights", "bias"}, as before.
//
// Thread-safety: const methods may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/gbdt.hpp"

namespace rateopt {

struct LinearModel {
  std::vector<double> weights;  // one per feature
  double bias = 0;
  // Score of row i of x; x.cols() may exceed weights.size() only if the extra columns are
  // absent (CSR) -- otherwise InvalidArgument is thrown by scores(). Fewer columns are fine:
  // missing trailing columns count as zero (a9a.t lacks a9a's last feature).
  [[nodiscard]] double score(const FeatureMatrix& x, std::size_t i) const;
  // Scores of every row into out (x.rows() entries). n_threads <= 0: all cores.
  void scores(const FeatureMatrix& x, std::span<double> out, int n_threads = 0) const;
};

// One scorer of a classifier: a linear model or boosted trees (rateopt/gbdt.hpp, margins). Every
// model family scores a block of rows, saves, loads and validates behind this one type.
class ScoreModel {
 public:
  ScoreModel() = default;                                   // linear, no features
  ScoreModel(LinearModel model) : v_(std::move(model)) {}   // NOLINT(google-explicit-constructor)
  ScoreModel(TreeEnsemble trees) : v_(std::move(trees)) {}  // NOLINT(google-explicit-constructor)
  // A linear model from its weights and bias ({w, b}).
  ScoreModel(std::vector<double> weights, double bias)
      : v_(LinearModel{std::move(weights), bias}) {}
  [[nodiscard]] bool is_linear() const noexcept { return v_.index() == 0; }
  // "linear" or "gbdt" (the family saved with the component).
  [[nodiscard]] std::string_view family() const noexcept;
  // The linear model; InvalidArgument for another family (naming what needs a linear model).
  [[nodiscard]] const LinearModel& linear(std::string_view needed_by = {}) const;
  [[nodiscard]] LinearModel& linear(std::string_view needed_by = {});
  [[nodiscard]] const TreeEnsemble* trees() const noexcept {
    return std::get_if<TreeEnsemble>(&v_);
  }
  [[nodiscard]] std::size_t num_features() const noexcept;
  // Scores of every row of x (x.rows() entries), or of rows [first, first + out.size()).
  void scores(const FeatureMatrix& x, std::span<double> out, int n_threads = 0) const;
  void scores(const FeatureMatrix& x, std::size_t first, std::span<double> out,
              int n_threads = 0) const;

 private:
  std::variant<LinearModel, TreeEnsemble> v_;
};

enum class Link { kLogistic, kThreshold, kRamp };
enum class PredictMode { kDeterministic, kStochastic, kProbability };

[[nodiscard]] std::string_view to_string(Link link) noexcept;
[[nodiscard]] std::string_view to_string(PredictMode mode) noexcept;
// Throws InvalidArgument listing the accepted names.
[[nodiscard]] PredictMode parse_predict_mode(std::string_view name);

// One group's rule of a "group_threshold" classifier (above).
struct GroupRule {
  std::vector<std::string> key;    // the group's value of each Classifier::group_columns entry
  std::vector<double> thresholds;  // strictly increasing
  std::vector<double> weights;     // one per threshold, >= 0, sum 1
};

// Scores of the rows of one feature matrix that a caller already holds, by component: scores[m]
// is component m's scores of every row of `rows`, the bits ScoreModel::scores gives, or empty
// (those rows are scored anew). The rate-constrained solvers' own (TrainResult::training_scores)
// spare their report a scoring pass over the training rows. Used only for that matrix (by
// address); wrong scores give wrong predictions, so they must be the classifier's own.
struct KnownScores {
  const FeatureMatrix* rows = nullptr;
  std::vector<std::span<const double>> scores;
};

struct Classifier {
  static constexpr int kFormatVersion = 3;  // the newest version this build reads and writes

  std::string kind = "linear";         // e.g. "logistic_regression", "three_player"
  std::vector<ScoreModel> components;  // at least one, all with the same feature count
  std::vector<double> mixture;         // probabilities, one per component, sum 1
  std::size_t best = 0;                // component used in deterministic mode
  Link link = Link::kThreshold;
  Encoding encoding;
  std::string options_json = "{}";  // training options, embedded verbatim
  std::string report_json = "{}";   // training report, embedded verbatim
  // Kind "group_threshold" only (empty otherwise): the columns whose values form the groups
  // (possibly none) and one rule per group (distinct keys). Non-empty group_rules make the
  // classifier a group-threshold one: components, mixture and best are then {score}, {1}, 0.
  std::vector<std::string> group_columns;
  std::vector<GroupRule> group_rules;

  // A single deterministic model.
  static Classifier single(ScoreModel model, Link link, Encoding encoding);
  // Whether every component is linear (the solvers that move weights need that).
  [[nodiscard]] bool is_linear() const noexcept;

  // out has x.rows() entries. Throws InvalidArgument when the feature count differs from the
  // encoding's, except that a CSR matrix may have fewer (missing trailing features are zero),
  // and for a classifier with group columns (it needs the Dataset overload).
  void predict(const FeatureMatrix& x, PredictMode mode, std::span<double> out,
               std::uint64_t seed = 0, int n_threads = 0) const;
  // The same from a dataset's features and, for group rules, its group columns (NotFound when
  // one is absent, a row's value is missing or its group has no rule). O(rows * features).
  // `known`: as predict_positive takes it.
  void predict(const Dataset& data, PredictMode mode, std::span<double> out, std::uint64_t seed = 0,
               int n_threads = 0, const KnownScores* known = nullptr) const;
  // Hard predictions at 1 byte a row, for the modes whose predictions are all 0 or 1
  // (deterministic, stochastic): out[i] = 1 where predict(data, mode, ..., seed) gives 1.0, else
  // 0. out has data.num_rows() entries. Predicts a block of rows at a time, holding O(block)
  // doubles rather than one per row (eval's Predictions::positive). Throws InvalidArgument for
  // kProbability, and what predict throws (a row's error may surface after an earlier block's).
  // Probabilities (mode kProbability) at 1 byte a row, when they take few values: a mixture of at
  // most 8 components (of non-zero weight) with the threshold link and no group rules. Writes
  // out[i] (data.num_rows() entries), an index into the returned levels, so that levels[out[i]]
  // is, bit for bit, what predict gives row i; returns nothing (out untouched) for other models.
  // Both take `known` scores of x's rows (of data's features); InvalidArgument when they are not
  // one entry per component, each empty or one score per row.
  [[nodiscard]] std::optional<std::vector<double>> predict_levels(
      const FeatureMatrix& x, std::span<std::uint8_t> out, int n_threads = 0,
      const KnownScores* known = nullptr) const;
  void predict_positive(const Dataset& data, PredictMode mode, std::span<std::uint8_t> out,
                        std::uint64_t seed = 0, int n_threads = 0,
                        const KnownScores* known = nullptr) const;
  // Raw score of the deterministic component (for ranking metrics); with group rules the score
  // minus the row's deterministic threshold (group columns: the Dataset overload only).
  void decision_function(const FeatureMatrix& x, std::span<double> out, int n_threads = 0) const;
  void decision_function(const Dataset& data, std::span<double> out, int n_threads = 0) const;

  [[nodiscard]] std::string to_json() const;
  static Classifier from_json(std::string_view text, const std::string& name = "<string>");
  void save(const std::string& path) const;         // throws IoError
  static Classifier load(const std::string& path);  // throws IoError / ParseError
  // Throws InvalidArgument when inconsistent (sizes, mixture not a distribution, best range,
  // group rules: keys, thresholds not increasing, weights not a distribution).
  void validate() const;
};

// One binary classifier per label (multi-label data) or per class (multiclass data, each class
// against the rest), sharing one feature encoding: the input of `decide` for multi-label and
// set-valued prediction. Saved as {"format": "rateopt.one_vs_rest", "version": 1, ...} with
// the encoding stored once and each output a "rateopt.model" object without its own encoding.
struct OneVsRest {
  static constexpr int kFormatVersion = 1;

  LabelKind label_kind = LabelKind::kMultilabel;  // kMultilabel or kMulticlass
  std::vector<std::string> names;                 // one per output, in label order
  std::vector<Classifier> outputs;                // one per name
  Encoding encoding;

  [[nodiscard]] std::size_t num_outputs() const noexcept { return outputs.size(); }
  // out has x.rows() * num_outputs() entries, row-major (row i, output j at i * L + j).
  // Stochastic draws are keyed by (seed + j, row), so they do not depend on the thread count.
  void predict(const FeatureMatrix& x, PredictMode mode, std::span<double> out,
               std::uint64_t seed = 0, int n_threads = 0) const;

  [[nodiscard]] std::string to_json() const;
  static OneVsRest from_json(std::string_view text, const std::string& name = "<string>");
  void save(const std::string& path) const;        // throws IoError
  static OneVsRest load(const std::string& path);  // throws IoError / ParseError
  // Throws InvalidArgument when inconsistent (no outputs, names vs outputs, label kind).
  void validate() const;
};

// The "format" field of a saved model ("rateopt.model", "rateopt.one_vs_rest", or the joint
// multi-label models of multilabel.hpp: "rateopt.classifier_chain", "rateopt.efp"); throws
// ParseError when the text is not a JSON object with a string "format".
[[nodiscard]] std::string model_format(std::string_view text, const std::string& name = "<string>");

}  // namespace rateopt
