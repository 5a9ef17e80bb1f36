// Churn experiment in the spirit of Goh, Cotter, Gupta & Friedlander (2016) section 4.2, on public
// data (their data is proprietary): LIBSVM a9a.
//
// The a9a training rows are split by row index modulo 10: 0-1 train the *deployed* model (a hinge
// SVM), 2-6 are the labelled set L, 7-9 the unlabelled set U (labels unused). The a9a test file
// is the test set. The ramp trainer solves
//   minimise error_rate(L)  s.t.  recall(L) >= recall of the deployed model on L,
//                                 churn_rate(U) <= target     (churn: prediction != deployed)
// over a grid of targets. Baseline (as in the paper): the unconstrained SVM on L, thresholded
// (bias shifted) to the smallest threshold change that meets the recall constraint on L, which
// makes no effort to reduce churn. Writes JSON rows (bench/repro_goh_churn.py makes the table and
// plot): churn on U and on the test set, error and recall on L and on the test set, deterministic
// (threshold 0) and randomised (exact expectation of the ramp rule).
//
// Usage: repro_goh_churn [out.json] [targets t1,t2,...] [MM steps (30)]
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
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

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::vector<double> parse_list(const std::string& s) {
  std::vector<double> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stod(item));
  return out;
}

Dataset subset(const Dataset& ds, const std::vector<std::size_t>& rows) {
  Labels labels = ds.labels();
  labels.values.clear();
  for (std::size_t i : rows) labels.values.push_back(ds.labels().values[i]);
  return Dataset(ds.features().select_rows(rows), labels);
}

std::vector<double> scores(const Dataset& ds, const LinearModel& m) {
  std::vector<double> s(ds.num_rows());
  m.scores(ds.features(), s, 1);
  return s;
}

// P(positive) under threshold (s > shift) or the ramp rule.
std::vector<double> probs(const std::vector<double>& s, bool randomised, double shift = 0) {
  std::vector<double> p(s.size());
  for (std::size_t i = 0; i < s.size(); ++i)
    p[i] = randomised ? std::clamp((1 + s[i]) / 2, 0.0, 1.0) : (s[i] > shift ? 1.0 : 0.0);
  return p;
}

struct Stats {
  double error = 0, recall = 0, churn = 0;
};

