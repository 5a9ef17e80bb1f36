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

// 0/1 labels of output j of multi-label or multiclass labels (label j present / class j).
std::vector<std::int32_t> one_vs_rest_labels(const Labels& labels, std::size_t j) {
  std::vector<std::int32_t> y(labels.size(), 0);
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (labels.kind == LabelKind::kMulticlass) {
      y[i] = labels.values[i] == static_cast<std::int32_t>(j) ? 1 : 0;
    } else {
      for (std::int32_t l : labels.label_set(i))
        if (l == static_cast<std::int32_t>(j)) y[i] = 1;
    }
  }
  return y;
}

// --one-vs-rest: one logistic regression per label or class; returns the exit code.
int train_one_vs_rest(const Dataset& ds, const std::string& data_path,
                      const LogisticRegressionOptions& options, const nlohmann::json& opts,
                      const std::string& output) {
  const Labels& labels = ds.labels();
  if (labels.kind != LabelKind::kMultilabel && labels.kind != LabelKind::kMulticlass)
    throw InvalidArgument(
        fmt::format("--one-vs-rest needs multi-label or multiclass labels; {} has {} labels",
                    data_path, to_string(labels.kind)));
  const std::size_t L = labels.num_outputs();
  fmt::print(stderr,
             "training {} one-vs-rest logistic regressions on {} ({} rows, {} features, C={})\n", L,
             data_path, ds.num_rows(), ds.num_features(), options.c);
  OneVsRest model;
  model.label_kind = labels.kind;
  model.names = labels.names;
  model.encoding = ds.encoding();
  bool all_converged = true;
  double seconds = 0;
  nlohmann::json reports = nlohmann::json::array();
  for (std::size_t j = 0; j < L; ++j) {
    const std::vector<std::int32_t> y = one_vs_rest_labels(labels, j);
    const auto start = std::chrono::steady_clock::now();
    const auto fit = fit_logistic_regression(ds.features(), y, ds.weights(), options);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds += s;
    all_converged = all_converged && fit.status == Termination::kConverged;
    Classifier c = Classifier::single(fit.model, Link::kLogistic, ds.encoding());
    c.kind = "logistic_regression";
    c.options_json = opts.dump();
    nlohmann::json report{{"status", std::string(to_string(fit.status))},
                          {"iterations", fit.iterations},
                          {"objective", fit.objective},
                          {"seconds", s}};
    c.report_json = report.dump();
    reports.push_back(report);
    fmt::print(stderr, "  [{}/{}] {}: {} after {} iterations ({:.2f} s)\n", j + 1, L,
               labels.names[j], to_string(fit.status), fit.iterations, s);
    model.outputs.push_back(std::move(c));
  }
  model.save(output);
  fmt::print("{}: {} one-vs-rest models in {:.3f} s; model written to {}\n",
             all_converged ? "done" : "warning", L, seconds, output);
  return all_converged ? 0 : kExitRuntime;
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
  bool no_intercept = false, one_vs_rest = false;
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
  app.add_flag("--one-vs-rest", one_vs_rest,
               "Multi-label or multiclass data: one logistic regression per label or class "
               "(predict --mode probability then prints one row of probabilities per example)");
  add_reader_flags(app, reader);
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  options.fit_intercept = !no_intercept;

  const Dataset ds = load_dataset(data_path, reader);
  nlohmann::json opts{{"learner", "logistic_regression"},
                      {"C", options.c},
                      {"tol", options.tol},
                      {"max_iter", options.max_iter},
                      {"fit_intercept", options.fit_intercept}};
  if (one_vs_rest) return train_one_vs_rest(ds, data_path, options, opts, output);
  if (ds.labels().kind != LabelKind::kBinary)
    throw InvalidArgument(fmt::format(
        "train needs binary labels; {} has {} labels{}", data_path, to_string(ds.labels().kind),
        ds.labels().kind == LabelKind::kNone         ? " (name the label column with --label)"
        : ds.labels().kind == LabelKind::kMulticlass ? " (use --one-vs-rest)"
        : ds.labels().kind == LabelKind::kMultilabel ? " (use --one-vs-rest)"
                                                     : ""));
  fmt::print(stderr, "training logistic regression on {} ({} rows, {} features, C={})\n", data_path,
             ds.num_rows(), ds.num_features(), options.c);
  const auto start = std::chrono::steady_clock::now();
  const auto fit =
      fit_logistic_regression(ds.features(), ds.labels().values, ds.weights(), options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  Classifier model = Classifier::single(fit.model, Link::kLogistic, ds.encoding());
  model.kind = "logistic_regression";
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
