// The guaranteed training mode (rateopt/train.hpp, train_guaranteed; docs/guarantees.md): split,
// a first fit to predict the safety test's widths, the fit on tightened constraints, one safety
// test with finite-sample bounds.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "common/random.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
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

// Group thresholds that no finite score passes, and that every one passes: a group-threshold
// model's way to mix in a constant classifier (Mover::at).
constexpr double kNever = std::numeric_limits<double>::max();
constexpr double kAlways = std::numeric_limits<double>::lowest();

// Cumulative weights below which a group's draw takes its next threshold closer than this are
// one breakpoint (the groups' weights each sum to 1 up to rounding).
constexpr double kBreakpointDust = 1e-12;

// 0 (1) when every threshold of every group is the never (always) threshold of a move toward a
// constant (Mover::at): the model predicts 0 (1) for every row of the population; else -1.
std::int8_t group_constant(const Classifier& model) {
  const auto all_at = [&](double t) {
    return std::all_of(model.group_rules.begin(), model.group_rules.end(), [&](const GroupRule& r) {
      return std::all_of(r.thresholds.begin(), r.thresholds.end(),
                         [&](double x) { return x == t; });
    });
  };
  return all_at(kNever) ? std::int8_t{0} : all_at(kAlways) ? std::int8_t{1} : std::int8_t{-1};
}

// Randomised group thresholds as hard components (guarantee_data): one uniform u drives every
// group's draw, group g taking threshold j when u falls in its j-th cumulative weight interval.
// Between consecutive breakpoints of all groups every group's pick is fixed: one hard component
// of weight the interval's length.
// A component whose every group takes the never (always) threshold of a move toward a constant
// (Mover::at) predicts 0 (1) for every row of the population: flagged so.
void group_threshold_components(const Classifier& model, std::vector<Classifier>& parts,
                                std::vector<double>& weights, std::vector<std::int8_t>& constant) {
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
    constant.push_back(group_constant(part));
    parts.push_back(std::move(part));
    weights.push_back(width);
  }
}

// The move toward a constant classifier (GuaranteeOptions::shrink), decided by the safety test
// itself through fixed-sequence testing: the models a = 0 (the constant), 1/J, ..., 1 (the fit)
// are fixed by the candidate part alone and tested on the safety part in that order, each at the
// full delta; the answer is the last one to pass before the first failure. If the answer violates
// a constraint, the first violating model in the order passed its own test, which happens with
// probability at most delta: the steps cost no share of delta. When the tests are nested (a model
// passes whenever a later one does), the last model that passes is the same answer, found by
// bisection.
constexpr int kScanSteps = 64;            // J of a scan (tests that need not be nested)
constexpr std::size_t kShiftBins = 4096;  // histogram bins of the candidate scores for a shift
constexpr int kBisectSteps = 4096;        // J when nested: 12 bisection steps

// A linear model predicting `positive` for every row (threshold link: score = bias).
LinearModel constant_model(std::size_t features, bool positive) {
  LinearModel m;
  m.weights.assign(features, 0.0);
  m.bias = positive ? 1.0 : -1.0;
  return m;
}

// Each part's row draws for MixtureData::draws, keyed by (seed, global row) like the split, so
// the same for any rank count, and independent of the rows and of the split.
struct Draws {
  std::vector<double> candidate;
  std::vector<double> safety;
};
Draws row_draws(const std::vector<std::uint8_t>& to_safety, std::size_t first_row,
                std::uint64_t seed) {
  Draws out;
  for (std::size_t i = 0; i < to_safety.size(); ++i)
    (to_safety[i] != 0 ? out.safety : out.candidate)
        .push_back(detail::unit_uniform(detail::mix64(seed ^ 0xD2A3D2A3ULL, first_row + i)));
  return out;
}

// Whether a stochastic output's components (or its probabilities) are better tested as one draw
// per row (MixtureData::draws) than each on its own share of delta (or as a mean): whether the
// candidate part's upper bounds (`m`, on the candidate rows) are lower that way, summed over the
// constraints. Decided by the candidate part alone, so the safety test's error stays delta.
bool draw_tightens(std::span<const std::string> constraints, MixtureData m,
                   const std::vector<double>& draws, double delta) {
  if (m.components.size() < 2 && m.components[0].prob_positive.empty()) return false;
  const auto upper_sum = [&](const MixtureData& x) {
    double sum = 0;
    for (const ConstraintRange& r : high_confidence_ranges(constraints, x, delta))
      sum += std::isfinite(r.range.high) ? r.range.high : 0.0;
    return sum;
  };
  const double apart = upper_sum(m);
  m.draws = draws;
  return upper_sum(m) < apart;
}

