// evaluate_spec (train.hpp): a trained classifier's objective and constraint values on named data,
// the figures of train's report, shared by the CLI's solvers and the Python package.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rateopt/expr.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/model.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

SpecValues evaluate_spec(const ProblemSpec& spec, const Classifier& classifier,
                         std::span<const TrainingData> data, PredictMode mode, std::uint64_t seed,
                         int n_threads, const IntervalOptions* intervals) {
  std::vector<Predictions> preds(data.size());
  std::vector<NamedData> named;
  named.reserve(data.size());
  for (std::size_t d = 0; d < data.size(); ++d) {
    // 1 byte a row where the predictions allow (the same values, the same counts): hard
    // predictions, or the few probabilities of a mixture of threshold models.
    const Dataset& ds = *data[d].data;
    Predictions& p = preds[d];
    if (mode != PredictMode::kProbability) {
      p.positive.resize(ds.num_rows());
      classifier.predict_positive(ds, mode, p.positive, seed, n_threads);
    } else {
      std::optional<std::vector<double>> levels;
      if (classifier.group_columns.empty()) {
        p.positive.resize(ds.num_rows());
        levels = classifier.predict_levels(ds.features(), p.positive, n_threads);
      }
      if (levels) {
        p.levels = std::move(*levels);
      } else {
        std::vector<std::uint8_t>().swap(p.positive);
        p.prob_positive.resize(ds.num_rows());
        classifier.predict(ds, mode, p.prob_positive, seed, n_threads);
      }
    }
    named.push_back({data[d].name, data[d].data, &p});
  }
  SpecValues out;
  out.objective = evaluate_text(spec.objective, named);
  out.constraints.reserve(spec.constraints.size());
  for (const std::string& c : spec.constraints) out.constraints.push_back(evaluate_text(c, named));
  if (intervals != nullptr) {
    std::vector<std::string> texts{spec.objective};
    texts.insert(texts.end(), spec.constraints.begin(), spec.constraints.end());
    IntervalOptions o = *intervals;
    o.n_threads = n_threads;
    out.intervals = expression_intervals(texts, named, o);
  }
  return out;
}

}  // namespace rateopt
