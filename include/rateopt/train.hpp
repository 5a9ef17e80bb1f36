// File: rateopt/train.hpp
// Rate-constrained training: minimise a function of classification rates subject to constraints
// on other rate functions (Cotter et al. 2019; Narasimhan, Cotter & Gupta 2019).
//
// Problem. The objective and the constraints are expressions of the expression language
// (expr.hpp) over rates on slices of one or more named datasets ("tpr@train[sex=Female]").
// A `RateProblem` compiles them once:
//   * atoms: every rate depends on the model only through *atoms*, the weighted share of rows of
//     one cell (dataset, slice, label, baseline prediction) that the model predicts positive,
//     normalised by the slice's total weight. An atom is linear in the per-row predictions h_i:
//         atom_k = sum_{i in cell k} coef_ki * h_i,   coef_ki = w_i / (slice total weight);
//   * leaves (rates): ppr, tpr, fpr, error, churn, ... are affine in atoms; precision, f1, fbeta,
//     jaccard, winloss are ratios of affine forms; kld, gmean, hmean, qmean (and gtppr) are
//     general differentiable functions of a few affine "argument rates";
//   * functions: the objective and each constraint g(rates) <= 0 are analysed as kLinear (affine
//     in atoms), kRatio (affine in leaves with at least one ratio leaf), kGeneral or kConstant.
//     `a <= b` becomes a - b <= 0, `a >= b` becomes b - a <= 0, `a == b` becomes two
//     inequalities, and `max(x, y, ...) <= b` (or `min(...) >= b`) one constraint per argument
//     (worst-group constraints). Constant constraints are rejected.
//
// Solvers (TrainSolver; kAuto picks by the analysis):
//   kProxyLagrangian  linear problems: the model player descends a hinge surrogate of the
//                     proxy-Lagrangian, the multiplier player (a stochastic matrix whose stationary
//                     distribution weights objective and constraints) ascends on true 0/1 rates by
//                     multiplicative updates (Cotter, Jiang & Sridharan 2019, swap-regret form).
//   kThreePlayer      Narasimhan Algorithm 2: model player on surrogates, multiplier player on
//                     true rates, slack player's best response (closed form for kld, gmean,
//                     hmean, qmean objectives; projected gradient otherwise).
//   kRatio            Narasimhan Algorithm 3 for sums of ratios: numerator / denominator slacks
//                     moved by projected gradient steps.
//   kOracle           Narasimhan Algorithm 1: the model player is a cost-sensitive oracle
//                     (`TrainOptions::oracle`; see oracles below), the rest as Algorithm 2.
// The slack links are equalities: L = psi(xi) + sum_a lambda_a (R_a(theta) - xi_a) with lambda_a in
// [-bound, bound] (an exact penalty for bound >= the Lipschitz constant), so no monotonicity of psi
// is needed; the model player uses the upper hinge max(0, 1 + f) for rows whose total coefficient
// is positive and the concave lower bound min(1, f) for rows whose coefficient is negative, so its
// surrogate always upper-bounds the Lagrangian term.
//
// Output: every `checkpoint_every` iterations the iterate and its exact training atoms are kept as
// a candidate. The stochastic classifier is the LP-shrunk distribution over candidates (at most
// m + 1 models, m = number of inequality constraints; see shrink_candidates), the deterministic
// one the best iterate (feasible first, then objective; best_candidate).
//
// Determinism: same problem, options and seed give the same result for any n_threads (all sums
// are block reductions of fixed block size).
//
// Hooking in another solver (e.g. Goh et al.'s ramp method, which needs problems linear in
// rates): build a RateProblem, check objective()/constraints() are kLinear, read the affine forms
// (FunctionInfo::linear) over atoms and the atoms' rows and coefficients (atoms()), train, then
// call problem.evaluate(problem.atom_values(predictions)) to report true values, and
// shrink_candidates / best_candidate to build a Classifier from several iterates.
//
// Example:
//   rateopt::RateProblem problem = rateopt::RateProblem::build(
//       {.objective = "error", .constraints = {"ppr[sex=Female] >= 0.8 * ppr[sex=Male]"}},
//       {{"train", &train}});
//   rateopt::TrainResult r = rateopt::train_rate_constrained(problem, {});
//   r.classifier.save("fair.json");
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/model.hpp"
#include "rateopt/status.hpp"

