// The guaranteed training mode (rateopt/train.hpp, train_guaranteed; docs/guarantees.md): split,
// a first fit to predict the safety test's widths, the fit on tightened constraints, one safety
// test with finite-sample bounds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

namespace {

// Bisection steps that scale down margins the candidate part cannot meet.
constexpr int kMarginBisections = 5;

double rows_over_ranks(const Dataset& ds) {
  double n[1] = {static_cast<double>(ds.num_rows())};
  sum_over_ranks(n);
  return n[0];
}

}  // namespace

MixtureData guarantee_data(const Classifier& model, const Dataset& data, std::string name,
                           bool stochastic, int n_threads) {
  MixtureData m;
  m.name = std::move(name);
  m.data = &data;
  const auto hard = [&](const Classifier& c) {
    Predictions p;
    p.positive.resize(data.num_rows());
    c.predict_positive(data, PredictMode::kDeterministic, p.positive, 0, n_threads);
    return p;
  };
  if (!stochastic) {
    m.components.push_back(hard(model));
    m.weights.push_back(1.0);
  } else if (model.link == Link::kThreshold && model.group_rules.empty()) {
    for (std::size_t j = 0; j < model.components.size(); ++j) {
      if (model.mixture[j] <= 0) continue;
      m.components.push_back(
          hard(Classifier::single(model.components[j], model.link, model.encoding)));
      m.weights.push_back(model.mixture[j]);
    }
  } else {
    Predictions p;
    p.prob_positive.resize(data.num_rows());
    model.predict(data, PredictMode::kProbability, p.prob_positive, 0, n_threads);
    m.components.push_back(std::move(p));
    m.weights.push_back(1.0);
  }
  return m;
}

GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                       std::size_t first_row, const TrainOptions& options,
                                       const GuaranteeOptions& guarantee) {
  validate(guarantee);
  RATEOPT_CHECK(!spec.constraints.empty(),
                "the guaranteed mode certifies constraints: the problem has none");
  GuaranteedTrainResult out;
  const std::vector<std::uint8_t> to_safety = safety_rows(data.num_rows(), first_row, guarantee);
  std::vector<std::size_t> cand_rows;
  std::vector<std::size_t> safe_rows;
  for (std::size_t i = 0; i < to_safety.size(); ++i)
    (to_safety[i] != 0 ? safe_rows : cand_rows).push_back(i);
  out.candidate = select_rows(data, cand_rows);
  out.safety_rows = select_rows(data, safe_rows);
  out.candidate_total = rows_over_ranks(out.candidate);
  out.safety_total = rows_over_ranks(out.safety_rows);
  const std::vector<TrainingData> td = {{"train", &out.candidate}};
  const std::vector<std::string>& constraints = spec.constraints;
  const bool stochastic = guarantee.stochastic_output;

  const auto meets = [&](const TrainResult& r) {
    const bool ok = r.status == Termination::kConverged || r.status == Termination::kFeasible;
    return stochastic ? ok : r.deterministic.max_violation() <= options.tolerance;
  };
  const auto tightened = [&](double scale, const std::vector<double>& m) {
    std::vector<std::string> t(constraints.size());
    for (std::size_t k = 0; k < constraints.size(); ++k)
      t[k] = tighten_constraint(constraints[k], scale * m[k]);
    return t;
  };
  const auto fit = [&](const std::vector<std::string>& cons) {
    ProblemSpec tight = spec;
    tight.constraints = cons;
    return train(RateProblem::build(tight, td), options);
  };
  // A first fit on the candidate part predicts how wide the safety test's bounds will be.
  const TrainResult first = fit(constraints);
  const std::vector<double> predicted = predicted_safety_margins(
      constraints,
      guarantee_data(first.classifier, out.candidate, "train", stochastic, options.n_threads),
      guarantee);
  // The largest scale of the margins (1 first, else by bisection) whose fit meets them.
  double scale = 1.0;
  TrainResult kept = fit(tightened(1.0, predicted));
  if (!meets(kept)) {
    double low = 0.0;
    double high = 1.0;
    TrainResult best = first;
    for (int step = 0; step < kMarginBisections; ++step) {
      const double mid = 0.5 * (low + high);
      TrainResult r = fit(tightened(mid, predicted));
      if (meets(r)) {
        low = mid;
        best = std::move(r);
      } else {
        high = mid;
      }
    }
    scale = low;
    kept = std::move(best);
  }
  out.margins.resize(constraints.size());
  for (std::size_t k = 0; k < constraints.size(); ++k) out.margins[k] = scale * predicted[k];
  out.trained_constraints = tightened(scale, predicted);

  // The safety test: every constraint's range on the held-out rows, all at once.
  out.safety = high_confidence_ranges(
      constraints,
      guarantee_data(kept.classifier, out.safety_rows, "train", stochastic, options.n_threads),
      1 - guarantee.confidence);
  out.solver_status = kept.status;
  out.passed = kept.status == Termination::kConverged || kept.status == Termination::kFeasible;
  for (const ConstraintRange& r : out.safety) out.passed = out.passed && r.range.high <= 0;
  out.result = std::move(kept);
  if (!out.passed) out.result.status = Termination::kNoSolutionFound;
  return out;
}

}  // namespace rateopt
