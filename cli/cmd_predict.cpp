// rateopt predict: apply a saved model to a data file (re-applying the model's encoding).
#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "multilabel_cli.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "rateopt/model.hpp"

namespace rateopt::cli {

int run_predict(int argc, const char* const* argv) {
  CLI::App app{
      "Apply a saved model to a data file; one prediction per line.\n"
      "Example: rateopt predict --model adult.json --data test.csv --label income "
      "--positive '>50K' --mode probability --output p.txt",
      "rateopt predict"};
  std::string model_path, data_path, output = "-", mode = "deterministic";
  std::uint64_t seed = 0;
  int threads = 0;
  ReaderFlags reader;
  reader.missing = "impute";  // one prediction per input row: never drop a row
  app.add_option("--model", model_path, "Model JSON written by rateopt train")->required();
  app.add_option("--data", data_path, "Data file (CSV, LIBSVM, ARFF; .gz accepted)")->required();
  app.add_option("--mode", mode,
                 "deterministic (0/1 of the best model), stochastic (seeded 0/1 draws) or "
                 "probability (P(positive | x)); for the joint multi-label models (train "
                 "--multilabel-model pcc / efp) also joint (JSON Lines for decide --model gfm: "
                 "pcc samples, or P with --exact; efp P) and mode (pcc: the joint mode)")
      ->capture_default_str()
      ->check(CLI::IsMember({"deterministic", "stochastic", "probability", "joint", "mode"}));
  app.add_option("--seed", seed, "Seed of --mode stochastic")->capture_default_str();
  app.add_option("--threads", threads, "Threads (0 = all cores)")->capture_default_str();
  app.add_option("--output,-o", output, "Output file, '-' for stdout")->capture_default_str();
  JointPredictFlags joint;
  add_joint_predict_flags(app, joint);
  add_reader_flags(app, reader);
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (reader.missing == "drop")
    throw InvalidArgument(
        "predict writes one line per input row, so --missing drop is not available here; use "
        "--missing impute (the default: numeric values take the training mean, categorical "
        "values no level) or --missing error");

  const std::string model_text = read_text_file(model_path);
  const std::string format = model_format(model_text, model_path);
  if (is_joint_model_format(format)) {
    predict_joint_model_cli(model_text, model_path, format, data_path, reader, mode, joint, seed,
                            threads, output);
    return 0;
  }
  if (mode == "joint" || mode == "mode")
    throw InvalidArgument(fmt::format(
        "--mode {} needs a joint multi-label model (train --multilabel-model pcc or efp); {} is a "
        "{} model{}",
        mode, model_path, format,
        format == "rateopt.one_vs_rest"
            ? " (for BR / LFP: --mode probability, then decide --model independent)"
            : ""));
  const PredictMode m = parse_predict_mode(mode);
  const auto format_value = [m](double v) {
    if (m == PredictMode::kProbability) return fmt::format("{:.17g}", v);
    return std::string(v > 0.5 ? "1" : "0");
  };
  std::string text;
  if (format == "rateopt.one_vs_rest") {
    // One line per example. probability: the L probabilities separated by spaces (the input
    // of rateopt decide); otherwise the 0-based indices of the predicted labels (the --pred
    // format of rateopt eval, an empty line for the empty set).
    const OneVsRest model = OneVsRest::from_json(model_text, model_path);
    const Dataset ds = load_dataset(data_path, reader, &model.encoding);
    const std::size_t n_out = model.num_outputs();
    std::vector<double> out(ds.num_rows() * n_out);
    model.predict(ds.features(), m, out, seed, threads);
    text.reserve(out.size() * (m == PredictMode::kProbability ? 20 : 3));
    for (std::size_t i = 0; i < ds.num_rows(); ++i) {
      bool first = true;
      for (std::size_t j = 0; j < n_out; ++j) {
        const double v = out[i * n_out + j];
        if (m != PredictMode::kProbability && v < 0.5) continue;
        if (!first) text += ' ';
        text += m == PredictMode::kProbability ? format_value(v) : std::to_string(j);
        first = false;
      }
      text += '\n';
    }
  } else {
    const Classifier model = Classifier::from_json(model_text, model_path);
    warn_if_deterministic_infeasible(model, m, model_path);
    const Dataset ds = load_dataset(data_path, reader, &model.encoding);
    std::vector<double> out(ds.num_rows());
    model.predict(ds, m, out, seed, threads);  // the Dataset: group rules read its columns
    text.reserve(out.size() * (m == PredictMode::kProbability ? 20 : 2));
    for (double v : out) {
      text += format_value(v);
      text += '\n';
    }
  }
  write_text(output, text);
  return 0;
}

}  // namespace rateopt::cli
