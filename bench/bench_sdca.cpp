// SDCA (sdca.hpp) and the ramp-loss trainer (ramp.hpp) on LIBSVM a9a (32 561 rows, 123 binary
// features, read densely: 11% non-zero), side by side. Target (issue 5): one full constrained
// solve at kappa = 0.8 costs at most 20x one unconstrained SVM solve by the same SDCA. Target
// (issue 9): several constraints (a two-sided parity, equalized odds) cost at most 3x one.
//
// Run: build with -DRATEOPT_BUILD_BENCHMARKS=ON, then
//   nice -n 10 bench_sdca --benchmark_min_time=0.01
// Times are CPU times of one thread. Problem settings as bench/repro_goh.cpp: lambda = 1/(2n)
// (LIBLINEAR C = 1 on the hinge bound of the error rate), regularised bias, gap 1e-3 relative
// for the unconstrained SVM.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "rateopt/io.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/ramp.hpp"
#include "rateopt/sdca.hpp"

namespace {

const rateopt::Dataset& a9a() {
  static const rateopt::Dataset ds = [] {
    rateopt::LibsvmOptions lo;
    lo.num_features = 123;
    return rateopt::read_libsvm(std::string(RATEOPT_SHARED_DATA_DIR) + "/adult/a9a.gz", lo);
  }();
  return ds;
}

double lambda_of(const rateopt::Dataset& ds) {
  return 1.0 / (2.0 * static_cast<double>(ds.num_rows()));
}

// Unconstrained weighted hinge SVM, weights 1/(2n); arg: shrinking on (1) or off (0).
void BM_SdcaA9a(benchmark::State& state) {
  const rateopt::Dataset& ds = a9a();
  rateopt::WeightedSvmOptions o;
  o.lambda = lambda_of(ds);
  o.gap_rel = 1e-3;
  o.n_threads = 1;
  o.shrinking = state.range(0) != 0;
  const std::vector<double> w(ds.num_rows(), 0.5 / static_cast<double>(ds.num_rows()));
  int epochs = 0;
  for (auto _ : state) {
    const auto fit = rateopt::fit_weighted_svm(ds.features(), ds.labels().values, w, o);
    epochs = fit.epochs;
    benchmark::DoNotOptimize(fit.primal);
  }
  state.counters["epochs"] = epochs;
}
BENCHMARK(BM_SdcaA9a)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// Error rate s.t. sp(male) <= 1.25 sp(female) (kappa = 0.8); arg: MM step budget.
void BM_RampA9aKappa08(benchmark::State& state) {
  const rateopt::Dataset& ds = a9a();
  rateopt::RampProblem p;
  p.objective = rateopt::error_rate("train");
  p.constraints.push_back(rateopt::fairness_ratio_constraint(
      "train", rateopt::Slice::parse("f72=1"), rateopt::Slice::parse("f73=1"), 0.8));
  const rateopt::NamedDataset data[] = {{"train", &ds}};
  rateopt::RampOptions o;
  o.lambda = lambda_of(ds);
  o.max_mm_iterations = static_cast<int>(state.range(0));
  o.mm_tol = 1e-5;
  o.outer_tol = 5e-4;
  o.max_outer_iterations = 20;
  o.n_threads = 1;
  long long solves = 0, epochs = 0;
  std::size_t steps = 0;
  for (auto _ : state) {
    const rateopt::RampResult r = rateopt::fit_ramp(p, data, o);
    solves = r.svm_solves;
    epochs = r.epochs;
    steps = r.history.size();
    benchmark::DoNotOptimize(r.objective);
  }
  state.counters["svm_solves"] = static_cast<double>(solves);
  state.counters["epochs"] = static_cast<double>(epochs);
  state.counters["mm_steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_RampA9aKappa08)->Arg(8)->Arg(50)->Unit(benchmark::kMillisecond)->Iterations(1);

// Error rate s.t. parity constraints between women (f72) and men (f73), default RampOptions but
// one thread; arg: 1 = ppr(men) - ppr(women) <= 0.05 (binds), 2 = the same two-sided,
// 4 = equalized odds: tpr and fpr gaps <= 0.05, two-sided.
void BM_RampA9aSeveralConstraints(benchmark::State& state) {
  const rateopt::Dataset& ds = a9a();
  // ppr(men) - ppr(women), on all rows or on one label (tpr: "1", fpr: "0").
  auto gap = [](const std::string& label) {
    const std::string l = label.empty() ? "" : ",label=" + label;
    return rateopt::positive_rate("train", rateopt::Slice::parse("f73=1" + l)) -
           rateopt::positive_rate("train", rateopt::Slice::parse("f72=1" + l));
  };
  rateopt::RampProblem p;
  p.objective = rateopt::error_rate("train");
  for (const std::string& label :
       state.range(0) == 4 ? std::vector<std::string>{"1", "0"} : std::vector<std::string>{""}) {
    p.constraints.push_back(rateopt::at_most(gap(label), 0.05));
    if (state.range(0) >= 2) p.constraints.push_back(rateopt::at_most(-1.0 * gap(label), 0.05));
  }
  const rateopt::NamedDataset data[] = {{"train", &ds}};
  rateopt::RampOptions o;
  o.n_threads = 1;
  long long solves = 0, epochs = 0;
  double objective = 0;
  for (auto _ : state) {
    const rateopt::RampResult r = rateopt::fit_ramp(p, data, o);
    solves = r.svm_solves;
    epochs = r.epochs;
    objective = r.objective;
    benchmark::DoNotOptimize(r.objective);
  }
  state.counters["svm_solves"] = static_cast<double>(solves);
  state.counters["epochs"] = static_cast<double>(epochs);
  state.counters["ramp_error"] = objective;
}
BENCHMARK(BM_RampA9aSeveralConstraints)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
BENCHMARK_MAIN();
