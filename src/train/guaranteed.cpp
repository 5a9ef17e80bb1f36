// The guaranteed training mode (rateopt/train.hpp, train_guaranteed; docs/guarantees.md): split,
// a first fit to predict the safety test's widths, the fit on tightened constraints, one safety
// test with finite-sample bounds.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/postprocess.hpp"
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

// Cumulative weights below which a group's draw takes its next threshold closer than this are
// one breakpoint (the groups' weights each sum to 1 up to rounding).
constexpr double kBreakpointDust = 1e-12;

// Randomised group thresholds as hard components (guarantee_data): one uniform u drives every
// group's draw, group g taking threshold j when u falls in its j-th cumulative weight interval.
// Between consecutive breakpoints of all groups every group's pick is fixed: one hard component
// of weight the interval's length.
void group_threshold_components(const Classifier& model, std::vector<Classifier>& parts,
                                std::vector<double>& weights) {
  std::vector<double> cuts = {0.0, 1.0};
  for (const GroupRule& r : model.group_rules) {
    double cum = 0;
    for (std::size_t j = 0; j + 1 < r.weights.size(); ++j) cuts.push_back(cum += r.weights[j]);
  }
  std::sort(cuts.begin(), cuts.end());
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const double width = cuts[k + 1] - cuts[k];
    if (width <= kBreakpointDust) continue;
    const double mid = 0.5 * (cuts[k] + cuts[k + 1]);
    Classifier part = model;
    for (GroupRule& r : part.group_rules) {
      double cum = 0;
      std::size_t pick = r.thresholds.size() - 1;
      for (std::size_t j = 0; j < r.weights.size(); ++j) {
        cum += r.weights[j];
        if (mid < cum) {
          pick = j;
          break;
        }
      }
      r.thresholds = {r.thresholds[pick]};
      r.weights = {1.0};
    }
    parts.push_back(std::move(part));
    weights.push_back(width);
  }
}

// Bisection steps over the share of the fit kept when moving it toward a constant classifier.
constexpr int kShrinkBisections = 12;

// A linear model predicting `positive` for every row (threshold link: score = bias).
LinearModel constant_model(std::size_t features, bool positive) {
  LinearModel m;
  m.weights.assign(features, 0.0);
  m.bias = positive ? 1.0 : -1.0;
  return m;
}

// GuaranteeOptions::shrink: the fit kept, predicted to fail the safety test, moved toward a
// constant classifier as far as the candidate part predicts the test to need.
class Shrinker {
 public:
  Shrinker(const ProblemSpec& spec, const Dataset& candidate, const GuaranteeOptions& options,
           int n_threads)
      : spec_(spec), candidate_(candidate), options_(options), n_threads_(n_threads) {}

  [[nodiscard]] bool passes(const MixtureData& m) const {
    const std::vector<double> upper = predicted_safety_upper(spec_.constraints, m, options_);
    return std::all_of(upper.begin(), upper.end(), [](double u) { return u <= 0; });
  }
  [[nodiscard]] bool passes(const Classifier& c) const {
    return passes(guarantee_data(c, candidate_, "train", options_.stochastic_output, n_threads_));
  }

  // The move toward the constant classifier with the better candidate objective (all negative
  // on ties), when that constant is predicted to pass; its name and the share kept. Never toward
  // the other constant: a certified model worse than a constant the user could pick without data
  // (all positive under an error objective) is no answer.
  [[nodiscard]] std::optional<std::pair<Classifier, double>> best_move(const Classifier& model,
                                                                       std::string& anchor) const {
    const std::vector<TrainingData> td = {{"train", &candidate_}};
    double objective[2] = {0, 0};
    for (const bool positive : {false, true}) {
      const Classifier c = Classifier::single(constant_model(candidate_.num_features(), positive),
                                              Link::kThreshold, model.encoding);
      objective[positive ? 1 : 0] =
          evaluate_spec(spec_, c, td, PredictMode::kDeterministic, 0, n_threads_).objective.value;
    }
    const bool positive =
        spec_.maximize ? objective[1] > objective[0] : objective[1] < objective[0];
    anchor = positive ? "all positive" : "all negative";
    auto moved = options_.stochastic_output ? mix(model, positive) : shift(model, positive);
    if (!moved) anchor.clear();
    return moved;
  }

 private:
  // Largest share a in [0, 1] (of kShrinkBisections bisection steps) with passes(at(a)), given
  // that at(0) passes and at(1) does not.
  template <typename At>
  static double largest_share(const At& at) {
    double low = 0;
    double high = 1;
    for (int step = 0; step < kShrinkBisections; ++step) {
      const double mid = 0.5 * (low + high);
      (at(mid) ? low : high) = mid;
    }
    return low;
  }

