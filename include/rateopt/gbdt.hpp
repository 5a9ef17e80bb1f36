// File: rateopt/gbdt.hpp
// Gradient-boosted trees as a base learner: XGBoost (Chen & Guestrin 2016) through its C API, an
// optional build dependency (Debian: libxgboost-dev; CMake option RATEOPT_XGBOOST). A build
// without it refuses every call here with an InvalidArgument that says how to get it
// (gbdt_available() tells beforehand).
//
// fit_gbdt fits a binary logistic booster (XGBoost's objective binary:logistic, tree method
// hist) to 0/1 labels and non-negative instance weights; its score is the booster's margin (the
// log-odds), so a Classifier with link kLogistic gives XGBoost's probabilities, and kThreshold
// its decisions at probability 1/2. Deterministic: the same rows, weights and options give the
// same model bytes for any thread count (hist's histograms are reduced in a fixed order; row
// subsampling draws from `seed`).
//
// A TreeEnsemble holds the booster as XGBoost's JSON model (its own versioned format), which is
// what a saved rateopt model embeds; scoring loads it once into a booster kept with the ensemble.
//
// Cost: fit O(rounds * (rows * features + leaves)); scoring O(rows * rounds * depth). Features
// are passed to XGBoost as 32-bit floats (as XGBoost stores them).
//
// Thread-safety: fit_gbdt is reentrant; a TreeEnsemble's const methods may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rateopt/dataset.hpp"

namespace rateopt {

struct GbdtOptions {
  int rounds = 100;               // boosting rounds (trees)
  int max_depth = 6;              // of each tree
  double learning_rate = 0.3;     // shrinkage of each tree (XGBoost's eta)
  double l2 = 1.0;                // L2 penalty on leaf values (XGBoost's lambda)
  double min_child_weight = 1.0;  // least instance weight (hessian) in a leaf
  double subsample = 1.0;         // share of rows each tree sees, in (0, 1]
  double colsample = 1.0;         // share of features each tree sees, in (0, 1]
  std::uint64_t seed = 0;         // row and feature subsampling
  int n_threads = 0;              // <= 0: all cores; the model does not depend on it
};

// Throws InvalidArgument naming the option, its value and the accepted range.
void validate(const GbdtOptions& options);

struct GbdtFit;

class TreeEnsemble {
 public:
  TreeEnsemble() = default;
  // From XGBoost's JSON model (as json() returns it); InvalidArgument when XGBoost cannot read
  // it, or it is not a binary logistic booster over `num_features` features.
  TreeEnsemble(std::string json, std::size_t num_features);

  [[nodiscard]] const std::string& json() const noexcept { return json_; }
  [[nodiscard]] std::size_t num_features() const noexcept { return num_features_; }
  [[nodiscard]] std::size_t rounds() const noexcept { return rounds_; }
  // Added to every margin (0 for a fitted booster): a shifted decision threshold, e.g. the
  // guaranteed mode's move of a deterministic output toward a constant. Saved with the model.
  [[nodiscard]] double offset() const noexcept { return offset_; }
  // InvalidArgument for a value that is not finite.
  void set_offset(double offset);
  // The booster of its first `rounds` trees (XGBoost's slice), without the offset: what fitting
  // stopped after that many rounds would have given. InvalidArgument unless 1 <= rounds <=
  // this->rounds().
  [[nodiscard]] TreeEnsemble first_rounds(std::size_t rounds) const;
  // Margins (log-odds) of every row of x into out (x.rows() entries). x may have fewer columns
  // than num_features() (missing trailing features are 0, as for linear models); more is an
  // InvalidArgument.
  void scores(const FeatureMatrix& x, std::span<double> out, int n_threads = 0) const;
  // The same for rows [first, first + out.size()) of x.
  void scores(const FeatureMatrix& x, std::size_t first, std::span<double> out,
              int n_threads = 0) const;

 private:
  friend GbdtFit fit_gbdt_with_margins(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                                       std::span<const double> weights, const GbdtOptions& options,
                                       int prefix_rounds);
  friend class BoostOn;
  // A model XGBoost itself wrote (fitted, sliced, or trees appended to one): no check. `booster`
  // is its handle when there is one in memory (without a training cache), else XGBoost reads json
  // when it is first asked for scores or a slice. The rate-constrained solvers' oracle makes a
  // model per call and scores only the first; reading each back cost more than its boosting.
  TreeEnsemble(std::string json, std::size_t num_features, std::size_t rounds,
               std::shared_ptr<void> booster = nullptr);
  // XGBoost's handle of json_, read from it the first time (under the scoring lock).
  [[nodiscard]] void* booster() const;

