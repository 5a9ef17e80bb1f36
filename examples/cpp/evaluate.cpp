// examples/cpp/evaluate.cpp: exact rates and metrics on slices (rateopt/metrics.hpp,
// rateopt/expr.hpp; docs/metrics.md, docs/expressions.md).
//
// Fits logistic regression on the bundled Adult training data and evaluates its test predictions:
// the true-positive rate of every race (count_slice + compute_metric on a slice mask), then
// expressions of the rate language (error, F1, the tpr gap between women and men), for hard 0/1
// predictions and for the exact expected rates of the randomised classifier that predicts
// positive with the model's probability.
//
// Run: example_evaluate DATA_DIR (the repository's data/ folder). The test `example_evaluate`
// checks its output against evaluate.output; `rateopt train` then `rateopt eval --metric ...`
// print the same values.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "rateopt/rateopt.hpp"

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
    read.csv.group_columns = {"sex", "race"};
    const rateopt::Dataset train = rateopt::read_dataset(dir + "/adult/adult-train.csv.gz", read);
    read.encoding = &train.encoding();
    const rateopt::Dataset test = rateopt::read_dataset(dir + "/adult/adult-test.csv.gz", read);

    const auto fit = rateopt::fit_logistic_regression(train.features(), train.labels().values);
    const rateopt::Classifier model =
        rateopt::Classifier::single(fit.model, rateopt::Link::kLogistic, train.encoding());
    std::vector<double> hard(test.num_rows()), prob(test.num_rows());
    model.predict(test.features(), rateopt::PredictMode::kDeterministic, hard);  // 0/1
    model.predict(test.features(), rateopt::PredictMode::kProbability, prob);    // P(positive)

    // Low level: a slice mask, the weighted confusion counts of the slice, a metric of them.
    for (const std::string& race : rateopt::column_levels(test, "race")) {
      const auto mask = rateopt::slice_mask(test, {.conditions = {{"race", race}}});
      const rateopt::SliceCounts c = rateopt::count_slice(test, mask, hard);
      std::printf("tpr[race=%s] = %.4f (%.0f of %.0f positives)\n", race.c_str(),
                  rateopt::compute_metric("tpr", c), c.confusion.tp, c.confusion.positives());
    }

    // Expressions over named data: "test" holds the dataset and one model's predictions.
    rateopt::Predictions hard_p, prob_p;
    hard_p.prob_positive = hard;
    prob_p.prob_positive = prob;
    const rateopt::NamedData hard_data[] = {{"test", &test, &hard_p}};
    const rateopt::NamedData prob_data[] = {{"test", &test, &prob_p}};
    for (const char* text :
         {"error", "f1", "tpr[sex=Female]", "tpr[sex=Male]", "tpr[sex=Female] - tpr[sex=Male]"}) {
      const rateopt::Expression e = rateopt::Expression::parse(text);
      std::printf("%s: %.4f (0/1 predictions), %.4f (expected, probability predictions)\n", text,
                  rateopt::evaluate_expression(e, hard_data).value,
                  rateopt::evaluate_expression(e, prob_data).value);
    }
    std::printf("roc_auc: %.4f\n", rateopt::roc_auc(prob, test.labels().values));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
