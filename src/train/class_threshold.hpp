// Private: exact threshold searches over rows that come in classes (rows of one class share a
// cost), without per-row state, over every rank.
//
// A search s takes the rows of some classes. For a cut t, F_s(t) is the sum over its classes c, in
// class order, of n_c(t) * cost[c], n_c(t) being the number of rows of class c (over every rank)
// whose score, model.weights . x_i + model.bias as LinearModel::scores computes it, exceeds t.
// The search returns the cut of smallest F_s among the cuts between two distinct scores, "no row
// above" (F = 0) and "every row above"; ties go to the cut with fewer rows above. The cut is the
// midpoint of the scores on either side, the highest score plus 1 when no row is above, the
// lowest minus 1 when every row is. Since n_c are counts, F_s and the cut depend neither on the
// order of the rows nor on the rank count: a collective whose result is the same on every rank
// and for any number of ranks holding the rows.
//
// How: passes over the rows computing scores on the fly. The first finds each search's range;
// each next one counts the rows of each class in score buckets of the ranges still open (counts,
// minima and maxima reduced over ranks, a few kilobytes), evaluates F exactly at every boundary
// between non-empty buckets, and reopens only the buckets whose lower bound (F with every
// negative-cost row of the bucket above the cut and no positive-cost one) could beat the best cut
// so far. A bucket holding one distinct score is closed. The lower bound is computed with the same
// rounded operations as F, and they are monotone in the counts, so the bound holds for the
// rounded values too: the result is the exact argmin of the rounded F, as a scan over every row in
// score order evaluating F at each cut would find it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/model.hpp"

namespace rateopt::detail {

struct ClassThresholdSearch {
  std::span<const std::uint8_t> classes;  // per row of the matrix: its class
  std::span<const double> cost;           // per class: the cost of each of its rows
  // Per class: the searches its rows take part in (increasing).
  std::vector<std::vector<std::size_t>> searches_of;
  std::size_t searches = 0;
};

// Per search: its cut, or nullopt when no row takes part in it.
[[nodiscard]] std::vector<std::optional<double>> class_thresholds(
    const FeatureMatrix& x, const LinearModel& model, const ClassThresholdSearch& search,
    int n_threads);

}  // namespace rateopt::detail
