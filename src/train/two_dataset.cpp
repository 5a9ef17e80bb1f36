// The two-dataset scheme of Cotter et al. (ICML 2019; train.hpp, train_two_dataset): the model
// side fits on one part of the rows, the constraint side (the master LP's constraint rows and the
// final LP over candidates) judges on the other. Runs the prediction-oracle solvers
// (prediction_oracle.cpp) on a problem of two datasets, "train" (the model part: the objective)
// and "hold" (the constraint part: every constraint, retargeted there), with an oracle that fits
// weighted logistic regression on the model part alone.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

namespace {

constexpr const char* kHold = "hold";

// The kind of each row of `part`: rows of one kind share the values of every slice column (groups,
// a baseline's predictions) and the label, hence the atoms they fall in (a slice is a set of
// column values). Ids are shared by both parts through `ids`.
std::vector<std::size_t> row_kinds(const Dataset& part,
                                   std::map<std::vector<double>, std::size_t>& ids) {
  const std::size_t n = part.num_rows();
  std::vector<std::size_t> kind(n);
  std::vector<double> key;
  for (std::size_t i = 0; i < n; ++i) {
    key.clear();
    for (const Column& c : part.columns())
      key.push_back(c.is_numeric() ? c.numeric[i] : static_cast<double>(c.codes[i]));
    key.push_back(part.labels().values.empty() ? 0.0 : part.labels().values[i]);
    kind[i] = ids.try_emplace(key, ids.size()).first->second;
  }
  return kind;
}

// The intercept shift that minimises the summed costs of the rows predicted positive (score above
// it; ties in score move together); nothing when no cut beats predicting every row positive by
// more than rounding.
double best_shift(std::span<const double> score, std::span<const double> cost) {
  std::vector<std::size_t> order(score.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return score[a] > score[b] || (score[a] == score[b] && a < b);
  });
  // Cut k: the top k rows positive. k = 0 costs 0.
  double run = 0;
  double best = 0;
  std::size_t best_k = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    run += cost[order[k]];
    const bool boundary = k + 1 == order.size() || score[order[k + 1]] < score[order[k]];
    if (boundary && run < best) {
      best = run;
      best_k = k + 1;
    }
  }
  if (best_k == 0) return order.empty() ? 0.0 : score[order[0]] + 1.0;  // none positive
  if (best_k == order.size()) return score[order.back()] - 1.0;         // all positive
  return 0.5 * (score[order[best_k - 1]] + score[order[best_k]]);
}

}  // namespace