namespace rateopt {

// ---- problem -----------------------------------------------------------------------------------

struct TrainingData {
  std::string name;  // referenced as rate@name; the first entry is the default dataset
  const Dataset* data = nullptr;
};

struct ProblemSpec {
  std::string objective = "error";       // an expression (not a constraint)
  bool maximize = false;                 // maximise the objective instead
  std::vector<std::string> constraints;  // "lhs <= rhs", "lhs >= rhs", "lhs == rhs"
  // How parity(RATE, COL) compiles (expand_group_shorthands): kTraining (default) keeps every
  // pairwise gap as a linear constraint over at most kPairwiseParityValues values and writes
  // more as one spread constraint max - min <= b (FunctionInfo::spread), which the cutting-plane
  // solver takes with memory linear in the values; kPairs always pairs (train runs the other
  // solvers, post-processing and the ramp solver on the pairs).
  ParityForm parity = ParityForm::kTraining;
};
// spec with parity written pairwise (ParityForm::kPairs), for post-processing and the ramp
// solver.
[[nodiscard]] inline ProblemSpec pairwise_parity(ProblemSpec spec) {
  spec.parity = ParityForm::kPairs;
  return spec;
}

enum class FunctionKind { kConstant, kLinear, kRatio, kGeneral };
[[nodiscard]] std::string_view to_string(FunctionKind kind) noexcept;

struct AtomTerm {
  std::size_t atom = 0;
  double coef = 0;
};

// constant + sum coef * atom.
struct AffineForm {
  double constant = 0;
  std::vector<AtomTerm> terms;
  [[nodiscard]] double evaluate(std::span<const double> atoms) const;
};

// The rows of one atom, increasing (a dataset holds fewer than 2^32 rows): a list of row
// indices (4 bytes a member), or a bitmap over the dataset's rows (1 bit a row) when that is
// smaller, as it is for an atom holding more than 1/32 of the rows. Read it with for_each.
class RowSet {
 public:
  RowSet() = default;
  // From increasing row indices of a dataset of num_rows rows; stored as a bitmap when that is
  // smaller and `allow_bitmap`. Throws InvalidArgument when rows are not increasing or not below
  // num_rows.
  RowSet(std::vector<std::uint32_t> rows, std::size_t num_rows, bool allow_bitmap = true);

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] bool is_bitmap() const noexcept { return !bits_.empty(); }
  // f(position, row) for every member in increasing row order; position counts members from 0
  // (the index of the member's coefficient in Atom::coef).
  template <typename F>
  void for_each(F&& f) const {
    for_each_in(0, std::numeric_limits<std::size_t>::max(), f);
  }
  // The same for the members in [begin, end).
  template <typename F>
  void for_each_in(std::size_t begin, std::size_t end, F&& f) const {
    if (bits_.empty()) {
      std::size_t p = first_at_least(begin);
      for (; p < list_.size() && list_[p] < end; ++p) f(p, list_[p]);
      return;
    }
    std::size_t p = first_at_least(begin);
    const std::size_t stop = std::min(end, bits_.size() * 64);
    for (std::size_t w = begin / 64; w < bits_.size() && w * 64 < stop; ++w) {
      std::uint64_t word = bits_[w];
      if (w == begin / 64 && begin % 64 != 0) word &= ~std::uint64_t{0} << (begin % 64);
      while (word != 0) {
        const std::size_t row = w * 64 + static_cast<std::size_t>(std::countr_zero(word));
        if (row >= stop) return;
        f(p++, static_cast<std::uint32_t>(row));
        word &= word - 1;
      }
    }
  }
  // The members as a list.
  [[nodiscard]] std::vector<std::uint32_t> to_vector() const;

 private:
  // The position of the first member >= row.
  [[nodiscard]] std::size_t first_at_least(std::size_t row) const noexcept;

  std::vector<std::uint32_t> list_;  // members, when not a bitmap
  std::vector<std::uint64_t> bits_;  // bit r of word r / 64: row r is a member
  std::size_t size_ = 0;
};

struct Atom {
  std::size_t dataset = 0;  // index into RateProblem::data()
  RowSet rows;              // rows of the cell (increasing)
  // Per row: weight / total weight of the slice; empty when every row's is unit_coef (data
  // without weights), which saves 8 bytes per row and atom. Read it with coef_at.
  std::vector<double> coef;
  double unit_coef = 0;
  double capacity = 0;      // sum of coef: the atom's value when every row is positive
  std::string description;  // e.g. "train[sex=Female] label=1"
  int label = 0;            // label of the cell's rows (unlabelled data: 0)
  // The atom of the same dataset, slice and baseline with the other label (labelled data), or
  // SIZE_MAX when that cell is empty or not used.
  std::size_t sibling = SIZE_MAX;
  // The coefficient of the atom's r-th row.
  [[nodiscard]] double coef_at(std::size_t r) const noexcept {
    return coef.empty() ? unit_coef : coef[r];
  }
};

// One function of the problem: the objective (to minimise; negated when maximising) or one
// constraint g <= 0.
struct FunctionInfo {
  std::string text;  // source text, e.g. "ppr[sex=Female] - 0.8 * ppr[sex=Male]"
  FunctionKind kind = FunctionKind::kConstant;
  std::string shape;                 // "linear", "convex", "concave", "sum of ratios", "unknown"
  std::optional<AffineForm> linear;  // kLinear and kConstant: the function as an affine form
  // kRatio with a single ratio rate (e.g. -f1 as minimised, or precision[g] >= 0.6 as
  // 0.6 - precision[g] <= 0): the function is constant + coef * num / den, num and den affine in
  // atoms (the rate's numerator and denominator; den >= 0 on every classifier).
  struct Ratio {
    double constant = 0;
    double coef = 0;
    AffineForm num, den;
  };
  std::optional<Ratio> ratio;
  // parity over many values (ProblemSpec::parity): the function is max_v members[v] - min_v
  // members[v] - bound, each member a rate affine in atoms (kind kGeneral, shape "convex").
  struct Spread {
    std::vector<AffineForm> members;
    double bound = 0;
  };
  std::optional<Spread> spread;
};

