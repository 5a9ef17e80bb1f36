// Synthetic data for the train tests: one score feature, a group column, labels drawn from the
// score, optional baseline column.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/io.hpp"
#include "rateopt/postprocess.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"

namespace rateopt::test {

// Every row of the bundled Adult training file (data/adult/adult-train.csv.gz: label income
// >50K, groups sex and race), read once.
inline const Dataset& bundled_adult() {
  static const Dataset ds = [] {
    ReadOptions ro;
    ro.csv.label_column = "income";
    ro.csv.positive_values = {">50K"};
    ro.csv.group_columns = {"sex", "race"};
    return read_dataset(std::string(RATEOPT_SOURCE_DIR) + "/data/adult/adult-train.csv.gz", ro);
  }();
  return ds;
}

// n rows; feature 0 = score s ~ N(0,1) (+0.5 in group b); label ~ Bernoulli(sigmoid(2.5 s));
// group "g" in {a, b} (b with probability 0.4); baseline = 1{s > 0.3} when with_baseline.
inline Dataset synthetic(std::size_t n, std::uint64_t seed, bool with_baseline = false,
                         std::size_t extra_features = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  const std::size_t cols = 1 + extra_features;
  std::vector<double> x(n * cols);
  Labels y;
  y.kind = LabelKind::kBinary;
  y.names = {"0", "1"};
  std::vector<std::string> group(n), base(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool b = unif(rng) < 0.4;
    const double s = normal(rng) + (b ? 0.5 : 0.0);
    x[i * cols] = s;
    for (std::size_t j = 1; j < cols; ++j) x[i * cols + j] = normal(rng) + (b ? 0.3 : 0.0);
    y.values.push_back(unif(rng) < 1 / (1 + std::exp(-2.5 * s)) ? 1 : 0);
    group[i].assign(1, b ? 'b' : 'a');  // (a string literal here: GCC 12's -Wstringop-overflow)
    base[i].assign(1, s > 0.3 ? '1' : '0');
  }
  Dataset ds(FeatureMatrix::dense(std::move(x), n, cols), y);
  ds.add_column(make_column("g", group));
  if (with_baseline) ds.add_column(make_column("baseline", base));
  return ds;
}

// Post-processing options with these group columns, the rest at their defaults.
inline PostprocessOptions by_groups(std::vector<std::string> columns) {
  PostprocessOptions o;
  o.group_columns = std::move(columns);
  return o;
}

inline ProblemSpec spec(std::string objective, std::vector<std::string> constraints = {},
                        bool maximize = false) {
  ProblemSpec s;
  s.objective = std::move(objective);
  s.constraints = std::move(constraints);
  s.maximize = maximize;
  return s;
}

}  // namespace rateopt::test
