// Private: the methods behind decide_independent (rateopt/decide.hpp), exposed for tests.
//
// Every routine takes the probabilities already sorted in decreasing order and returns
// E[metric(top-k)] for k = 0..n, where top-k is the first k sorted items (decide-notes 4.0-4.5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "rateopt/decide.hpp"

namespace rateopt::detail {

struct IndependentExpectations {
  std::vector<double> expected;  // size n + 1; NaN where not evaluated (early stop)
  double error_bound = 0;        // bound on |expected[k] - exact expectation| (see decide.md)
  DecideMethod method = DecideMethod::kExact;
};

// ---- kExact: Natarajan Algorithm 1 on prefix/suffix Poisson-binomial rows -------------------
struct ExactConfig {
  double truncation = 0;    // drop at most truncation/4 of mass from each tail of both rows
  bool early_stop = false;  // stop after the first k >= 1 with E[k] >= E[k+1]
  std::size_t block = 0;    // ReversePbRows block: 0 auto, > n full table, else checkpoints
};
// Any metric; O(sum_k width(C_k) * width(D_k)) utility terms (O(n^3) worst case), closed forms
// for accuracy and Jaccard. error_bound = max_k dropped mass (utilities in [0, 1]).
[[nodiscard]] IndependentExpectations expected_exact(std::span<const double> sorted,
                                                     const DecideMetric& metric,
                                                     const ExactConfig& config = {});

// ---- kQuadratic: Ye et al. / Natarajan Algorithm 2 --------------------------------------------
// beta^2 = q / r with positive integers q + r <= kMaxRationalSum (within 8 ulp), or nullopt.
inline constexpr int kMaxRationalSum = 256;
[[nodiscard]] std::optional<std::pair<int, int>> rational_beta2(double beta);
// F-beta with rational beta^2, Jaccard, balanced accuracy; nullopt for other metrics.
// O((q + r) n^2) time, O(n) memory plus the checkpointed prefix rows.
[[nodiscard]] std::optional<IndependentExpectations> expected_quadratic(
    std::span<const double> sorted, const DecideMetric& metric, std::size_t block = 0);

// ---- kFast: quadrature on shared nodes (fast.cpp) ---------------------------------------------
// F-beta, Jaccard, balanced accuracy; nullopt for other metrics. A `tolerance` below twice the
// rounding allowance (n above about 1.7 million at 1e-12) is raised to fast_tolerance_floor(n). O(n
// * nodes) after sorting; error_bound <= the tolerance used.
[[nodiscard]] std::optional<IndependentExpectations> expected_fast(std::span<const double> sorted,
                                                                   const DecideMetric& metric,
                                                                   double tolerance);
// 4 x the fast path's rounding allowance for n items: 1.25e-12 + 4.4e-19 n (5.6e-12 at 10^7).
[[nodiscard]] double fast_tolerance_floor(std::size_t n);

// ---- kBrute -----------------------------------------------------------------------------------
inline constexpr std::size_t kMaxBruteItems = 20;
// Above this size brute force splits each subset's outcomes into Poisson-binomial counts
// instead of enumerating all 2^n outcomes.
inline constexpr std::size_t kMaxOutcomeEnumeration = 8;
struct BruteExpectations {
  std::vector<double> best_by_k;             // max over subsets of size k of E[metric]
  std::vector<std::uint32_t> best_set_by_k;  // a maximiser (bit i = sorted position i)
  std::vector<double> top_k;                 // E[metric] of the first k sorted items
};
// n <= kMaxBruteItems. enumerate_outcomes: sum over all 2^n label vectors (O(4^n)) instead of
// the Poisson-binomial split (O(2^n n^2)); both are exact.
[[nodiscard]] BruteExpectations expected_brute(std::span<const double> sorted,
                                               const DecideMetric& metric, bool enumerate_outcomes);
// DecideOptions::none_item: the best subset of the items of every size k, with the None
// pseudo-item added to the prediction (with_none) or not, scored over items + None (None true iff
// no item is). O(2^n n^2); n <= kMaxBruteItems.
[[nodiscard]] BruteExpectations expected_brute_none(std::span<const double> sorted,
                                                    const DecideMetric& metric, bool with_none);

}  // namespace rateopt::detail