struct ProblemValues {
  double objective = 0;             // as written (not negated when maximising)
  std::vector<double> constraints;  // g_j (<= 0 when satisfied), one per FunctionInfo
  [[nodiscard]] double max_violation() const noexcept;  // max(0, max_j g_j)
};

// The objective and every constraint of a problem as written (group shorthands expanded), for
// a classifier on named data: what `rateopt train` reports for its train and validation data.
struct SpecValues {
  ExpressionValue objective;
  std::vector<ExpressionValue> constraints;  // one per ProblemSpec::constraints, in order
  // With interval options: the objective's interval, then each constraint's (of its violation),
  // from expression_intervals on the same predictions; empty otherwise.
  std::vector<ValueInterval> intervals;
};
// Predicts each dataset with `classifier` in `mode` (the Dataset overload: group rules apply;
// stochastic draws keyed by `seed`) and evaluates the spec's expressions there (evaluate_text);
// with `intervals`, also their confidence intervals (expression_intervals; its n_threads is
// n_threads). stacked_scores (optional): the classifier's components' scores of data's rows,
// the datasets stacked in order (TrainResult::training_scores of a problem over exactly `data`,
// with that result's classifier), used in place of scoring those rows (KnownScores); an
// InvalidArgument when its sizes do not fit. Throws what Classifier::predict, evaluate_text and
// expression_intervals throw.
[[nodiscard]] SpecValues evaluate_spec(const ProblemSpec& spec, const Classifier& classifier,
                                       std::span<const TrainingData> data, PredictMode mode,
                                       std::uint64_t seed = 0, int n_threads = 0,
                                       const IntervalOptions* intervals = nullptr,
                                       std::span<const std::vector<double>> stacked_scores = {});

class RateProblem {
 public:
  // Parses and analyses. Throws ParseError (expression syntax), NotFound (unknown dataset,
  // metric, column or column value), InvalidArgument (empty slice, unlabelled data for a
  // label metric, constant constraint, a ratio whose denominator is identically zero, a
  // non-binary dataset, a baseline that is not 0/1, datasets whose feature counts differ).
  static RateProblem build(const ProblemSpec& spec, std::vector<TrainingData> data);

  [[nodiscard]] const ProblemSpec& spec() const noexcept;
  [[nodiscard]] std::span<const TrainingData> data() const noexcept;
  [[nodiscard]] std::span<const Atom> atoms() const noexcept;
  // Objective as minimised (negated when maximising).
  [[nodiscard]] const FunctionInfo& objective() const noexcept;
  [[nodiscard]] std::span<const FunctionInfo> constraints() const noexcept;
  // Index of the source constraint (ProblemSpec::constraints) of each internal constraint.
  [[nodiscard]] std::span<const std::size_t> constraint_source() const noexcept;
  [[nodiscard]] std::size_t num_features() const noexcept;

  // Atoms from per-dataset predictions (probabilities of positive in [0, 1], one vector per
  // dataset, each with the dataset's row count).
  [[nodiscard]] std::vector<double> atom_values(
      std::span<const std::vector<double>> predictions) const;
  // The same for hard predictions, 1 byte a row (0 or 1; others throw InvalidArgument): the bits
  // of the double overload with 0.0 / 1.0.
  [[nodiscard]] std::vector<double> atom_values(
      std::span<const std::vector<std::uint8_t>> predictions) const;
  // Exact values (catalogue conventions) at the given atoms.
  [[nodiscard]] ProblemValues evaluate(std::span<const double> atoms) const;
  // Lines describing the analysis, for reports.
  [[nodiscard]] std::string describe() const;