// The models between a fit and a constant classifier, and the safety test along them.
// `score` with its threshold moved by `by`: a linear model's bias, boosted trees' offset.
ScoreModel shifted(const ScoreModel& score, double by) {
  if (score.is_linear()) {
    LinearModel m = score.linear();
    m.bias += by;
    return m;
  }
  TreeEnsemble trees = *score.trees();
  trees.set_offset(trees.offset() + by);
  return trees;
}

class Mover {
 public:
  // `draws`: each part's draws (MixtureData::draws), used when `draw`.
  Mover(const ProblemSpec& spec, const Dataset& candidate, const Dataset& safety,
        const GuaranteeOptions& options, int n_threads, const Draws& draws, bool draw)
      : spec_(spec),
        candidate_(candidate),
        safety_(safety),
        options_(options),
        n_threads_(n_threads),
        draws_(draws),
        draw_(draw) {}

  // The safety test's ranges for `c`.
  [[nodiscard]] std::vector<ConstraintRange> test(const Classifier& c) const {
    return high_confidence_ranges(spec_.constraints, on(safety_, draws_.safety, c),
                                  1 - options_.confidence);
  }
  // test(at(model, positive, a)), with a stochastic output's fit predicted on the safety part
  // once for every share (the mixture's components are the fit's and the constant).
  [[nodiscard]] std::vector<ConstraintRange> test_at(const Classifier& model, bool positive,
                                                     double a) const {
    if (!options_.stochastic_output || a <= 0 || a >= 1) return test(at(model, positive, a));
    if (!fit_on_safety_) fit_on_safety_ = on(safety_, draws_.safety, model);
    MixtureData m = *fit_on_safety_;
    for (double& w : m.weights) w *= a;
    Predictions c;
    c.positive.assign(safety_.num_rows(), positive ? 1 : 0);
    m.components.push_back(std::move(c));
    m.weights.push_back(1 - a);
    m.constant.push_back(positive ? 1 : 0);
    return high_confidence_ranges(spec_.constraints, m, 1 - options_.confidence);
  }
  [[nodiscard]] static bool passes(const std::vector<ConstraintRange>& ranges) {
    return std::all_of(ranges.begin(), ranges.end(),
                       [](const ConstraintRange& r) { return r.range.high <= 0; });
  }
  // Whether the candidate part predicts `c` to pass (predicted_safety_upper), at the options'
  // width factor (cautious: the one the constraints were tightened with) or at `width_factor`.
  [[nodiscard]] bool predicted_to_pass(const Classifier& c,
                                       std::optional<double> width_factor = {}) const {
    GuaranteeOptions o = options_;
    if (width_factor) o.width_factor = *width_factor;
    const std::vector<double> upper =
        predicted_safety_upper(spec_.constraints, on(candidate_, draws_.candidate, c), o);
    return std::all_of(upper.begin(), upper.end(), [](double u) { return u <= 0; });
  }

  // The constant classifier with the better candidate objective (all negative on ties). Never
  // the other: a certified model worse than a constant the user could pick without data (all
  // positive under an error objective) is no answer.
  [[nodiscard]] bool positive_anchor(const Classifier& model) const {
    const std::vector<TrainingData> td = {{"train", &candidate_}};
    double objective[2] = {0, 0};
    for (const bool positive : {false, true})
      objective[positive ? 1 : 0] = evaluate_spec(spec_, constant(model, positive), td,
                                                  PredictMode::kDeterministic, 0, n_threads_)
                                        .objective.value;
    return spec_.maximize ? objective[1] > objective[0] : objective[1] < objective[0];
  }

  [[nodiscard]] Classifier constant(const Classifier& model, bool positive) const {
    return Classifier::single(constant_model(candidate_.num_features(), positive), Link::kThreshold,
                              model.encoding);
  }

