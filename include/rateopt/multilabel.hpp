// File: rateopt/multilabel.hpp
// Multi-label learners that estimate the joint distribution of the labels, the input of the
// general F-measure maximiser (GFM, decide.hpp), after Waegeman et al. 2014, section 7.1:
//
//   ClassifierChain  probabilistic classifier chain, PCC (Dembczynski, Cheng & Huellermeier
//                    2010): P(y | x) = prod_j P(y_j | x, y_0..y_{j-1}), one logistic regression
//                    per label on x augmented by the previous labels. Gives the exact joint for
//                    small m, ancestral samples (the input of decide_gfm_samples), and the joint
//                    mode by uniform-cost search over the chain's prefix tree (Dembczynski,
//                    Waegeman & Huellermeier 2012).
//   ExactFPlugin     EFP (Dembczynski et al. 2013): per label i a multinomial regression over
//                    t = [y_i = 1] * |y| in {0..m} (the classes seen in training), plus one
//                    logistic regression for P(y = 0): P[i][s - 1] = P(t_i = s | x), used raw.
//   BR / LFP         no new model: fit_binary_relevance gives a OneVsRest of logistic
//                    regressions (marginals) with the same regularisation protocol.
//
// Regularisation (MultilabelFitOptions): a fixed C, or C tuned PER BASE MODEL by k-fold cross
// validation on the log-loss over a grid (the paper's protocol: 10^-4..10^3, 5 folds). Folds are
// assigned once from the seed (a permutation keyed by splitmix64), shared by every base model.
//
// Feature layout of chain model j: the d features of x, then j columns y_0..y_{j-1} (0/1).
// Label sets: LabelSetsView (metrics.hpp): sorted label indices per set.
//
// Thread-safety: const methods may run concurrently. Determinism: fits reduce over fixed row
// blocks; sampling draws from a counter-based generator keyed by (seed, row, sample, label), so
// every result is bit-identical for any thread count.
//
// Example:
//   auto chain = rateopt::ClassifierChain::fit(ds.features(), sets, {}, {.tune_c = true});
//   rateopt::LabelSets s = chain.sample(test.features(), 0, 1000, /*seed=*/1);
//   auto d = rateopt::decide_gfm_samples(s.view(), {}, chain.num_labels(), f1);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/model.hpp"
#include "rateopt/status.hpp"

namespace rateopt {

// The paper's grid: 10^-4, 10^-3, ..., 10^3.
[[nodiscard]] std::vector<double> default_c_grid();

// How one base model was fitted (reported by the fits, saved with the models).
struct BaseModelFit {
  double c = 0;            // the C used for the final fit
  double cv_log_loss = 0;  // mean held-out log-loss at that C (0 without tuning)
  Termination status = Termination::kConverged;  // of the final fit
  int iterations = 0;
};

struct MultilabelFitOptions {
  double c = 1.0;       // used when tune_c is false (> 0)
  bool tune_c = false;  // choose C per base model by cv_folds-fold CV on log-loss over c_grid
  std::vector<double> c_grid = default_c_grid();  // values > 0
  int cv_folds = 5;                               // >= 2, at most the number of rows
  std::uint64_t seed = 0;                         // fold assignment
  double tol = 1e-6;                              // solver tolerance (logistic.hpp)
  int max_iter = 1000;
  int n_threads = 0;  // <= 0: all cores
  // Called after each base model is fitted: (index, count, what, fit). what: the label name
  // (or "y = 0" for EFP's empty-set model).
  std::function<void(std::size_t, std::size_t, const std::string&, const BaseModelFit&)> progress;
};
// Throws InvalidArgument naming the bad option.
void validate(const MultilabelFitOptions& options);

// Owned label sets in CSR form (the result of sampling and searching).
struct LabelSets {
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::size_t num_labels = 0;
  [[nodiscard]] LabelSetsView view() const { return {indptr, indices, num_labels}; }
  [[nodiscard]] std::size_t size() const noexcept { return indptr.size() - 1; }
};

// Fraction (weighted) of the samples that contain each label: m entries. O(labels in samples).
[[nodiscard]] std::vector<double> marginals_from_samples(LabelSetsView samples,
                                                         std::span<const double> weights = {});

// Binary relevance: one logistic regression per label (kMultilabel OneVsRest), C fixed or tuned
// per label. `fits` (optional) receives one BaseModelFit per label.
[[nodiscard]] OneVsRest fit_binary_relevance(const FeatureMatrix& x, LabelSetsView y,
                                             std::span<const double> weights,
                                             const MultilabelFitOptions& options,
                                             std::vector<BaseModelFit>* fits = nullptr);

enum class SearchStatus {
  kExact,           // the returned set is a joint mode
  kBudgetExceeded,  // the node budget ran out: the greedy chain prediction is returned
};
[[nodiscard]] std::string_view to_string(SearchStatus s) noexcept;

struct JointModeResult {
  std::vector<std::int32_t> labels;  // sorted label indices
  double probability = 0;            // P(labels | x) under the chain
  SearchStatus status = SearchStatus::kExact;
  std::size_t expanded = 0;  // nodes taken from the queue
};

class ClassifierChain {
 public:
  static constexpr int kFormatVersion = 1;
  static constexpr std::size_t kMaxExactLabels = 20;

  std::vector<std::string> names;   // one per label, in chain order
  std::vector<LinearModel> models;  // models[j]: d + j weights (see the feature layout above)
  std::vector<BaseModelFit> fits;   // one per label
  Encoding encoding;
  std::string options_json = "{}";  // training options, embedded verbatim

  // Fits the chain in label order 0..m-1. y: one set per row of x, num_labels = m >= 1.
  static ClassifierChain fit(const FeatureMatrix& x, LabelSetsView y,
                             std::span<const double> weights, const MultilabelFitOptions& options);

