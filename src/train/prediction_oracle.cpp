// Rate-constrained training over any base model (train.hpp, train_with_prediction_oracle): the
// model player is a prediction oracle, a caller's weighted classifier fit that answers with its
// predictions (Agarwal et al. 2018's reduction; Narasimhan, Cotter & Gupta 2019, Algorithm 1).
// Problems linear in rates go to the cutting-plane solver (cutting_plane.cpp, one answer per
// query), the others to Algorithm 1 (algorithm1_oracle.cpp); both keep the answers' indices
// instead of models, and the caller assembles the mixture from its own fitted classifiers.
#include <cmath>

#include "common/check.hpp"
#include "train/train_impl.hpp"

namespace rateopt {

void check_predictions(const RateProblem& problem, std::span<const std::vector<double>> predictions,
                       std::size_t answer) {
  const std::span<const TrainingData> data = problem.data();
  RATEOPT_CHECK(predictions.size() == data.size(),
                "prediction oracle: answer {} has predictions for {} dataset(s), expected {}",
                answer, predictions.size(), data.size());
  for (std::size_t d = 0; d < data.size(); ++d) {
    const std::vector<double>& p = predictions[d];
    RATEOPT_CHECK(p.size() == data[d].data->num_rows(),
                  "prediction oracle: answer {} has {} predictions for dataset '{}', expected {}",
                  answer, p.size(), data[d].name, data[d].data->num_rows());
    for (std::size_t i = 0; i < p.size(); ++i)
      RATEOPT_CHECK(p[i] >= 0 && p[i] <= 1,
                    "prediction oracle: answer {} predicts {} for row {} of dataset '{}', "
                    "expected a value in [0, 1]",
                    answer, p[i], i, data[d].name);
  }
}

PredictionOracleResult train_with_prediction_oracle(const RateProblem& problem,
                                                    const TrainOptions& options,
                                                    const PredictionOracle& oracle) {
  check_train_options(options);
  RATEOPT_CHECK(static_cast<bool>(oracle), "train_with_prediction_oracle: no oracle given");
  RATEOPT_CHECK(!options.initial,
                "train_with_prediction_oracle: TrainOptions::initial (a linear warm start) does "
                "not apply to a prediction oracle");
  const TrainSolver requested = options.solver;
  RATEOPT_CHECK(requested == TrainSolver::kAuto || requested == TrainSolver::kCuttingPlane ||
                    requested == TrainSolver::kOracle,
                "train_with_prediction_oracle: the {} solver moves a differentiable model; with a "
                "prediction oracle use auto, cutting-plane or oracle",
                to_string(requested));
  // auto: cutting-plane for problems linear in rates (resolve_train_solver's rule), else
  // Algorithm 1 (the only solver here that takes ratios and general functions).
  TrainSolver solver = requested;
  if (solver == TrainSolver::kAuto) {
    const TrainSolver linear = resolve_train_solver(problem, TrainSolver::kAuto);
    solver =
        linear == TrainSolver::kCuttingPlane ? TrainSolver::kCuttingPlane : TrainSolver::kOracle;
  } else {
    solver = resolve_train_solver(problem, solver);  // cutting-plane: linear problems only
  }
  TrainOptions o = options;
  o.solver = solver;
  return solver == TrainSolver::kCuttingPlane ? train_cutting_plane_predictions(problem, o, oracle)
                                              : train_oracle_game_predictions(problem, o, oracle);
}

}  // namespace rateopt