  std::string json_;
  std::size_t num_features_ = 0;
  std::size_t rounds_ = 0;
  double offset_ = 0;
  mutable std::shared_ptr<void> booster_;  // XGBoost's handle, loaded from json_
};

// Whether this build has XGBoost.
[[nodiscard]] bool gbdt_available() noexcept;

// Fits a booster to rows of x with labels (0/1, one per row) and weights (>= 0, one per row, or
// empty for all 1). InvalidArgument for bad options, sizes or values, and in a build without
// XGBoost; XGBoost's own errors as InvalidArgument with its message.
[[nodiscard]] TreeEnsemble fit_gbdt(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                                    std::span<const double> weights, const GbdtOptions& options);

// fit_gbdt's model with its margins of x's rows (`margins`, the same bits as model.scores(x)) and,
// for 0 < prefix_rounds < options.rounds, the margins after the first prefix_rounds rounds
// (`prefix_margins`, those of model.first_rounds(prefix_rounds); else empty). Both come from
// XGBoost's training cache as it boosts, at O(rows) each, where scoring the rows anew costs
// O(rows * rounds * depth). InvalidArgument as fit_gbdt, and for prefix_rounds outside
// [0, options.rounds).
struct GbdtFit {
  TreeEnsemble model;
  std::vector<double> margins;
  std::vector<double> prefix_margins;
};
[[nodiscard]] GbdtFit fit_gbdt_with_margins(const FeatureMatrix& x,
                                            std::span<const std::int32_t> labels,
                                            std::span<const double> weights,
                                            const GbdtOptions& options, int prefix_rounds = 0);

// Boosting on from a fitted booster, many times over the same rows (the rate-constrained
// solvers' oracle with --gbdt-warm-rounds: start is the first fit's first rounds - warm trees,
// first_rounds): each fit adds options.rounds trees to `start`, fitted to
// the gradient of the weighted logistic loss at start's margins of the rows, for that fit's labels
// and weights. The rows go to XGBoost once: their quantile bins (XGBoost's hist cuts) are made at
// the first fit, from its weights, and kept; start's margins are given, not recomputed, and each
// fit's margins come from XGBoost's training cache. So a fit costs its own rounds only, whatever
// start's size, and fits in the same order give the same bytes for any thread count.
//
// fit's `model` holds start's trees and then the new ones (an XGBoost model of its own);
// `margins` are its margins of the rows, the same bits as model.scores(x) (no prefix_margins).
class BoostOn {
 public:
  // start: fitted over x's features, without an offset; start_margins: as start.scores(x) gives
  // them. InvalidArgument otherwise (sizes, values not finite), and in a build without XGBoost.
  BoostOn(TreeEnsemble start, std::span<const double> start_margins, const FeatureMatrix& x);
  // InvalidArgument as fit_gbdt.
  [[nodiscard]] GbdtFit fit(std::span<const std::int32_t> labels, std::span<const double> weights,
                            const GbdtOptions& options);

  // fit's work but its model: the new trees stay in XGBoost (a copy of them, without the training
  // cache) until model() makes of them the model fit gives, byte for byte. A caller keeping few
  // of many fits (the solvers' mixture) writes only those as JSON: writing, parsing and joining
  // each fit's JSON was a fifth of a constrained COMPAS run.
  struct LazyFit {
    std::vector<double> margins;  // as fit's
    std::size_t rounds = 0;       // the new trees'
    std::shared_ptr<void> trees;  // XGBoost's booster of the new trees
  };
  [[nodiscard]] LazyFit fit_lazily(std::span<const std::int32_t> labels,
                                   std::span<const double> weights, const GbdtOptions& options);
  // The model of a fit_lazily of this BoostOn: start's trees, then the fit's.
  [[nodiscard]] TreeEnsemble model(const LazyFit& fit) const;

 private:
  struct StartModel;  // start's JSON model, parsed once (the new trees go after its own)
  TreeEnsemble start_;
  std::shared_ptr<StartModel> start_model_;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::shared_ptr<void> matrix_;  // XGBoost's handle of the rows, their base margins set
};

}  // namespace rateopt