  struct Impl;
  [[nodiscard]] const Impl& impl() const noexcept { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

// ---- scorers -----------------------------------------------------------------------------------

// A differentiable scorer f(x; params). Implementations must be deterministic for any n_threads.
class Scorer {
 public:
  virtual ~Scorer() = default;
  [[nodiscard]] virtual std::size_t num_parameters() const = 0;
  // out[i] = f(x_i; params), out has x.rows() entries.
  virtual void scores(const FeatureMatrix& x, std::span<const double> params, std::span<double> out,
                      int n_threads) const = 0;
  // grad += sum_i d[i] * d f(x_i; params) / d params.
  virtual void vjp(const FeatureMatrix& x, std::span<const double> params,
                   std::span<const double> d, std::span<double> grad, int n_threads) const = 0;
  // The saved form (linear scorers only, today).
  [[nodiscard]] virtual LinearModel to_linear(std::span<const double> params) const = 0;
};

// f(x) = w . x + b; params = [w (num_features), b].
class LinearScorer final : public Scorer {
 public:
  explicit LinearScorer(std::size_t num_features, bool fit_intercept = true)
      : d_(num_features), intercept_(fit_intercept) {}
  [[nodiscard]] std::size_t num_parameters() const override { return d_ + 1; }
  void scores(const FeatureMatrix& x, std::span<const double> params, std::span<double> out,
              int n_threads) const override;
  void vjp(const FeatureMatrix& x, std::span<const double> params, std::span<const double> d,
           std::span<double> grad, int n_threads) const override;
  [[nodiscard]] LinearModel to_linear(std::span<const double> params) const override;

 private:
  std::size_t d_;
  bool intercept_;
};

// ---- slack best responses (Narasimhan Lemma 1; train-notes 5.8) --------------------------------

// argmin over u in [0,1]^2 of loss(u) + <lambda, u> (lambda >= 0) for the losses
//   kKld:   p log(p/u1) + (1-p) log((1-p)/u2)   (u = predicted positive / negative rate)
//   kGmean: 1 - sqrt(u1 u2)                     (u = tpr, tnr)
//   kHmean: 1 - 2 u1 u2 / (u1 + u2)             (u = tpr, tnr)
// and argmin of loss(z) - <lambda, z> for
//   kQmean: sqrt((z1^2 + z2^2) / 2)             (z = fpr, fnr)
// Ties (G/H/Q-means are not strictly convex) resolve to the first minimiser found by the closed
// form. Throws InvalidArgument for negative lambda or p outside (0, 1).
enum class SlackLoss { kKld, kGmean, kHmean, kQmean };
struct SlackResponse {
  double u1 = 0, u2 = 0;
  double value = 0;  // the minimum
};
[[nodiscard]] SlackResponse slack_best_response(SlackLoss loss, double lambda1, double lambda2,
                                                double p = 0.5);

// ---- candidates: shrinking and best iterate ----------------------------------------------------

// Candidate i has objective f[i] and constraint values g[i * m + j] (<= 0 feasible).
struct ShrinkResult {
  std::vector<double> weights;  // one per candidate, sum 1, at most m + 1 non-zero
  double objective = 0;         // sum_i w_i f_i
  double max_violation = 0;     // max_j sum_i w_i g_ij (<= 0 when feasible; >= 0 reported)
  bool feasible = false;        // LP(0) was feasible
};
// LP(v): min_w sum w_i f_i s.t. sum_i w_i g_ij <= v for all j, w in the simplex. Returns the
// basic (vertex) solution of LP(0) when feasible, otherwise of LP(v*) with the smallest v* found
// by bisection (to `tolerance`). Solved with COIN-OR CLP (primal simplex). Exact for problems
// linear in rates.
[[nodiscard]] ShrinkResult shrink_candidates(std::span<const double> f, std::span<const double> g,
                                             std::size_t m, double tolerance = 1e-7);
// Charnes-Cooper form for a ratio objective num_i / den_i (den_i > 0) of the mixture with linear
// constraints: min (sum w_i num_i) / (sum w_i den_i). objective = the mixture's ratio.
[[nodiscard]] ShrinkResult shrink_candidates_ratio(std::span<const double> num,
                                                   std::span<const double> den,
                                                   std::span<const double> g, std::size_t m,
                                                   double tolerance = 1e-7);
// The deterministic pick: the feasible candidate (max_j g_ij <= tolerance) with the smallest
// objective (the first on ties); when none is feasible, the one with the smallest violation
// max_j g_ij (ties by objective). (Cotter et al.'s rank rule -- the smallest max of the objective
// rank and the violation rank -- could pick an infeasible candidate over a feasible one, and the
// unconstrained start over one that nearly meets the constraints.)
[[nodiscard]] std::size_t best_candidate(std::span<const double> f, std::span<const double> g,
                                         std::size_t m, double tolerance = 0);

// ---- training ----------------------------------------------------------------------------------

enum class TrainSolver { kAuto, kProxyLagrangian, kThreePlayer, kRatio, kOracle, kCuttingPlane };
enum class StepRule { kSgd, kAdagrad, kAdam };
// The model family the cutting-plane and oracle solvers fit (and `rateopt train` without a
// problem): weighted logistic regression, or boosted trees (rateopt/gbdt.hpp).
enum class Learner { kLogistic, kGbdt };
[[nodiscard]] std::string_view to_string(TrainSolver solver) noexcept;
[[nodiscard]] std::string_view to_string(StepRule rule) noexcept;
[[nodiscard]] std::string_view to_string(Learner learner) noexcept;
// Throws InvalidArgument listing the accepted names ("auto", "proxy", "three-player", "ratio",
// "oracle"; "sgd", "adagrad", "adam").
[[nodiscard]] TrainSolver parse_train_solver(std::string_view name);
[[nodiscard]] StepRule parse_step_rule(std::string_view name);

struct IterationRecord {
  int iteration = 0;
  double objective = 0;      // true objective of this iterate (as written)
  double max_violation = 0;  // true max(0, g_j) of this iterate
  double lagrangian = 0;     // surrogate Lagrangian the model player descends (cutting-plane:
                             // the best Lagrangian lower bound so far)
  double gap = std::numeric_limits<double>::quiet_NaN();  // cutting-plane: certificate
  double seconds = 0;                                     // since the start
};

// What a cost-sensitive oracle minimises: sum_d sum_i rows[d][i] * h_i(model) (h_i = 1 when the
// model predicts row i of dataset d positive), where rows[d][i] = sum_k atoms[k] * coef_ki over
// the atoms k holding the row (RateProblem::atoms()).
struct OracleCosts {
  std::span<const std::vector<double>> rows;
  std::span<const double> atoms;
};
using CostSensitiveOracle = std::function<LinearModel(const RateProblem&, const OracleCosts&)>;

struct TrainOptions {
  TrainSolver solver = TrainSolver::kAuto;
  int iterations = 500;  // game rounds (> 0)
  StepRule model_rule = StepRule::kAdam;
  double model_step = 0.05;  // learning rate of the model player (> 0)
  StepRule multiplier_rule = StepRule::kSgd;
  double multiplier_step = 0;    // 0: 0.3 for the proxy-Lagrangian, 0.5 otherwise
  double multiplier_bound = 20;  // box [0, bound] (constraints), [-bound, bound] (links)
  double slack_step = 0.01;      // Algorithm 3's slack step
  double l2 = 0;                 // 0.5 * l2 * |w|^2 added to the model player's loss
  double c = 1.0;  // kCuttingPlane: inverse regularisation of its logistic oracle (sklearn's C)
  // The model family; kGbdt: boosted trees as the oracle (cutting-plane, oracle solvers), with
  // the gbdt_* options below (GbdtOptions, rateopt/gbdt.hpp; seed: `seed`).
  Learner learner = Learner::kLogistic;
  int gbdt_rounds = 100;
  int gbdt_warm_rounds = 20;
  int gbdt_max_depth = 6;
  double gbdt_learning_rate = 0.3;
  double gbdt_l2 = 1.0;
  double gbdt_min_child_weight = 1.0;
  double gbdt_subsample = 1.0;
  double gbdt_colsample = 1.0;
  bool fit_intercept = true;
  int checkpoint_every = 0;  // 0: iterations / 100 (at least 1)
  double tolerance = 1e-3;   // violation accepted as feasible in reports and ranking
  // Early stop (0 = off: run all `iterations`): after every `stop_window` rounds, the uniform
  // mixture of that window's iterates (its mean atoms) is evaluated; training stops when its max
  // violation is <= tolerance and its objective moved by <= stop_tolerance from the previous
  // window's. The last iterate is always a candidate.
  int stop_window = 0;
  double stop_tolerance = 1e-3;
  bool shrink = true;  // LP-shrink the candidates (else uniform over them)
  // Model player's minibatch: rows drawn per round and dataset without replacement (seeded),
  // costs scaled by n / batch_size; 0 (or >= the rows) = full batch. The multiplier and slack
  // players always see the exact rates of every row, so each round still scores all rows.
  int batch_size = 0;
  std::uint64_t seed = 0;                                // minibatch draws
  int n_threads = 0;                                     // <= 0: all cores
  std::optional<LinearModel> initial;                    // warm start (default: zero)
  CostSensitiveOracle oracle;                            // kOracle only
  std::function<void(const IterationRecord&)> progress;  // called every progress_every rounds
  // Polled once per round (and per oracle call of the deterministic-model search): returning
  // true stops training after that round with status kInterrupted and the candidates so far
  // (Python's Ctrl-C check). May also throw; the exception then leaves train() unchanged.
  std::function<bool()> should_stop;
  int progress_every = 100;
};

struct TrainResult {
  Classifier classifier;  // kind "rate_constrained", Link::kThreshold, best = deterministic pick
  TrainSolver solver = TrainSolver::kAuto;           // the solver that ran (never kAuto)
  Termination status = Termination::kMaxIterations;  // kConverged: stochastic model feasible
  int iterations = 0;  // rounds run (fewer than TrainOptions::iterations after an early stop)
  double seconds = 0;
  ProblemValues stochastic;     // training values of the stochastic classifier
  ProblemValues deterministic;  // training values of the best iterate
  std::size_t num_candidates = 0;
  // Training values of every candidate the stochastic model was chosen from (the LP's columns),
  // so callers can check the mixture against the LP optimum over them.
  std::vector<ProblemValues> candidates;
  // Optimality certificate (problems linear in rates): a Lagrangian lower bound on the objective
  // of any classifier the oracle can find, and gap = stochastic objective - lower_bound (as
  // minimised). NaN when the solver gives none.
  double lower_bound = std::numeric_limits<double>::quiet_NaN();
  double gap = std::numeric_limits<double>::quiet_NaN();
  // Cutting-plane: oracle calls and the logistic-regression iterations they took in all.
  int oracle_calls = 0;
  long oracle_iterations = 0;
  // Per component of `classifier`: its scores of the problem's rows (the datasets stacked in
  // order), the bits ScoreModel::scores gives, where the solver has them at no cost (boosted
  // trees: XGBoost's training cache); else empty. evaluate_spec takes them (stacked_scores).
  std::vector<std::vector<double>> training_scores;
  std::vector<IterationRecord> history;  // every progress_every rounds and the last
};

// The front door: checks the options (train_options.hpp), resolves kAuto (problems linear in
// rates -> kCuttingPlane; any general function -> kThreePlayer; else kRatio) and runs the solver
// from the registry (src/train/solvers.cpp). Throws InvalidArgument on bad options, a solver
// that does not take the problem, and kOracle without an oracle.
[[nodiscard]] TrainResult train(const RateProblem& problem, const TrainOptions& options = {});
// The same (the name of earlier releases).
[[nodiscard]] TrainResult train_rate_constrained(const RateProblem& problem,
                                                 const TrainOptions& options = {});

// ---- the guaranteed mode (intervals.hpp, docs/guarantees.md) ----------------------------------

struct GuaranteedTrainResult {
  // The fit kept: on the candidate part, with the tightened constraints. result.status is
  // kNoSolutionFound when the safety test failed (the solver's own status is in solver_status).
  TrainResult result;
  Termination solver_status = Termination::kConverged;
  bool passed = false;  // the solver met the tightened constraints and every bound is <= 0
  std::vector<std::string> trained_constraints;  // the constraints as trained (tightened)
  std::vector<double> margins;                   // by how much each was tightened
  std::vector<ConstraintRange> safety;  // per constraint: its value and range on the safety part
  Dataset candidate;                    // this process's rows of each part
  Dataset safety_rows;
  double candidate_total = 0;  // rows of each part over every rank
  double safety_total = 0;
  std::size_t kept_fit = 0;  // which call of the fit (0-based) gave `result`
  // GuaranteeOptions::shrink: the constant classifier the fit was moved toward ("" when not
  // moved, "all negative", "all positive") and the share of the fit kept (1 when not moved), the
  // last model on the path to pass the safety test: its mixture weight (stochastic output) or
  // about the share of the fit's positive (negative) predictions on the candidate rows that its
  // raised (lowered) threshold keeps.
  std::string anchor;
  double kept_share = 1;
  // Stochastic output: whether the safety test bounded the mixture's components as one seeded
  // draw per row (MixtureData::draws; chosen when the candidate part's bounds are lower so)
  // rather than each at its own share of delta; then the safety rows' draws, to recompute it.
  bool drawn = false;
  std::vector<double> safety_draws;
  // Several datasets (the overload taking TrainingData): each one's candidate rows, in order.
  std::vector<Dataset> candidate_parts;
};

// Trains `spec` on `data` (one dataset, referenced as "train" or without '@') in the guaranteed
// mode: the split of safety_rows (first_row: the rows of lower MPI ranks), a first fit on the
// candidate part that predicts each constraint's safety-test width (predicted_safety_margins),
// the constraints tightened by those margins (scaled down by bisection when the candidate part
// cannot meet them), the fit kept, then high_confidence_ranges at delta = 1 - confidence on the
// safety part, for the output `guarantee.stochastic_output` names. Deterministic for a seed and
// options, for any thread and rank count. Throws InvalidArgument for specs without constraints,
// equalities, rates that cannot be bounded (high_confidence_ranges) and bad options.
[[nodiscard]] GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                                     std::size_t first_row,
                                                     const TrainOptions& options,
                                                     const GuaranteeOptions& guarantee);

// The same over several datasets (rates name them as rate@NAME; the first is the default):
// every dataset's rows are split as above (keyed by the row's place among the datasets' rows in
// order), the fits see every dataset's candidate part, and the one safety test bounds each
// constraint from the safety rows of the datasets it reads, all constraints at once. Done by
// pooling the datasets into one whose rows carry their dataset's name in a slice column (named
// "__dataset", with more underscores if a dataset has such a column) and every rate rewritten
// onto that slice (with_datasets_as_slices, after expanding the group shorthands over each
// dataset's own values): the rates, their bounds and the union bound are those of the datasets.
// `safety` and `trained_constraints` hold the constraints as given; `candidate` and
// `safety_rows` are the pooled parts (with the tag column), `candidate_parts` each dataset's
// candidate rows. The datasets need the same encoding. One process (InvalidArgument under
// several MPI ranks).
[[nodiscard]] GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec,
                                                     std::span<const TrainingData> data,
                                                     const TrainOptions& options,
                                                     const GuaranteeOptions& guarantee);

