// Narasimhan, Cotter & Gupta 2019, "Optimizing Generalized Rate Metrics with Three Players"
// (NeurIPS 2019), Algorithm 1: the oracle-based optimiser. The model player is a cost-sensitive
// oracle (TrainOptions::oracle) answering the multipliers' linear costs on true 0/1 rates.
//
//   initialise lambda_0 (mu = 0 on the constraints, lambda = 0 on the slack links)
//   for t = 0 .. T-1:
//     xi_t         = argmin_{xi in box} L1(xi; lambda_t)
//     theta_t      = CSO(lambda_t)
//     lambda_{t+1} = Pi_Lambda( lambda_t + eta grad_lambda L(theta_t, xi_t; lambda_t) )
//   return the mixture of theta_1 .. theta_T (shrunk by an LP)
//
// Here round t evaluates the oracle's previous answer (theta_0: the initial model), so the
// lambda step uses the rates of CSO(lambda_{t-1}).
#include "train/game.hpp"

namespace rateopt {

TrainResult train_oracle_game(const RateProblem& problem, const TrainOptions& options) {
  GameState game(problem, options, TrainSolver::kOracle, /*default step*/ 0.5);
  LinearModel theta = game.to_linear(game.initial_parameters());
  for (int t = 0; t < options.iterations; ++t) {
    const Iterate it = game.evaluate(theta);  // R(theta_t), exact
    const bool last = game.checkpoint(t, it);
    game.slack_best_response(it.atoms);                     // xi_t
    theta = game.oracle_response(game.lagrangian_costs());  // CSO(lambda_t)
    game.multiplier_gradient_step(it.values);               // lambda_{t+1}
    if (game.end_round(t, it.values, /*lagrangian*/ 0.0, last)) break;
  }
  return game.finish();
}

}  // namespace rateopt

namespace rateopt {

// The same game with a prediction oracle (train_with_prediction_oracle): theta_0 is the oracle's
// answer at the starting multipliers (mu = 0, lambda = 0), since the caller's model class need
// not contain a fixed initial model; an answer is requested only when another round follows, so
// every answer is played (and kept whenever it is a checkpoint).
PredictionOracleResult train_oracle_game_predictions(const RateProblem& problem,
                                                     const TrainOptions& options,
                                                     const PredictionOracle& oracle) {
  GameState game(problem, options, TrainSolver::kOracle, /*default step*/ 0.5);
  std::vector<ProblemValues> answers;
  const auto ask = [&](const std::vector<double>& beta) {
    const std::vector<std::vector<double>> costs = game.oracle_row_costs(beta);
    const std::vector<std::vector<double>> pred = oracle(OracleCosts{costs, beta});
    Iterate it = game.evaluate_answer(pred, answers.size());
    answers.push_back(it.values);
    return it;
  };
  Iterate it = ask(game.lagrangian_costs());  // theta_0
  for (int t = 0; t < options.iterations; ++t) {
    const bool last = game.checkpoint(t, it);
    game.slack_best_response(it.atoms);  // xi_t
    Iterate next;
    if (!last) next = ask(game.lagrangian_costs());  // CSO(lambda_t)
    game.multiplier_gradient_step(it.values);        // lambda_{t+1}
    if (game.end_round(t, it.values, /*lagrangian*/ 0.0, last)) break;
    it = std::move(next);
  }
  TrainResult r = game.finish();
  PredictionOracleResult out;
  out.solver = TrainSolver::kOracle;
  out.status = r.status;
  out.iterations = r.iterations;
  out.seconds = r.seconds;
  out.oracle_calls = static_cast<int>(answers.size());
  out.mixture.assign(answers.size(), 0.0);
  const std::vector<std::size_t>& index = game.candidate_answers();
  for (std::size_t i = 0; i < index.size(); ++i) out.mixture[index[i]] += game.final_weights()[i];
  out.best = index[game.final_best()];
  out.stochastic = std::move(r.stochastic);
  out.deterministic = std::move(r.deterministic);
  out.answers = std::move(answers);
  out.history = std::move(r.history);
  return out;
}

}  // namespace rateopt
