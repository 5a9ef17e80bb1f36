// rateopt predict: apply a saved model to a data file (re-applying the model's encoding).
#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
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
  app.add_option("--model", model_path, "Model JSON written by rateopt train")->required();
  app.add_option("--data", data_path, "Data file (CSV, LIBSVM, ARFF; .gz accepted)")->required();
  app.add_option("--mode", mode,
                 "deterministic (0/1 of the best model), stochastic (seeded 0/1 draws) or "
                 "probability (P(positive | x))")
      ->capture_default_str()
      ->check(CLI::IsMember({"deterministic", "stochastic", "probability"}));
  app.add_option("--seed", seed, "Seed of --mode stochastic")->capture_default_str();
  app.add_option("--threads", threads, "Threads (0 = all cores)")->capture_default_str();
  app.add_option("--output,-o", output, "Output file, '-' for stdout")->capture_default_str();
  add_reader_flags(app, reader);
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;

  const Classifier model = Classifier::load(model_path);
  const Dataset ds = load_dataset(data_path, reader, &model.encoding);
  const PredictMode m = parse_predict_mode(mode);
  std::vector<double> out(ds.num_rows());
  model.predict(ds.features(), m, out, seed, threads);
  std::string text;
  text.reserve(out.size() * (m == PredictMode::kProbability ? 20 : 2));
  for (double v : out) {
    if (m == PredictMode::kProbability)
      text += fmt::format("{:.17g}\n", v);
    else
      text += v > 0.5 ? "1\n" : "0\n";
  }
  write_text(output, text);
  return 0;
}

}  // namespace rateopt::cli
