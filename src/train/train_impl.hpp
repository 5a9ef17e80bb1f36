// Private: the compiled form of a RateProblem (rateopt/train.hpp) shared by the solvers.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rateopt/expr.hpp"
#include "rateopt/train.hpp"
#include "rateopt/train_options.hpp"  // train_options_json: the options saved in models

namespace rateopt {

// One rate of an expression, bound to a (dataset, slice) and expressed through atoms.
struct Leaf {
  enum class Kind { kLinear, kRatio, kNamed, kGeneric };
  struct Cell {
    std::size_t atom = 0;
    int label = 0;      // 0 or 1 (unlabelled rows count as 0, as count_slice does)
    int baseline = -1;  // -1: not split by baseline, else 0 / 1
    double weight = 0;  // total weight of the cell
  };
  RateRef ref;
  std::string spec;  // "metric" or "metric:param" for compute_metric
  std::size_t dataset = 0;
  std::vector<Cell> cells;
  double total = 0, positives = 0, negatives = 0;
  bool has_baseline = false;
  Kind kind = Kind::kGeneric;
  AffineForm linear;                  // kLinear
  std::vector<AffineForm> args;       // argument rates (see value_from_args)
  SlackLoss named = SlackLoss::kKld;  // kNamed
  double label_rate = 0;              // kNamed kld: p

  // Exact value from atoms through the metric catalogue (its zero-denominator conventions).
  [[nodiscard]] double value_from_atoms(std::span<const double> atoms) const;
  // Value as a function of its argument rates (kLinear: the rate; kRatio: num / den; kNamed:
  // the utility / divergence of the two rates; kGeneric: args are the cell atoms). grad (one per
  // arg) may be empty.
  [[nodiscard]] double value_from_args(std::span<const double> args, std::span<double> grad) const;
};

// g = constant + sum_t coef_t * expression(node_t).
struct Function {
  struct Term {
    std::size_t expr = 0;
    std::size_t node = 0;
    double coef = 1;
  };
  FunctionInfo info;
  std::vector<Term> terms;
  double constant = 0;
  std::vector<std::size_t> leaves;  // global leaf indices it depends on (sorted, unique)
  bool affine_in_leaves = false;
  std::vector<std::pair<std::size_t, double>> leaf_coef;  // when affine_in_leaves
  double leaf_constant = 0;
};

struct RateProblem::Impl {
  ProblemSpec spec;
  std::vector<TrainingData> data;
  std::vector<Atom> atoms;
  std::vector<Leaf> leaves;
  std::vector<Expression> exprs;
  std::vector<std::vector<std::size_t>> expr_leaves;  // per expression: leaf index per rate
  Function objective;                                 // minimised form
  double objective_sign = 1;                          // -1 when maximising
  std::vector<Function> constraints;
  std::vector<FunctionInfo> constraint_infos;
  std::vector<std::size_t> constraint_source;
  std::size_t num_features = 0;

  [[nodiscard]] std::vector<double> leaf_values(std::span<const double> atom_vals) const;
  // Value of f given all leaf values; with leaf_grad (one per leaf, accumulated += ) also the
  // gradient times `scale`.
  [[nodiscard]] double value(const Function& f, std::span<const double> leaf_vals,
                             std::span<double> leaf_grad = {}, double scale = 1) const;
};

// The game solvers, one file each over GameState (game.hpp); solvers.cpp has checked the
// problem (proxy: linear in rates) and the options (oracle: TrainOptions::oracle).
// Cotter, Jiang & Sridharan 2019 (proxy_lagrangian.cpp).
[[nodiscard]] TrainResult train_proxy_lagrangian(const RateProblem& problem,
                                                 const TrainOptions& options);
// Narasimhan, Cotter & Gupta 2019, Algorithm 1 (algorithm1_oracle.cpp).
[[nodiscard]] TrainResult train_oracle_game(const RateProblem& problem,
                                            const TrainOptions& options);
// Narasimhan, Cotter & Gupta 2019, Algorithm 2 (three_player.cpp).
[[nodiscard]] TrainResult train_three_player(const RateProblem& problem,
                                             const TrainOptions& options);
// Narasimhan, Cotter & Gupta 2019, Algorithm 3, sums of ratios (ratio.cpp).
[[nodiscard]] TrainResult train_ratio(const RateProblem& problem, const TrainOptions& options);

// The cutting-plane solver (cutting_plane.cpp); problems linear in rates.
[[nodiscard]] TrainResult train_cutting_plane(const RateProblem& problem,
                                              const TrainOptions& options);
// The certificate for another solver's candidates (objective f as minimised, constraints g,
// candidate-major): the Lagrangian lower bound at the multipliers of the LP over them, with one
// call of the options' oracle (or the logistic one). Problems linear in rates only.
[[nodiscard]] double lagrangian_lower_bound(const RateProblem& problem, const TrainOptions& options,
                                            std::span<const double> f, std::span<const double> g,
                                            std::size_t m);

// Prediction oracles (train_with_prediction_oracle, prediction_oracle.cpp): the cutting-plane
// solver over the oracle's answers (cutting_plane.cpp) and Algorithm 1 over them
// (algorithm1_oracle.cpp).
[[nodiscard]] PredictionOracleResult train_cutting_plane_predictions(
    const RateProblem& problem, const TrainOptions& options, const PredictionOracle& oracle);
[[nodiscard]] PredictionOracleResult train_oracle_game_predictions(const RateProblem& problem,
                                                                   const TrainOptions& options,
                                                                   const PredictionOracle& oracle);
// Throws InvalidArgument unless `predictions` (answer `answer` of a prediction oracle) has one
// vector per dataset, each with the dataset's row count and entries in [0, 1].
void check_predictions(const RateProblem& problem, std::span<const std::vector<double>> predictions,
                       std::size_t answer);

// A CSR copy of a dense matrix whose share of non-zero entries is at most max_density (one-hot
// features are mostly zeros; scoring a CSR copy reads a fraction of the memory); nullopt when
// the matrix is already sparse or denser than that. Entry values and order are unchanged.
[[nodiscard]] std::optional<FeatureMatrix> sparse_copy(const FeatureMatrix& x,
                                                       double max_density = 0.35);

}  // namespace rateopt
