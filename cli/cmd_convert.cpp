// rateopt convert: parse a data file once and write it as a binary dataset (io.hpp,
// docs/data-formats.md "Binary dataset cache"), which every command then reads in place of the
// text file without parsing it again.
#include <fmt/format.h>

#include <chrono>

#include "commands.hpp"
#include "common.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "rateopt/model.hpp"

namespace rateopt::cli {
namespace {

// The feature encoding of a saved model (a single model or one-vs-rest).
Encoding model_encoding(const std::string& path) {
  const std::string text = read_text_file(path);
  const std::string format = model_format(text, path);
  if (format == "rateopt.model") return Classifier::from_json(text, path).encoding;
  if (format == "rateopt.one_vs_rest") return OneVsRest::from_json(text, path).encoding;
  throw InvalidArgument(
      fmt::format("--model {} is a {} model; convert takes the encoding of a rateopt.model or "
                  "rateopt.one_vs_rest file",
                  path, format));
}

}  // namespace

int run_convert(int argc, const char* const* argv) {
  CLI::App app{
      "Parse a data file once and save it as a binary dataset that every command reads without\n"
      "parsing (features, labels, weights, slice columns and the feature encoding; the reader\n"
      "flags given here are baked in).\n"
      "Example: rateopt convert --data data/adult/adult-train.csv.gz --label income "
      "--positive '>50K' --groups sex,race -o adult-train.rods\n"
      "         rateopt convert --data 'shards/part-*.csv' ... -o 'bin/{}.rods'   (one encoding, "
      "one output per file; also under mpirun)",
      "rateopt convert"};
  std::string data_path, output, model_path;
  bool quiet = false;
  ReaderFlags reader;
  app.add_option("--data", data_path, "Data file (CSV, LIBSVM, ARFF; .gz accepted)")->required();
  app.add_option("-o,--output", output,
                 "Binary dataset to write (written atomically); with {} in it, one per file of a "
                 "--data pattern ({} is the file's name without folder and extension), all with "
                 "the encoding one reading of every file infers")
      ->required();
  app.add_option("--model", model_path,
                 "Encode the features with this model's encoding (a test file for a trained "
                 "model), as predict does; missing values are then imputed unless --missing "
                 "says otherwise");
  app.add_flag("-q,--quiet", quiet, "No summary on stderr");
  add_reader_flags(app, reader);
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;

  // With a model, rows with missing values are kept and imputed as in training, as predict does
  // (one prediction per input row), unless --missing says otherwise.
  if (!model_path.empty() && app.count("--missing") == 0) reader.missing = "impute";
  const auto start = std::chrono::steady_clock::now();
  Encoding encoding;
  if (!model_path.empty()) encoding = model_encoding(model_path);
  if (output.find("{}") != std::string::npos) {
    // Several files (this rank's share under mpirun), each written with the shared encoding.
    const std::vector<std::string> files = expand_data_pattern(data_path);
    check_distinct_stems(files);
    const auto [first, last] = rank_file_range(files.size(), data_path);
    const std::vector<std::string> mine(files.begin() + static_cast<std::ptrdiff_t>(first),
                                        files.begin() + static_cast<std::ptrdiff_t>(last));
    if (model_path.empty()) encoding = shared_encoding(mine, reader);
    for (const std::string& f : mine) {
      const Dataset ds = load_dataset(f, reader, &encoding);
      const std::string path = per_file_output(output, f);
      write_dataset_binary(ds, path);
      if (!quiet)
        fmt::print(stderr, "{}: {} rows, {} features ({}) -> {}\n", f, ds.num_rows(),
                   ds.num_features(), ds.features().is_sparse() ? "CSR" : "dense", path);
    }
    if (!quiet && process_group().rank() == 0)
      fmt::print(stderr, "{} files converted with one encoding ({:.2f} s)\n", files.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return 0;
  }
  if (is_distributed())
    throw InvalidArgument(
        "over several ranks (mpirun) convert writes one output per file: put {} in --output");
  const Dataset ds = load_dataset(data_path, reader, model_path.empty() ? nullptr : &encoding);
  write_dataset_binary(ds, output);
  if (!quiet)
    fmt::print(
        stderr, "{}: {} rows, {} features ({}), {} labels, {} slice columns -> {} ({:.2f} s)\n",
        data_path, ds.num_rows(), ds.num_features(), ds.features().is_sparse() ? "CSR" : "dense",
        to_string(ds.labels().kind), ds.columns().size(), output,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace rateopt::cli
