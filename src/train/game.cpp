// GameState (game.hpp): the players, candidates and result assembly of the game solvers.
#include "train/game.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <utility>

#include "common/check.hpp"
#include "common/numeric.hpp"
#include "rateopt/logistic.hpp"

namespace rateopt {

// to_string(StepRule) and parse_step_rule are in train_options.cpp (the option table's names).

namespace {

using detail::kInf;

}  // namespace

void Stepper::apply(std::span<double> x, std::span<const double> g) {
  ++t_;
  switch (rule_) {
    case StepRule::kSgd:
      for (std::size_t i = 0; i < x.size(); ++i) x[i] -= step_ * g[i];
      break;
    case StepRule::kAdagrad:
      for (std::size_t i = 0; i < x.size(); ++i) {
        v_[i] += g[i] * g[i];
        x[i] -= step_ * g[i] / (std::sqrt(v_[i]) + 1e-12);
      }
      break;
    case StepRule::kAdam: {
      constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
      const double c1 = 1 - std::pow(kBeta1, t_), c2 = 1 - std::pow(kBeta2, t_);
      for (std::size_t i = 0; i < x.size(); ++i) {
        m_[i] = kBeta1 * m_[i] + (1 - kBeta1) * g[i];
        v_[i] = kBeta2 * v_[i] + (1 - kBeta2) * g[i] * g[i];
        x[i] -= step_ * (m_[i] / c1) / (std::sqrt(v_[i] / c2) + kEps);
      }
      break;
    }
  }
}

bool is_linear(const Function& f) {
  return f.info.kind == FunctionKind::kLinear || f.info.kind == FunctionKind::kConstant;
}

GameState::GameState(const RateProblem& problem, const TrainOptions& options, TrainSolver solver,
                     double default_multiplier_step)
    : problem_(problem),
      p_(problem.impl()),
      o_(options),
      scorer_(p_.num_features, options.fit_intercept),
      solver_(solver),
      mult_step_(options.multiplier_step > 0 ? options.multiplier_step : default_multiplier_step),
      model_step_(options.model_rule, options.model_step, scorer_.num_parameters()),
      mult_stepper_(options.multiplier_rule, mult_step_, 0),
      slack_stepper_(StepRule::kAdam, options.slack_step, 0),
      rng_(options.seed),
      batch_perm_(p_.data.size()),
      rounds_(options.iterations) {
  setup_slacks();
  for (const TrainingData& d : p_.data) sparse_.push_back(sparse_copy(d.data->features()));
  const std::size_t m = p_.constraints.size();
  mult_stepper_ = Stepper(o_.multiplier_rule, mult_step_, m + slacks_.size());
  slack_stepper_ = Stepper(StepRule::kAdam, o_.slack_step, slacks_.size());
  mu_.assign(m, 0.0);
  lambda_.assign(slacks_.size(), 0.0);
  scores_.resize(p_.data.size());
  pred_.resize(p_.data.size());
  for (std::size_t d = 0; d < p_.data.size(); ++d) {
    scores_[d].resize(p_.data[d].data->num_rows());
    pred_[d].resize(scores_[d].size());
  }
  result_.solver = solver_;
  start_ = std::chrono::steady_clock::now();
}

double GameState::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::vector<double> GameState::initial_parameters() const {
  const std::size_t np = scorer_.num_parameters();
  std::vector<double> theta(np, 0.0);
  if (o_.initial) {
    const LinearModel& init = *o_.initial;
    RATEOPT_CHECK(init.weights.size() <= p_.num_features,
                  "initial model has {} weights, the data {} features", init.weights.size(),
                  p_.num_features);
    std::copy(init.weights.begin(), init.weights.end(), theta.begin());
    theta[np - 1] = init.bias;
  }
  return theta;
}

// The features the players read: a CSR copy when the data is mostly zeros.
const FeatureMatrix& GameState::features(std::size_t d) const {
  return sparse_[d] ? *sparse_[d] : p_.data[d].data->features();
}

Iterate GameState::evaluate(std::span<const double> theta) {
  Iterate it{scorer_.to_linear(theta), {}, {}};
  for (std::size_t d = 0; d < p_.data.size(); ++d) {
    scorer_.scores(features(d), theta, scores_[d], o_.n_threads);
    for (std::size_t i = 0; i < scores_[d].size(); ++i) pred_[d][i] = scores_[d][i] > 0 ? 1.0 : 0.0;
  }
  it.atoms = problem_.atom_values(pred_);
  it.values = problem_.evaluate(it.atoms);
  return it;
}

Iterate GameState::evaluate(const LinearModel& model) {
  Iterate it{model, {}, {}};
  for (std::size_t d = 0; d < p_.data.size(); ++d) {
    it.model.scores(features(d), scores_[d], o_.n_threads);
    for (std::size_t i = 0; i < scores_[d].size(); ++i) pred_[d][i] = scores_[d][i] > 0 ? 1.0 : 0.0;
  }
  it.atoms = problem_.atom_values(pred_);
  it.values = problem_.evaluate(it.atoms);
  return it;
}

Iterate GameState::evaluate_answer(std::span<const std::vector<double>> predictions,
                                   std::size_t answer) {
  answers_ = true;
  check_predictions(problem_, predictions, answer);
  Iterate it;
  it.atoms = problem_.atom_values(predictions);
  it.values = problem_.evaluate(it.atoms);
  it.answer = answer;
  return it;
}

bool GameState::checkpoint(int t, const Iterate& it) {
  const std::vector<double>& atoms = it.atoms;
  // Early stop: the uniform mixture of each window's iterates (its mean atoms) against the
  // previous window's.
  bool last = t == o_.iterations - 1;
  if (o_.stop_window > 0) {
    window_sum_.resize(atoms.size(), 0.0);
    for (std::size_t a = 0; a < atoms.size(); ++a) window_sum_[a] += atoms[a];
    if ((t + 1) % o_.stop_window == 0) {
      for (double& v : window_sum_) v /= o_.stop_window;
      const ProblemValues w = problem_.evaluate(window_sum_);
      if (window_objective_ && w.max_violation() <= o_.tolerance &&
          std::fabs(w.objective - *window_objective_) <= o_.stop_tolerance)
        last = true;
      window_objective_ = w.objective;
      std::fill(window_sum_.begin(), window_sum_.end(), 0.0);
    }
  }
  const int every =
      o_.checkpoint_every > 0 ? o_.checkpoint_every : std::max(1, o_.iterations / 100);
  if (t % every == 0 || last) {
    cand_models_.push_back(it.model);
    cand_answers_.push_back(it.answer);
    cand_atoms_.push_back(atoms);
    cand_values_.push_back(it.values);
  }
  return last;
}

bool GameState::end_round(int t, const ProblemValues& values, double lagrangian, bool last) {
  if (!last && o_.should_stop && o_.should_stop()) {
    interrupted_ = true;
    last = true;
  }
  if ((o_.progress_every > 0 && (t % o_.progress_every == 0)) || last) {
    IterationRecord rec{t, values.objective, values.max_violation(), lagrangian, elapsed()};
    result_.history.push_back(rec);
    if (o_.progress) o_.progress(rec);
  }
  if (last) rounds_ = t + 1;
  return last;
}

// ---- Slack player --------------------------------------------------------------------------

// Slack variables: the argument rates of the leaves of every non-linear function.
void GameState::setup_slacks() {
  leaf_slack_.assign(p_.leaves.size(), SIZE_MAX);
  const auto add = [&](const Function& f) {
    if (is_linear(f)) return;
    for (std::size_t l : f.leaves) {
      if (leaf_slack_[l] != SIZE_MAX) continue;
      leaf_slack_[l] = slacks_.size();
      const Leaf& leaf = p_.leaves[l];
      for (std::size_t a = 0; a < leaf.args.size(); ++a) {
        Slack s{l, a, leaf.args[a].constant, leaf.args[a].constant};
        for (const AtomTerm& t : leaf.args[a].terms) {
          const double v = t.coef * p_.atoms[t.atom].capacity;
          (v < 0 ? s.lo : s.hi) += v;
        }
        if (leaf.kind == Leaf::Kind::kRatio && a == 1) s.lo = std::max(s.lo, 1e-3);
        if (leaf.kind == Leaf::Kind::kNamed) {
          s.lo = std::max(s.lo, 1e-6);
          s.hi = std::min(s.hi, 1.0);
        }
        s.hi = std::max(s.hi, s.lo);
        slacks_.push_back(s);
      }
    }
  };
  add(p_.objective);
  for (const Function& f : p_.constraints) add(f);
}

// The slacks' argument rates at the atoms; the first call starts xi there.
std::vector<double> GameState::slack_args(std::span<const double> atoms) {
  std::vector<double> args(slacks_.size());
  for (std::size_t s = 0; s < slacks_.size(); ++s)
    args[s] = p_.leaves[slacks_[s].leaf].args[slacks_[s].arg].evaluate(atoms);
  if (!xi_ready_) {
    xi_ = args;
    project(xi_);
    xi_ready_ = true;
  }
  return args;
}

// Multiplier gradients for the links (ascent): R_a(theta) - xi_a.
void GameState::set_link_gradients(std::vector<double> args) {
  for (std::size_t s = 0; s < slacks_.size(); ++s) args[s] -= xi_[s];
  link_grad_ = std::move(args);
}

void GameState::slack_best_response(std::span<const double> atoms) {
  if (slacks_.empty()) return;
  std::vector<double> args = slack_args(atoms);
  if (!closed_form_response()) numeric_response();
  set_link_gradients(std::move(args));
}

void GameState::slack_gradient_step(std::span<const double> atoms) {
  if (slacks_.empty()) return;
  std::vector<double> args = slack_args(atoms);
  std::vector<double> g(slacks_.size());
  (void)slack_objective(xi_, g);
  slack_stepper_.apply(xi_, g);
  project(xi_);
  set_link_gradients(std::move(args));
}

// L1(xi) = [objective](xi) + sum_{non-linear j} mu_j F_j(xi) - lambda . xi, and its gradient.
double GameState::slack_objective(std::span<const double> xi, std::span<double> grad) const {
  std::vector<double> leaf_val(p_.leaves.size(), 0.0), leaf_grad(p_.leaves.size(), 0.0);
  std::vector<std::vector<double>> arg_grad(p_.leaves.size());
  for (std::size_t l = 0; l < p_.leaves.size(); ++l) {
    const std::size_t s0 = leaf_slack_[l];
    if (s0 == SIZE_MAX) continue;
    const std::size_t na = p_.leaves[l].args.size();
    arg_grad[l].assign(na, 0.0);
    leaf_val[l] = p_.leaves[l].value_from_args(xi.subspan(s0, na), arg_grad[l]);
  }
  double v = 0;
  if (!is_linear(p_.objective)) v += p_.value(p_.objective, leaf_val, leaf_grad, 1.0);
  for (std::size_t j = 0; j < p_.constraints.size(); ++j)
    if (!is_linear(p_.constraints[j]) && mu_[j] > 0)
      v += mu_[j] * p_.value(p_.constraints[j], leaf_val, leaf_grad, mu_[j]);
  std::fill(grad.begin(), grad.end(), 0.0);
  for (std::size_t l = 0; l < p_.leaves.size(); ++l) {
    const std::size_t s0 = leaf_slack_[l];
    if (s0 == SIZE_MAX) continue;
    for (std::size_t a = 0; a < arg_grad[l].size(); ++a)
      grad[s0 + a] += leaf_grad[l] * arg_grad[l][a];
  }
  for (std::size_t s = 0; s < slacks_.size(); ++s) {
    v -= lambda_[s] * xi[s];
    grad[s] -= lambda_[s];
  }
  return v;
}

void GameState::project(std::span<double> xi) const {
  for (std::size_t s = 0; s < slacks_.size(); ++s)
    xi[s] = std::clamp(xi[s], slacks_[s].lo, slacks_[s].hi);
}

// Closed-form best response when the objective is a positive combination of kld / gmean /
// hmean / qmean leaves (and linear leaves) and no constraint is non-linear. Returns false when
// it does not apply at this lambda.
bool GameState::closed_form_response() {
  for (const Function& f : p_.constraints)
    if (!is_linear(f)) return false;
  const Function& o = p_.objective;
  if (is_linear(o) || !o.affine_in_leaves) return false;
  std::vector<double> next = xi_;
  for (const auto& [l, c] : o.leaf_coef) {
    const Leaf& leaf = p_.leaves[l];
    const std::size_t s0 = leaf_slack_[l];
    if (leaf.kind == Leaf::Kind::kLinear) {
      // c * xi - lambda * xi: a box end.
      next[s0] = (c - lambda_[s0]) > 0 ? slacks_[s0].lo : slacks_[s0].hi;
      continue;
    }
    if (leaf.kind != Leaf::Kind::kNamed) return false;
    const double l1 = lambda_[s0], l2 = lambda_[s0 + 1];
    if (leaf.named == SlackLoss::kKld) {
      if (c <= 0) return false;
      // Separable: u_k = min(1, p_k / (-lambda_k / c)) when lambda_k < 0, else the top.
      const double p = leaf.label_rate;
      const double pk[2] = {p, 1 - p};
      for (int k = 0; k < 2; ++k) {
        const double lam = -lambda_[s0 + k] / c;
        const double u = lam > 0 ? pk[k] / lam : kInf;
        next[s0 + k] = std::clamp(u, slacks_[s0 + k].lo, slacks_[s0 + k].hi);
      }
      continue;
    }
    if (c >= 0) return false;  // maximising a concave utility only
    const double a = -c;
    for (int k = 0; k < 2; ++k)
      if (slacks_[s0 + k].lo > 1e-12 || slacks_[s0 + k].hi < 1 - 1e-12) return false;
    SlackResponse r;
    if (leaf.named == SlackLoss::kQmean) {
      if (l1 < 0 || l2 < 0) return false;
      r = rateopt::slack_best_response(SlackLoss::kQmean, l1 / a, l2 / a);
    } else {
      if (l1 > 0 || l2 > 0) return false;
      r = rateopt::slack_best_response(leaf.named, -l1 / a, -l2 / a);
    }
    next[s0] = r.u1;
    next[s0 + 1] = r.u2;
  }
  xi_ = std::move(next);
  return true;
}

// Projected gradient with backtracking on the (smoothed) slack objective, warm-started.
void GameState::numeric_response() {
  constexpr double kRidge = 1e-4;
  const std::size_t n = slacks_.size();
  std::vector<double> g(n), trial(n), gt(n);
  const auto f = [&](std::span<const double> x, std::span<double> gr) {
    double v = slack_objective(x, gr);
    for (std::size_t s = 0; s < n; ++s) {
      v += 0.5 * kRidge * x[s] * x[s];
      gr[s] += kRidge * x[s];
    }
    return v;
  };
  double step = 1.0;
  double fx = f(xi_, g);
  for (int it = 0; it < 60; ++it) {
    bool moved = false;
    for (int bt = 0; bt < 30; ++bt) {
      for (std::size_t s = 0; s < n; ++s) trial[s] = xi_[s] - step * g[s];
      project(trial);
      double decrease = 0;
      for (std::size_t s = 0; s < n; ++s) decrease += g[s] * (xi_[s] - trial[s]);
      const double ft = f(trial, gt);
      if (std::isfinite(ft) && ft <= fx - 0.25 * decrease) {
        moved = decrease > 1e-14;
        xi_ = trial;
        g = gt;
        fx = ft;
        step *= 2;
        break;
      }
      step *= 0.5;
    }
    if (!moved) break;
  }
}

// ---- Model player --------------------------------------------------------------------------

std::vector<double> GameState::lagrangian_costs() const {
  std::vector<double> beta(p_.atoms.size(), 0.0);
  const auto add = [&](const AffineForm& form, double c) {
    for (const AtomTerm& t : form.terms) beta[t.atom] += c * t.coef;
  };
  if (is_linear(p_.objective)) add(*p_.objective.info.linear, 1.0);
  for (std::size_t j = 0; j < p_.constraints.size(); ++j)
    if (is_linear(p_.constraints[j]) && mu_[j] != 0) add(*p_.constraints[j].info.linear, mu_[j]);
  for (std::size_t s = 0; s < slacks_.size(); ++s)
    if (lambda_[s] != 0) add(p_.leaves[slacks_[s].leaf].args[slacks_[s].arg], lambda_[s]);
  return beta;
}

std::vector<std::vector<double>> GameState::row_costs(const std::vector<double>& beta) const {
  std::vector<std::vector<double>> c(p_.data.size());
  for (std::size_t d = 0; d < p_.data.size(); ++d) c[d].assign(p_.data[d].data->num_rows(), 0.0);
  for (std::size_t k = 0; k < p_.atoms.size(); ++k) {
    if (beta[k] == 0) continue;
    const Atom& a = p_.atoms[k];
    std::vector<double>& ck = c[a.dataset];
    a.rows.for_each([&](std::size_t r, std::uint32_t row) { ck[row] += beta[k] * a.coef_at(r); });
  }
  return c;
}

LinearModel GameState::oracle_response(const std::vector<double>& beta) const {
  const std::vector<std::vector<double>> costs = row_costs(beta);
  return o_.oracle(problem_, OracleCosts{costs, beta});
}

double GameState::model_gradient_step(std::vector<double>& theta, const std::vector<double>& beta) {
  const std::vector<std::vector<double>> costs = row_costs(beta);
  const std::size_t np = scorer_.num_parameters();
  double lagrangian = 0;
  std::vector<double> grad(np, 0.0);
  std::vector<double> dv;
  for (std::size_t d = 0; d < p_.data.size(); ++d) {
    ramp_hinge_rows(d, costs[d], dv, lagrangian);
    scorer_.vjp(features(d), theta, dv, grad, o_.n_threads);
  }
  if (o_.l2 > 0)
    for (std::size_t j = 0; j + 1 < np; ++j) {
      grad[j] += o_.l2 * theta[j];
      lagrangian += 0.5 * o_.l2 * theta[j] * theta[j];
    }
  model_step_.apply(theta, grad);
  // A step so large that the model's parameters overflow: name the option, not the model it
  // would have written.
  for (const double t : theta)
    RATEOPT_CHECK(std::isfinite(t) && std::abs(t) <= 1e100,
                  "the model player's step overflowed its parameters (a parameter is {}): "
                  "model_step (--model-step) is {}, much too large for these features; try the "
                  "default",
                  t, o_.model_step);
  return lagrangian;
}

// Dataset d's rows of the ramp-hinge surrogate at costs c: its value added to lagrangian, and
// in dv the derivative by each row's score (all rows, or a minibatch).
void GameState::ramp_hinge_rows(std::size_t d, const std::vector<double>& c,
                                std::vector<double>& dv, double& lagrangian) {
  const std::vector<double>& s = scores_[d];
  dv.assign(s.size(), 0.0);
  const auto row = [&](std::size_t i, double scale) {
    const double ci = scale * c[i];
    if (ci > 0) {
      if (s[i] > -1) {
        dv[i] = ci;
        lagrangian += ci * (1 + s[i]);
      }
    } else if (ci < 0) {
      lagrangian += ci * std::min(1.0, s[i]);
      if (s[i] < 1) dv[i] = ci;
    }
  };
  const std::size_t n_rows = s.size();
  if (o_.batch_size > 0 && static_cast<std::size_t>(o_.batch_size) < n_rows) {
    // Minibatch: b rows drawn without replacement (partial Fisher-Yates over a persistent
    // permutation), costs scaled by n / b so the gradient is unbiased.
    const auto b = static_cast<std::size_t>(o_.batch_size);
    std::vector<std::size_t>& perm = batch_perm_[d];
    if (perm.size() != n_rows) {
      perm.resize(n_rows);
      std::iota(perm.begin(), perm.end(), std::size_t{0});
    }
    const double scale = static_cast<double>(n_rows) / static_cast<double>(b);
    for (std::size_t r = 0; r < b; ++r) {
      std::uniform_int_distribution<std::size_t> pick(r, n_rows - 1);
      std::swap(perm[r], perm[pick(rng_)]);
      row(perm[r], scale);
    }
  } else {
    for (std::size_t i = 0; i < n_rows; ++i) row(i, 1.0);
  }
}

// ---- Multiplier player ---------------------------------------------------------------------

void GameState::multiplier_gradient_step(const ProblemValues& values) {
  const std::size_t m = p_.constraints.size();
  const double bound = o_.multiplier_bound;
  std::vector<double> mg(m + slacks_.size(), 0.0);
  std::vector<double> lv;
  bool have_leaf_vals = false;
  for (std::size_t j = 0; j < m; ++j) {
    if (is_linear(p_.constraints[j])) {
      mg[j] = -values.constraints[j];
    } else {
      if (!have_leaf_vals) {
        lv.assign(p_.leaves.size(), 0.0);
        for (std::size_t l = 0; l < p_.leaves.size(); ++l)
          if (leaf_slack_[l] != SIZE_MAX)
            lv[l] = p_.leaves[l].value_from_args(
                std::span<const double>(xi_).subspan(leaf_slack_[l], p_.leaves[l].args.size()), {});
        have_leaf_vals = true;
      }
      mg[j] = -p_.value(p_.constraints[j], lv);
    }
  }
  for (std::size_t s = 0; s < slacks_.size(); ++s) mg[m + s] = -link_grad_[s];
  std::vector<double> mv(m + slacks_.size());
  std::copy(mu_.begin(), mu_.end(), mv.begin());
  std::copy(lambda_.begin(), lambda_.end(), mv.begin() + static_cast<std::ptrdiff_t>(m));
  mult_stepper_.apply(mv, mg);
  for (std::size_t j = 0; j < m; ++j) mu_[j] = std::clamp(mv[j], 0.0, bound);
  for (std::size_t s = 0; s < slacks_.size(); ++s)
    lambda_[s] = std::clamp(mv[m + s], -bound, bound);
}

// ---- Result --------------------------------------------------------------------------------

// The LP's mixture weights over the candidates (shrink), else uniform.
std::vector<double> GameState::candidate_weights(std::span<const double> f,
                                                 std::span<const double> g) {
  const std::size_t n = cand_models_.size();
  const std::size_t m = p_.constraints.size();
  std::vector<double> weights(n, 1.0 / static_cast<double>(n));
  if (!o_.shrink) return weights;
  bool constraints_linear = true;
  for (const Function& fn : p_.constraints)
    constraints_linear = constraints_linear && is_linear(fn);
  const Function& o = p_.objective;
  const bool single_ratio = o.affine_in_leaves && o.leaf_coef.size() == 1 &&
                            p_.leaves[o.leaf_coef[0].first].kind == Leaf::Kind::kRatio;
  ShrinkResult sr;
  if (constraints_linear && single_ratio) {
    const Leaf& leaf = p_.leaves[o.leaf_coef[0].first];
    std::vector<double> num(n), den(n);
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
      num[i] = o.leaf_coef[0].second * leaf.args[0].evaluate(cand_atoms_[i]);
      den[i] = leaf.args[1].evaluate(cand_atoms_[i]);
      ok = ok && den[i] > 0;
    }
    sr = ok ? shrink_candidates_ratio(num, den, g, m) : shrink_candidates(f, g, m);
  } else {
    sr = shrink_candidates(f, g, m);
  }
  return sr.weights;
}

