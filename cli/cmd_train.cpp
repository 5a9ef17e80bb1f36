// rateopt train: fit a model on a data file and save it as versioned JSON.
// Today the learner is L2-regularised logistic regression (the baseline of the train issue).
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "rateopt/error.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/model.hpp"

namespace rateopt::cli {
namespace {

double accuracy_of(const Classifier& model, const Dataset& ds, int threads) {
  std::vector<double> pred(ds.num_rows());
  model.predict(ds.features(), PredictMode::kDeterministic, pred, 0, threads);
  return compute_metric("accuracy", count_slice(ds, {}, pred));
}

}  // namespace

int run_train(int argc, const char* const* argv) {
  CLI::App app{
      "Fit L2-regularised logistic regression and save the model as JSON.\n"
      "Example: rateopt train --data data/adult/adult-train.csv.gz --label income "
      "--positive '>50K' --groups sex,race --output adult.json",
      "rateopt train"};
  std::string data_path, validation_path, output;
  LogisticRegressionOptions options;
  bool no_intercept = false;
  ReaderFlags reader;
  app.add_option("--data", data_path, "Training data (CSV, LIBSVM, ARFF; .gz accepted)")
      ->required();
  app.add_option("--validation", validation_path,
                 "Optional validation file, read with the training encoding");
  app.add_option("--output,-o", output, "Where to write the model JSON")->required();
  app.add_option("--C", options.c, "Inverse regularisation strength (> 0)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--tol", options.tol, "Relative gradient tolerance (> 0)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-iter", options.max_iter, "L-BFGS iteration limit")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", options.n_threads, "Threads (0 = all cores)")->capture_default_str();
  app.add_flag("--no-intercept", no_intercept, "Fit without an intercept");
  add_reader_flags(app, reader);
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  options.fit_intercept = !no_intercept;

  const Dataset ds = load_dataset(data_path, reader);
  if (ds.labels().kind != LabelKind::kBinary)
    throw InvalidArgument(fmt::format(
        "train needs binary labels; {} has {} labels{}", data_path, to_string(ds.labels().kind),
        ds.labels().kind == LabelKind::kNone ? " (name the label column with --label)" : ""));
  fmt::print(stderr, "training logistic regression on {} ({} rows, {} features, C={})\n", data_path,
             ds.num_rows(), ds.num_features(), options.c);
  const auto start = std::chrono::steady_clock::now();
  const auto fit =
      fit_logistic_regression(ds.features(), ds.labels().values, ds.weights(), options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  Classifier model = Classifier::single(fit.model, Link::kLogistic, ds.encoding());
  model.kind = "logistic_regression";
  nlohmann::json opts{{"learner", "logistic_regression"},
                      {"C", options.c},
                      {"tol", options.tol},
                      {"max_iter", options.max_iter},
                      {"fit_intercept", options.fit_intercept}};
  model.options_json = opts.dump();
  nlohmann::json report{{"status", std::string(to_string(fit.status))},
                        {"iterations", fit.iterations},
                        {"objective", fit.objective},
                        {"gradient_norm", fit.gradient_norm},
                        {"seconds", seconds},
                        {"train_rows", ds.num_rows()},
                        {"train_accuracy", accuracy_of(model, ds, options.n_threads)}};
  if (!validation_path.empty()) {
    const Dataset valid = load_dataset(validation_path, reader, &ds.encoding());
    if (valid.labels().kind == LabelKind::kBinary)
      report["validation_accuracy"] = accuracy_of(model, valid, options.n_threads);
  }
  model.report_json = report.dump();
  model.save(output);

  fmt::print("{}: {} after {} iterations in {:.3f} s; objective {:.6g}; train accuracy {:.4f}",
             fit.status == Termination::kConverged ? "done" : "warning", to_string(fit.status),
             fit.iterations, seconds, fit.objective, report["train_accuracy"].get<double>());
  if (report.contains("validation_accuracy"))
    fmt::print("; validation accuracy {:.4f}", report["validation_accuracy"].get<double>());
  fmt::print("\nmodel written to {}\n", output);
  return fit.status == Termination::kConverged ? 0 : kExitRuntime;
}

}  // namespace rateopt::cli
