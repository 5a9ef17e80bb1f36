// The C++ side of bench/bench_python_overhead.py: decide_batch on a 10^5 x 100 batch of
// independent marginals (F1, method auto, one thread), the same inputs as the Python script
// (splitmix64 -> uniform(0, 1), seed 42, row-major), built outside the timed loop.
//
//   build/<dir>/bench/bench_python_overhead --benchmark_repetitions=5
//   PYTHONPATH=build/<dir>/python /usr/bin/python3 bench/bench_python_overhead.py
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "rateopt/decide.hpp"

namespace {

// splitmix64 (Steele, Lea & Flood 2014); uniform = top 53 bits / 2^53.
std::vector<double> uniform_matrix(std::size_t count, std::uint64_t seed) {
  std::vector<double> out(count);
  std::uint64_t state = seed;
  for (auto& v : out) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    v = static_cast<double>(z >> 11) * 0x1.0p-53;
  }
  return out;
}

void BM_DecideBatch(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const std::vector<double> flat = uniform_matrix(n * m, 42);
  std::vector<std::vector<double>> rows(n);
  for (std::size_t i = 0; i < n; ++i)
    rows[i].assign(flat.begin() + static_cast<std::ptrdiff_t>(i * m),
                   flat.begin() + static_cast<std::ptrdiff_t>((i + 1) * m));
  const auto metric = rateopt::DecideMetric::from_name("f1");
  double checksum = 0;
  for (auto _ : state) {
    auto ds = rateopt::decide_batch(rateopt::DecideModel::kIndependent, rows, metric, {}, 1);
    benchmark::DoNotOptimize(ds.data());
    checksum = 0;
    for (const auto& d : ds) checksum += d.expected;
  }
  state.counters["sum_expected"] = checksum;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_DecideBatch)->Args({100000, 100})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
