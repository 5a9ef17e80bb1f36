// Private: the machinery the game solvers share (game.cpp). One file per algorithm plays it:
// proxy_lagrangian.cpp (Cotter et al. 2019), algorithm1_oracle.cpp, three_player.cpp and
// ratio.cpp (Narasimhan, Cotter & Gupta 2019, Algorithms 1-3).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "train/train_impl.hpp"

namespace rateopt {

// One optimiser state per parameter vector.
class Stepper {
 public:
  Stepper(StepRule rule, double step, std::size_t n) : rule_(rule), step_(step), m_(n), v_(n) {}
  // x -= step * direction(g) (descent); ascent callers pass -g.
  void apply(std::span<double> x, std::span<const double> g);

 private:
  StepRule rule_;
  double step_;
  std::vector<double> m_, v_;
  int t_ = 0;
};

[[nodiscard]] bool is_linear(const Function& f);

// One iterate of the model player with its exact rates on all datasets.
struct Iterate {
  LinearModel model;
  std::vector<double> atoms;
  ProblemValues values;
  std::size_t answer = SIZE_MAX;  // prediction oracles: the index of the answer (no model)
};

// The players of the Lagrangian game over a RateProblem, and the candidates they leave:
//  - the slack player xi (the argument rates of the non-linear leaves, one box each),
//  - the multipliers mu (one per constraint) and lambda (one per slack: R(theta) = xi),
//  - the model player theta (ramp-hinge gradient steps, or a cost-sensitive oracle).
// A round: evaluate -> checkpoint -> slack move -> model move -> multiplier move -> end_round.
class GameState {
 public:
  // solver: the one that plays (results record it); default_multiplier_step: when
  // options.multiplier_step is 0.
  GameState(const RateProblem& problem, const TrainOptions& options, TrainSolver solver,
            double default_multiplier_step);

  [[nodiscard]] const RateProblem::Impl& problem() const { return p_; }
  [[nodiscard]] const TrainOptions& options() const { return o_; }
  [[nodiscard]] double multiplier_step() const { return mult_step_; }
  // theta_0: options.initial, else zeros.
  [[nodiscard]] std::vector<double> initial_parameters() const;
  [[nodiscard]] LinearModel to_linear(std::span<const double> theta) const {
    return scorer_.to_linear(theta);
  }

  // The exact rates of theta (its scores are kept for model_gradient_step) or of a model.
  [[nodiscard]] Iterate evaluate(std::span<const double> theta);
  [[nodiscard]] Iterate evaluate(const LinearModel& model);
  // The exact rates of a prediction oracle's answer (checked by check_predictions). Once called,
  // the game's candidates are answers: finish() gives no certificate and no classifier
  // components; read final_weights() / final_best() / candidate_answers() instead.
  [[nodiscard]] Iterate evaluate_answer(std::span<const std::vector<double>> predictions,
                                        std::size_t answer);
  // Keeps the iterate as a candidate every checkpoint_every rounds and at the last; true when
  // round t is the last (T reached, or the early-stop window fired).
  bool checkpoint(int t, const Iterate& it);
  // Round t's progress record; true when it was the last round.
  bool end_round(int t, const ProblemValues& values, double lagrangian, bool last);

  // Slack player: xi = argmin_box L1(xi; mu, lambda) (closed form where one applies, else
  // projected gradient), or one projected Adam step on L1. Both then set the links'
  // multiplier gradients R(theta) - xi. Nothing when the problem has no slacks.
  void slack_best_response(std::span<const double> atoms);
  void slack_gradient_step(std::span<const double> atoms);

  // Per-atom costs of the model player's linear Lagrangian at (mu, lambda).
  [[nodiscard]] std::vector<double> lagrangian_costs() const;
  // The per-row costs (one vector per dataset) of the atom costs beta.
  [[nodiscard]] std::vector<std::vector<double>> oracle_row_costs(
      const std::vector<double>& beta) const {
    return row_costs(beta);
  }
  // One ramp-hinge gradient step of theta on the atom costs beta (at the scores of the last
  // evaluate(theta)); returns the surrogate Lagrangian.
  double model_gradient_step(std::vector<double>& theta, const std::vector<double>& beta);
  // The cost-sensitive oracle's model for the atom costs beta.
  [[nodiscard]] LinearModel oracle_response(const std::vector<double>& beta) const;
  // mu, lambda += step * gradient of the Lagrangian, projected onto [0, B] and [-B, B].
  void multiplier_gradient_step(const ProblemValues& values);

  // The candidates as a TrainResult: shrunk stochastic classifier, best iterate, status and
  // certificate, options.
  [[nodiscard]] TrainResult finish();
  // After finish(): the mixture weight of each candidate, the deterministic pick, and (prediction
  // answers) each candidate's answer index.
  [[nodiscard]] const std::vector<double>& final_weights() const { return final_weights_; }
  [[nodiscard]] std::size_t final_best() const { return final_best_; }
  [[nodiscard]] const std::vector<std::size_t>& candidate_answers() const { return cand_answers_; }

 private:
  void setup_slacks();
  std::vector<double> slack_args(std::span<const double> atoms);
  void set_link_gradients(std::vector<double> args);
  // The result may go unused: a caller may want only the gradient written into `grad`.
  // NOLINTNEXTLINE(modernize-use-nodiscard)
  double slack_objective(std::span<const double> xi, std::span<double> grad) const;
  void project(std::span<double> xi) const;
  bool closed_form_response();
  void numeric_response();
  [[nodiscard]] std::vector<std::vector<double>> row_costs(const std::vector<double>& beta) const;
  void ramp_hinge_rows(std::size_t d, const std::vector<double>& c, std::vector<double>& dv,
                       double& lagrangian);
  [[nodiscard]] const FeatureMatrix& features(std::size_t d) const;
  std::vector<double> candidate_weights(std::span<const double> f, std::span<const double> g);
  void assemble_classifier(TrainResult& result, std::span<const double> weights,
                           std::size_t best) const;
  [[nodiscard]] double elapsed() const;

  struct Slack {
    std::size_t leaf = 0;
    std::size_t arg = 0;
    double lo = 0, hi = 1;
  };

  const RateProblem& problem_;
  const RateProblem::Impl& p_;
  const TrainOptions& o_;
  LinearScorer scorer_;
  TrainSolver solver_;
  double mult_step_;
  std::vector<Slack> slacks_;
  std::vector<std::size_t> leaf_slack_;
  std::vector<std::optional<FeatureMatrix>> sparse_;
  // Players.
  std::vector<double> xi_, lambda_, mu_;
  std::vector<double> link_grad_;
  bool xi_ready_ = false;
  Stepper model_step_, mult_stepper_, slack_stepper_;
  std::vector<std::vector<double>> scores_, pred_;
  std::mt19937_64 rng_;
  std::vector<std::vector<std::size_t>> batch_perm_;
  // Candidates, early stop, progress.
  std::vector<LinearModel> cand_models_;
  std::vector<std::size_t> cand_answers_;
  bool answers_ = false;  // candidates are prediction-oracle answers
  std::vector<double> final_weights_;
  std::size_t final_best_ = 0;
  std::vector<std::vector<double>> cand_atoms_;
  std::vector<ProblemValues> cand_values_;
  std::vector<double> window_sum_;
  std::optional<double> window_objective_;
  TrainResult result_;
  int rounds_;
  bool interrupted_ = false;  // TrainOptions::should_stop asked to stop
  std::chrono::steady_clock::time_point start_;
};

}  // namespace rateopt
