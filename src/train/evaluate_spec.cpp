// evaluate_spec (train.hpp): a trained classifier's objective and constraint values on named data,
// the figures of train's report, shared by the CLI's solvers and the Python package.
#include <cstdint>
#include <span>
#include <vector>

#include "rateopt/expr.hpp"
#include "rateopt/model.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

SpecValues evaluate_spec(const ProblemSpec& spec, const Classifier& classifier,
                         std::span<const TrainingData> data, PredictMode mode, std::uint64_t seed,
                         int n_threads) {
  std::vector<Predictions> preds(data.size());
  std::vector<NamedData> named;
  named.reserve(data.size());
  for (std::size_t d = 0; d < data.size(); ++d) {
    preds[d].prob_positive.resize(data[d].data->num_rows());
    classifier.predict(*data[d].data, mode, preds[d].prob_positive, seed, n_threads);
    named.push_back({data[d].name, data[d].data, &preds[d]});
  }
  SpecValues out;
  out.objective = evaluate_text(spec.objective, named);
  out.constraints.reserve(spec.constraints.size());
  for (const std::string& c : spec.constraints) out.constraints.push_back(evaluate_text(c, named));
  return out;
}

}  // namespace rateopt
