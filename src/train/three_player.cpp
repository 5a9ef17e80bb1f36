// Narasimhan, Cotter & Gupta 2019, "Optimizing Generalized Rate Metrics with Three Players"
// (NeurIPS 2019), Algorithm 2: the surrogate-based three-player game. The slack player plays
// best responses, the model player gradient steps on the ramp-hinge surrogate Lagrangian, the
// multiplier player gradient ascent on true 0/1 rates.
//
//   initialise theta_0, lambda_0 (mu = 0 on the constraints, lambda = 0 on the slack links)
//   for t = 0 .. T-1:
//     xi_t         = argmin_{xi in box} L1(xi; lambda_t)
//     theta_{t+1}  = Pi_Theta( theta_t - eta_theta grad_theta L~2(theta_t; lambda_t) )
//     lambda_{t+1} = Pi_Lambda( lambda_t + eta_lambda grad_lambda L(theta_t, xi_t; lambda_t) )
//   return the mixture of theta_0 .. theta_{T-1} (shrunk by an LP)
#include <vector>

#include "train/game.hpp"

namespace rateopt {

TrainResult train_three_player(const RateProblem& problem, const TrainOptions& options) {
  GameState game(problem, options, TrainSolver::kThreePlayer, /*default step*/ 0.5);
  std::vector<double> theta = game.initial_parameters();
  for (int t = 0; t < options.iterations; ++t) {
    const Iterate it = game.evaluate(theta);  // R(theta_t), exact
    const bool last = game.checkpoint(t, it);
    game.slack_best_response(it.atoms);  // xi_t
    const double lagrangian = game.model_gradient_step(theta, game.lagrangian_costs());
    game.multiplier_gradient_step(it.values);  // lambda_{t+1}
    if (game.end_round(t, it.values, lagrangian, last)) break;
  }
  return game.finish();
}

}  // namespace rateopt
