// GFM (decide_gfm) throughput, single thread: instances per second for m labels.
//
//   BM_GfmSupport/m/c    P from 4000 sampled label vectors whose cardinalities are spread over
//                        1..c (c columns of P live, all m rows live): the realistic case.
//   BM_GfmDense/m        every entry of P non-zero (c = m): the worst case, O(m^3).
//   BM_GfmSamples/m/l    decide_gfm_samples from l weighted neighbours (kNN-style), label sets
//                        of 1..8 labels out of m; BM_GfmSamplesViaMatrix: gfm_from_samples +
//                        decide_gfm on the same inputs.
//
// Inputs come from fixed seeds and are built outside the timed loop; each iteration runs one
// instance, cycling over 16 different instances; "instances/s" is per CPU second of the one
// thread.
//
//   cmake -S . -B build -G Ninja -DRATEOPT_BUILD_BENCHMARKS=ON && cmake --build build --target
//   bench_gfm build/bench/bench_gfm --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "rateopt/decide.hpp"

namespace {

constexpr std::size_t kPool = 16;

struct SampleSet {
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<double> weights;
  std::size_t m = 0;
  [[nodiscard]] rateopt::LabelSetsView view() const {
    return rateopt::LabelSetsView{indptr, indices, m};
  }
};

// n label vectors over m labels: cardinality uniform in [lo, hi], labels drawn with a skewed
// (Zipf-like) popularity so that P has realistic, unequal rows.
SampleSet sample_sets(std::mt19937_64& rng, std::size_t m, std::size_t n, std::size_t lo,
                      std::size_t hi, bool weighted) {
  SampleSet out;
  out.m = m;
  std::vector<double> popularity(m);
  for (std::size_t i = 0; i < m; ++i) popularity[i] = 1.0 / static_cast<double>(1 + (i * 7) % m);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<std::int32_t> labels;
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t s = lo + rng() % (hi - lo + 1);
    // Weighted sampling without replacement by exponential keys.
    std::vector<std::pair<double, std::int32_t>> keys(m);
    for (std::size_t i = 0; i < m; ++i)
      keys[i] = {-std::log(unit(rng) + 1e-300) / popularity[i], static_cast<std::int32_t>(i)};
    std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(s), keys.end());
    labels.clear();
    for (std::size_t t = 0; t < s; ++t) labels.push_back(keys[t].second);
    std::sort(labels.begin(), labels.end());
    out.indices.insert(out.indices.end(), labels.begin(), labels.end());
    out.indptr.push_back(static_cast<std::int64_t>(out.indices.size()));
    if (weighted) out.weights.push_back(0.5 + unit(rng));
  }
  return out;
}

void report(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["instances/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void run_pool(benchmark::State& state, const std::vector<rateopt::GfmInput>& pool) {
  const auto metric = rateopt::DecideMetric::from_name("f1");
  std::size_t t = 0;
  for (auto _ : state) {
    rateopt::Decision d = rateopt::decide_gfm(pool[t], metric);
    benchmark::DoNotOptimize(d);
    t = (t + 1) % pool.size();
  }
  report(state);
}

void BM_GfmSupport(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  const auto c = static_cast<std::size_t>(state.range(1));
  std::mt19937_64 rng(42);
  std::vector<rateopt::GfmInput> pool;
  for (std::size_t u = 0; u < kPool; ++u) {
    const SampleSet s = sample_sets(rng, m, 4000, 1, c, false);
    pool.push_back(rateopt::gfm_from_samples(s.view(), {}, m));
  }
  run_pool(state, pool);
}

void BM_GfmDense(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<rateopt::GfmInput> pool;
  for (std::size_t u = 0; u < kPool; ++u) {
    rateopt::GfmInput in;
    in.m = m;
    in.p.resize(m * m);
    for (auto& x : in.p) x = unit(rng) / static_cast<double>(m);
    in.p_zero = 0.1;
    pool.push_back(std::move(in));
  }
  run_pool(state, pool);
}

// From l weighted samples (kNN-style): the direct path, and via the m x m matrix.
template <bool kDirect>
void gfm_samples(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  const auto l = static_cast<std::size_t>(state.range(1));
  std::mt19937_64 rng(99);
  std::vector<SampleSet> pool;
  for (std::size_t u = 0; u < kPool; ++u) pool.push_back(sample_sets(rng, m, l, 1, 8, true));
  const auto metric = rateopt::DecideMetric::from_name("f1");
  std::size_t t = 0;
  for (auto _ : state) {
    if constexpr (kDirect) {
      rateopt::Decision d = rateopt::decide_gfm_samples(pool[t].view(), pool[t].weights, m, metric);
      benchmark::DoNotOptimize(d);
    } else {
      const rateopt::GfmInput in = rateopt::gfm_from_samples(pool[t].view(), pool[t].weights, m);
      rateopt::Decision d = rateopt::decide_gfm(in, metric);
      benchmark::DoNotOptimize(d);
    }
    t = (t + 1) % pool.size();
  }
  report(state);
}
void BM_GfmSamples(benchmark::State& state) {
  gfm_samples<true>(state);
}
void BM_GfmSamplesViaMatrix(benchmark::State& state) {
  gfm_samples<false>(state);
}

BENCHMARK(BM_GfmSupport)->Args({100, 5})->Args({100, 10})->Args({100, 20})->Args({200, 20});
BENCHMARK(BM_GfmDense)->Arg(20)->Arg(50)->Arg(100)->Arg(200);
BENCHMARK(BM_GfmSamples)->Args({100, 10})->Args({100, 50})->Args({100, 100})->Args({1000, 50});
BENCHMARK(BM_GfmSamplesViaMatrix)->Args({100, 50})->Args({1000, 50});

}  // namespace

BENCHMARK_MAIN();
