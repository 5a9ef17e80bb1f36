// One logistic-regression fit timed on a file, for bench/compare_logistic_sklearn.py (a plain
// program, not a Google Benchmark: the script needs CPU-time medians, accuracies and the encoded
// features of CSV files on the same run).
//
//   bench_logistic_fit --train FILE --test FILE [--label COL --positive VALUE]
//                      [--c 1] [--tol 1e-4] [--solver newton|lbfgs] [--threads 1] [--repeat 3]
//                      [--write-libsvm PREFIX]
//
// FILE: CSV (read like `rateopt train`: one-hot categorical columns, standardised numeric ones,
// the test file with the training encoding), LIBSVM, or a raw binary dense matrix `*.f64bin`
// (int64 rows, int64 cols, rows * cols float64 row-major, rows int32 labels 0/1). Data are read
// once, outside the timed region; the fit is timed `repeat` times (process CPU time and wall
// time, one fit per repetition). --write-libsvm writes the encoded train and test features to
// PREFIX.train.svm and PREFIX.test.svm (17 significant digits, labels 0/1), so that another
// library fits exactly the same numbers. Prints one JSON object on stdout.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "rateopt/io.hpp"
#include "rateopt/logistic.hpp"

namespace {

struct Args {
  std::string train, test, label, positive, write_libsvm;
  double c = 1.0;
  double tol = 1e-4;
  std::string solver = "newton";
  int threads = 1;
  int repeat = 3;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + key);
    const std::string v = argv[++i];
    if (key == "--train")
      a.train = v;
    else if (key == "--test")
      a.test = v;
    else if (key == "--label")
      a.label = v;
    else if (key == "--positive")
      a.positive = v;
    else if (key == "--write-libsvm")
      a.write_libsvm = v;
    else if (key == "--c")
      a.c = std::stod(v);
    else if (key == "--tol")
      a.tol = std::stod(v);
    else if (key == "--solver")
      a.solver = v;
    else if (key == "--threads")
      a.threads = std::stoi(v);
    else if (key == "--repeat")
      a.repeat = std::stoi(v);
    else
      throw std::invalid_argument("unknown option " + key);
  }
  if (a.train.empty() || a.test.empty()) throw std::invalid_argument("--train and --test needed");
  if (a.solver != "newton" && a.solver != "lbfgs")
    throw std::invalid_argument("--solver is " + a.solver + ", expected newton or lbfgs");
  return a;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

rateopt::Dataset read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::int64_t shape[2] = {0, 0};
  in.read(reinterpret_cast<char*>(shape), sizeof shape);
  const auto rows = static_cast<std::size_t>(shape[0]);
  const auto cols = static_cast<std::size_t>(shape[1]);
  std::vector<double> data(rows * cols);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * 8));
  rateopt::Labels labels;
  labels.kind = rateopt::LabelKind::kBinary;
  labels.names = {"0", "1"};
  labels.values.resize(rows);
  in.read(reinterpret_cast<char*>(labels.values.data()), static_cast<std::streamsize>(rows * 4));
  if (!in) throw std::runtime_error(path + " is truncated");
  return {rateopt::FeatureMatrix::dense(std::move(data), rows, cols), std::move(labels)};
}

rateopt::Dataset read(const Args& a, const std::string& path, const rateopt::Encoding* encoding) {
  if (ends_with(path, ".f64bin")) return read_binary(path);
  rateopt::ReadOptions o;
  o.csv.label_column = a.label;
  if (!a.positive.empty()) o.csv.positive_values = {a.positive};
  o.encoding = encoding;
  return rateopt::read_dataset(path, o);
}

void write_libsvm(const rateopt::Dataset& ds, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  const rateopt::FeatureMatrix& x = ds.features();
  for (std::size_t i = 0; i < ds.num_rows(); ++i) {
    std::string line = ds.labels().values[i] == 1 ? "1" : "0";
    for (std::size_t j = 0; j < x.cols(); ++j)
      if (const double v = x.at(i, j); v != 0) line += fmt::format(" {}:{:.17g}", j + 1, v);
    line += '\n';
    std::fputs(line.c_str(), f);
  }
  std::fclose(f);
}

double accuracy(const rateopt::LinearModel& model, const rateopt::Dataset& ds) {
  std::vector<double> scores(ds.num_rows());
  model.scores(ds.features(), scores, 1);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < scores.size(); ++i)
    correct += static_cast<std::size_t>((scores[i] > 0) == (ds.labels().values[i] == 1));
  return static_cast<double>(correct) / static_cast<double>(scores.size());
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  const rateopt::Dataset train = read(a, a.train, nullptr);
  rateopt::Dataset test =
      read(a, a.test, ends_with(a.train, ".f64bin") ? nullptr : &train.encoding());
  if (test.num_features() < train.num_features()) test.features().set_cols(train.num_features());
  if (!a.write_libsvm.empty()) {
    write_libsvm(train, a.write_libsvm + ".train.svm");
    write_libsvm(test, a.write_libsvm + ".test.svm");
  }

  rateopt::LogisticRegressionOptions o;
  o.c = a.c;
  o.tol = a.tol;
  o.n_threads = a.threads;
  o.solver =
      a.solver == "lbfgs" ? rateopt::LogisticSolver::kLbfgs : rateopt::LogisticSolver::kNewton;
  std::vector<double> cpu, wall;
  rateopt::LogisticRegressionResult fit;
  for (int r = 0; r < a.repeat; ++r) {
    const double c0 = cpu_seconds();
    const auto w0 = std::chrono::steady_clock::now();
    fit = rateopt::fit_logistic_regression(train.features(), train.labels().values, train.weights(),
                                           o);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    cpu.push_back(cpu_seconds() - c0);
  }
  const rateopt::FeatureMatrix& x = train.features();
  fmt::print(
      "{{\"cpu\": {:.6f}, \"wall\": {:.6f}, \"cpu_all\": [{:.4f}], \"iterations\": {}, "
      "\"inner_iterations\": {}, \"status\": \"{}\", \"objective\": {:.10g}, "
      "\"gradient_norm\": {:.6g}, \"train_accuracy\": {:.6f}, \"test_accuracy\": {:.6f}, "
      "\"rows\": {}, \"cols\": {}, \"nnz\": {}, \"stored\": \"{}\", \"test_rows\": {}}}\n",
      median(cpu), median(wall), fmt::join(cpu, ", "), fit.iterations, fit.inner_iterations,
      rateopt::to_string(fit.status), fit.objective, fit.gradient_norm, accuracy(fit.model, train),
      accuracy(fit.model, test), x.rows(), x.cols(), x.nnz(), x.is_sparse() ? "csr" : "dense",
      test.num_rows());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_logistic_fit: %s\n", e.what());
  return 1;
}
