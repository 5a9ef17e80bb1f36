// Narasimhan, Cotter & Gupta 2019, "Optimizing Generalized Rate Metrics with Three Players"
// (NeurIPS 2019), Algorithm 3: sums of ratios. The slacks a (numerators) and b (denominators)
// take projected gradient steps (Adam, options.slack_step) instead of best responses; the model
// and multiplier players are those of Algorithm 2.
//
//   initialise a_0, b_0 (the rates of theta_0), theta_0, lambda_0 = 0
//   for t = 0 .. T-1:
//     (a, b)_{t+1} = Pi_C( (a, b)_t - eta_ab grad_(a,b) L_sr(theta_t, a_t, b_t; lambda_t) )
//     theta_{t+1}  = Pi_Theta( theta_t - eta_theta grad_theta L~_sr(theta_t; a_t, b_t, lambda_t) )
//     lambda_{t+1} = Pi_Lambda( lambda_t + eta_lambda grad_lambda L_sr(theta_t, a_t, b_t;
//                                                                         lambda_t) )
//   return the mixture of theta_0 .. theta_{T-1} (shrunk by an LP)
//
// As implemented, the slack step comes first and the links' gradients use (a, b)_{t+1}.
#include <vector>

#include "train/game.hpp"

namespace rateopt {

TrainResult train_ratio(const RateProblem& problem, const TrainOptions& options) {
  GameState game(problem, options, TrainSolver::kRatio, /*default step*/ 0.5);
  std::vector<double> theta = game.initial_parameters();
  for (int t = 0; t < options.iterations; ++t) {
    const Iterate it = game.evaluate(theta);  // R(theta_t), exact
    const bool last = game.checkpoint(t, it);
    game.slack_gradient_step(it.atoms);  // (a, b)_{t+1}
    const double lagrangian = game.model_gradient_step(theta, game.lagrangian_costs());
    game.multiplier_gradient_step(it.values);  // lambda_{t+1}
    if (game.end_round(t, it.values, lagrangian, last)) break;
  }
  return game.finish();
}

}  // namespace rateopt
