#include "common/csr.hpp"

#include <utility>

namespace rateopt::detail {

std::size_t count_nonzeros(const DenseView& v) noexcept {
  std::size_t nnz = 0;
  for (std::size_t i = 0; i < v.rows; ++i)
    for (const double value : v.row(i)) nnz += value != 0 ? 1 : 0;
  return nnz;
}

CsrArrays dense_to_csr(const DenseView& v, std::size_t nnz) {
  CsrArrays c;
  c.indptr.assign(v.rows + 1, 0);
  c.indices.reserve(nnz);
  c.values.reserve(nnz);
  for (std::size_t i = 0; i < v.rows; ++i) {
    const double* row = v.data + i * v.row_stride;
    for (std::size_t j = 0; j < v.cols; ++j)
      if (row[j] != 0) {
        c.indices.push_back(static_cast<std::int32_t>(j));
        c.values.push_back(row[j]);
      }
    c.indptr[i + 1] = static_cast<std::int64_t>(c.indices.size());
  }
  return c;
}

FeatureMatrix dense_to_csr_matrix(const DenseView& v, std::size_t nnz) {
  CsrArrays c = dense_to_csr(v, nnz);
  return FeatureMatrix::csr(std::move(c.indptr), std::move(c.indices), std::move(c.values), v.cols);
}

}  // namespace rateopt::detail
