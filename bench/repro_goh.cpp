// Reproduction of Goh, Cotter, Gupta & Friedlander (2016), section 4.1: fairness on Adult (a9a).
//
// Trains (1) the unconstrained hinge SVM, (2) the ramp-loss classifier of fit_ramp under the
// constraint sp(male) <= u sp(female) (u = 1/kappa) over a grid of u, (3) Zafar et al.'s
// covariance-constrained SVM <w, mean_male - mean_female> <= c over a grid of c, and writes the
// train/test error and fairness ratio sp(male)/sp(female) of each as JSON (bench/repro_goh.py
// turns it into docs/results/goh-adult.{md,png}). Randomised results are exact expectations of
// the ramp rule (no sampling).
//
// Usage: repro_goh [out.json] [u1,u2,...] [zafar fractions f1,f2,...] [MM steps (50)] [mm_tol
// (1e-5)]
//        [outer_tol (5e-4)]
// Male / female: a9a features 73 / 72 (1-based), checked against the raw Adult `sex` column.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "rateopt/io.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/ramp.hpp"
#include "rateopt/sdca.hpp"

using namespace rateopt;

namespace {

std::vector<double> parse_list(const std::string& s) {
  std::vector<double> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stod(item));
  return out;
}

// CPU seconds of this process (one thread: the machine is shared, so wall time is noise).
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
double seconds_since(double t0) {
  return cpu_now() - t0;
}

struct Eval {
  double error = 0, sp_male = 0, sp_female = 0;
  [[nodiscard]] double ratio() const { return sp_male / sp_female; }
};

// Error and group positive rates of P(positive) = link(score): threshold or ramp expectation.
Eval evaluate(const Dataset& ds, const LinearModel& m, bool randomised) {
  std::vector<double> s(ds.num_rows());
  m.scores(ds.features(), s, 1);
  Eval e;
  double nm = 0, nf = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double p = randomised ? std::clamp((1 + s[i]) / 2, 0.0, 1.0) : (s[i] > 0 ? 1.0 : 0.0);
    e.error += ds.labels().values[i] == 1 ? 1 - p : p;
    if (ds.features().at(i, 72) != 0) {
      e.sp_male += p;
      ++nm;
    }
    if (ds.features().at(i, 71) != 0) {
      e.sp_female += p;
      ++nf;
    }
  }
  e.error /= static_cast<double>(s.size());
  e.sp_male /= nm;
  e.sp_female /= nf;
  return e;
}

