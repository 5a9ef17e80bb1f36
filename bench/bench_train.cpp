// Rate-constrained training vs one unconstrained logistic-regression fit on the bundled Adult
// training data (30 162 rows after dropping missing values, 97 dense features), side by side.
// Targets: a demographic-parity-constrained run costs at most 5x the LR fit (issue 4); with the
// default (cutting-plane) solver at most 3x, and Narasimhan's Algorithm 1 with the weighted
// logistic oracle at most 10x (issue 9). The BM_Solver* cases run each solver on the same
// problem (|ppr[sex=Female] - ppr[sex=Male]| <= 0.01) and report rounds, objective, violation.
//
// Run: build with -DRATEOPT_BUILD_BENCHMARKS=ON, then
//   bench_train --benchmark_filter=Adult --benchmark_min_time=0.01
// One thread unless the argument says otherwise. The bundled data is found through
// $RATEOPT_SOURCE_DIR or this file's location.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "rateopt/io.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/train.hpp"

namespace {

std::string source_dir() {
  if (const char* env = std::getenv("RATEOPT_SOURCE_DIR"); env != nullptr && *env != '\0')
    return env;
  std::string f = __FILE__;
  return f.substr(0, f.rfind("/bench/"));
}

const rateopt::Dataset& adult() {
  static const rateopt::Dataset ds = [] {
    rateopt::ReadOptions ro;
    ro.csv.label_column = "income";
    ro.csv.positive_values = {">50K"};
    ro.csv.group_columns = {"sex", "race"};
    return rateopt::read_dataset(source_dir() + "/data/adult/adult-train.csv.gz", ro);
  }();
  return ds;
}

void BM_LogisticRegressionAdult(benchmark::State& state) {
  const rateopt::Dataset& ds = adult();
  rateopt::LogisticRegressionOptions o;
  o.n_threads = static_cast<int>(state.range(0));
  int iterations = 0;
  for (auto _ : state) {
    const auto fit =
        rateopt::fit_logistic_regression(ds.features(), ds.labels().values, ds.weights(), o);
    iterations = fit.iterations;
    benchmark::DoNotOptimize(fit.objective);
  }
  state.counters["iterations"] = iterations;
}
BENCHMARK(BM_LogisticRegressionAdult)->Arg(1)->Unit(benchmark::kMillisecond);

void train(benchmark::State& state, const std::vector<std::string>& constraints,
           const std::string& objective = "error", bool maximize = false, int stop_window = 0,
           rateopt::TrainSolver solver = rateopt::TrainSolver::kAuto, int iterations = 500) {
  const rateopt::Dataset& ds = adult();
  rateopt::ProblemSpec spec;
  spec.objective = objective;
  spec.maximize = maximize;
  spec.constraints = constraints;
  const rateopt::RateProblem p = rateopt::RateProblem::build(spec, {{"train", &ds}});
  rateopt::TrainOptions o;
  o.n_threads = static_cast<int>(state.range(0));
  o.stop_window = stop_window;
  o.solver = solver;
  o.iterations = iterations;
  double violation = 0, value = 0;
  int rounds = 0;
  for (auto _ : state) {
    // A fresh oracle per run: it keeps a warm start between calls.
    if (solver == rateopt::TrainSolver::kOracle)
      o.oracle = rateopt::weighted_logistic_oracle(1.0, o.n_threads);
    const rateopt::TrainResult r = rateopt::train_rate_constrained(p, o);
    violation = r.stochastic.max_violation();
    value = r.stochastic.objective;
    rounds = r.iterations;
  }
  state.counters["rounds"] = rounds;
  state.counters["objective"] = value;
  state.counters["violation"] = violation;
}

void BM_TrainDemographicParityAdult(benchmark::State& state) {
  train(state,
        {"ppr[sex=Male] - ppr[sex=Female] <= 0.05", "ppr[sex=Female] - ppr[sex=Male] <= 0.05"});
}
BENCHMARK(BM_TrainDemographicParityAdult)->Arg(1)->Unit(benchmark::kMillisecond);

// The same with early stopping (windows of 100 rounds, objective change <= 1e-3).
void BM_TrainDemographicParityAdultEarlyStop(benchmark::State& state) {
  train(state,
        {"ppr[sex=Male] - ppr[sex=Female] <= 0.05", "ppr[sex=Female] - ppr[sex=Male] <= 0.05"},
        "error", false, 100);
}
BENCHMARK(BM_TrainDemographicParityAdultEarlyStop)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_TrainEqualOpportunityAdult(benchmark::State& state) {
  train(state,
        {"tpr[sex=Male] - tpr[sex=Female] <= 0.05", "tpr[sex=Female] - tpr[sex=Male] <= 0.05"});
}
BENCHMARK(BM_TrainEqualOpportunityAdult)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_TrainKldAdult(benchmark::State& state) {
  train(state, {"error <= 0.17"}, "kld[sex=Female] + kld[sex=Male]");
}
BENCHMARK(BM_TrainKldAdult)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_TrainF1Adult(benchmark::State& state) {
  train(state, {}, "f1", true);
}
BENCHMARK(BM_TrainF1Adult)->Arg(1)->Unit(benchmark::kMillisecond);

// One problem, each solver: the default cutting-plane, the proxy-Lagrangian game (500 rounds), and
// Algorithm 1 with the weighted logistic oracle (100 rounds: one warm-started refit each).
const std::vector<std::string> kParity = {"abs(ppr[sex=Female] - ppr[sex=Male]) <= 0.01"};
void BM_SolverCuttingPlaneAdult(benchmark::State& state) {
  train(state, kParity, "error", false, 0, rateopt::TrainSolver::kCuttingPlane);
}
BENCHMARK(BM_SolverCuttingPlaneAdult)->Arg(1)->Unit(benchmark::kMillisecond);
void BM_SolverProxyAdult(benchmark::State& state) {
  train(state, kParity, "error", false, 0, rateopt::TrainSolver::kProxyLagrangian);
}
BENCHMARK(BM_SolverProxyAdult)->Arg(1)->Unit(benchmark::kMillisecond);
void BM_SolverOracleAdult(benchmark::State& state) {
  train(state, kParity, "error", false, 0, rateopt::TrainSolver::kOracle, 100);
}
BENCHMARK(BM_SolverOracleAdult)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
