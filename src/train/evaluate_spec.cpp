// evaluate_spec (train.hpp): a trained classifier's objective and constraint values on named data,
// the figures of train's report, shared by the CLI's solvers and the Python package.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/model.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

SpecValues evaluate_spec(const ProblemSpec& spec, const Classifier& classifier,
                         std::span<const TrainingData> data, PredictMode mode, std::uint64_t seed,
                         int n_threads, const IntervalOptions* intervals,
                         std::span<const std::vector<double>> stacked_scores) {
  std::size_t rows = 0;
  for (const TrainingData& d : data) rows += d.data->num_rows();
  if (!stacked_scores.empty()) {
    RATEOPT_CHECK(stacked_scores.size() == classifier.components.size(),
                  "stacked_scores has {} entries, the classifier {} components",
                  stacked_scores.size(), classifier.components.size());
    for (std::size_t m = 0; m < stacked_scores.size(); ++m)
      RATEOPT_CHECK(stacked_scores[m].empty() || stacked_scores[m].size() == rows,
                    "stacked_scores[{}] has {} scores for the data's {} rows", m,
                    stacked_scores[m].size(), rows);
  }
  std::vector<Predictions> preds(data.size());
  std::vector<NamedData> named;
  named.reserve(data.size());
  std::size_t first = 0;  // data[d]'s first row among the stacked rows
  for (std::size_t d = 0; d < data.size(); ++d) {
    // 1 byte a row where the predictions allow (the same values, the same counts): hard
    // predictions, or the few probabilities of a mixture of threshold models.
    const Dataset& ds = *data[d].data;
    Predictions& p = preds[d];
    std::optional<KnownScores> known;
    if (!stacked_scores.empty()) {
      known.emplace(KnownScores{&ds.features(), {}});
      for (const std::vector<double>& s : stacked_scores)
        known->scores.push_back(s.empty()
                                    ? std::span<const double>()
                                    : std::span<const double>(s).subspan(first, ds.num_rows()));
    }
    first += ds.num_rows();
    const KnownScores* k = known ? &*known : nullptr;
    if (mode != PredictMode::kProbability) {
      p.positive.resize(ds.num_rows());
      classifier.predict_positive(ds, mode, p.positive, seed, n_threads, k);
    } else {
      std::optional<std::vector<double>> levels;
      if (classifier.group_columns.empty()) {
        p.positive.resize(ds.num_rows());
        levels = classifier.predict_levels(ds.features(), p.positive, n_threads, k);
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
