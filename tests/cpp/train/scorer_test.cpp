// LinearScorer on dense and CSR storage, and sparse_copy: scores and vector-Jacobian products
// against direct sums over the entries.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "rateopt/train.hpp"
#include "train/train_impl.hpp"

namespace rateopt {
namespace {

// n x d matrix with ~`density` non-zeros (one-hot-like 1s and some real values).
FeatureMatrix mostly_zero(std::size_t n, std::size_t d, double density, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u;
  std::vector<double> x(n * d, 0.0);
  for (double& v : x)
    if (u(rng) < density) v = u(rng) < 0.5 ? 1.0 : u(rng) * 4 - 2;
  return FeatureMatrix::dense(std::move(x), n, d);
}

TEST(Scorer, SparseCopyMatchesDenseScoresAndVjp) {
  const std::size_t n = 5000, d = 37;  // more than one parallel block
  const FeatureMatrix dense = mostly_zero(n, d, 0.1, 3);
  const std::optional<FeatureMatrix> csr = sparse_copy(dense);
  ASSERT_TRUE(csr.has_value());
  ASSERT_TRUE(csr->is_sparse());
  EXPECT_EQ(csr->rows(), n);
  EXPECT_EQ(csr->cols(), d);
  const DenseView v = dense.dense_view();
  std::size_t nnz = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      EXPECT_EQ(csr->at(i, j), v(i, j));
      nnz += v(i, j) != 0 ? 1 : 0;
    }
  EXPECT_EQ(csr->nnz(), nnz);

  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  std::vector<double> params(d + 1), dv(n);
  for (double& p : params) p = g(rng);
  for (std::size_t i = 0; i < n; ++i) dv[i] = i % 3 == 0 ? 0.0 : g(rng);
  // Oracle: direct sums.
  std::vector<double> want_scores(n), want_grad(d + 1, 0.5);
  for (std::size_t i = 0; i < n; ++i) {
    double s = params[d];
    for (std::size_t j = 0; j < d; ++j) s += v(i, j) * params[j];
    want_scores[i] = s;
    for (std::size_t j = 0; j < d; ++j) want_grad[j] += dv[i] * v(i, j);
    want_grad[d] += dv[i];
  }
  const LinearScorer scorer(d);
  for (const FeatureMatrix* x : {&dense, &*csr}) {
    for (int threads : {1, 2}) {
      std::vector<double> s(n), grad(d + 1, 0.5);
      scorer.scores(*x, params, s, threads);
      scorer.vjp(*x, params, dv, grad, threads);
      for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(s[i], want_scores[i], 1e-12);
      for (std::size_t j = 0; j <= d; ++j) EXPECT_NEAR(grad[j], want_grad[j], 1e-9);
    }
  }
}

TEST(Scorer, SparseCopyOnlyWhenMostlyZero) {
  EXPECT_FALSE(sparse_copy(mostly_zero(100, 10, 0.9, 1)).has_value());
  EXPECT_TRUE(sparse_copy(mostly_zero(100, 10, 0.05, 1)).has_value());
  const FeatureMatrix already = *sparse_copy(mostly_zero(100, 10, 0.05, 2));
  EXPECT_FALSE(sparse_copy(already).has_value());
  // An all-zero row keeps its place.
  const FeatureMatrix z = FeatureMatrix::dense({0, 0, 1, 0, 0, 0}, 3, 2);
  const FeatureMatrix c = *sparse_copy(z, 0.5);
  EXPECT_EQ(c.rows(), 3u);
  EXPECT_EQ(c.at(1, 0), 1.0);
  EXPECT_EQ(c.at(0, 0), 0.0);
}

}  // namespace
}  // namespace rateopt
