// decide_independent: time per instance for n = 10 .. 10^6 per method, single thread, and the
// fast path's measured error against the O(n^2) method (docs/decide.md).
//
// Inputs are uniform(0, 1) probabilities from a fixed seed, generated outside the timed loop.
// Counters: "E" (the chosen expectation), "bound" (Decision::error_bound), and for
// BM_FastError "max_err" = max_k |E_fast[k] - E_quadratic[k]|.
//
//   build-release/bench/bench_decide --benchmark_filter='BM_Fast/'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rateopt/decide.hpp"

namespace {

using rateopt::DecideMethod;
using rateopt::DecideMetric;
using rateopt::DecideOptions;

const char* const kMetrics[] = {"f1", "jaccard", "balanced_accuracy", "gmean", "hmean", "fbeta:2"};

const std::vector<double>& instance(std::size_t n) {
  static std::vector<std::vector<double>> cache;
  for (const auto& v : cache)
    if (v.size() == n) return v;
  std::mt19937_64 rng(20240611 + n);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> p(n);
  for (auto& v : p) v = unit(rng);
  cache.push_back(std::move(p));
  return cache.back();
}

void run(benchmark::State& state, DecideMethod method, double truncation = 0) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const DecideMetric metric = DecideMetric::from_name(kMetrics[state.range(1)]);
  const std::vector<double>& p = instance(n);
  DecideOptions options;
  options.method = method;
  options.truncation = truncation;
  rateopt::Decision d;
  for (auto _ : state) {
    d = rateopt::decide_independent(p, metric, options);
    benchmark::DoNotOptimize(d.expected);
  }
  state.SetLabel(std::string(metric.name()) + " ran " + std::string(rateopt::to_string(d.method)));
  state.counters["n"] = double(n);
  state.counters["E"] = d.expected;
  state.counters["bound"] = d.error_bound;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_Brute(benchmark::State& state) {
  run(state, DecideMethod::kBrute);
}
void BM_Exact(benchmark::State& state) {
  run(state, DecideMethod::kExact);
}
void BM_ExactTruncated(benchmark::State& state) {
  run(state, DecideMethod::kExact, 1e-15);
}
void BM_Quadratic(benchmark::State& state) {
  run(state, DecideMethod::kQuadratic);
}
void BM_Fast(benchmark::State& state) {
  run(state, DecideMethod::kFast);
}
void BM_Auto(benchmark::State& state) {
  run(state, DecideMethod::kAuto);
}

// max_k |E_fast[k] - E_quadratic[k]| (not timed beyond the fast call).
void BM_FastError(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const DecideMetric metric = DecideMetric::from_name(kMetrics[state.range(1)]);
  const std::vector<double>& p = instance(n);
  DecideOptions options;
  options.all_k = true;
  options.method = DecideMethod::kQuadratic;
  const auto reference = rateopt::decide_independent(p, metric, options);
  options.method = DecideMethod::kFast;
  rateopt::Decision fast;
  for (auto _ : state) {
    fast = rateopt::decide_independent(p, metric, options);
    benchmark::DoNotOptimize(fast.expected);
  }
  double worst = 0;
  for (std::size_t k = 0; k <= n; ++k)
    worst = std::max(worst, std::abs(fast.expected_by_k[k] - reference.expected_by_k[k]));
  state.SetLabel(std::string(metric.name()));
  state.counters["max_err"] = worst;
  state.counters["bound"] = fast.error_bound;
  state.counters["same_k"] = fast.selected.size() == reference.selected.size() ? 1 : 0;
}

// Arguments: {n, metric index}.
void sizes(benchmark::internal::Benchmark* b, std::int64_t max_n,
           std::initializer_list<int> metrics) {
  for (const int m : metrics)
    for (std::int64_t n = 10; n <= max_n; n *= 10) b->Args({n, m});
  b->Unit(benchmark::kMillisecond);
}

void exact_sizes(benchmark::internal::Benchmark* b) {
  sizes(b, 1000, {0, 3, 4});
  b->Args({3000, 3})->Args({10000, 3});
}
void auto_sizes(benchmark::internal::Benchmark* b) {
  sizes(b, 1000000, {0});
  sizes(b, 10000, {3});
}

BENCHMARK(BM_Brute)->Args({8, 0})->Args({12, 0})->Args({16, 0})->Args({12, 3})->Unit(
    benchmark::kMillisecond);
BENCHMARK(BM_Exact)->Apply(exact_sizes);
BENCHMARK(BM_ExactTruncated)->Apply([](auto* b) { sizes(b, 10000, {3, 4}); });
BENCHMARK(BM_Quadratic)->Apply([](auto* b) { sizes(b, 100000, {0, 1, 2, 5}); });
BENCHMARK(BM_Fast)->Apply([](auto* b) { sizes(b, 1000000, {0, 1, 2, 5}); });
BENCHMARK(BM_Auto)->Apply(auto_sizes);
BENCHMARK(BM_FastError)->Apply([](auto* b) { sizes(b, 10000, {0, 1, 2, 5}); });

}  // namespace

BENCHMARK_MAIN();