nlohmann::json row(const std::string& method, double param, const Dataset& train,
                   const Dataset& test, const LinearModel& m, bool randomised, double secs) {
  const Eval tr = evaluate(train, m, randomised);
  const Eval te = evaluate(test, m, randomised);
  return {{"method", method},          {"param", param},
          {"randomised", randomised},  {"train_error", tr.error},
          {"train_ratio", tr.ratio()}, {"test_error", te.error},
          {"test_ratio", te.ratio()},  {"seconds", secs}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_path = argc > 1 ? argv[1] : "goh-adult.json";
  const std::vector<double> grid = parse_list(argc > 2 ? argv[2] : "1,1.25,1.5,1.75,2,2.5,3,3.5,4");
  const std::vector<double> fractions =
      parse_list(argc > 3 ? argv[3] : "1,0.8,0.6,0.4,0.2,0,-0.2,-0.5,-1,-1.5,-2,-3");
  const int mm_steps = argc > 4 ? std::stoi(argv[4]) : 50;
  const double mm_tol = argc > 5 ? std::stod(argv[5]) : 1e-5;
  const double outer_tol = argc > 6 ? std::stod(argv[6]) : 5e-4;
  const std::string dir = RATEOPT_SHARED_DATA_DIR;
  LibsvmOptions lo;
  lo.num_features = 123;
  const Dataset train = read_libsvm(dir + "/adult/a9a.gz", lo);
  const Dataset test = read_libsvm(dir + "/adult/a9a.t", lo);
  const double n = static_cast<double>(train.num_rows());
  const Slice male = Slice::parse("f73=1");
  const Slice female = Slice::parse("f72=1");

  RampOptions o;
  o.lambda = 1.0 / (2 * n);        // LIBLINEAR C = 1 on the hinge bound of the error rate
  o.max_mm_iterations = mm_steps;  // svmc.jl uses 8
  o.mm_tol = mm_tol;
  o.outer_tol = outer_tol;
  o.max_outer_iterations = 20;
  o.n_threads = 1;
  if (std::getenv("REPRO_GOH_VERBOSE") != nullptr)
    o.progress = [](const MmIteration& h) {
      fmt::print(
          "    {} {}: objective {:.6f} (was {:.6f}) violation {:+.2e} bounds [{:.6f}, {:.6f}] "
          "{} v={} solves {} epochs {}\n",
          h.phase1 ? "phase1" : "MM", h.iteration, h.objective, h.previous_objective,
          h.max_violation, h.lower_bound, h.upper_bound, to_string(h.outer_status),
          h.multipliers.empty() ? 0.0 : h.multipliers[0], h.svm_solves, h.epochs);
      std::fflush(stdout);
    };

  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json meta;
  // Rewritten after every method so that an interrupted run leaves a usable file.
  auto flush = [&] {
    std::ofstream(out_path) << nlohmann::json{{"meta", meta}, {"rows", rows}}.dump(1) << "\n";
  };
  meta = {{"lambda", o.lambda},
          {"bias_feature", o.bias_feature},
          {"max_mm_iterations", o.max_mm_iterations},
          {"mm_tol", o.mm_tol},
          {"inexact_mm", o.inexact_mm},
          {"outer_tol", o.outer_tol},
          {"feasibility_tol", o.feasibility_tol}};

  // Unconstrained hinge SVM (the same SDCA; weights 1/(2n) = the hinge bound of the error rate).
  double t0 = cpu_now();
  WeightedSvmOptions so;
  so.lambda = o.lambda;
  so.gap_rel = 1e-3;
  so.n_threads = 1;
  std::vector<double> w(train.num_rows(), 0.5 / n);
  const auto svm = fit_weighted_svm(train.features(), train.labels().values, w, so);
  const double svm_secs = seconds_since(t0);
  rows.push_back(row("svm", 0, train, test, svm.model, false, svm_secs));
  rows.back()["status"] = std::string(to_string(svm.status));
  meta["svm_seconds"] = svm_secs;
  meta["svm_epochs"] = svm.epochs;
  fmt::print("svm: test error {:.4f} ratio {:.3f} ({:.2f} s, {} epochs)\n",
             rows.back()["test_error"].get<double>(), rows.back()["test_ratio"].get<double>(),
             svm_secs, svm.epochs);

  NamedDataset data[] = {{"train", &train}};
  for (const double u : grid) {
    RampProblem p;
    p.objective = error_rate("train");
    p.constraints.push_back(fairness_ratio_constraint("train", female, male, 1.0 / u));
    t0 = cpu_now();
    const RampResult r = fit_ramp(p, data, o);
    const double secs = seconds_since(t0);
    for (const bool randomised : {false, true}) {
      auto j = row("ramp", u, train, test, r.model, randomised, secs);
      j["status"] = std::string(to_string(r.status));
      j["svm_solves"] = r.svm_solves;
      j["epochs"] = r.epochs;
      j["mm_iterations"] = r.history.size();
      j["all_steps_monotone_feasible"] =
          std::all_of(r.history.begin(), r.history.end(),
                      [](const MmIteration& h) { return h.monotone && h.feasible; });
      j["train_constraint_ramp"] = r.constraints[0];
      rows.push_back(j);
      fmt::print(
          "ramp u={:.2f} {}: test error {:.4f} ratio {:.3f}; train ratio {:.3f} ({} , "
          "{:.1f} s, {} solves)\n",
          u, randomised ? "rand" : "det ", j["test_error"].get<double>(),
          j["test_ratio"].get<double>(), j["train_ratio"].get<double>(),
          std::string(to_string(r.status)), secs, r.svm_solves);
      std::fflush(stdout);
    }
    flush();
    if (u == 1.25) {
      meta["ramp_kappa08_seconds"] = secs;
      meta["ramp_kappa08_solves"] = r.svm_solves;
      meta["ramp_kappa08_epochs"] = r.epochs;
    }
  }

  // Zafar et al.: c = fraction * <w_svm, d>, d = mean_male - mean_female.
  std::vector<double> diff(123, 0.0);
  {
    const auto mm = slice_mask(train, male), mf = slice_mask(train, female);
    std::vector<double> a(123, 0.0), b(123, 0.0);
    double na = 0, nb = 0;
    for (std::size_t i = 0; i < train.num_rows(); ++i) {
      if (mm[i] != 0) {
        train.features().row_axpy(i, 1.0, a);
        ++na;
      }
      if (mf[i] != 0) {
        train.features().row_axpy(i, 1.0, b);
        ++nb;
      }
    }
    for (std::size_t j = 0; j < 123; ++j) diff[j] = a[j] / na - b[j] / nb;
  }
  double g0 = 0;
  for (std::size_t j = 0; j < 123; ++j) g0 += svm.model.weights[j] * diff[j];
  meta["zafar_unconstrained_covariance"] = g0;
  for (const double f : fractions) {
    t0 = cpu_now();
    const auto z = fit_covariance_svm(train, male, female, f * g0, o);
    const double secs = seconds_since(t0);
    auto j = row("zafar", f * g0, train, test, z.model, false, secs);
    j["fraction"] = f;
    j["status"] = std::string(to_string(z.status));
    rows.push_back(j);
    fmt::print("zafar c={:.3f}: test error {:.4f} ratio {:.3f} ({:.1f} s)\n", f * g0,
               j["test_error"].get<double>(), j["test_ratio"].get<double>(), secs);
    std::fflush(stdout);
    flush();
  }
  flush();
  return 0;
}
