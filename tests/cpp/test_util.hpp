// Small helpers shared by the C++ tests.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"

namespace rateopt::test {

// A categorical column of `values` ("?" is a missing value).
inline Column make_column(const std::string& name, const std::vector<std::string>& values) {
  Column c;
  c.name = name;
  for (const auto& v : values) c.push_back(v, v == "?");
  return c;
}

// Repetitions of a statistical simulation: `n`, or a fifth of it in sanitizer builds (run there
// for memory and thread errors, 3-10 times slower; the full count runs in the Release stage).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr int kSimulationDivisor = 5;
#else
inline constexpr int kSimulationDivisor = 1;
#endif
inline int simulation_reps(int n) {
  return n / kSimulationDivisor;
}

// The shared datasets' folder: RATEOPT_DATA_DIR when set, else ../shared/data as configured.
inline std::string data_dir() {
  const char* env = std::getenv("RATEOPT_DATA_DIR");
  if (env != nullptr && *env != '\0') return env;
  return RATEOPT_SHARED_DATA_DIR;
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs `f`, expects an exception of type E and returns its message (a test failure otherwise).
template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception thrown";
  return {};
}

// Runs `fn` and expects InvalidArgument whose message contains `needle` (a test failure
// otherwise; an exception of another type propagates).
template <typename Fn>
void expect_invalid(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected InvalidArgument mentioning '" << needle << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// A uniform draw in [0, 1) from the top 53 bits of `rng` (the same sequence on every platform,
// unlike std::uniform_real_distribution).
inline double uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

inline double sigmoid(double z) {
  return 1.0 / (1.0 + std::exp(-z));
}

// `p` sorted in decreasing order (ties keep their order).
inline std::vector<double> sorted_desc(std::vector<double> p) {
  std::stable_sort(p.begin(), p.end(), [](double a, double b) { return a > b; });
  return p;
}

// A path under the source tree (RATEOPT_SOURCE_DIR, set by tests/CMakeLists.txt).
inline std::string source_path(const std::string& relative) {
#ifdef RATEOPT_SOURCE_DIR
  return fmt::format("{}/{}", RATEOPT_SOURCE_DIR, relative);
#else
  return relative;
#endif
}

// A file of tests/data/io/ (the readers' fixtures).
inline std::string io_fixture(const std::string& name) {
  return source_path("tests/data/io/" + name);
}

// The bytes of a file ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Equal bit for bit (so NaN equals NaN, and -0.0 differs from 0.0).
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::bit_cast<std::uint64_t>(a[k]) != std::bit_cast<std::uint64_t>(b[k])) return false;
  return true;
}

// Writes `content` (bytes as given) to a file named `name` in gtest's temporary directory and
// returns its path.
inline std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// Expects two datasets to hold the same data bit for bit: features (values and storage), labels
// with their names, weights, slice columns (levels, codes, numbers) and encoding.
inline void expect_same_dataset(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.num_rows(), b.num_rows());
  ASSERT_EQ(a.num_features(), b.num_features());
  EXPECT_EQ(a.features().is_sparse(), b.features().is_sparse());
  EXPECT_EQ(a.features().nnz(), b.features().nnz());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.num_rows(); ++i)
    for (std::size_t j = 0; j < a.num_features(); ++j)
      differ += same_bits({a.features().at(i, j)}, {b.features().at(i, j)}) ? 0 : 1;
  EXPECT_EQ(differ, 0u) << "feature values differ";
  EXPECT_EQ(a.labels().kind, b.labels().kind);
  EXPECT_EQ(a.labels().values, b.labels().values);
  EXPECT_EQ(a.labels().set_indptr, b.labels().set_indptr);
  EXPECT_EQ(a.labels().set_indices, b.labels().set_indices);
  EXPECT_EQ(a.labels().names, b.labels().names);
  EXPECT_TRUE(same_bits(std::vector<double>(a.weights().begin(), a.weights().end()),
                        std::vector<double>(b.weights().begin(), b.weights().end())));
  ASSERT_EQ(a.columns().size(), b.columns().size());
  for (std::size_t k = 0; k < a.columns().size(); ++k) {
    EXPECT_EQ(a.columns()[k].name, b.columns()[k].name);
    EXPECT_EQ(a.columns()[k].levels, b.columns()[k].levels);
    EXPECT_EQ(a.columns()[k].codes, b.columns()[k].codes);
    EXPECT_TRUE(same_bits(a.columns()[k].numeric, b.columns()[k].numeric));
  }
  EXPECT_EQ(a.encoding().to_json(), b.encoding().to_json());
}

}  // namespace rateopt::test