Stats stats(const Dataset& ds, const std::vector<double>& p, const std::vector<double>& deployed) {
  Stats st;
  double pos = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const bool y = ds.labels().values[i] == 1;
    st.error += y ? 1 - p[i] : p[i];
    if (y) {
      st.recall += p[i];
      ++pos;
    }
    st.churn += deployed[i] > 0.5 ? 1 - p[i] : p[i];
  }
  const auto n = static_cast<double>(p.size());
  st.error /= n;
  st.recall /= pos;
  st.churn /= n;
  return st;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_path = argc > 1 ? argv[1] : "goh-churn.json";
  const std::vector<double> targets =
      parse_list(argc > 2 ? argv[2] : "0.01,0.02,0.03,0.04,0.05,0.06,0.08");
  const int mm_steps = argc > 3 ? std::stoi(argv[3]) : 30;
  const std::string dir = RATEOPT_SHARED_DATA_DIR;
  LibsvmOptions lo;
  lo.num_features = 123;
  const Dataset all = read_libsvm(dir + "/adult/a9a.gz", lo);
  const Dataset test = read_libsvm(dir + "/adult/a9a.t", lo);
  std::vector<std::size_t> ra, rl, ru;
  for (std::size_t i = 0; i < all.num_rows(); ++i)
    (i % 10 < 2 ? ra : i % 10 < 7 ? rl : ru).push_back(i);
  const Dataset dep_train = subset(all, ra);
  const Dataset lab = subset(all, rl);
  Dataset unl = subset(all, ru);

  // Deployed model: hinge SVM on its own part (LIBLINEAR C = 1 on the error-rate hinge bound).
  WeightedSvmOptions so;
  so.n_threads = 1;
  so.gap_rel = 1e-4;
  so.lambda = 1.0 / (2.0 * static_cast<double>(dep_train.num_rows()));
  const auto deployed = fit_weighted_svm(
      dep_train.features(), dep_train.labels().values,
      std::vector<double>(dep_train.num_rows(), 0.5 / static_cast<double>(dep_train.num_rows())),
      so);
  const auto dep_l = probs(scores(lab, deployed.model), false);
  const auto dep_u = probs(scores(unl, deployed.model), false);
  const auto dep_t = probs(scores(test, deployed.model), false);
  Column base{"baseline", {}, {}, {}};
  for (double p : dep_u) base.push_back(p > 0.5 ? "1" : "0");
  unl.add_column(base);
  const Stats dep_stats_l = stats(lab, dep_l, dep_l);
  const Stats dep_stats_t = stats(test, dep_t, dep_t);
  const double recall_target = dep_stats_l.recall;
  fmt::print("deployed: L error {:.4f} recall {:.4f}; test error {:.4f} recall {:.4f}\n",
             dep_stats_l.error, dep_stats_l.recall, dep_stats_t.error, dep_stats_t.recall);

  nlohmann::json rows = nlohmann::json::array();
  const double lambda = 1.0 / (2.0 * static_cast<double>(lab.num_rows()));
  nlohmann::json meta = {{"rows_deployed", dep_train.num_rows()},
                         {"rows_labelled", lab.num_rows()},
                         {"rows_unlabelled", unl.num_rows()},
                         {"rows_test", test.num_rows()},
                         {"lambda", lambda},
                         {"max_mm_iterations", mm_steps},
                         {"recall_target", recall_target},
                         {"deployed_error_l", dep_stats_l.error},
                         {"deployed_error_test", dep_stats_t.error},
                         {"deployed_recall_test", dep_stats_t.recall}};
  auto flush = [&] {
    std::ofstream(out_path) << nlohmann::json{{"meta", meta}, {"rows", rows}}.dump(1) << "\n";
  };
  auto add_row = [&](const std::string& method, double target, bool randomised,
                     const LinearModel& m, double shift, const std::string& status, double secs) {
    const auto sl = scores(lab, m), su = scores(unl, m), st = scores(test, m);
    const Stats a = stats(lab, probs(sl, randomised, shift), dep_l);
    const Stats u = stats(unl, probs(su, randomised, shift), dep_u);
    const Stats t = stats(test, probs(st, randomised, shift), dep_t);
    rows.push_back({{"method", method},
                    {"target", target},
                    {"randomised", randomised},
                    {"train_error", a.error},
                    {"train_recall", a.recall},
                    {"train_churn", u.churn},
                    {"test_error", t.error},
                    {"test_recall", t.recall},
                    {"test_churn", t.churn},
                    {"status", status},
                    {"seconds", secs}});
    fmt::print(
        "{} target {:.3f} {}: L error {:.4f} recall {:.4f} U churn {:.4f} | test error "
        "{:.4f} recall {:.4f} churn {:.4f} ({}, {:.1f} s)\n",
        method, target, randomised ? "rand" : "det ", a.error, a.recall, u.churn, t.error, t.recall,
        t.churn, status, secs);
    std::fflush(stdout);
  };

  // Baseline: unconstrained SVM on L, threshold moved to meet the recall target on L.
  double t0 = cpu_now();
  so.lambda = lambda;
  const auto svm = fit_weighted_svm(
      lab.features(), lab.labels().values,
      std::vector<double>(lab.num_rows(), 0.5 / static_cast<double>(lab.num_rows())), so);
  const auto sl = scores(lab, svm.model);
  std::vector<double> pos_scores;
  for (std::size_t i = 0; i < sl.size(); ++i)
    if (lab.labels().values[i] == 1) pos_scores.push_back(sl[i]);
  std::sort(pos_scores.begin(), pos_scores.end());
  // Largest threshold t (<= 0 when the SVM's recall is already enough) with recall(s > t) >=
  // target: at most floor((1 - target) * P) positives may lie at or below it.
  const auto allowed = static_cast<std::size_t>((1.0 - recall_target) * pos_scores.size());
  double shift = 0;
  if (allowed < pos_scores.size()) {
    const double below = allowed == 0 ? pos_scores[0] - 1.0 : pos_scores[allowed - 1];
    shift = std::min(0.0, 0.5 * (below + pos_scores[allowed]));
    if (allowed > 0 && pos_scores[allowed] == pos_scores[allowed - 1])
      shift = std::min(0.0, std::nextafter(pos_scores[allowed], -1e300));
  }
  meta["svm_shift"] = shift;
  add_row("thresholded_svm", 0, false, svm.model, shift, std::string(to_string(svm.status)),
          cpu_now() - t0);
  flush();

  NamedDataset data[] = {{"L", &lab}, {"U", &unl}};
  for (const double target : targets) {
    RampProblem p;
    p.objective = error_rate("L");
    p.constraints.push_back(at_least(recall("L"), recall_target, "recall"));
    p.constraints.push_back(at_most(churn_rate("U"), target, "churn"));
    RampOptions o;
    o.lambda = lambda;
    o.max_mm_iterations = mm_steps;
    o.mm_tol = 1e-5;
    o.outer_tol = 5e-4;
    o.max_outer_iterations = 30;
    o.n_threads = 1;
    t0 = cpu_now();
    const RampResult r = fit_ramp(p, data, o);
    const double secs = cpu_now() - t0;
    for (const bool randomised : {false, true})
      add_row("ramp", target, randomised, r.model, 0, std::string(to_string(r.status)), secs);
    rows.back()["start"] = r.start;
    rows.back()["mm_iterations"] = r.history.size();
    rows.back()["svm_solves"] = r.svm_solves;
    flush();
  }
  flush();
  return 0;
}
