// File: rateopt/intervals.hpp
// What the rates of a sample say about the population: confidence intervals for reported values
// (`rateopt eval --ci`) and the finite-sample bounds behind the guaranteed training mode
// (`rateopt train --confidence`). docs/guarantees.md says what each promises.
//
// Rows are taken to be independent draws from one population (the usual i.i.d. assumption); a rate
// on a slice is then a proportion among the slice's rows, and conditional on how many rows the
// slice holds, its count is binomial (hard predictions) or a sum of bounded variables (expected
// rates of stochastic classifiers).
//
// Two kinds of range:
//   * intervals (expression_intervals): a value's population value lies in its interval with
//     probability about `level`. Exact Clopper-Pearson for a value that is one binomial proportion
//     of hard predictions on unweighted rows (ppr, tpr, fpr, precision, error, ... on a slice, or
//     an affine function of one such rate: `ppr[sex=Female] >= 0.3` bounds ppr - 0.3); for every
//     other value a seeded bootstrap over rows, stratified by the slices the values name, with a
//     simultaneous band over all bootstrap values (max-t: each value +- c * its bootstrap standard
//     error, c the `level` quantile of the largest standardised deviation over values).
//   * guarantees (high_confidence_ranges): ranges of constraint values whose ends hold *all at
//     once* with probability at least 1 - delta, for any sample size: each end by a union
//     bound. Hard predictions: the upper ends (what a safety test reads) per constraint at
//     delta / constraints, each from the constraint's pieces (epigraph form): one rate by
//     Clopper-Pearson, the difference of two rates on disjoint slices by the exact joint bound
//     (binomial_difference_upper), other affine pieces by one-sided Clopper-Pearson bounds of
//     their rates, anything else by interval arithmetic. Lower ends, and both ends for the
//     expected rates of stochastic classifiers: a union bound over the rates the constraints
//     read (Clopper-Pearson; Hoeffding and Maurer-Pontil empirical Bernstein bounds, the
//     smaller, for expected rates), combined through the expression by interval arithmetic.
//
// Determinism: the bootstrap's draws are keyed by (seed, resample) and its data are the counts of
// distinct rows per stratum summed over every rank, so results are bit-identical for any thread
// count and any MPI rank count.
//
// Cost: the bootstrap resamples sufficient statistics, not rows: per stratum (the rows that fall
// in the same set of named slices) a multinomial draw over its distinct (label, prediction,
// baseline, weight) values. Hard or few-level predictions make that a few numbers per stratum,
// whatever the row count; probabilities that differ on every row cost O(rows) per resample.
//
// Thread-safety: all functions are pure (the interval functions run the process-wide pool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rateopt/expr.hpp"
#include "rateopt/model.hpp"

