// examples/cpp/train.cpp: rate-constrained training (rateopt/train.hpp, docs/train.md).
//
// On the bundled Adult data, minimise the error subject to the 80% rule between women and men,
//     ppr[sex=Female] >= 0.8 * ppr[sex=Male]
// (the share of women predicted positive is at least 80% of the share of men), and compare with
// plain logistic regression on the test data. The problem is linear in rates, so `train` runs the
// cutting-plane solver, which also gives an optimality certificate. About half a second.
//
// Run: example_train DATA_DIR (the repository's data/ folder). The test `example_train` checks
// its output against train.output; `rateopt train ... --minimize error --constraint RULE` then
// `rateopt eval --mode probability` print the same values (scripts/demo.sh).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "rateopt/rateopt.hpp"

namespace {

// Prints the test error and the rule of predictions `pred` (probabilities of positive).
void report(const char* label, const rateopt::Dataset& test, std::vector<double> pred,
            const rateopt::Expression& rule) {
  rateopt::Predictions p;
  p.prob_positive = std::move(pred);
  const rateopt::NamedData data[] = {{"test", &test, &p}};
  const double error =
      rateopt::evaluate_expression(rateopt::Expression::parse("error"), data).value;
  const rateopt::ExpressionValue r = rateopt::evaluate_expression(rule, data);
  // r.violation = rhs - lhs for ">=": <= 0 when the rule holds.
  std::printf(
      "%s: test error %.4f, ppr[sex=Female] %.4f vs 0.8 * ppr[sex=Male] %.4f, violation %.4f\n",
      label, error, r.value, r.rhs, r.violation > 0 ? r.violation : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
    return 2;
  }
  try {
    const std::string dir = argv[1];
    rateopt::ReadOptions read;
    read.csv.label_column = "income";
    read.csv.positive_values = {">50K"};
    read.csv.group_columns = {"sex", "race"};  // kept out of the features, used for slicing
    const rateopt::Dataset train = rateopt::read_dataset(dir + "/adult/adult-train.csv.gz", read);
    read.encoding = &train.encoding();  // the test file gets the training encoding
    const rateopt::Dataset test = rateopt::read_dataset(dir + "/adult/adult-test.csv.gz", read);
    std::printf("rows: train %zu, test %zu; features %zu\n", train.num_rows(), test.num_rows(),
                train.num_features());

    const std::string rule_text = "ppr[sex=Female] >= 0.8 * ppr[sex=Male]";
    const rateopt::RateProblem problem = rateopt::RateProblem::build(
        {.objective = "error", .constraints = {rule_text}}, {{"train", &train}});
    const rateopt::TrainResult result = rateopt::train(problem, {});  // default TrainOptions
    std::printf("solver %s, status %s, %zu models in the stochastic classifier\n",
                std::string(rateopt::to_string(result.solver)).c_str(),
                std::string(rateopt::to_string(result.status)).c_str(),
                result.classifier.components.size());
    std::printf("training data: error %.4f, violation of the rule %.4f\n",
                result.stochastic.objective, result.stochastic.max_violation());
    std::printf("certificate: no mixture the oracle can find has training error below %.4f\n",
                result.lower_bound);

    // Test data: exact expected rates of the stochastic classifier (probability mode), and its
    // best single model (deterministic mode), against unconstrained logistic regression.
    const rateopt::Expression rule = rateopt::Expression::parse(rule_text);
    std::vector<double> pred(test.num_rows());
    const auto fit = rateopt::fit_logistic_regression(train.features(), train.labels().values);
    const rateopt::Classifier logreg =
        rateopt::Classifier::single(fit.model, rateopt::Link::kLogistic, train.encoding());
    logreg.predict(test.features(), rateopt::PredictMode::kDeterministic, pred);
    report("logistic regression", test, pred, rule);
    result.classifier.predict(test.features(), rateopt::PredictMode::kProbability, pred);
    report("fair, stochastic", test, pred, rule);
    result.classifier.predict(test.features(), rateopt::PredictMode::kDeterministic, pred);
    report("fair, best single model", test, pred, rule);
    return 0;
  } catch (const std::exception& e) {  // rateopt errors name the file, line and value
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
