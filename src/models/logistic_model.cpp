// The model file of a logistic-regression fit (rateopt/logistic.hpp), shared by the CLI and the
// Python binding.
#include <nlohmann/json.hpp>
#include <utility>

#include "rateopt/logistic.hpp"

namespace rateopt {

Classifier logistic_regression_model(LinearModel model, const LogisticRegressionOptions& options,
                                     Encoding encoding) {
  Classifier c = Classifier::single(std::move(model), Link::kLogistic, std::move(encoding));
  c.kind = "logistic_regression";
  const nlohmann::json opts{{"learner", "logistic_regression"},
                            {"C", options.c},
                            {"tol", options.tol},
                            {"max_iter", options.max_iter},
                            {"fit_intercept", options.fit_intercept}};
  c.options_json = opts.dump();
  return c;
}

}  // namespace rateopt
