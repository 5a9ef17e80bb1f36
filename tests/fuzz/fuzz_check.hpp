// Invariants every successfully parsed Dataset must satisfy, shared by the fuzz targets. A broken
// invariant aborts (a crash for libFuzzer).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "rateopt/dataset.hpp"

namespace rateopt::fuzz {

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
  std::abort();
}

inline void require(bool ok, const char* what) {
  if (!ok) fail(what);
}

inline void check_dataset(const Dataset& ds) {
  const FeatureMatrix& x = ds.features();
  const std::size_t n = x.rows();
  const std::size_t d = x.cols();
  if (x.is_sparse()) {
    const CsrView v = x.csr_view();
    require(v.indptr.size() == n + 1 && v.indptr[0] == 0, "CSR indptr has rows + 1 entries from 0");
    require(v.indices.size() == v.values.size(), "CSR indices and values have the same size");
    require(static_cast<std::size_t>(v.indptr[n]) == v.indices.size(), "CSR indptr ends at nnz");
    for (std::size_t i = 0; i < n; ++i) {
      require(v.indptr[i] <= v.indptr[i + 1], "CSR indptr is monotone");
      for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
        require(v.indices[k] >= 0 && static_cast<std::size_t>(v.indices[k]) < d,
                "CSR index in [0, cols)");
        require(k == v.indptr[i] || v.indices[k - 1] < v.indices[k],
                "CSR indices strictly increasing in a row");
        require(std::isfinite(v.values[k]), "CSR value finite");
      }
    }
  } else {
    const DenseView v = x.dense_view();
    for (std::size_t i = 0; i < n; ++i)
      for (double value : v.row(i)) require(std::isfinite(value), "dense value finite");
  }

  const Encoding& e = ds.encoding();
  require(e.num_features == d, "encoding num_features == cols");
  require(e.feature_names.empty() || e.feature_names.size() == d, "one feature name per column");

  const Labels& y = ds.labels();
  switch (y.kind) {
    case LabelKind::kNone:
      break;
    case LabelKind::kBinary:
      require(y.values.size() == n && y.names.size() == 2, "binary labels: one per row, 2 names");
      for (auto v : y.values) require(v == 0 || v == 1, "binary label in {0, 1}");
      break;
    case LabelKind::kMulticlass:
      require(y.values.size() == n, "multiclass labels: one per row");
      for (auto v : y.values)
        require(v >= 0 && static_cast<std::size_t>(v) < y.names.size(), "class index in range");
      break;
    case LabelKind::kMultilabel:
      require(y.set_indptr.size() == n + 1 && y.set_indptr[0] == 0, "label sets: rows + 1 offsets");
      require(static_cast<std::size_t>(y.set_indptr[n]) == y.set_indices.size(),
              "label sets end at their size");
      for (std::size_t i = 0; i < n; ++i) {
        require(y.set_indptr[i] <= y.set_indptr[i + 1], "label set offsets monotone");
        for (auto k = y.set_indptr[i]; k < y.set_indptr[i + 1]; ++k) {
          require(
              y.set_indices[k] >= 0 && static_cast<std::size_t>(y.set_indices[k]) < y.names.size(),
              "label id in range");
          require(k == y.set_indptr[i] || y.set_indices[k - 1] < y.set_indices[k],
                  "label set sorted without duplicates");
        }
      }
      break;
  }

  for (const Column& c : ds.columns()) {
    require(c.codes.size() == n, "column has one code per row");
    require(c.numeric.empty() || c.numeric.size() == n, "numeric column has one value per row");
    for (auto code : c.codes)
      require(code >= -1 && (code < 0 || static_cast<std::size_t>(code) < c.levels.size()),
              "column code in range");
  }
  const auto w = ds.weights();
  require(w.empty() || w.size() == n, "one weight per row");
  for (double v : w) require(std::isfinite(v) && v >= 0, "weights finite and >= 0");
}

// Exact equality of two feature matrices (same storage, same entries).
inline bool same_features(const FeatureMatrix& a, const FeatureMatrix& b) {
  if (a.is_sparse() != b.is_sparse() || a.rows() != b.rows() || a.cols() != b.cols()) return false;
  if (a.is_sparse()) {
    const CsrView u = a.csr_view();
    const CsrView v = b.csr_view();
    auto eq = [](auto s, auto t) {
      if (s.size() != t.size()) return false;
      for (std::size_t k = 0; k < s.size(); ++k)
        if (s[k] != t[k]) return false;
      return true;
    };
    return eq(u.indptr, v.indptr) && eq(u.indices, v.indices) && eq(u.values, v.values);
  }
  const DenseView u = a.dense_view();
  const DenseView v = b.dense_view();
  for (std::size_t i = 0; i < u.rows; ++i)
    for (std::size_t j = 0; j < u.cols; ++j)
      if (u(i, j) != v(i, j)) return false;
  return true;
}

}  // namespace rateopt::fuzz
