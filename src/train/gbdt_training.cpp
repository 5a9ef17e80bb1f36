// Rate-constrained boosted trees (train.hpp, train_gbdt): the prediction-oracle solvers with an
// oracle that fits one XGBoost booster per call (rateopt/gbdt.hpp), the classifier a mixture of
// the boosters.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "common/check.hpp"
#include "rateopt/gbdt.hpp"
#include "rateopt/train.hpp"
#include "rateopt/train_options.hpp"

namespace rateopt {

GbdtOptions gbdt_options(const TrainOptions& o) {
  GbdtOptions g;
  g.rounds = o.gbdt_rounds;
  g.max_depth = o.gbdt_max_depth;
  g.learning_rate = o.gbdt_learning_rate;
  g.l2 = o.gbdt_l2;
  g.min_child_weight = o.gbdt_min_child_weight;
  g.subsample = o.gbdt_subsample;
  g.colsample = o.gbdt_colsample;
  g.seed = o.seed;
  g.n_threads = o.n_threads;
  return g;
}

namespace {

// Every dataset's rows stacked, in order (one dataset: its matrix as it is).
FeatureMatrix stacked_features(std::span<const TrainingData> data) {
  if (data.size() == 1) return data[0].data->features();
  std::size_t rows = 0, cols = 0;
  for (const TrainingData& d : data) {
    rows += d.data->num_rows();
    cols = std::max(cols, d.data->features().cols());
  }
  std::vector<double> v(rows * cols, 0.0);
  std::size_t at = 0;
  for (const TrainingData& d : data) {
    const FeatureMatrix& x = d.data->features();
    for (std::size_t i = 0; i < x.rows(); ++i, ++at)
      for (std::size_t j = 0; j < x.cols(); ++j) v[at * cols + j] = x.at(i, j);
  }
  return FeatureMatrix::dense(std::move(v), rows, cols);
}

}  // namespace

TrainResult train_gbdt(const RateProblem& problem, const TrainOptions& options) {
  RATEOPT_CHECK(gbdt_available(),
                "--learner gbdt needs XGBoost, and this build of rateopt has none: install "
                "libxgboost-dev (bash scripts/deps.sh) and configure again");
  const GbdtOptions g = gbdt_options(options);
  validate(g);
  const std::span<const TrainingData> data = problem.data();
  const FeatureMatrix x = stacked_features(data);
  // Each answer's model: the first fit's at once, the warm fits' (lazy[k]) only if kept.
  std::vector<std::optional<TreeEnsemble>> answers;
  std::vector<BoostOn::LazyFit> lazy;
  // Each answer's margins of the stacked rows, for the report (TrainResult::training_scores).
  // Floats: XGBoost's margins are floats, so nothing is lost, at half the memory.
  std::vector<std::vector<float>> answer_margins;
  std::optional<BoostOn> warm;        // boosting on from the first answer's first trees
  std::vector<double> start_margins;  // their margins of the rows, until warm is made
  const PredictionOracle oracle = [&](const OracleCosts& costs) {
    std::vector<std::int32_t> labels;
    std::vector<double> weights;
    labels.reserve(x.rows());
    weights.reserve(x.rows());
    double total = 0;
    std::size_t with_cost = 0;
    for (const std::vector<double>& rows : costs.rows)
      for (const double c : rows) {
        labels.push_back(c < 0 ? 1 : 0);
        weights.push_back(std::fabs(c));
        total += std::fabs(c);
        with_cost += c != 0 ? 1 : 0;
      }
    // Mean weight 1 over the rows with a cost (min_child_weight keeps its meaning); no cost at
    // all: every row alike, labelled negative.
    const double scale = total > 0 ? static_cast<double>(with_cost) / total : 1.0;
    for (double& w : weights) w = total > 0 ? w * scale : 1.0;
    // Each fit's margins of the rows, and the first fit's after its first rounds - warm rounds
    // (the start of the later fits), come from XGBoost's training cache: no scoring pass.
    const int warm_rounds = options.gbdt_warm_rounds;
    const bool boost_on = warm_rounds > 0 && warm_rounds < g.rounds;
    std::vector<double> margins;
    if (boost_on && !answers.empty()) {
      if (!warm) {
        // The first answer's first rounds - warm trees, and their margins of the rows.
        warm.emplace(
            answers.front()->first_rounds(static_cast<std::size_t>(g.rounds - warm_rounds)),
            start_margins, x);
        std::vector<double>().swap(start_margins);
      }
      GbdtOptions more = g;
      more.rounds = warm_rounds;
      BoostOn::LazyFit& on = lazy.emplace_back(warm->fit_lazily(labels, weights, more));
      answers.emplace_back();  // made below if the classifier keeps it
      margins = std::move(on.margins);
    } else {
      const bool first = boost_on && answers.empty();
      GbdtFit fit =
          fit_gbdt_with_margins(x, labels, weights, g, first ? g.rounds - warm_rounds : 0);
      if (first) start_margins = std::move(fit.prefix_margins);
      answers.emplace_back(std::move(fit.model));
      lazy.emplace_back();
      margins = std::move(fit.margins);
    }
    answer_margins.emplace_back(margins.begin(), margins.end());
    // The stacked rows' decisions, dataset by dataset.
    std::vector<std::vector<double>> out(data.size());
    std::size_t at = 0;
    for (std::size_t k = 0; k < data.size(); ++k) {
      out[k].resize(data[k].data->num_rows());
      for (double& s : out[k]) s = margins[at++] > 0 ? 1.0 : 0.0;
    }
    return out;
  };
  TrainOptions o = options;
  o.learner = Learner::kLogistic;  // the prediction oracle does the fitting
  const PredictionOracleResult r = train_with_prediction_oracle(problem, o, oracle);

  TrainResult out;
  Classifier& clf = out.classifier;
  clf.kind = "rate_constrained";
  clf.link = Link::kThreshold;
  clf.encoding = data[0].data->encoding();
  for (std::size_t k = 0; k < answers.size(); ++k) {
    if (r.mixture[k] > 0 || k == r.best) {
      if (!answers[k]) answers[k] = warm->model(lazy[k]);
      if (k == r.best) clf.best = clf.components.size();
      clf.components.emplace_back(*answers[k]);
      clf.mixture.push_back(r.mixture[k]);
      // As TreeEnsemble::scores gives them: the float margin plus the offset (0; it turns a
      // margin of -0 into +0, as scores does).
      std::vector<double>& s = out.training_scores.emplace_back(answer_margins[k].size());
      for (std::size_t i = 0; i < s.size(); ++i)
        s[i] = static_cast<double>(answer_margins[k][i]) + answers[k]->offset();
    }
  }
  double sum = 0;
  for (const double w : clf.mixture) sum += w;
  for (double& w : clf.mixture) w /= sum;
  nlohmann::json opts =
      nlohmann::json::parse(train_options_json(options, TrainOptionsJson::kModel));
  opts.update({{"solver", std::string(to_string(r.solver))},
               {"objective", problem.spec().objective},
               {"maximize", problem.spec().maximize},
               {"constraints", problem.spec().constraints}});
  clf.options_json = opts.dump();
  clf.validate();
  out.solver = r.solver;
  out.status = r.status;
  out.iterations = r.iterations;
  out.seconds = r.seconds;
  out.stochastic = r.stochastic;
  out.deterministic = r.deterministic;
  out.num_candidates = r.answers.size();
  out.candidates = r.answers;
  out.lower_bound = r.lower_bound;
  out.gap = r.gap;
  out.oracle_calls = r.oracle_calls;
  out.history = r.history;
  return out;
}

}  // namespace rateopt
