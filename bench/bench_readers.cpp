// The C++ side of bench/bench_readers.py: reads one data file with the library's reader `reps`
// times and prints the CPU seconds of each read (the file is read from disk each time, as
// pandas.read_csv does in the script). A plain program (no Google Benchmark): the script runs it
// next to pandas on the same files in the same run.
//
//   bench_readers --format csv|libsvm|arff --input FILE [--reps 5]
//                 [--no-header --names a,b,c] [--label COL] [--positive VALUE] [--num-labels N]
//                 [--features-only] [--threads N]
//
// --threads N (CSV): CsvOptions::n_threads, the per-column work on N threads (default 1); the
// wall seconds of each read are printed too.
//
// --features-only (CSV): no column kept for slicing (ReadOptions::keep_columns empty), as
// `rateopt train` and `predict` read a file whose expressions name no column; without it every
// column is also built as a slice column with its distinct values (the library's default).
//
// Prints one JSON object: bytes of the file, rows read, and the CPU seconds (process CPU clock:
// the readers are single-threaded) of every rep and their median.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/io.hpp"

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    out.emplace_back(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string format = "csv", input;
  int reps = 5;
  bool features_only = false;
  rateopt::CsvOptions csv;
  rateopt::ArffOptions arff;
  rateopt::LibsvmOptions libsvm;
  for (int a = 1; a < argc; ++a) {
    const std::string_view key = argv[a];
    const bool has_value = a + 1 < argc;
    if (key == "--features-only") {
      features_only = true;
    } else if (key == "--threads" && has_value) {
      csv.n_threads = std::atoi(argv[++a]);
    } else if (key == "--no-header") {
      csv.has_header = false;
    } else if (key == "--format" && has_value) {
      format = argv[++a];
    } else if (key == "--input" && has_value) {
      input = argv[++a];
    } else if (key == "--reps" && has_value) {
      reps = std::max(1, std::atoi(argv[++a]));
    } else if (key == "--names" && has_value) {
      csv.column_names = split_commas(argv[++a]);
    } else if (key == "--label" && has_value) {
      csv.label_column = argv[++a];
    } else if (key == "--positive" && has_value) {
      csv.positive_values = {argv[++a]};
    } else if (key == "--num-labels" && has_value) {
      arff.num_labels = static_cast<std::size_t>(std::atol(argv[++a]));
    } else {
      fmt::print(stderr, "bench_readers: unknown or incomplete argument '{}'\n", key);
      return 2;
    }
  }
  if (input.empty()) {
    fmt::print(stderr, "bench_readers: --input FILE is required\n");
    return 2;
  }
  std::vector<double> seconds;
  std::vector<double> walls;
  std::size_t rows = 0;
  for (int r = 0; r < reps; ++r) {
    const auto w0 = std::chrono::steady_clock::now();
    const double t0 = cpu_seconds();
    rateopt::ReadOptions only;
    only.format = rateopt::FileFormat::kCsv;
    only.csv = csv;
    only.keep_columns = std::vector<std::string>{};
    rateopt::Dataset ds = format == "csv" && features_only ? rateopt::read_dataset(input, only)
                          : format == "csv"                ? rateopt::read_csv(input, csv)
                          : format == "libsvm"             ? rateopt::read_libsvm(input, libsvm)
                                                           : rateopt::read_arff(input, arff);
    seconds.push_back(cpu_seconds() - t0);
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    rows = ds.num_rows();
  }
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 == 1
                            ? sorted[sorted.size() / 2]
                            : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  fmt::print(
      "{{\"bytes\": {}, \"rows\": {}, \"cpu_s\": [{}], \"median_cpu_s\": {:.6f}, "
      "\"wall_s\": [{}]}}\n",
      std::filesystem::file_size(input), rows, fmt::join(seconds, ", "), median,
      fmt::join(walls, ", "));
  return 0;
}