  [[nodiscard]] std::size_t num_labels() const noexcept { return models.size(); }
  [[nodiscard]] std::size_t num_features() const;

  // log P(label_set | row i of x): label_set sorted, indices < m. O(m * (nnz of row + m)).
  [[nodiscard]] double log_joint_probability(const FeatureMatrix& x, std::size_t i,
                                             std::span<const std::int32_t> label_set) const;
  // The joint distribution of row i over all 2^m label vectors as GFM's parameters (P and
  // P(y = 0)). InvalidArgument when m > kMaxExactLabels. O(2^m m).
  [[nodiscard]] GfmInput exact_joint(const FeatureMatrix& x, std::size_t i) const;
  // All 2^m probabilities of row i, index = bit mask of the labels (bit j = label j).
  // InvalidArgument when m > kMaxExactLabels.
  [[nodiscard]] std::vector<double> joint_probabilities(const FeatureMatrix& x,
                                                        std::size_t i) const;
  // n_samples ancestral samples of row i: label j drawn with P(y_j = 1 | x, y_0..y_{j-1}) from the
  // uniform keyed by (seed, i, sample, j). O(n_samples m (m + 1)) after O(m nnz) scores.
  [[nodiscard]] LabelSets sample(const FeatureMatrix& x, std::size_t i, std::size_t n_samples,
                                 std::uint64_t seed) const;
  // The samples of rows [begin, end) one after the other (rows in parallel; the same sets as
  // calling sample row by row).
  [[nodiscard]] LabelSets sample_rows(const FeatureMatrix& x, std::size_t begin, std::size_t end,
                                      std::size_t n_samples, std::uint64_t seed,
                                      int n_threads = 0) const;
  // The joint mode argmax_y P(y | x): uniform-cost (best-first) search over the prefix tree of
  // the chain, exact (Dembczynski et al. 2012); at most max_expanded nodes (then the greedy
  // prediction with status kBudgetExceeded). Ties: the first complete vector the search pops.
  [[nodiscard]] JointModeResult joint_mode(const FeatureMatrix& x, std::size_t i,
                                           std::size_t max_expanded = 1000000) const;
  // joint_mode / exact_joint of rows [begin, end), in order (rows in parallel; the same results
  // as row by row, for any n_threads).
  [[nodiscard]] std::vector<JointModeResult> joint_mode_rows(const FeatureMatrix& x,
                                                             std::size_t begin, std::size_t end,
                                                             std::size_t max_expanded = 1000000,
                                                             int n_threads = 0) const;
  [[nodiscard]] std::vector<GfmInput> exact_joint_rows(const FeatureMatrix& x, std::size_t begin,
                                                       std::size_t end, int n_threads = 0) const;

  [[nodiscard]] std::string to_json() const;
  static ClassifierChain from_json(std::string_view text, const std::string& name = "<string>");
  void save(const std::string& path) const;              // throws IoError
  static ClassifierChain load(const std::string& path);  // throws IoError / ParseError
  // Throws InvalidArgument when inconsistent (no labels, names vs models, weight counts).
  void validate() const;

 private:
  // x_i . w_j[0..d) + b_j for every label j (m entries).
  void base_scores(const FeatureMatrix& x, std::size_t i, std::span<double> out) const;
};

class ExactFPlugin {
 public:
  static constexpr int kFormatVersion = 1;

  std::vector<std::string> names;              // one per label
  std::vector<MultinomialModel> label_models;  // per label: classes within {0..m}
  LinearModel empty_model;                     // logistic: P(y = 0 | x)
  std::vector<BaseModelFit> fits;              // m label models, then the empty-set model
  Encoding encoding;
  std::string options_json = "{}";

  static ExactFPlugin fit(const FeatureMatrix& x, LabelSetsView y, std::span<const double> weights,
                          const MultilabelFitOptions& options);

  [[nodiscard]] std::size_t num_labels() const noexcept { return label_models.size(); }
  [[nodiscard]] std::size_t num_features() const noexcept { return empty_model.weights.size(); }
  // P[i][s - 1] = P(t_i = s | x) (0 for classes not seen in training), p_zero = P(y = 0 | x) by
  // the logistic model. Raw estimates, as in the paper: the invariants of an exact P need not
  // hold (decide_gfm accepts that). O(m (nnz of row) (m + 1) + m^2).
  [[nodiscard]] GfmInput predict_gfm(const FeatureMatrix& x, std::size_t i) const;
  // predict_gfm of rows [begin, end), in order, made consistent (make_consistent) or raw; rows in
  // parallel (the same results for any n_threads).
  [[nodiscard]] std::vector<GfmInput> predict_gfm_rows(const FeatureMatrix& x, std::size_t begin,
                                                       std::size_t end, bool consistent,
                                                       int n_threads = 0) const;

  [[nodiscard]] std::string to_json() const;
  static ExactFPlugin from_json(std::string_view text, const std::string& name = "<string>");
  void save(const std::string& path) const;
  static ExactFPlugin load(const std::string& path);
  void validate() const;
};

// A GFM input made a distribution for consumers that check the invariants (rateopt decide's
// check_gfm_distribution): each column s is capped so that no P[i][s-1] exceeds the implied
// P(|y| = s) = sum_j P[j][s-1] / s (water-filling: the largest cap c with s c <= sum_j
// min(P[j][s-1], c)), then P and p_zero are scaled by 1 / (p_zero + sum_{i,s} P[i][s-1] / s).
// An exact P is returned unchanged (up to rounding); without capping, the GFM decision is that
// of the input (every expectation scales by the same factor). O(m^2 log m).
[[nodiscard]] GfmInput make_consistent(const GfmInput& input);

}  // namespace rateopt