  // The model at share a of the path from the constant (0) to `model` (1): stochastic output,
  // the mixture a * model + (1 - a) * constant; deterministic, the best single model with its
  // threshold moved so that it keeps about share a of its positive (negative, for the positive
  // anchor) predictions on the candidate rows.
  [[nodiscard]] Classifier at(const Classifier& model, bool positive, double a) const {
    if (a >= 1) return model;
    if (a <= 0) {
      if (model.group_rules.empty()) return constant(model, positive);
      // A group-threshold model stays one: every group at the constant's threshold.
      Classifier out = model;
      for (GroupRule& r : out.group_rules) {
        r.thresholds = {positive ? kAlways : kNever};
        r.weights = {1.0};
      }
      return out;
    }
    Classifier out = model;
    if (options_.stochastic_output && !out.group_rules.empty()) {
      // Each group's draw takes the constant's threshold with probability 1 - a: last (never)
      // for the negative anchor, first (always) for the positive one, so that one uniform
      // coupling the groups' draws (guarantee_data) gives the constant as one component.
      for (GroupRule& r : out.group_rules) {
        for (double& w : r.weights) w *= a;
        const double t = positive ? kAlways : kNever;
        if ((positive ? r.thresholds.front() : r.thresholds.back()) == t) {
          (positive ? r.weights.front() : r.weights.back()) += 1 - a;
        } else {
          r.thresholds.insert(positive ? r.thresholds.begin() : r.thresholds.end(), t);
          r.weights.insert(positive ? r.weights.begin() : r.weights.end(), 1 - a);
        }
      }
      return out;
    }
    if (options_.stochastic_output) {
      for (double& w : out.mixture) w *= a;
      out.components.emplace_back(constant_model(candidate_.num_features(), positive));
      out.mixture.push_back(1 - a);
      return out;
    }
    // The best single model with its threshold moved.
    out.components = {
        shifted(model.components[model.best], (positive ? 1 : -1) * shift(model, positive, a))};
    out.mixture = {1.0};
    out.best = 0;
    return out;
  }
  // Whether the tests along the path are nested: a stochastic mixture with a constant whose
  // every constraint value is known exactly (its safety ranges are points), so each piece's bound
  // is a * (the fit's) + (1 - a) * (the constant's value <= 0), which only grows with a.
  [[nodiscard]] bool nested(const Classifier& model, bool positive) const {
    if (!options_.stochastic_output) return false;
    const std::vector<ConstraintRange> r = high_confidence_ranges(
        spec_.constraints,
        guarantee_data(constant(model, positive), candidate_, "train", true, n_threads_),
        1 - options_.confidence);
    return std::all_of(r.begin(), r.end(), [](const ConstraintRange& c) {
      return c.range.low == c.range.high && c.range.high <= 0;
    });
  }

 private:
  // What the test reads of `c` on one part.
  [[nodiscard]] MixtureData on(const Dataset& part, const std::vector<double>& draws,
                               const Classifier& c) const {
    MixtureData m = guarantee_data(c, part, "train", options_.stochastic_output, n_threads_);
    if (draw_) m.draws = draws;
    return m;
  }

  // The threshold shift t >= 0 after which the best single model keeps about share a of the
  // candidate rows it predicts positive (score > t, for the negative anchor) or negative
  // (score <= -t, positive anchor): from a histogram of those rows' scores (of -score) over
  // [0, top], summed over ranks, so the same for any rank count. A group-threshold model's score
  // is taken relative to the row's group threshold (decision_function), so that moving the
  // shared score's bias shifts every group alike.
  double shift(const Classifier& model, bool positive, double a) const {
    if (!histogram_) {
      std::vector<double> score(candidate_.num_rows());
      model.decision_function(candidate_, score, n_threads_);
      const auto side = [&](double v) { return positive ? -v : v; };
      const std::vector<double> top = fold_over_ranks({0.0}, [&](std::vector<double>& state) {
        for (const double v : score) state[0] = std::max(state[0], side(v));
      });
      top_ = top[0];
      histogram_.emplace(kShiftBins, 0.0);
      for (const double v : score) {
        const double x = side(v);
        if (positive ? x < 0 : x <= 0) continue;  // not one of the fit's predictions kept
        const auto bin = static_cast<std::size_t>(x / std::max(top_, 1e-300) * kShiftBins);
        (*histogram_)[std::min(bin, kShiftBins - 1)] += 1;
      }
      sum_over_ranks(*histogram_);
    }
    double total = 0;
    for (const double c : *histogram_) total += c;
    const double target = a * total;
    double kept = 0;
    for (std::size_t k = kShiftBins; k-- > 0;) {
      if (kept + (*histogram_)[k] > target)
        return top_ * static_cast<double>(k + 1) / static_cast<double>(kShiftBins);
      kept += (*histogram_)[k];
    }
    return 0.0;
  }

