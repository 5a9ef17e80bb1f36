// LinearScorer: scores and vector-Jacobian products of f(x) = w . x + b.
#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/check.hpp"
#include "common/csr.hpp"
#include "common/parallel.hpp"
#include "rateopt/train.hpp"
#include "train/train_impl.hpp"

namespace rateopt {

namespace {
// Rows per parallel block (fixed, so reductions do not depend on the thread count).
constexpr std::size_t kBlock = 2048;
}  // namespace

void LinearScorer::scores(const FeatureMatrix& x, std::span<const double> params,
                          std::span<double> out, int n_threads) const {
  RATEOPT_CHECK(params.size() == d_ + 1, "LinearScorer: {} parameters, expected {}", params.size(),
                d_ + 1);
  RATEOPT_CHECK(x.cols() <= d_, "LinearScorer: the matrix has {} columns, the model {}", x.cols(),
                d_);
  RATEOPT_CHECK(out.size() == x.rows(), "LinearScorer: out has {} entries, expected {}", out.size(),
                x.rows());
  const std::span<const double> w = params.first(x.cols());
  const double b = intercept_ ? params[d_] : 0.0;
  if (!x.is_sparse()) {
    // Dense: blocks of rows as Eigen matrix-vector products.
    const DenseView v = x.dense_view();
    using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::Map<const Eigen::VectorXd> wv(w.data(), static_cast<Eigen::Index>(v.cols));
    detail::parallel_for((v.rows + kBlock - 1) / kBlock, n_threads, [&](std::size_t blk) {
      const std::size_t begin = blk * kBlock, end = std::min(v.rows, begin + kBlock);
      const Eigen::Map<const Mat, 0, Eigen::OuterStride<>> xb(
          v.data + begin * v.row_stride, static_cast<Eigen::Index>(end - begin),
          static_cast<Eigen::Index>(v.cols),
          Eigen::OuterStride<>(static_cast<Eigen::Index>(v.row_stride)));
      Eigen::Map<Eigen::VectorXd> ob(out.data() + begin, static_cast<Eigen::Index>(end - begin));
      ob.noalias() = xb * wv;
      ob.array() += b;
    });
    return;
  }
  const CsrView v = x.csr_view();
  detail::parallel_for((v.rows + kBlock - 1) / kBlock, n_threads, [&](std::size_t blk) {
    const std::size_t end = std::min(v.rows, (blk + 1) * kBlock);
    for (std::size_t i = blk * kBlock; i < end; ++i) {
      double s = b;
      for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
        s += v.values[static_cast<std::size_t>(k)] *
             w[static_cast<std::size_t>(v.indices[static_cast<std::size_t>(k)])];
      out[i] = s;
    }
  });
}

void LinearScorer::vjp(const FeatureMatrix& x, std::span<const double> params,
                       std::span<const double> d, std::span<double> grad, int n_threads) const {
  RATEOPT_CHECK(params.size() == d_ + 1 && grad.size() == d_ + 1,
                "LinearScorer::vjp: params / grad sizes {} / {}, expected {}", params.size(),
                grad.size(), d_ + 1);
  RATEOPT_CHECK(d.size() == x.rows(), "LinearScorer::vjp: d has {} entries, expected {}", d.size(),
                x.rows());
  const std::size_t cols = x.cols();
  if (!x.is_sparse()) {
    const DenseView v = x.dense_view();
    using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    struct DAcc {
      Eigen::VectorXd g;
      double b = 0;
    };
    DAcc total = detail::block_reduce<DAcc>(
        v.rows, n_threads,
        [&](std::size_t begin, std::size_t end) {
          const Eigen::Map<const Mat, 0, Eigen::OuterStride<>> xb(
              v.data + begin * v.row_stride, static_cast<Eigen::Index>(end - begin),
              static_cast<Eigen::Index>(v.cols),
              Eigen::OuterStride<>(static_cast<Eigen::Index>(v.row_stride)));
          const Eigen::Map<const Eigen::VectorXd> db(d.data() + begin,
                                                     static_cast<Eigen::Index>(end - begin));
          DAcc a;
          a.g.noalias() = xb.transpose() * db;
          a.b = db.sum();
          return a;
        },
        [&](DAcc& into, DAcc& part) {
          if (into.g.size() == 0) into.g = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(cols));
          into.g += part.g;
          into.b += part.b;
        },
        kBlock);
    for (std::size_t j = 0; j < cols && static_cast<Eigen::Index>(j) < total.g.size(); ++j)
      grad[j] += total.g[static_cast<Eigen::Index>(j)];
    if (intercept_) grad[d_] += total.b;
    return;
  }
  struct Acc {
    std::vector<double> g;
    double b = 0;
  };
  const CsrView v = x.csr_view();
  Acc total = detail::block_reduce<Acc>(
      v.rows, n_threads,
      [&](std::size_t begin, std::size_t end) {
        Acc a;
        a.g.assign(cols, 0.0);
        for (std::size_t i = begin; i < end; ++i) {
          const double di = d[i];
          if (di == 0) continue;
          for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k)
            a.g[static_cast<std::size_t>(v.indices[static_cast<std::size_t>(k)])] +=
                di * v.values[static_cast<std::size_t>(k)];
          a.b += di;
        }
        return a;
      },
      [&](Acc& into, Acc& part) {
        if (into.g.empty()) into.g.assign(cols, 0.0);
        for (std::size_t j = 0; j < cols; ++j) into.g[j] += part.g[j];
        into.b += part.b;
      });
  for (std::size_t j = 0; j < cols && j < total.g.size(); ++j) grad[j] += total.g[j];
  if (intercept_) grad[d_] += total.b;
}

std::optional<FeatureMatrix> sparse_copy(const FeatureMatrix& x, double max_density) {
  if (x.is_sparse() || x.rows() == 0 || x.cols() == 0) return std::nullopt;
  const DenseView v = x.dense_view();
  const std::size_t nnz = detail::count_nonzeros(v);
  if (static_cast<double>(nnz) > max_density * static_cast<double>(v.rows * v.cols))
    return std::nullopt;
  return detail::dense_to_csr_matrix(v, nnz);
}

LinearModel LinearScorer::to_linear(std::span<const double> params) const {
  LinearModel m;
  m.weights.assign(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(d_));
  m.bias = intercept_ ? params[d_] : 0.0;
  return m;
}

}  // namespace rateopt
