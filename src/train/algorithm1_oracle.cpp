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