  const ProblemSpec& spec_;
  const Dataset& candidate_;
  const Dataset& safety_;
  const GuaranteeOptions& options_;
  int n_threads_;
  const Draws& draws_;
  bool draw_;
  mutable std::optional<MixtureData> fit_on_safety_;
  mutable std::optional<std::vector<double>> histogram_;
  mutable double top_ = 0;
};

// The last step j in 0..steps whose test passes before the first that fails (-1: step 0 fails),
// tests in order (a scan) or, when nested, by bisection.
template <typename Test>
int last_passing(int steps, bool nested, const Test& passes) {
  if (!passes(0)) return -1;
  if (!nested) {
    for (int j = 1; j <= steps; ++j)
      if (!passes(j)) return j - 1;
    return steps;
  }
  if (passes(steps)) return steps;
  int low = 0;
  int high = steps;
  while (high - low > 1) {
    const int mid = low + (high - low) / 2;
    (passes(mid) ? low : high) = mid;
  }
  return low;
}

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

// A part with the features a fit's classifier reads instead of its own (GuaranteedFitOutput).
Dataset with_features(const Dataset& part, FeatureMatrix features, const char* which) {
  RATEOPT_CHECK(features.rows() == part.num_rows(),
                "the guaranteed fit's {} features have {} rows, expected the part's {}", which,
                features.rows(), part.num_rows());
  Dataset view = part;
  view.features() = std::move(features);
  view.encoding() = Encoding::for_matrix(view.num_features());
  return view;
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
  // A component that reads no feature predicts one probability for every row of the
  // population: a constant class when that is 0 or 1 (the threshold link; the ramp link's
  // |bias| >= 1).
  const auto flag = [&](const ScoreModel& component) -> std::int8_t {
    if (!component.is_linear()) return -1;
    const LinearModel& c = component.linear();
    const bool reads =
        std::any_of(c.weights.begin(), c.weights.end(), [](double w) { return w != 0; });
    if (!model.group_rules.empty() || reads || !std::isfinite(c.bias)) return -1;
    if (model.link == Link::kThreshold) return static_cast<std::int8_t>(c.bias > 0 ? 1 : 0);
    if (model.link == Link::kRamp && std::fabs(c.bias) >= 1)
      return static_cast<std::int8_t>(c.bias > 0 ? 1 : 0);
    return -1;
  };
  if (!stochastic) {
    m.components.push_back(hard(model));
    m.weights.push_back(1.0);
    m.constant.push_back(model.group_rules.empty() ? flag(model.components[model.best])
                                                   : group_constant(model));
  } else if (model.link == Link::kThreshold && !model.group_rules.empty() &&
             model.components.size() == 1) {
    std::vector<Classifier> parts;
    std::vector<double> weights;
    group_threshold_components(model, parts, weights, m.constant);
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
      m.constant.push_back(flag(model.components[j]));
    }
  } else if (model.link == Link::kRamp && model.group_rules.empty()) {
    // Each component's probabilities (a ramp model mixed with a constant by a move: the fit and
    // the constant apart, as Mover::test_at tests them).
    for (std::size_t j = 0; j < model.components.size(); ++j) {
      if (model.mixture[j] <= 0) continue;
      const std::int8_t constant = flag(model.components[j]);
      Predictions p;
      if (constant >= 0) {
        p.positive.assign(data.num_rows(), static_cast<std::uint8_t>(constant));
      } else {
        p.prob_positive.resize(data.num_rows());
        Classifier::single(model.components[j], model.link, model.encoding)
            .predict(data, PredictMode::kProbability, p.prob_positive, 0, n_threads);
      }
      m.components.push_back(std::move(p));
      m.weights.push_back(model.mixture[j]);
      m.constant.push_back(constant);
    }
  } else {
    Predictions p;
    p.prob_positive.resize(data.num_rows());
    model.predict(data, PredictMode::kProbability, p.prob_positive, 0, n_threads);
    m.components.push_back(std::move(p));
    m.weights.push_back(1.0);
    m.constant.push_back(-1);
  }
  return m;
}

GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                       std::size_t first_row, const GuaranteedFeatureFit& fit,
                                       double tolerance, int n_threads,
                                       const GuaranteeOptions& guarantee) {
  validate(guarantee);
  RATEOPT_CHECK(!spec.constraints.empty(),
                "the guaranteed mode certifies constraints: the problem has none");
  // Refused before any fit (the safety test would refuse them after it).
  const std::span<const double> weights = data.weights();
  RATEOPT_CHECK(std::all_of(weights.begin(), weights.end(), [](double w) { return w == 1.0; }),
                "the guaranteed mode needs unweighted rows (each row one independent draw, so "
                "that group rates are binomial); {} has row weights",
                data.source().empty() ? std::string("the data") : data.source());
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
  const Draws draws = row_draws(to_safety, first_row, guarantee.seed);
  const double delta = 1 - guarantee.confidence;

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
  // Per fit call: the parts as its classifier reads them (null: the parts themselves).
  std::vector<std::shared_ptr<const Dataset>> cand_view;
  std::vector<std::shared_ptr<const Dataset>> safe_view;
  const auto candidate_of = [&](std::size_t call) -> const Dataset& {
    return cand_view[call] ? *cand_view[call] : out.candidate;
  };
  const auto safety_of = [&](std::size_t call) -> const Dataset& {
    return safe_view[call] ? *safe_view[call] : out.safety_rows;
  };
  const auto fit_with = [&](const std::vector<std::string>& cons) {
    ProblemSpec tight = spec;
    tight.constraints = cons;
    GuaranteedFitOutput o = fit(tight, out.candidate);
    const bool own = o.candidate_features.rows() == 0 && o.candidate_features.cols() == 0;
    cand_view.push_back(own ? nullptr
                            : std::make_shared<const Dataset>(with_features(
                                  out.candidate, std::move(o.candidate_features), "candidate")));
    safe_view.push_back(own ? nullptr
                            : std::make_shared<const Dataset>(with_features(
                                  out.safety_rows, std::move(o.safety_features), "safety")));
    TrainResult r = std::move(o.fit);
    if (r.stochastic.constraints.empty() || r.deterministic.constraints.empty())
      refresh_values(r, tight, candidate_of(calls), n_threads);
    ++calls;
    return r;
  };
  // A first fit on the candidate part predicts how wide the safety test's bounds will be.
  const TrainResult first = fit_with(constraints);
  MixtureData first_data =
      guarantee_data(first.classifier, candidate_of(0), "train", stochastic, n_threads);
  if (draw_tightens(constraints, first_data, draws.candidate, delta))
    first_data.draws = draws.candidate;
  const std::vector<double> predicted =
      predicted_safety_margins(constraints, first_data, guarantee);
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

  // The safety test: every constraint's range on the held-out rows, all at once; along the path
  // from a constant classifier to the fit (Mover) when the candidate part predicts that constant
  // to pass, and, unless the constant's test is nested with the fit's, the fit to fail.
  ProblemSpec as_given = spec;
  as_given.constraints = constraints;
  const Dataset& kept_candidate = candidate_of(kept_call);
  out.drawn = stochastic && draw_tightens(constraints,
                                          guarantee_data(kept.classifier, kept_candidate, "train",
                                                         true, n_threads),
                                          draws.candidate, delta);
  if (out.drawn) out.safety_draws = draws.safety;
  const Mover mover(as_given, kept_candidate, safety_of(kept_call), guarantee, n_threads, draws,
                    out.drawn);
  const bool solver_ok =
      kept.status == Termination::kConverged || kept.status == Termination::kFeasible;
  bool path = false;
  bool positive = false;
  bool nested = false;
  if (guarantee.shrink &&
      (kept.classifier.link == Link::kThreshold || kept.classifier.link == Link::kRamp)) {
    positive = mover.positive_anchor(kept.classifier);
    if (mover.predicted_to_pass(mover.constant(kept.classifier, positive))) {
      nested = mover.nested(kept.classifier, positive);
      path = nested || !meets(kept) || !mover.predicted_to_pass(kept.classifier);
      if (path && !nested && mover.predicted_to_pass(kept.classifier, 1.0)) {
        // Predicted to fail only at the cautious width (factor 2) but to pass at the expected
        // one (factor 1): walk only when the walk is predicted, at the expected width too, to
        // keep some of the fit; one predicted to stop at the constant would trade the fit's own
        // test for a classifier that reads no data.
        path = last_passing(kScanSteps, false, [&](int j) {
                 return mover.predicted_to_pass(
                     mover.at(kept.classifier, positive, static_cast<double>(j) / kScanSteps), 1.0);
               }) > 0;
      }
    }
  }
  if (path) {
    const int steps = nested ? kBisectSteps : kScanSteps;
    const auto share = [&](int j) { return static_cast<double>(j) / steps; };
    const int last = last_passing(steps, nested, [&](int j) {
      return Mover::passes(mover.test_at(kept.classifier, positive, share(j)));
    });
    if (last >= 0) {
      out.passed = true;
      if (last < steps) {
        kept.classifier = mover.at(kept.classifier, positive, share(last));
        out.anchor = positive ? "all positive" : "all negative";
        out.kept_share = share(last);
        ProblemSpec trained = spec;
        trained.constraints = out.trained_constraints;
        refresh_values(kept, trained, kept_candidate, n_threads);
      }
    }
  }
  out.safety = mover.test(kept.classifier);
  if (!path) out.passed = solver_ok && Mover::passes(out.safety);
  out.solver_status = kept.status;
  out.result = std::move(kept);
  if (!out.passed) out.result.status = Termination::kNoSolutionFound;
  // A model certified along the path is a feasible model, whatever the solver said of the fit
  // (its training values are the candidate part's, in `result`).
  if (out.passed && path && !solver_ok) out.result.status = Termination::kFeasible;
  if (out.passed && !out.anchor.empty()) out.result.status = Termination::kFeasible;
  return out;
}

GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                       std::size_t first_row, const GuaranteedFit& fit,
                                       double tolerance, int n_threads,
                                       const GuaranteeOptions& guarantee) {
  const GuaranteedFeatureFit own = [&](const ProblemSpec& tight, const Dataset& candidate) {
    return GuaranteedFitOutput{fit(tight, candidate), {}, {}};
  };
  return train_guaranteed(spec, data, first_row, own, tolerance, n_threads, guarantee);
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

GuaranteedTrainResult train_guaranteed(const ProblemSpec& spec, std::span<const TrainingData> data,
                                       const TrainOptions& options,
                                       const GuaranteeOptions& guarantee) {
  RATEOPT_CHECK(!data.empty(), "train_guaranteed: no dataset given");
  for (const TrainingData& d : data)
    RATEOPT_CHECK(d.data != nullptr, "train_guaranteed: dataset '{}' is null", d.name);
  if (data.size() == 1 && data[0].name == "train")
    return train_guaranteed(spec, *data[0].data, 0, options, guarantee);
  if (is_distributed())
    throw InvalidArgument(
        "the guaranteed mode over several datasets runs in one process: their rows are pooled, "
        "and each rank would hold every dataset (give one dataset, or run without mpirun)");
  // The tag column: a name no dataset has.
  std::string tag = "__dataset";
  const auto taken = [&](const std::string& name) {
    return std::any_of(data.begin(), data.end(),
                       [&](const TrainingData& d) { return d.data->find_column(name) != nullptr; });
  };
  while (taken(tag)) tag.insert(0, "_");
  std::vector<NamedData> named;
  named.reserve(data.size());
  for (const TrainingData& d : data) named.push_back({d.name, d.data, nullptr});
  const auto pooled_text = [&](const std::string& text) {
    const Expression e = Expression::parse(expand_group_shorthands(text, named));
    for (const RateRef& r : e.rates()) {
      if (r.dataset.empty() || std::any_of(data.begin(), data.end(), [&](const TrainingData& d) {
            return d.name == r.dataset;
          }))
        continue;
      std::vector<std::string> names;
      for (const TrainingData& d : data) names.push_back(d.name);
      throw NotFound(fmt::format("unknown dataset '{}' in '{}' (the datasets: {})", r.dataset, text,
                                 fmt::join(names, ", ")));
    }
    return with_datasets_as_slices(e, tag, data[0].name);
  };
  ProblemSpec pooled_spec = spec;
  pooled_spec.objective = pooled_text(spec.objective);
  for (std::string& c : pooled_spec.constraints) c = pooled_text(c);
  std::vector<Dataset> parts;
  parts.reserve(data.size());
  for (const TrainingData& d : data) {
    Dataset part = *d.data;
    Column c;
    c.name = tag;
    c.levels = {d.name};
    c.codes.assign(part.num_rows(), 0);
    part.add_column(std::move(c));
    parts.push_back(std::move(part));
  }
  const Dataset pooled = concat_rows(std::move(parts));
  GuaranteedTrainResult out = train_guaranteed(pooled_spec, pooled, 0, options, guarantee);
  // The constraints as given, and each dataset's candidate rows (without the tag).
  for (std::size_t k = 0; k < spec.constraints.size(); ++k) {
    out.safety[k].text = spec.constraints[k];
    out.trained_constraints[k] = tighten_constraint(spec.constraints[k], out.margins[k]);
  }
  const Column& of = out.candidate.column(tag);
  std::vector<std::string> others;
  for (const Column& c : out.candidate.columns())
    if (c.name != tag) others.push_back(c.name);
  for (const TrainingData& d : data) {
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < of.codes.size(); ++i)
      if (of.levels[static_cast<std::size_t>(of.codes[i])] == d.name) rows.push_back(i);
    Dataset part = select_rows(out.candidate, rows);
    part.keep_columns(others);
    part.set_source(d.data->source());
    out.candidate_parts.push_back(std::move(part));
  }
  return out;
}