// The same around any fit (the solvers above, post-processing, a caller's own learner): `fit`
// trains a spec (the constraints tightened) on the candidate part, referenced as "train", and
// answers like `train`: the classifier, the status (kConverged or kFeasible: the tightened
// constraints are met by the stochastic output), and the training values of both outputs (a
// deterministic output meets them when its largest violation is at most `tolerance`; left
// without constraint values, they are computed from the classifier on the candidate part). It is
// called for the first fit that predicts the widths, the tightened fit and each bisection step;
// it must not read the safety rows. `n_threads` sets the safety test's predictions.
using GuaranteedFit = std::function<TrainResult(const ProblemSpec& spec, const Dataset& candidate)>;
[[nodiscard]] GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                                     std::size_t first_row,
                                                     const GuaranteedFit& fit, double tolerance,
                                                     int n_threads,
                                                     const GuaranteeOptions& guarantee);

// A fit whose models the library cannot predict with (a caller's learner: Python's estimator=)
// answers with a classifier over features of its own choosing, and those features on both parts:
// e.g. one column per fitted model holding its 0/1 predictions, and a threshold component per
// model reading its column (weights e_k, bias -1/2). The rows are the parts' rows in their order:
// the candidate part handed to the fit, and the safety part, which the caller finds with
// safety_rows for the same row count, first row and options (the fit predicts there; it must not
// train there). Empty features: the classifier reads the parts' own. Everything train_guaranteed
// does with the fit (the predicted widths, the safety test, the move toward a constant) then reads
// the classifier on those features, and the classifier returned does too.
struct GuaranteedFitOutput {
  TrainResult fit;
  FeatureMatrix candidate_features;
  FeatureMatrix safety_features;
};
using GuaranteedFeatureFit =
    std::function<GuaranteedFitOutput(const ProblemSpec& spec, const Dataset& candidate)>;