namespace rateopt {

// ---- finite-sample bounds ----------------------------------------------------------------------

// Exact (Clopper-Pearson) two-sided interval for a binomial proportion: `successes` of `trials`,
// confidence `level` in (0, 1) (each tail (1 - level) / 2). trials = 0 gives [0, 1]. Throws
// InvalidArgument for successes > trials or a level outside (0, 1).
[[nodiscard]] Interval clopper_pearson(std::uint64_t successes, std::uint64_t trials, double level);
// One-sided exact bounds: Pr(p > upper) <= delta and Pr(p < lower) <= delta, delta in (0, 1).
[[nodiscard]] double clopper_pearson_upper(std::uint64_t successes, std::uint64_t trials,
                                           double delta);
[[nodiscard]] double clopper_pearson_lower(std::uint64_t successes, std::uint64_t trials,
                                           double delta);

// Exact one-sided bound for a weighted difference of two independent binomial proportions:
// from `k1` successes of `n1` trials (proportion p1) and `k2` of `n2` (p2), an upper bound U
// with Pr(a p1 - b p2 > U) <= delta for every (p1, p2) and every sample size; a, b > 0. The
// inversion of an exact unconditional test (statistic a k1 / n1 - b k2 / n2): its p-value is the
// largest probability of a statistic this small over the null's boundary a p1 - b p2 = theta,
// with the nuisance p2 restricted to its Clopper-Pearson interval at level 1 - delta / 10 and
// delta / 10 added (Berger & Boos 1994), and the largest over that interval taken cell by cell
// at each cell's worst corner, so it never undershoots. About as tight as a normal
// approximation for large samples, and much tighter than bounding p1 and p2 apart (a union bound
// gives each delta / 2 and adds their widths). n1 = 0 or n2 = 0 bound that proportion by [0, 1].
// Throws InvalidArgument for successes above trials, a or b not positive and finite, or delta
// outside (0, 1).
[[nodiscard]] double binomial_difference_upper(std::uint64_t k1, std::uint64_t n1, double a,
                                               std::uint64_t k2, std::uint64_t n2, double b,
                                               double delta);

// The sum, sum of squares and count of values in [0, 1] whose mean is bounded.
struct BoundedSample {
  double sum = 0;
  double sum_squares = 0;
  double count = 0;
};
// One-sided radius r with Pr(population mean > sample mean + r) <= delta (and the same below),
// for independent values in [0, 1]: Hoeffding (1963), sqrt(log(1/delta) / (2n)), and Maurer &
// Pontil (2009, Theorem 4), sqrt(2 V log(2/delta) / n) + 7 log(2/delta) / (3 (n - 1)) with V the
// sample variance. count < 2 gives +inf.
[[nodiscard]] double hoeffding_radius(double count, double delta);
[[nodiscard]] double empirical_bernstein_radius(const BoundedSample& sample, double delta);
// The mean's two-sided range at total error delta: each side takes delta / 2, split in half
// between the two radii, of which the smaller is used; clipped to [0, 1]. count = 0: [0, 1].
[[nodiscard]] Interval bounded_mean_range(const BoundedSample& sample, double delta);

// ---- intervals for reported values -------------------------------------------------------------

struct IntervalOptions {
  double level = 0.9;            // confidence of each interval, in (0, 1)
  std::size_t resamples = 1000;  // bootstrap resamples; at least 10 / (1 - level)
  std::uint64_t seed = 0;        // seed of the bootstrap draws
  int n_threads = 0;             // 0 = all cores
};

enum class IntervalMethod {
  kNone,            // no interval (ranking, multilabel and multiclass scores): NaN ends
  kClopperPearson,  // exact, for this value alone
  kBootstrap,       // stratified bootstrap, simultaneous over every bootstrap value
  // Exact, for this value alone: Clopper-Pearson ranges of its rates at (1 - level) / rates each
  // (a union bound), combined by interval arithmetic. For values of share rates on unweighted
  // rows of which one counts fewer than kRareCount rows of a kind (numerator or the rest of its
  // denominator): the bootstrap cannot see such rare events (its resamples rarely move them).
  // Probabilities of at most 16 distinct values in a rate's denominator (a mixture of hard
  // models) count in layers: the rate is sum_j (u_j - u_{j-1}) Pr(q >= u_j) over the values u_j
  // of each row's share q of the numerator, each probability binomial (docs/guarantees.md).
  kExactUnion,
  // A largest-of value (max, abs: a constraint with several epigraph pieces, Expression::pieces)
  // whose pieces are smooth: each piece in the bootstrap's simultaneous band, the value's interval
  // from the largest lower and the largest upper end. The bootstrap of the largest itself, not
  // smooth where two pieces cross (|gap| near 0), is biased away from the crossing.
  kBootstrapMax,
};
// Below this many rows of a kind in a rate's count, a value gets kExactUnion, not the bootstrap.
inline constexpr std::uint64_t kRareCount = 5;
[[nodiscard]] std::string_view to_string(IntervalMethod method) noexcept;

struct ValueInterval {
  Interval range;  // of the expression's value, or of a constraint's violation
  IntervalMethod method = IntervalMethod::kNone;
};

// Intervals for the population values of `texts` (what evaluate_text reports: an expression's
// value, a constraint's violation) on `data`, one per text, in order. Throws what evaluate_text
// throws and InvalidArgument for bad options.
[[nodiscard]] std::vector<ValueInterval> expression_intervals(std::span<const std::string> texts,
                                                              std::span<const NamedData> data,
                                                              const IntervalOptions& options = {});

// ---- guarantees --------------------------------------------------------------------------------

// One constraint's high-confidence range.
struct ConstraintRange {
  std::string text;  // as given
  double value = 0;  // the violation on `data` (Expression::value)
  // The population violation is at most range.high for every constraint at once with
  // probability at least 1 - delta, and at least range.low for every constraint at once with
  // probability at least 1 - delta.
  Interval range;
};
// Ranges of the violations of `constraints` (constraint texts; group shorthands expanded over
// `data`) whose upper ends hold simultaneously with probability at least 1 - delta for finite
// samples, and so do their lower ends (see the file comment for how each end is bounded).
// Every rate the constraints read must be a share of confusion cells (MetricInfo::share_of:
// ppr, tpr, fpr, tnr, fnr, precision, npv, error, accuracy, ...) on binary data without row
// weights; predictions are hard (Predictions::positive or 0/1 probabilities: exact binomial
// bounds) or probabilities of a stochastic classifier (bounds for means of values in [0, 1]).
// Throws InvalidArgument otherwise, naming the rate.
[[nodiscard]] std::vector<ConstraintRange> high_confidence_ranges(
    std::span<const std::string> constraints, std::span<const NamedData> data, double delta);

// A stochastic classifier as a mixture of hard ones: rows of `data` predicted by each component
// (0/1 predictions, e.g. Predictions::positive), the mixture weights summing to 1.
struct MixtureData {
  std::string name;  // as NamedData::name
  const Dataset* data = nullptr;
  std::vector<Predictions> components;
  std::vector<double> weights;
  // Per component (or empty: none): 1 or 0 when it predicts that class for every row of the
  // population, not only of `data` (a model that reads no feature), -1 otherwise. Such a
  // component's rates whose denominator is fixed by the labels and whose numerator then holds
  // every or no denominator row (ppr, npr, tpr, fnr, fpr, tnr; not error or accuracy) are known
  // exactly: they enter the bounds as they are, and the component takes no share of delta.
  std::vector<std::int8_t> constant{};
  // Per row of `data` (or empty: none): a uniform in [0, 1) drawn independently of the rows and
  // of the components, e.g. keyed by (seed, global row). When given, the components whose rates
  // are not known are bounded as one: row i takes the prediction of the component whose
  // cumulative weight interval (over those components) holds draws[i]; a component with
  // probabilities (not 0/1) predicts positive when the draw's position within its interval
  // (again uniform, independent of the pick) is below the row's probability. Those are hard
  // predictions of the sub-mixture, each row independently, so its rates are binomial and
  // bounded exactly at the full share of delta instead of one share per component, and instead
  // of the weaker bounds for means of probabilities (narrower when the components' rates are
  // alike, as a mixture's straddling a bound are, or probabilities mostly 0 or 1; wider when
  // rates differ much: choose by data other than `data`, as train_guaranteed does).
  std::vector<double> draws{};
};
// The ranges of the mixture's expected violations. A rate whose denominator is fixed by the
// labels (ppr, tpr, fpr, error, ...) is the weighted sum of the components' rates, each bounded
// exactly (Clopper-Pearson at delta / (rates * components with weight > 0 whose rates are not
// known, see MixtureData::constant), or at delta / rates for all of them at once through
// MixtureData::draws); usually much tighter than bounding the mean of the mixture's
// probabilities. The values reported are the expected ones, whatever the draws. When some rate's
// denominator depends on the prediction (precision, npv), the bounds for means of the mixture's
// probabilities are used instead. Throws what high_confidence_ranges throws, and InvalidArgument
// for a `constant` entry that is not -1, 0 or 1 or that the component's predictions on `data`
// contradict, and for draws that are not one value in [0, 1) per row.
[[nodiscard]] std::vector<ConstraintRange> high_confidence_ranges(
    std::span<const std::string> constraints, const MixtureData& mixture, double delta);

// What a guarantee is about, on `data`: `model`'s best single model's hard predictions, or
// (stochastic) its mixture's components' hard predictions with their weights (a mixture of
// threshold models; randomised group thresholds, as postprocess() gives: hard components that
// couple the groups' draws through one uniform, component k taking in every group the threshold
// whose cumulative weight interval holds the k-th interval between all groups' cumulative
// weights, so that the weighted components give each row exactly its probability; any other
// model: its probabilities as one component).
[[nodiscard]] MixtureData guarantee_data(const Classifier& model, const Dataset& data,
                                         std::string name, bool stochastic, int n_threads = 0);

// ---- the guaranteed training mode (rateopt train --confidence) ---------------------------------
//
// Seldonian-style (Thomas et al., Science 2019), with finite-sample bounds: the training rows are
// split once into a candidate part and a safety part; the model is trained on the candidate part
// with every constraint tightened by the margin the safety test is predicted to need; then one
// safety test on the safety part (high_confidence_ranges at delta = 1 - confidence) passes only
// when every constraint's upper bound is <= 0. A model that passes violates some constraint on
// the population with probability at most delta; one that fails is reported, not returned.

struct GuaranteeOptions {
  double confidence = 0.95;      // 1 - delta, in (0, 1)
  double safety_fraction = 0.4;  // share of the rows held out for the safety test, in (0, 1)
  // The candidate part's constraints are tightened by this many predicted safety-test widths
  // (the distance between a constraint's value and its upper bound on the safety part, predicted
  // from the candidate part). 1 would leave about half the safety tests failing at the margin.
  double width_factor = 2.0;
  std::uint64_t seed = 0;  // seed of the split
  // The output certified: false, the best single model (exact binomial bounds); true, the
  // stochastic mixture's expected rates (its components' exact bounds, weighted).
  bool stochastic_output = false;
  // Move toward a constant classifier (all negative or all positive, whichever has the better
  // candidate objective, when the candidate part predicts it to pass) as far as the safety test
  // allows: the models from the constant to the fit (a stochastic output mixed with it, a
  // deterministic one's threshold shifted), fixed by the candidate part alone, are tested on the
  // safety part in that order at the full delta (fixed-sequence testing), and the last to pass
  // before the first failure is the answer; delta is not split over them. Used when the
  // candidate part predicts the fit to fail, or always when the tests are nested (a stochastic
  // output and a constant whose constraint values are known exactly, e.g. parity of ppr, tpr or
  // fpr: the fit itself is then the answer whenever it passes). Models with the threshold link
  // (the solvers' outputs; post-processing's group thresholds, a deterministic one's shared
  // score shifted) or the ramp link (Goh et al.'s models) only.
  bool shrink = true;
};
// Throws InvalidArgument naming the field for values outside their ranges.
void validate(const GuaranteeOptions& options);

// Whether each of `rows` rows, the first of which is row `first_row` of the whole data (over MPI
// ranks: the rows of earlier ranks), goes to the safety part: a draw keyed by (seed, global row),
// so the split does not depend on the rank or thread count.
[[nodiscard]] std::vector<std::uint8_t> safety_rows(std::size_t rows, std::size_t first_row,
                                                    const GuaranteeOptions& options);

// The margin to tighten each constraint by when training on the candidate part: width_factor
// times (high_confidence_ranges' upper end - value) on the candidate part's predictions, scaled
// by sqrt(candidate rows / safety rows) to the safety part's size (bounds shrink as 1 / sqrt(n)).
[[nodiscard]] std::vector<double> predicted_safety_margins(std::span<const std::string> constraints,
                                                           std::span<const NamedData> candidate,
                                                           const GuaranteeOptions& options);
// The same for a mixture's expected rates (its own high_confidence_ranges).
[[nodiscard]] std::vector<double> predicted_safety_margins(std::span<const std::string> constraints,
                                                           const MixtureData& candidate,
                                                           const GuaranteeOptions& options);
// What the safety test is predicted to read for each constraint, from the candidate part: the
// value there plus predicted_safety_margins' margin (> 0: predicted to fail; +infinity where
// the candidate part gives no finite value or bound).
[[nodiscard]] std::vector<double> predicted_safety_upper(std::span<const std::string> constraints,
                                                         const MixtureData& candidate,
                                                         const GuaranteeOptions& options);

}  // namespace rateopt
