// rateopt predict: apply a saved model to a data file (re-applying the model's encoding).
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "commands.hpp"
#include "common.hpp"
#include "multilabel_cli.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "rateopt/model.hpp"

namespace rateopt::cli {
namespace {

// One line per row of `ds`: 0/1, or P(positive | x) in probability mode.
std::string predict_lines(const Classifier& model, const Dataset& ds, PredictMode m,
                          std::uint64_t seed, int threads) {
  std::vector<double> out(ds.num_rows());
  model.predict(ds, m, out, seed, threads);  // the Dataset: group rules read its columns
  std::string text;
  text.reserve(out.size() * (m == PredictMode::kProbability ? 20 : 2));
  for (const double v : out) {
    text += m == PredictMode::kProbability ? fmt::format("{:.17g}", v)
                                           : std::string(v > 0.5 ? "1" : "0");
    text += '\n';
  }
  return text;
}

// The predictions of each data file (this rank's share under mpirun) into `output` with {}
// replaced by the file's stem; each output written atomically by the rank that holds the file.
int predict_per_file(const std::string& model_text, const std::string& model_path,
                     const std::string& pattern, const std::vector<std::string>& files,
                     const ReaderFlags& reader, const std::string& mode, std::uint64_t seed,
                     int threads, const std::string& output) {
  const std::string format = model_format(model_text, model_path);
  if (format != "rateopt.model")
    throw InvalidArgument(fmt::format(
        "--output with {{}} writes one file per data file for binary models (rateopt.model); "
        "{} is a {} model",
        model_path, format));
  check_distinct_stems(files);
  const Classifier model = Classifier::from_json(model_text, model_path);
  const PredictMode m = parse_predict_mode(mode);
  if (process_group().rank() == 0) warn_if_deterministic_infeasible(model, m, model_path);
  const auto [first, last] = rank_file_range(files.size(), pattern);
  for (std::size_t k = first; k < last; ++k) {
    const std::string path = per_file_output(output, files[k]);
    const Dataset ds = load_dataset(files[k], reader, &model.encoding);
    write_text(path, predict_lines(model, ds, m, seed, threads));
  }
  return 0;
}

}  // namespace

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
  app.add_option("--output,-o", output,
                 "Output file, '-' for stdout; with {} in it, one output per data file of a --data "
                 "pattern ({} is the file's name without folder and extension), as under mpirun")
      ->capture_default_str();
  JointPredictFlags joint;
  add_joint_predict_flags(app, joint);
  add_reader_flags(app, reader);
  add_scores_flag(app, reader, "Reading data");
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (reader.missing == "drop")
    throw InvalidArgument(
        "predict writes one line per input row, so --missing drop is not available here; use "
        "--missing impute (the default: numeric values take the training mean, categorical "
        "values no level) or --missing error");

  const std::string model_text = read_text_file(model_path);
  const std::string format = model_format(model_text, model_path);
  // --data may be a pattern: one output per data file ({} in --output; under mpirun each rank
  // writes its files' outputs), or one output for all the rows in order (one process).
  reader.threads = threads;
  const std::vector<std::string> files = expand_data_pattern(data_path);
  const bool per_file = output.find("{}") != std::string::npos;
  if ((files.size() > 1 || is_distributed()) && format != "rateopt.model")
    throw InvalidArgument(fmt::format(
        "--data '{}' names several files or runs over several ranks: predict takes them with a "
        "binary model (rateopt.model); {} is a {} model",
        data_path, model_path, format));
  if (is_distributed() && !per_file)
    throw InvalidArgument(
        "over several ranks each rank writes the predictions of its own files: give --output "
        "with {} for the data file's name, e.g. --output 'preds/{}.txt'");
  if (per_file)
    return predict_per_file(model_text, model_path, data_path, files, reader, mode, seed, threads,
                            output);
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
    keep_slice_columns(reader, {}, model.group_columns);
    const Dataset ds = load_data_shard(data_path, reader, &model.encoding).data;
    text = predict_lines(model, ds, m, seed, threads);
  }
  write_text(output, text);
  return 0;
}

}  // namespace rateopt::cli