[[nodiscard]] GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                                     std::size_t first_row,
                                                     const GuaranteedFeatureFit& fit,
                                                     double tolerance, int n_threads,
                                                     const GuaranteeOptions& guarantee);

// ---- the two-dataset scheme (Cotter et al. 2019) ----------------------------------------------
//
// "Training well-generalizing classifiers for fairness metrics and other data-dependent
// constraints" (Cotter, Gupta, Jiang, Srebro, Sridharan, Wang, Woodworth & You, ICML 2019): the
// rows are split once; the model side (every fit of the oracle, and the objective) sees only the
// model part, the constraint side (the master LP's constraint rows, hence the multipliers, and
// the final LP over the candidates) only the constraint part. The oracle's costs for the
// constraints are those of the constraint part carried over to the model rows of the same kind
// (the same slice columns' values and label: each kind's cost mass spread over its model rows in
// proportion to their weights), the proxy of the paper. The mixture then meets the constraints
// on rows none of its models was fitted to.
struct TwoDatasetOptions {
  double constraint_fraction = 1.0 / 3.0;  // share of the rows on the constraint side, in (0, 1)
  std::uint64_t seed = 0;                  // seed of the split (safety_rows' draw)
};
struct TwoDatasetResult {
  // The classifier (a mixture of the oracle's linear models, as train's) and its values on the
  // problem of both parts: the objective on the model part, the constraints on the constraint
  // part. No certificate (lower_bound and gap are NaN): the oracle minimises the proxy, not the
  // master LP's Lagrangian.
  TrainResult result;
  Dataset model_rows;  // the two parts
  Dataset constraint_rows;
};
// Trains `spec` (one dataset, "train" or no '@') by the cutting-plane solver (Algorithm 1 for
// problems not linear in rates) with the weighted logistic-regression oracle (options.c,
// options.fit_intercept) on the model part. Throws InvalidArgument for a fraction outside (0, 1),
// a spec without constraints, rates naming another dataset, and what train throws.
[[nodiscard]] TwoDatasetResult train_two_dataset(const ProblemSpec& spec, const Dataset& data,
                                                 const TrainOptions& options,
                                                 const TwoDatasetOptions& two);

