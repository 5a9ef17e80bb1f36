// Dense-to-CSR conversion for the learners in src/ that fit or score a mostly-zero dense matrix
// from a CSR copy (logistic and multinomial regression, the linear scorer, SDCA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rateopt/dataset.hpp"

namespace rateopt::detail {

// A dense matrix with at most this share of non-zero entries is fitted from a CSR copy (logistic
// and multinomial regression): one-hot columns from CSV files are mostly zeros, and the CSR kernels
// then touch only the non-zeros. At this density a CSR entry (8-byte value + 4-byte index) costs
// about as much memory traffic as the dense row it replaces.
inline constexpr double kSparseCopyDensity = 0.3;

// The three arrays of a CSR matrix (the layout of CsrView), owned.
struct CsrArrays {
  std::vector<std::int64_t> indptr;   // rows + 1 entries, indptr[0] == 0
  std::vector<std::int32_t> indices;  // nnz entries, increasing within a row
  std::vector<double> values;         // nnz entries
};

// The number of entries of `v` that compare unequal to 0 (NaN counts; -0.0 does not).
// O(rows * cols).
[[nodiscard]] std::size_t count_nonzeros(const DenseView& v) noexcept;

// The entries of `v` that compare unequal to 0, row by row and in column order, values unchanged.
// `nnz` is only a capacity hint (count_nonzeros(v) when the caller has it, else 0).
// O(rows * cols).
[[nodiscard]] CsrArrays dense_to_csr(const DenseView& v, std::size_t nnz = 0);

// dense_to_csr(v, nnz) as a FeatureMatrix with v.cols columns.
[[nodiscard]] FeatureMatrix dense_to_csr_matrix(const DenseView& v, std::size_t nnz = 0);

}  // namespace rateopt::detail
