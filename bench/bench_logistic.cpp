// Benchmarks of L2-regularised logistic regression (src/learners/logistic.cpp).
//
//   BM_LogisticFitA9a/<threads>/<solver>  fit on LIBSVM a9a (C = 1, default tol; solver 0 =
//                                      Newton, 1 = L-BFGS), reports the test accuracy on a9a.t,
//                                      iterations, CG steps and objective as counters
//   BM_LogisticObjectiveA9a/<threads>  one objective + gradient evaluation on a9a
//   BM_LogisticHessianProductA9a/<threads>  one Hessian-vector product on a9a
//   BM_LogisticFitDense/<n>/<d>        fit on a synthetic dense problem from a fixed seed
//
// One thread unless the argument says otherwise. a9a is read from $RATEOPT_DATA_DIR/adult or
// RATEOPT_SHARED_DATA_DIR/adult; the a9a benchmarks are skipped with an error when it is absent.
// bench/compare_logistic_sklearn.py times fits next to scikit-learn with bench_logistic_fit.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "learners/logistic_objective.hpp"  // private header (src/): the objective alone
#include "rateopt/io.hpp"
#include "rateopt/logistic.hpp"

namespace {

struct A9a {
  rateopt::Dataset train;
  rateopt::Dataset test;
};

std::string data_dir() {
  if (const char* env = std::getenv("RATEOPT_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return RATEOPT_SHARED_DATA_DIR;
}

// Read once, outside any timed region; nullptr when the files are absent.
const A9a* a9a() {
  static const std::unique_ptr<A9a> data = []() -> std::unique_ptr<A9a> {
    const std::string dir = data_dir() + "/adult/";
    if (!std::filesystem::exists(dir + "a9a.gz") || !std::filesystem::exists(dir + "a9a.t"))
      return nullptr;
    rateopt::LibsvmOptions o;
    o.num_features = 123;
    auto d = std::make_unique<A9a>();
    d->train = rateopt::read_libsvm(dir + "a9a.gz", o);
    d->test = rateopt::read_libsvm(dir + "a9a.t", o);
    return d;
  }();
  return data.get();
}

double accuracy(const rateopt::LinearModel& model, const rateopt::Dataset& ds) {
  std::vector<double> scores(ds.num_rows());
  model.scores(ds.features(), scores, 1);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < scores.size(); ++i)
    correct += static_cast<std::size_t>((scores[i] > 0) == (ds.labels().values[i] == 1));
  return static_cast<double>(correct) / static_cast<double>(scores.size());
}

void BM_LogisticFitA9a(benchmark::State& state) {
  const A9a* data = a9a();
  if (data == nullptr) {
    state.SkipWithError("a9a not found (set RATEOPT_DATA_DIR)");
    return;
  }
  rateopt::LogisticRegressionOptions o;
  o.c = 1.0;
  o.n_threads = static_cast<int>(state.range(0));
  o.solver =
      state.range(1) == 0 ? rateopt::LogisticSolver::kNewton : rateopt::LogisticSolver::kLbfgs;
  rateopt::LogisticRegressionResult fit;
  for (auto _ : state) {
    fit = rateopt::fit_logistic_regression(data->train.features(), data->train.labels().values,
                                           data->train.weights(), o);
    benchmark::DoNotOptimize(fit.model.weights.data());
    benchmark::ClobberMemory();
  }
  state.counters["iterations"] = fit.iterations;
  state.counters["cg_steps"] = fit.inner_iterations;
  state.counters["objective"] = fit.objective;
  state.counters["converged"] = fit.status == rateopt::Termination::kConverged ? 1 : 0;
  state.counters["test_accuracy"] = accuracy(fit.model, data->test);
  state.counters["nnz"] = static_cast<double>(data->train.features().nnz());
}
BENCHMARK(BM_LogisticFitA9a)
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond);

void BM_LogisticObjectiveA9a(benchmark::State& state) {
  const A9a* data = a9a();
  if (data == nullptr) {
    state.SkipWithError("a9a not found (set RATEOPT_DATA_DIR)");
    return;
  }
  const auto& x = data->train.features();
  const rateopt::detail::LogisticObjective f(x, data->train.labels().values, data->train.weights(),
                                             1.0, true, static_cast<int>(state.range(0)));
  std::vector<double> theta(f.dim(), 0.01);
  std::vector<double> grad(f.dim());
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.value_and_gradient(theta, grad));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.nnz()));
  state.counters["nnz"] = static_cast<double>(x.nnz());
}
BENCHMARK(BM_LogisticObjectiveA9a)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

void BM_LogisticHessianProductA9a(benchmark::State& state) {
  const A9a* data = a9a();
  if (data == nullptr) {
    state.SkipWithError("a9a not found (set RATEOPT_DATA_DIR)");
    return;
  }
  const auto& x = data->train.features();
  const rateopt::detail::LogisticObjective f(x, data->train.labels().values, data->train.weights(),
                                             1.0, true, static_cast<int>(state.range(0)));
  std::vector<double> theta(f.dim(), 0.01);
  std::vector<double> grad(f.dim());
  std::vector<double> curvature(x.rows());
  f.evaluate(theta, {}, grad, curvature);
  std::vector<double> hv(f.dim());
  for (auto _ : state) {
    f.hessian_product(curvature, grad, hv);
    benchmark::DoNotOptimize(hv.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.nnz()));
}
BENCHMARK(BM_LogisticHessianProductA9a)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// Synthetic dense problem: features uniform in [-1, 1], labels from a logistic model with a
// fixed random weight vector; the same data for a given (n, d) on every run.
void BM_LogisticFitDense(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  std::mt19937_64 rng(20240601);
  auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  std::vector<double> truth(d);
  for (double& t : truth) t = (2 * uniform() - 1) * 3 / std::sqrt(static_cast<double>(d));
  std::vector<double> data(n * d);
  std::vector<std::int32_t> labels(n);
  for (std::size_t i = 0; i < n; ++i) {
    double z = 0;
    for (std::size_t j = 0; j < d; ++j) {
      data[i * d + j] = 2 * uniform() - 1;
      z += truth[j] * data[i * d + j];
    }
    labels[i] = uniform() < 1 / (1 + std::exp(-z)) ? 1 : 0;
  }
  const auto x = rateopt::FeatureMatrix::dense(std::move(data), n, d);
  rateopt::LogisticRegressionOptions o;
  o.n_threads = 1;
  rateopt::LogisticRegressionResult fit;
  for (auto _ : state) {
    fit = rateopt::fit_logistic_regression(x, labels, {}, o);
    benchmark::DoNotOptimize(fit.model.weights.data());
    benchmark::ClobberMemory();
  }
  state.counters["iterations"] = fit.iterations;
  state.counters["cg_steps"] = fit.inner_iterations;
  state.counters["converged"] = fit.status == rateopt::Termination::kConverged ? 1 : 0;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n * d));
}
BENCHMARK(BM_LogisticFitDense)
    ->Args({10000, 20})
    ->Args({10000, 100})
    ->Args({100000, 20})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