// ---- any base model: prediction oracles ------------------------------------------------------

// A cost-sensitive oracle that answers with the *predictions* of the classifier it fitted rather
// than a linear model, so the model class can be anything that fits a weighted classification
// problem (gradient boosting, forests, pipelines; the reduction of Agarwal et al. 2018: labels
// 1{c_i < 0}, weights |c_i|). Given the costs (OracleCosts::rows: one vector per dataset, one
// entry per row; OracleCosts::atoms: the per-atom costs, empty for the cutting-plane solver), it
// returns the fitted classifier's prediction on every row of every dataset: one vector per
// dataset (RateProblem::data() order) with the dataset's row count, entries in [0, 1] (0/1 for a
// deterministic classifier). The caller keeps its classifiers: answer k is the classifier of the
// k-th call (0-based), and the result refers to answers by that index. Exceptions thrown by the
// oracle propagate out of train_with_prediction_oracle unchanged.
using PredictionOracle = std::function<std::vector<std::vector<double>>(const OracleCosts&)>;

struct PredictionOracleResult {
  TrainSolver solver = TrainSolver::kAuto;           // kCuttingPlane or kOracle (never kAuto)
  Termination status = Termination::kMaxIterations;  // as TrainResult::status
  int iterations = 0;                                // rounds run
  double seconds = 0;
  int oracle_calls = 0;  // answers given; every index below is < oracle_calls
  // The stochastic classifier: weight of each answer (oracle_calls entries, sum 1, at most m + 1
  // non-zero), and the deterministic pick (an answer index; see best_candidate).
  std::vector<double> mixture;
  std::size_t best = 0;
  ProblemValues stochastic;     // training values of the mixture
  ProblemValues deterministic;  // training values of answer `best`
  // Training values of every answer (oracle_calls entries; an answer Algorithm 1 did not keep as
  // a candidate has mixture weight 0 but its values are still listed).
  std::vector<ProblemValues> answers;
  // The certificate (cutting-plane solver): a Lagrangian lower bound on the objective of any
  // mixture of classifiers the oracle can return, gap = stochastic objective - lower_bound (as
  // minimised); NaN for Algorithm 1.
  double lower_bound = std::numeric_limits<double>::quiet_NaN();
  double gap = std::numeric_limits<double>::quiet_NaN();
  std::vector<IterationRecord> history;
};

// Trains a stochastic classifier over the answers of a prediction oracle. Problems linear in
// rates run the cutting-plane solver (solver kAuto or kCuttingPlane; one oracle call per round,
// plus the deterministic pick's ray search; TrainOptions::iterations bounds the rounds, the
// certificate stops them); other problems (ratios such as F1 or precision, KLD, G-mean, ...) and
// solver kOracle run Narasimhan et al.'s Algorithm 1 (algorithm1_oracle.cpp), one oracle call per
// round for `iterations` rounds, no certificate. The gradient solvers (proxy, three-player,
// ratio) need a differentiable model and are refused (InvalidArgument), as are options that only
// concern the linear model (initial). The problem's features are never read: a caller whose
// model reads its own data can build the datasets with placeholder features.
[[nodiscard]] PredictionOracleResult train_with_prediction_oracle(const RateProblem& problem,
                                                                  const TrainOptions& options,
                                                                  const PredictionOracle& oracle);

