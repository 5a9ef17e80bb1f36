// detail::dense_to_csr and count_nonzeros (src/common/csr.hpp): entries kept in row and column
// order with their values, row strides honoured, exact zeros (and -0.0) dropped, NaN kept.
#include "common/csr.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace rateopt::detail {
namespace {

TEST(DenseToCsr, KeepsNonZerosInOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // 3 x 3 inside a row stride of 4 (the last column of each row is padding and never read).
  const std::vector<double> data{0, 1.5, 0, 9, -0.0, 0, 0, 9, nan, 0, -2, 9};
  const DenseView v{data.data(), 3, 3, 4};
  EXPECT_EQ(count_nonzeros(v), 3u);
  const CsrArrays c = dense_to_csr(v, count_nonzeros(v));
  EXPECT_EQ(c.indptr, (std::vector<std::int64_t>{0, 1, 1, 3}));
  EXPECT_EQ(c.indices, (std::vector<std::int32_t>{1, 0, 2}));
  ASSERT_EQ(c.values.size(), 3u);
  EXPECT_EQ(c.values[0], 1.5);
  EXPECT_TRUE(std::isnan(c.values[1]));
  EXPECT_EQ(c.values[2], -2);
}

TEST(DenseToCsr, MatrixHasTheDenseShapeAndRows) {
  const std::vector<double> data{0, 2, 0, 0, 0, 0, 3, 0, 4};
  const FeatureMatrix m = dense_to_csr_matrix(DenseView{data.data(), 3, 3, 3});
  ASSERT_TRUE(m.is_sparse());
  EXPECT_EQ(m.rows(), 3u);
  EXPECT_EQ(m.cols(), 3u);
  const CsrView v = m.csr_view();
  EXPECT_EQ(std::vector<std::int64_t>(v.indptr.begin(), v.indptr.end()),
            (std::vector<std::int64_t>{0, 1, 1, 3}));
  EXPECT_EQ(std::vector<double>(v.values.begin(), v.values.end()), (std::vector<double>{2, 3, 4}));
  // No rows: one indptr entry.
  EXPECT_EQ(dense_to_csr(DenseView{nullptr, 0, 5, 5}).indptr, (std::vector<std::int64_t>{0}));
}

}  // namespace
}  // namespace rateopt::detail
