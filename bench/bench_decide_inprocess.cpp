// The in-process side of bench/bench_decide_cli.py: decides every line of a `rateopt decide`
// input file with the library, timing the decisions only (the lines are read and parsed before the
// clock starts), so that the script can set the whole `rateopt decide` process against it on the
// same instances. A plain program (no Google Benchmark: it times a file the script wrote).
//
//   bench_decide_inprocess --model gfm|independent --input FILE [--metric f1] [--reps 5]
//
// Prints one JSON object: instances, the medians over reps of the wall and CPU (thread CPU clock)
// seconds of one pass, and instances per wall second at the median. One thread (decide_gfm_record /
// decide_independent in a loop), so it compares with `rateopt decide --threads 1`.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/decide_input.hpp"
#include "rateopt/io.hpp"

int main(int argc, char** argv) {
  std::string model = "gfm", input, metric_name = "f1";
  int reps = 5;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string_view key = argv[a];
    if (key == "--model") model = argv[a + 1];
    if (key == "--input") input = argv[a + 1];
    if (key == "--metric") metric_name = argv[a + 1];
    if (key == "--reps") reps = std::atoi(argv[a + 1]);
  }
  if (input.empty() || reps < 1) {
    fmt::print(stderr, "usage: bench_decide_inprocess --model gfm|independent --input FILE\n");
    return 2;
  }
  const rateopt::DecideMetric metric = rateopt::DecideMetric::from_name(metric_name);
  std::vector<rateopt::GfmRecord> records;
  std::vector<std::vector<double>> rows;
  rateopt::LineReader reader(input);
  std::string_view line;
  while (reader.next(line)) {
    if (line.empty()) continue;
    if (model == "gfm") {
      records.push_back(rateopt::parse_gfm_record(line, input, reader.line_number()));
    } else {
      rows.emplace_back();
      (void)rateopt::parse_decide_row(line, input, reader.line_number(), rows.back());
    }
  }
  const std::size_t n = model == "gfm" ? records.size() : rows.size();
  const auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  std::vector<double> seconds, cpu_seconds;
  double checksum = 0;
  for (int r = 0; r < reps; ++r) {
    const double cpu_start = cpu_now();
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < n; ++k) {
      const rateopt::Decision d = model == "gfm" ? rateopt::decide_gfm_record(records[k], metric)
                                                 : rateopt::decide_independent(rows[k], metric);
      checksum += d.expected;
    }
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    cpu_seconds.push_back(cpu_now() - cpu_start);
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(cpu_seconds.begin(), cpu_seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double cpu_median = cpu_seconds[cpu_seconds.size() / 2];
  fmt::print(
      "{{\"instances\": {}, \"median_seconds\": {:.6g}, \"median_cpu_seconds\": {:.6g}, "
      "\"instances_per_second\": {:.6g}, \"checksum\": {:.17g}}}\n",
      n, median, cpu_median, static_cast<double>(n) / median, checksum);
  return 0;
}