namespace {

// Cross-fitting (postprocess_guaranteed with base_folds >= 2): the base's scores of the candidate
// rows from models fitted without them (row i of the candidate part in fold i mod folds), the
// full candidate fit's scores of the safety rows, and the full fit.
struct CrossFitScores {
  Classifier full;
  FeatureMatrix candidate, safety;
};

CrossFitScores cross_fit_scores(const BaseScoreFit& fit_base, const Dataset& candidate,
                                const Dataset& safety, std::size_t folds, int n_threads) {
  const std::size_t n = candidate.num_rows();
  RATEOPT_CHECK(n >= 2 * folds,
                "cross-fitting the base score over {} folds needs at least {} candidate rows, got "
                "{}",
                folds, 2 * folds, n);
  CrossFitScores out;
  std::vector<double> oof(n);
  for (std::size_t k = 0; k < folds; ++k) {
    std::vector<std::size_t> in, held;
    for (std::size_t i = 0; i < n; ++i) (i % folds == k ? held : in).push_back(i);
    const Classifier model = fit_base(select_rows(candidate, in));
    std::vector<double> s(held.size());
    model.decision_function(select_rows(candidate, held), s, n_threads);
    for (std::size_t j = 0; j < held.size(); ++j) oof[held[j]] = s[j];
  }
  out.full = fit_base(candidate);
  std::vector<double> on_safety(safety.num_rows());
  out.full.decision_function(safety, on_safety, n_threads);
  out.candidate = FeatureMatrix::dense(std::move(oof), n, 1);
  out.safety = FeatureMatrix::dense(std::move(on_safety), safety.num_rows(), 1);
  return out;
}

// The classifier a cross-fitted run kept reads the score as its one feature (components of
// weight 1: the identity, its bias the move of the threshold; weight 0: a constant): the same on
// the base model's own features, with the full candidate fit's score.
Classifier on_base_features(const Classifier& kept, const Classifier& full) {
  Classifier out = kept;
  const ScoreModel& score = full.components.front();
  for (ScoreModel& c : out.components) {
    const LinearModel& m = c.linear("a cross-fitted post-processing component");
    if (m.weights.size() == 1 && m.weights[0] == 1.0) {
      c = shifted(score, m.bias);
    } else {
      RATEOPT_CHECK(m.weights.size() == 1 && m.weights[0] == 0.0,
                    "a cross-fitted post-processing component reads its score with weight {}",
                    m.weights.empty() ? 0.0 : m.weights[0]);
      c = LinearModel{std::vector<double>(score.num_features(), 0.0), m.bias};
    }
  }
  out.encoding = full.encoding;
  return out;
}

// A post-processing answer as the guaranteed mode's fit result.
TrainResult fit_result(const PostprocessResult& p) {
  TrainResult r;
  r.classifier = p.classifier;
  r.status = p.status;
  r.seconds = p.seconds;
  r.stochastic = p.stochastic;
  r.deterministic = p.deterministic;
  return r;
}

}  // namespace

