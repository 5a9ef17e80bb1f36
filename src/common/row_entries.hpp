// Row iteration over a FeatureMatrix, dense or CSR, for the learners in src/ (logistic models,
// multinomial regression, the multi-label chains).
#pragma once

#include <cstddef>

#include "rateopt/dataset.hpp"

namespace rateopt::detail {

// Calls fn(j, value) for the stored entries of row i: the CSR entries of a sparse matrix (explicit
// zeros included), the non-zero entries of a dense one.
template <typename Fn>
void for_row_entries(const FeatureMatrix& x, std::size_t i, Fn&& fn) {
  if (x.is_sparse()) {
    const CsrView v = x.csr_view();
    for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
      fn(static_cast<std::size_t>(v.indices[static_cast<std::size_t>(k)]),
         v.values[static_cast<std::size_t>(k)]);
    return;
  }
  const DenseView v = x.dense_view();
  const double* row = v.data + i * v.row_stride;
  for (std::size_t j = 0; j < v.cols; ++j)
    if (row[j] != 0) fn(j, row[j]);
}

}  // namespace rateopt::detail