  // Stochastic output: the mixture a * model + (1 - a) * constant.
  [[nodiscard]] std::optional<std::pair<Classifier, double>> mix(const Classifier& model,
                                                                 bool positive) const {
    const MixtureData base = guarantee_data(model, candidate_, "train", true, n_threads_);
    Predictions constant;
    constant.positive.assign(candidate_.num_rows(), positive ? 1 : 0);
    const auto at = [&](double a) {
      MixtureData m = base;
      for (double& w : m.weights) w *= a;
      m.components.push_back(constant);
      m.weights.push_back(1 - a);
      return m;
    };
    MixtureData only;
    only.name = base.name;
    only.data = base.data;
    only.components = {constant};
    only.weights = {1.0};
    if (!passes(only)) return std::nullopt;
    const double a = largest_share([&](double s) { return passes(at(s)); });
    Classifier out = model;
    const LinearModel c = constant_model(candidate_.num_features(), positive);
    if (a == 0) {
      out.components = {c};
      out.mixture = {1.0};
      out.best = 0;
    } else {
      for (double& w : out.mixture) w *= a;
      out.components.push_back(c);
      out.mixture.push_back(1 - a);
    }
    return std::make_pair(std::move(out), a);
  }

  // Deterministic output: the best single model with its bias moved by (1 - a) times the shift
  // that makes every candidate row negative (positive); a = 0 is the constant itself.
  [[nodiscard]] std::optional<std::pair<Classifier, double>> shift(const Classifier& model,
                                                                   bool positive) const {
    const LinearModel& best = model.components[model.best];
    std::vector<double> score(candidate_.num_rows());
    best.scores(candidate_.features(), score, n_threads_);
    // The largest score (of -score for the positive anchor) over every rank's rows.
    const std::vector<double> top = fold_over_ranks({0.0}, [&](std::vector<double>& state) {
      for (const double v : score) state[0] = std::max(state[0], positive ? -v : v);
    });
    const double end = 1 + top[0];
    const auto single = [&](double a) {
      Classifier c = model;
      LinearModel m = best;
      if (a == 0) {
        m = constant_model(candidate_.num_features(), positive);
      } else {
        m.bias += (positive ? 1 : -1) * (1 - a) * end;
      }
      c.components = {std::move(m)};
      c.mixture = {1.0};
      c.best = 0;
      return c;
    };
    if (!passes(single(0))) return std::nullopt;
    const double a = largest_share([&](double s) { return passes(single(s)); });
    return std::make_pair(single(a), a);
  }

  const ProblemSpec& spec_;
  const Dataset& candidate_;
  const GuaranteeOptions& options_;
  int n_threads_;
};

