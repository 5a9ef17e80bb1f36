// Private helpers of the multi-label learners (rateopt/multilabel.hpp): the counter-based
// generator, per-base-model fitting with C tuned by cross validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "common/random.hpp"       // mix64, unit_uniform
#include "common/row_entries.hpp"  // for_row_entries, used with these helpers
#include "rateopt/dataset.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/multilabel.hpp"

namespace rateopt::detail {

// Fold of every row (0..folds-1): rows ordered by a key drawn from the seed, then dealt round
// robin, so fold sizes differ by at most one.
[[nodiscard]] std::vector<int> assign_folds(std::size_t rows, int folds, std::uint64_t seed);

// One binary logistic regression (labels 0/1) with C fixed or tuned (options.tune_c) by CV on
// held-out log-loss; `folds` from assign_folds (unused without tuning).
[[nodiscard]] std::pair<LinearModel, BaseModelFit> fit_binary_base(
    const FeatureMatrix& x, std::span<const std::int32_t> labels, std::span<const double> weights,
    const MultilabelFitOptions& options, const std::vector<int>& folds);

// The same for a multinomial regression over class values.
[[nodiscard]] std::pair<MultinomialModel, BaseModelFit> fit_multinomial_base(
    const FeatureMatrix& x, std::span<const std::int32_t> classes, std::span<const double> weights,
    const MultilabelFitOptions& options, const std::vector<int>& folds);

// Checks y against x (one set per row, sorted indices < num_labels, num_labels >= 1).
void check_label_sets(const FeatureMatrix& x, LabelSetsView y, std::span<const double> weights);

}  // namespace rateopt::detail
