// The proxy-Lagrangian game: Cotter, Jiang & Sridharan 2019, "Two-Player Games for Efficient
// Non-Convex Constrained Optimization" (ALT 2019), the stochastic proxy-Lagrangian optimiser.
// The theta-player minimises external regret on the proxy (ramp-hinge) Lagrangian; the
// lambda-player minimises swap regret on the true constraints g_j, playing the stationary
// distribution of a column-stochastic (m+1) x (m+1) matrix M. Problems linear in rates.
//
//   M_0 = uniform, lambda_0 = (1/(m+1), ...), theta_0
//   for t = 0 .. T-1:
//     theta_{t+1}  = theta_t - eta_theta grad L~(theta_t; lambda_t),
//                    L~ = lambda_0 f~ + sum_j lambda_j g~_j          (ramp-hinge rates)
//     G_t          = (0, g_1(theta_t), ..., g_m(theta_t))            (true 0/1 rates)
//     M_{t+1}      = columns normalised( M_t * exp(eta_lambda G_t lambda_t^T) )
//     lambda_{t+1} = stationary distribution of M_{t+1}
//   return the mixture of theta_0 .. theta_{T-1} (shrunk to m + 1 by an LP)
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "train/game.hpp"

namespace rateopt {

namespace {

// Per-atom costs of the proxy Lagrangian: lambda_0 * objective + sum_j lambda_j * constraint_j.
std::vector<double> proxy_costs(const RateProblem::Impl& p, const std::vector<double>& lambda) {
  std::vector<double> beta(p.atoms.size(), 0.0);
  const auto add = [&](const AffineForm& form, double c) {
    for (const AtomTerm& t : form.terms) beta[t.atom] += c * t.coef;
  };
  add(*p.objective.info.linear, lambda[0]);
  for (std::size_t j = 0; j < p.constraints.size(); ++j)
    add(*p.constraints[j].info.linear, lambda[j + 1]);
  return beta;
}

// M <- M * exp(eta * G lambda^T), G = (0, g_1, ..., g_m); columns renormalised. M row-major.
void swap_regret_step(std::vector<double>& M, std::size_t k, double eta,
                      const std::vector<double>& g, const std::vector<double>& lambda) {
  for (std::size_t i = 1; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      M[i * k + j] *= std::exp(std::min(50.0, eta * g[i - 1] * lambda[j]));
  for (std::size_t j = 0; j < k; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < k; ++i) s += M[i * k + j];
    for (std::size_t i = 0; i < k; ++i) M[i * k + j] = std::max(M[i * k + j] / s, 1e-300);
  }
}

// Stationary distribution of a column-stochastic matrix (power iteration).
std::vector<double> stationary(const std::vector<double>& M, std::size_t k) {
  std::vector<double> q(k, 1.0 / static_cast<double>(k)), next(k);
  for (int it = 0; it < 1000; ++it) {
    for (std::size_t i = 0; i < k; ++i) {
      next[i] = 0;
      for (std::size_t j = 0; j < k; ++j) next[i] += M[i * k + j] * q[j];
    }
    double diff = 0;
    for (std::size_t i = 0; i < k; ++i) diff = std::max(diff, std::fabs(next[i] - q[i]));
    q.swap(next);
    if (diff < 1e-13) break;
  }
  const double s = std::accumulate(q.begin(), q.end(), 0.0);
  for (double& v : q) v /= s;
  return q;
}

}  // namespace

TrainResult train_proxy_lagrangian(const RateProblem& problem, const TrainOptions& options) {
  GameState game(problem, options, TrainSolver::kProxyLagrangian, /*default step*/ 0.3);
  const std::size_t k = game.problem().constraints.size() + 1;
  std::vector<double> m_matrix(k * k, 1.0 / static_cast<double>(k));  // M above
  std::vector<double> lambda(k, 1.0 / static_cast<double>(k));
  std::vector<double> theta = game.initial_parameters();
  for (int t = 0; t < options.iterations; ++t) {
    const Iterate it = game.evaluate(theta);  // g_j(theta_t), exact
    const bool last = game.checkpoint(t, it);
    const double lagrangian = game.model_gradient_step(theta, proxy_costs(game.problem(), lambda));
    if (k > 1) {
      swap_regret_step(m_matrix, k, game.multiplier_step(), it.values.constraints, lambda);
      lambda = stationary(m_matrix, k);
    }
    if (game.end_round(t, it.values, lagrangian, last)) break;
  }
  return game.finish();
}

}  // namespace rateopt