// The mixture's components: the candidates of positive weight and the best one.
void GameState::assemble_classifier(TrainResult& result, std::span<const double> weights,
                                    std::size_t best) const {
  Classifier& clf = result.classifier;
  clf.kind = "rate_constrained";
  clf.link = Link::kThreshold;
  clf.encoding = p_.data[0].data->encoding();
  for (std::size_t i = 0; i < cand_models_.size(); ++i) {
    if (weights[i] > 0 || i == best) {
      if (i == best) clf.best = clf.components.size();
      clf.components.emplace_back(cand_models_[i]);
      clf.mixture.push_back(weights[i]);
    }
  }
  // Every option of the table (train_options.hpp), then the problem and what actually ran.
  nlohmann::json opts = nlohmann::json::parse(train_options_json(o_, TrainOptionsJson::kModel));
  opts.update({{"learner", "rate_constrained"},
               {"solver", std::string(to_string(solver_))},
               {"objective", p_.spec.objective},
               {"maximize", p_.spec.maximize},
               {"constraints", p_.spec.constraints},
               {"multiplier_step", mult_step_}});
  clf.options_json = opts.dump();
}

TrainResult GameState::finish() {
  // Candidates -> stochastic (shrunk) and deterministic (best iterate) classifiers.
  const std::size_t n = cand_models_.size();
  const std::size_t m = p_.constraints.size();
  std::vector<double> f(n), g(n * m);
  for (std::size_t i = 0; i < n; ++i) {
    // Infinite values (kld at a rate of 0 or 1) and NaN rank last.
    const auto finite = [](double v) { return std::isfinite(v) ? v : 1e9; };
    f[i] = finite(p_.objective_sign * cand_values_[i].objective);
    for (std::size_t j = 0; j < m; ++j) g[i * m + j] = finite(cand_values_[i].constraints[j]);
  }
  const std::vector<double> weights = candidate_weights(f, g);
  std::vector<double> mix(p_.atoms.size(), 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t a = 0; a < mix.size(); ++a) mix[a] += weights[i] * cand_atoms_[i][a];
  TrainResult result = std::move(result_);
  result.stochastic = problem_.evaluate(mix);
  const std::size_t best = best_candidate(f, g, m, o_.tolerance);
  result.deterministic = cand_values_[best];
  result.num_candidates = n;
  result.candidates = cand_values_;
  result.iterations = rounds_;
  result.seconds = elapsed();
  // Status: infeasible, or converged only with a certificate (problems linear in rates: the
  // Lagrangian bound at the LP's multipliers over the candidates, one oracle call), else
  // feasible.
  bool all_linear = is_linear(p_.objective);
  for (const Function& fn : p_.constraints) all_linear = all_linear && is_linear(fn);
  if (interrupted_) {
    result.status = Termination::kInterrupted;
  } else if (result.stochastic.max_violation() > o_.tolerance) {
    result.status = Termination::kInfeasible;
  } else if (all_linear && !answers_) {
    result.lower_bound = lagrangian_lower_bound(problem_, o_, f, g, m);
    result.gap = p_.objective_sign * result.stochastic.objective - result.lower_bound;
    result.status = result.gap <= o_.tolerance ? Termination::kConverged : Termination::kFeasible;
  } else {
    result.status = Termination::kFeasible;
  }
  final_weights_ = weights;
  final_best_ = best;
  if (!answers_) assemble_classifier(result, weights, best);
  return result;
}

}  // namespace rateopt