TwoDatasetResult train_two_dataset(const ProblemSpec& spec, const Dataset& data,
                                   const TrainOptions& options, const TwoDatasetOptions& two) {
  RATEOPT_CHECK(two.constraint_fraction > 0 && two.constraint_fraction < 1,
                "constraint fraction is {}, expected a share in (0, 1)", two.constraint_fraction);
  RATEOPT_CHECK(!spec.constraints.empty(),
                "the two-dataset scheme moves the constraints to held-out rows: the problem has "
                "none");
  TwoDatasetResult out;
  GuaranteeOptions split;
  split.safety_fraction = two.constraint_fraction;
  split.seed = two.seed;
  const std::vector<std::uint8_t> to_hold = safety_rows(data.num_rows(), 0, split);
  std::vector<std::size_t> model_idx;
  std::vector<std::size_t> hold_idx;
  for (std::size_t i = 0; i < to_hold.size(); ++i)
    (to_hold[i] != 0 ? hold_idx : model_idx).push_back(i);
  RATEOPT_CHECK(!model_idx.empty() && !hold_idx.empty(),
                "the two-dataset split of {} rows left a part empty (constraint fraction {})",
                data.num_rows(), two.constraint_fraction);
  out.model_rows = select_rows(data, model_idx);
  out.constraint_rows = select_rows(data, hold_idx);

  // The constraints on the constraint part: shorthands expanded with the whole data's levels,
  // then every rate without a dataset retargeted to "hold".
  const ColumnLevels levels = [&](std::string_view dataset, std::string_view column) {
    RATEOPT_CHECK(dataset.empty() || dataset == "train",
                  "the two-dataset scheme runs on one dataset; a shorthand over '{}' names "
                  "dataset '{}'",
                  column, dataset);
    return column_levels(data, column);
  };
  ProblemSpec moved = spec;
  for (std::string& c : moved.constraints) {
    const Expression e = Expression::parse(expand_group_shorthands(c, levels));
    for (const RateRef& r : e.rates())
      RATEOPT_CHECK(r.dataset.empty(),
                    "the two-dataset scheme judges the constraints on held-out rows of the one "
                    "dataset; constraint '{}' names dataset '{}' (write its rates without '@')",
                    c, r.dataset);
    c = with_default_dataset(e, kHold);
  }
  const std::vector<TrainingData> td = {{"train", &out.model_rows}, {kHold, &out.constraint_rows}};
  const RateProblem problem = RateProblem::build(moved, td);

  // Each kind's constraint-part cost mass is spread over the model rows of that kind in
  // proportion to their weights.
  std::map<std::vector<double>, std::size_t> ids;
  const std::vector<std::size_t> model_kind = row_kinds(out.model_rows, ids);
  const std::vector<std::size_t> hold_kind = row_kinds(out.constraint_rows, ids);
  const std::span<const double> mw = out.model_rows.weights();
  std::vector<double> kind_weight(ids.size(), 0.0);
  for (std::size_t i = 0; i < model_kind.size(); ++i)
    kind_weight[model_kind[i]] += mw.empty() ? 1.0 : mw[i];

  const FeatureMatrix& x = out.model_rows.features();
  std::vector<LinearModel> answers;
  const PredictionOracle oracle = [&](const OracleCosts& costs) {
    std::vector<double> mass(ids.size(), 0.0);
    for (std::size_t i = 0; i < hold_kind.size(); ++i) mass[hold_kind[i]] += costs.rows[1][i];
    std::vector<double> cost(model_kind.size());
    double total = 0;
    std::size_t costed = 0;
    for (std::size_t i = 0; i < cost.size(); ++i) {
      const std::size_t k = model_kind[i];
      cost[i] = costs.rows[0][i] + mass[k] * (mw.empty() ? 1.0 : mw[i]) / kind_weight[k];
      total += std::fabs(cost[i]);
      costed += cost[i] != 0 ? 1 : 0;
    }
    LinearModel model;
    model.weights.assign(x.cols(), 0.0);
    if (total > 0) {
      // The reduction's step (Agarwal et al. 2018), as the built-in oracle: labels 1{c_i < 0},
      // weights |c_i| scaled to sum to the rows with a cost, warm-started.
      std::vector<std::int32_t> labels(cost.size());
      std::vector<double> weights(cost.size());
      const double scale = static_cast<double>(costed) / total;
      for (std::size_t i = 0; i < cost.size(); ++i) {
        labels[i] = cost[i] < 0 ? 1 : 0;
        weights[i] = std::fabs(cost[i]) * scale;
      }
      LogisticRegressionOptions lo;
      lo.c = options.c;
      lo.fit_intercept = options.fit_intercept;
      lo.n_threads = options.n_threads;
      lo.tol = 1e-3;
      if (!answers.empty()) lo.initial = answers.back();
      model = fit_logistic_regression(x, labels, weights, lo).model;
    }
    // The exactly best intercept for the 0/1 costs on the model part.
    std::vector<double> score(x.rows());
    model.scores(x, score, options.n_threads);
    model.bias -= best_shift(score, cost);
    std::vector<std::vector<double>> pred(2);
    pred[0].resize(x.rows());
    model.scores(x, pred[0], options.n_threads);
    for (double& p : pred[0]) p = p > 0 ? 1.0 : 0.0;
    const FeatureMatrix& xh = out.constraint_rows.features();
    pred[1].resize(xh.rows());
    model.scores(xh, pred[1], options.n_threads);
    for (double& p : pred[1]) p = p > 0 ? 1.0 : 0.0;
    answers.push_back(std::move(model));
    return pred;
  };
  TrainOptions o = options;
  o.solver = resolve_train_solver(problem, TrainSolver::kAuto) == TrainSolver::kCuttingPlane
                 ? TrainSolver::kCuttingPlane
                 : TrainSolver::kOracle;
  const PredictionOracleResult r = train_with_prediction_oracle(problem, o, oracle);

  TrainResult& t = out.result;
  t.solver = r.solver;
  t.status = r.status;
  t.iterations = r.iterations;
  t.seconds = r.seconds;
  t.stochastic = r.stochastic;
  t.deterministic = r.deterministic;
  t.candidates = r.answers;
  t.oracle_calls = r.oracle_calls;
  t.history = r.history;
  Classifier& c = t.classifier;
  c.kind = "rate_constrained";
  c.link = Link::kThreshold;
  c.encoding = data.encoding();
  c.components.clear();
  for (std::size_t k = 0; k < answers.size(); ++k) {
    if (r.mixture[k] <= 0 && k != r.best) continue;
    if (k == r.best) c.best = c.components.size();
    c.components.emplace_back(answers[k]);
    c.mixture.push_back(r.mixture[k]);
  }
  t.num_candidates = answers.size();
  return out;
}

}  // namespace rateopt