// ---- boosted trees
// -------------------------------------------------------------------------------

// The boosted-tree options of `options` (its gbdt_* fields, seed and n_threads).
[[nodiscard]] GbdtOptions gbdt_options(const TrainOptions& options);

// Rate-constrained boosted trees (TrainOptions::learner kGbdt; `train` calls it): the solvers of
// train_with_prediction_oracle with an oracle that fits one booster per call (fit_gbdt: labels
// 1{c_i < 0}, weights |c_i| scaled to mean 1 over the rows with a cost, every dataset's rows
// stacked) and answers with its 0/1 decisions. The classifier is the mixture of those boosters
// (Link::kThreshold, kind "rate_constrained"), its best one the deterministic pick; cutting-plane
// runs give the certificate as for linear models. InvalidArgument in a build without XGBoost and
// for the gradient solvers.
[[nodiscard]] TrainResult train_gbdt(const RateProblem& problem, const TrainOptions& options);

// The registry: every solver `train` can run, in `auto`'s order of preference.
struct TrainSolverInfo {
  TrainSolver solver = TrainSolver::kAuto;
  std::string_view name;       // as parse_train_solver reads it ("cutting-plane")
  std::string_view reference;  // paper and source file
  std::string_view problems;   // the function kinds it takes: "linear", "linear, ratio", ...
};
[[nodiscard]] std::span<const TrainSolverInfo> train_solvers();
// The solver `train` runs for `requested` (kAuto resolved); throws InvalidArgument when the
// requested solver does not take the problem.
[[nodiscard]] TrainSolver resolve_train_solver(const RateProblem& problem, TrainSolver requested);

// ---- cost-sensitive oracles and baselines ------------------------------------------------------

// Weighted logistic regression (the reduction of Agarwal et al. 2018): labels 1{cost < 0},
// weights |cost| normalised to sum to the number of rows with a cost, C = c (as scikit-learn's),
// all datasets stacked; warm-started from its previous answer (the copies of one oracle share
// that state, so use one oracle per training run and thread).
[[nodiscard]] CostSensitiveOracle weighted_logistic_oracle(double c = 1.0, int n_threads = 0);

// Group-wise thresholds on a fixed score (the plug-in oracle of COCO, Narasimhan 2018, the
// baseline of Narasimhan et al. 2019 Table 3). The class: h(x) = 1{s(x) > t_g(x)} with
// s = probability_model's score (the logit of P(y = 1 | x)) and one threshold per group, the
// group of a row given by which of `group_features` (0/1 indicator columns, at most one set per
// row) is 1, rows with none forming one more group. The oracle returns the member of the class
// minimising the costs, per group by one scan over the sorted scores:
//   plugin = true:  the plug-in costs eta_i c_i(1) + (1 - eta_i) c_i(0), eta_i = sigmoid(s(x_i)),
//                   c_i(y) = the row's cost were its label y (from the atom costs and the
//                   atoms' siblings; a row whose cell has no sibling keeps its cost);
//   plugin = false: the rows' costs as given (the exact empirical minimiser over the class).
// The result is one linear model: w' = w with w'[f_g] = w[f_g] - (t_g - t_0), b' = b - t_0
// (t_0 the threshold of the rows with no indicator), so s'(x) = s(x) - t_g(x). Thresholds sit
// midway between consecutive distinct scores, 1 below the group's smallest score (all positive)
// or 1 above its largest (none positive). Throws InvalidArgument at the call when a group
// feature is not a column, or a row has an indicator value other than 0/1 or two indicators.
struct GroupThresholdOracleOptions {
  LinearModel probability_model;
  std::vector<std::size_t> group_features;
  bool plugin = true;
  int n_threads = 0;
};
[[nodiscard]] CostSensitiveOracle group_threshold_oracle(GroupThresholdOracleOptions options);

// Baselines (Narasimhan et al. Tables 3-4): UncError is plain logistic regression
// (fit_logistic_regression); UncF1 and PostShift post-process its scores.

// UncF1: the threshold t maximising F1 of 1{score > t} (ties: the smallest such t), over the
// distinct scores (and below the smallest). O(n log n). Throws InvalidArgument on size
// mismatches or labels not 0/1.
[[nodiscard]] double f1_threshold(std::span<const double> scores,
                                  std::span<const std::int32_t> labels,
                                  std::span<const double> weights = {});

// PostShift (Hardt et al. 2016, demographic-parity form as in Narasimhan et al.): per group g
// (codes 0..num_groups-1; -1 = no group, ignored) the threshold t_g such that the weighted share
// of the group's rows with score > t_g is as close as possible to `coverage`. O(n log n).
[[nodiscard]] std::vector<double> group_coverage_thresholds(std::span<const double> scores,
                                                            std::span<const std::int32_t> groups,
                                                            std::size_t num_groups, double coverage,
                                                            std::span<const double> weights = {});

}  // namespace rateopt