GuaranteedPostprocessResult postprocess_guaranteed(
    const ProblemSpec& spec, const Dataset& data, std::size_t first_row,
    const BaseScoreFit& fit_base, const PostprocessOptions& options, double tolerance,
    const GuaranteeOptions& guarantee, std::size_t base_folds) {
  RATEOPT_CHECK(static_cast<bool>(fit_base), "postprocess_guaranteed: fit_base is empty");
  if (base_folds >= 2) {
    RATEOPT_CHECK(!is_distributed(),
                  "cross-fitting the base score (base_folds {}) runs in one process", base_folds);
    const std::vector<std::uint8_t> to_safety = safety_rows(data.num_rows(), first_row, guarantee);
    std::vector<std::size_t> safety_index;
    for (std::size_t i = 0; i < to_safety.size(); ++i)
      if (to_safety[i] != 0) safety_index.push_back(i);
    const Dataset safety = select_rows(data, safety_index);
    GuaranteedPostprocessResult out;
    std::optional<CrossFitScores> scores;
    std::vector<PostprocessResult> answers;
    Classifier identity =
        Classifier::single(LinearModel{{1.0}, 0.0}, Link::kThreshold, Encoding::for_matrix(1));
    identity.kind = "cross_fitted_score";
    const GuaranteedFeatureFit fit = [&](const ProblemSpec& tight, const Dataset& candidate) {
      if (!scores)
        scores = cross_fit_scores(fit_base, candidate, safety, base_folds, options.n_threads);
      const Dataset view = with_features(candidate, scores->candidate, "candidate");
      const std::vector<TrainingData> td = {{"train", &view}};
      PostprocessResult p =
          postprocess(RateProblem::build(pairwise_parity(tight), td), identity, options);
      GuaranteedFitOutput o{fit_result(p), scores->candidate, scores->safety};
      answers.push_back(std::move(p));
      return o;
    };
    out.guarantee =
        train_guaranteed(spec, data, first_row, fit, tolerance, options.n_threads, guarantee);
    out.guarantee.result.classifier =
        on_base_features(out.guarantee.result.classifier, scores->full);
    out.postprocess = std::move(answers.at(out.guarantee.kept_fit));
    out.postprocess.classifier = on_base_features(out.postprocess.classifier, scores->full);
    out.base = std::move(scores->full);
    out.base_fitted = true;
    return out;
  }
  GuaranteedPostprocessResult out;
  std::optional<Classifier> score;
  std::vector<PostprocessResult> answers;  // one per call of the fit, to return the kept one
  const GuaranteedFit fit = [&](const ProblemSpec& tight, const Dataset& candidate) {
    if (!score) {  // the first call: the base score from the candidate part alone
      score = fit_base(candidate);
      out.base_fitted = true;
    }
    const std::vector<TrainingData> td = {{"train", &candidate}};
    PostprocessResult p =
        postprocess(RateProblem::build(pairwise_parity(tight), td), *score, options);
    TrainResult r = fit_result(p);
    answers.push_back(std::move(p));
    return r;
  };
  out.guarantee =
      train_guaranteed(spec, data, first_row, fit, tolerance, options.n_threads, guarantee);
  out.postprocess = std::move(answers.at(out.guarantee.kept_fit));
  out.base = std::move(*score);
  return out;
}

GuaranteedPostprocessResult postprocess_guaranteed(const ProblemSpec& spec, const Dataset& data,
                                                   std::size_t first_row, const Classifier* base,
                                                   const LogisticRegressionOptions& base_options,
                                                   const PostprocessOptions& options,
                                                   double tolerance,
                                                   const GuaranteeOptions& guarantee) {
  const BaseScoreFit logistic = [&](const Dataset& candidate) {
    if (base != nullptr) return *base;
    // Summed per file's candidate rows: the same bits for any rank count.
    LogisticRegressionOptions per_part = base_options;
    per_part.row_parts.assign(candidate.row_parts().begin(), candidate.row_parts().end());
    const auto lr = fit_logistic_regression(candidate.features(), candidate.labels().values,
                                            candidate.weights(), per_part);
    return logistic_regression_model(lr.model, base_options, candidate.encoding());
  };
  GuaranteedPostprocessResult out =
      postprocess_guaranteed(spec, data, first_row, logistic, options, tolerance, guarantee);
  out.base_fitted = base == nullptr;
  return out;
}

}  // namespace rateopt
