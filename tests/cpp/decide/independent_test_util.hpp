// Shared helpers of the independent-setting decide tests: seeded random instances with the hard
// cases (exact 0 and 1, ties, tiny values, values next to 1) and metric lists.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "rateopt/decide.hpp"

namespace rateopt::testing_decide {

// Fixed seed, overridable with RATEOPT_TEST_SEED (printed by every test that uses it).
inline std::uint64_t test_seed(std::uint64_t fallback) {
  if (const char* env = std::getenv("RATEOPT_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return fallback;
}

// A random probability vector of length n. Entries are drawn from: uniform(0, 1); a small set of
// special values (0, 1, 1/2, 1/4, 3/4, 0.1, 1e-300, 1e-17, 1 - 2^-53); 10^-U(0, 300); 1 - 10^-U(1,
// 16); or a copy of an earlier entry (ties).
inline std::vector<double> random_probabilities(std::mt19937_64& rng, std::size_t n) {
  static const double kSpecial[] = {0.0, 1.0, 0.5, 0.25, 0.75, 0.1, 1e-300, 1e-17, 1 - 0x1p-53};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> p(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double kind = unit(rng);
    if (kind < 0.5) {
      p[i] = unit(rng);
    } else if (kind < 0.7) {
      p[i] = kSpecial[static_cast<std::size_t>(unit(rng) * 9) % 9];
    } else if (kind < 0.8) {
      p[i] = std::pow(10.0, -300 * unit(rng));
    } else if (kind < 0.9) {
      p[i] = 1 - std::pow(10.0, -1 - 15 * unit(rng));
    } else {
      p[i] = i == 0 ? 0.5 : p[static_cast<std::size_t>(unit(rng) * double(i)) % i];
    }
  }
  return p;
}

// Uniform(0, 1) probabilities.
inline std::vector<double> uniform_probabilities(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> p(n);
  for (auto& v : p) v = unit(rng);
  return p;
}

// Class-weighted accuracy (2 tp + tn) / (2 (tp + fn) + fp + tn): TP-monotone, not in the
// catalogue.
inline DecideMetric weighted_accuracy() {
  return DecideMetric::custom("weighted_accuracy", [](double tp, double fp, double fn, double tn) {
    const double den = 2 * (tp + fn) + fp + tn;
    return den > 0 ? (2 * tp + tn) / den : 1.0;
  });
}

inline const std::vector<std::string>& builtin_metric_names() {
  static const std::vector<std::string> names{
      "f1",    "fbeta:0.5", "fbeta:2",  "jaccard",   "balanced_accuracy", "gmean",
      "hmean", "gtppr",     "accuracy", "fbeta:1.7", "precision",         "recall",
      "tnr",   "tp",        "tn",       "qmean"};
  return names;
}

inline DecideMetric metric_by_name(const std::string& name) {
  return name == "weighted_accuracy" ? weighted_accuracy() : DecideMetric::from_name(name);
}

inline DecideOptions options_for(DecideMethod method, bool all_k = true) {
  DecideOptions o;
  o.method = method;
  o.all_k = all_k;
  return o;
}

}  // namespace rateopt::testing_decide