// The training values of `model` on the candidate part under the constraints as trained.
void refresh_values(TrainResult& r, const ProblemSpec& trained, const Dataset& candidate,
                    int n_threads) {
  const std::vector<TrainingData> td = {{"train", &candidate}};
  const RateProblem problem = RateProblem::build(trained, td);
  std::vector<std::vector<double>> prob(1, std::vector<double>(candidate.num_rows()));
  r.classifier.predict(candidate, PredictMode::kProbability, prob[0], 0, n_threads);
  r.stochastic = problem.evaluate(problem.atom_values(prob));
  std::vector<std::vector<std::uint8_t>> hard(1, std::vector<std::uint8_t>(candidate.num_rows()));
  r.classifier.predict_positive(candidate, PredictMode::kDeterministic, hard[0], 0, n_threads);
  r.deterministic = problem.evaluate(problem.atom_values(hard));
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
  } else if (model.link == Link::kThreshold && !model.group_rules.empty() &&
             model.components.size() == 1) {
    std::vector<Classifier> parts;
    std::vector<double> weights;
    group_threshold_components(model, parts, weights);
    for (std::size_t k = 0; k < parts.size(); ++k) {
      m.components.push_back(hard(parts[k]));
      m.weights.push_back(weights[k]);
    }
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
                                       std::size_t first_row, const GuaranteedFit& fit,
                                       double tolerance, int n_threads,
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
  const std::vector<std::string>& constraints = spec.constraints;
  const bool stochastic = guarantee.stochastic_output;

  const auto meets = [&](const TrainResult& r) {
    const bool ok = r.status == Termination::kConverged || r.status == Termination::kFeasible;
    return stochastic ? ok : r.deterministic.max_violation() <= tolerance;
  };
  const auto tightened = [&](double scale, const std::vector<double>& m) {
    std::vector<std::string> t(constraints.size());
    for (std::size_t k = 0; k < constraints.size(); ++k)
      t[k] = tighten_constraint(constraints[k], scale * m[k]);
    return t;
  };
  std::size_t calls = 0;
  const auto fit_with = [&](const std::vector<std::string>& cons) {
    ProblemSpec tight = spec;
    tight.constraints = cons;
    ++calls;
    return fit(tight, out.candidate);
  };
  // A first fit on the candidate part predicts how wide the safety test's bounds will be.
  const TrainResult first = fit_with(constraints);
  const std::vector<double> predicted = predicted_safety_margins(
      constraints, guarantee_data(first.classifier, out.candidate, "train", stochastic, n_threads),
      guarantee);
  // The largest scale of the margins (1 first, else by bisection) whose fit meets them.
  double scale = 1.0;
  TrainResult kept = fit_with(tightened(1.0, predicted));
  std::size_t kept_call = calls - 1;
  if (!meets(kept)) {
    double low = 0.0;
    double high = 1.0;
    TrainResult best = first;
    kept_call = 0;
    for (int step = 0; step < kMarginBisections; ++step) {
      const double mid = 0.5 * (low + high);
      TrainResult r = fit_with(tightened(mid, predicted));
      if (meets(r)) {
        low = mid;
        best = std::move(r);
        kept_call = calls - 1;
      } else {
        high = mid;
      }
    }
    scale = low;
    kept = std::move(best);
  }
  out.kept_fit = kept_call;
  out.margins.resize(constraints.size());
  for (std::size_t k = 0; k < constraints.size(); ++k) out.margins[k] = scale * predicted[k];
  out.trained_constraints = tightened(scale, predicted);

  // Moved toward a constant classifier when the candidate part predicts the safety test to fail.
  bool moved = false;
  if (guarantee.shrink && kept.classifier.link == Link::kThreshold &&
      kept.classifier.group_rules.empty()) {
    ProblemSpec as_given = spec;
    as_given.constraints = constraints;
    const Shrinker shrinker(as_given, out.candidate, guarantee, n_threads);
    if (!meets(kept) || !shrinker.passes(kept.classifier)) {
      if (auto m = shrinker.best_move(kept.classifier, out.anchor)) {
        kept.classifier = std::move(m->first);
        out.kept_share = m->second;
        ProblemSpec trained = spec;
        trained.constraints = out.trained_constraints;
        refresh_values(kept, trained, out.candidate, n_threads);
        moved = true;
      }
    }
  }

  // The safety test: every constraint's range on the held-out rows, all at once.
  out.safety = high_confidence_ranges(
      constraints, guarantee_data(kept.classifier, out.safety_rows, "train", stochastic, n_threads),
      1 - guarantee.confidence);
  out.solver_status = kept.status;
  out.passed =
      moved || kept.status == Termination::kConverged || kept.status == Termination::kFeasible;
  for (const ConstraintRange& r : out.safety) out.passed = out.passed && r.range.high <= 0;
  out.result = std::move(kept);
  if (!out.passed) out.result.status = Termination::kNoSolutionFound;
  // A moved fit is not the solver's answer: certified, it is a feasible model (its training
  // values are the candidate part's, in `result`).
  if (out.passed && moved) out.result.status = Termination::kFeasible;
  return out;
}

GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                       std::size_t first_row, const TrainOptions& options,
                                       const GuaranteeOptions& guarantee) {
  const GuaranteedFit fit = [&](const ProblemSpec& tight, const Dataset& candidate) {
    const std::vector<TrainingData> td = {{"train", &candidate}};
    return train(RateProblem::build(tight, td), options);
  };
  return train_guaranteed(spec, data, first_row, fit, options.tolerance, options.n_threads,
                          guarantee);
}

GuaranteedPostprocessResult postprocess_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                                   std::size_t first_row, const Classifier* base,
                                                   const LogisticRegressionOptions& base_options,
                                                   const PostprocessOptions& options,
                                                   double tolerance,
                                                   const GuaranteeOptions& guarantee) {
  GuaranteedPostprocessResult out;
  std::optional<Classifier> score;
  if (base != nullptr) score = *base;
  std::vector<PostprocessResult> answers;  // one per call of the fit, to return the kept one
  const GuaranteedFit fit = [&](const ProblemSpec& tight, const Dataset& candidate) {
    if (!score) {  // the first call: the base score from the candidate part alone
      const auto lr = fit_logistic_regression(candidate.features(), candidate.labels().values,
                                              candidate.weights(), base_options);
      score = logistic_regression_model(lr.model, base_options, candidate.encoding());
      out.base_fitted = true;
    }
    const std::vector<TrainingData> td = {{"train", &candidate}};
    PostprocessResult p = postprocess(RateProblem::build(tight, td), *score, options);
    TrainResult r;
    r.classifier = p.classifier;
    r.status = p.status;
    r.seconds = p.seconds;
    r.stochastic = p.stochastic;
    r.deterministic = p.deterministic;
    answers.push_back(std::move(p));
    return r;
  };
  out.guarantee =
      train_guaranteed(spec, data, first_row, fit, tolerance, options.n_threads, guarantee);
  out.postprocess = std::move(answers.at(out.guarantee.kept_fit));
  out.base = std::move(*score);
  return out;
}

}  // namespace rateopt
