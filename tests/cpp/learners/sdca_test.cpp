// Tests of the weighted-SVM SDCA solver (src/learners/sdca.cpp): against an exact QP solved by CLP
// (an independent method), within the certified duality gap; storage kinds, thread counts, warm
// starts, the linear term, degenerate examples and bad input.
#include "rateopt/sdca.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "common/csr.hpp"
#include "learners/sdca_qp.hpp"
#include "rateopt/error.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

struct SvmInstance {
  std::size_t rows = 0, cols = 0;
  std::vector<double> dense;
  std::vector<SvmExample> examples;

  [[nodiscard]] FeatureMatrix dense_matrix() const {
    return FeatureMatrix::dense(dense, rows, cols);
  }
  [[nodiscard]] FeatureMatrix csr_matrix() const {
    return detail::dense_to_csr_matrix(DenseView{dense.data(), rows, cols, cols});
  }
};

// Sparse-ish random rows; labels correlated with a hidden direction; some rows appear twice with
// opposite labels (as in the ramp reduction), some weights are zero.
SvmInstance make_instance(std::size_t rows, std::size_t cols, std::uint64_t seed,
                          double density = 0.6) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif(0, 1);
  SvmInstance in;
  in.rows = rows;
  in.cols = cols;
  in.dense.assign(rows * cols, 0.0);
  std::vector<double> truth(cols);
  for (double& t : truth) t = normal(rng);
  for (std::size_t i = 0; i < rows; ++i) {
    double s = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      if (unif(rng) < density) in.dense[i * cols + j] = normal(rng);
      s += in.dense[i * cols + j] * truth[j];
    }
    const double y = (s + 0.5 * normal(rng)) > 0 ? 1.0 : -1.0;
    const double c = unif(rng) < 0.1 ? 0.0 : 0.2 + unif(rng);
    in.examples.push_back({0, i, y, c / static_cast<double>(rows)});
    if (unif(rng) < 0.3) in.examples.push_back({0, i, -y, unif(rng) / static_cast<double>(rows)});
  }
  return in;
}

// |w - w*|^2 + (b - b*)^2 / beta^2 <= 2 (P(w) - P*) / lambda by strong convexity.
double model_distance2(const LinearModel& a, const LinearModel& b, double beta) {
  double s = 0;
  for (std::size_t j = 0; j < a.weights.size(); ++j)
    s += (a.weights[j] - b.weights[j]) * (a.weights[j] - b.weights[j]);
  if (beta > 0) s += (a.bias - b.bias) * (a.bias - b.bias) / (beta * beta);
  return s;
}

TEST(Sdca, MatchesExactQpWithinCertifiedGap) {
  for (const double beta : {1.0, 0.0}) {
    for (const double lambda : {1e-2, 1e-3}) {
      const SvmInstance in = make_instance(60, 5, 7);
      const FeatureMatrix x = in.dense_matrix();
      const FeatureMatrix* const mats[] = {&x};
      WeightedSvmOptions o;
      o.lambda = lambda;
      o.bias_feature = beta;
      o.gap_rel = 1e-9;
      const auto fit = fit_weighted_svm(mats, in.examples, o);
      ASSERT_EQ(fit.status, Termination::kConverged);
      EXPECT_GE(fit.gap, -1e-12);
      EXPECT_LE(fit.gap, 1e-9 * fit.primal + 1e-15);
      // The reported primal is the primal of the returned model.
      EXPECT_NEAR(fit.primal, weighted_svm_primal(mats, in.examples, fit.model, lambda, beta),
                  1e-12);

      const auto qp = detail::solve_hinge_qp(x, in.examples, lambda, beta);
      ASSERT_TRUE(qp.solved);
      // Weak duality brackets the exact optimum: D(alpha) <= P* <= P(w).
      EXPECT_LE(fit.dual, qp.objective + 1e-9) << "beta " << beta << " lambda " << lambda;
      EXPECT_GE(fit.primal, qp.objective - 1e-9);
      EXPECT_NEAR(fit.primal, qp.objective, fit.gap + 1e-9);
      EXPECT_LE(model_distance2(fit.model, qp.model, beta), 2 * (fit.gap + 1e-9) / lambda);
    }
  }
}

TEST(Sdca, LinearTermMatchesExactQp) {
  const SvmInstance in = make_instance(50, 4, 11);
  const FeatureMatrix x = in.dense_matrix();
  const FeatureMatrix* const mats[] = {&x};
  const std::vector<double> q{0.01, -0.02, 0.005, 0.0};
  WeightedSvmOptions o;
  o.lambda = 5e-3;
  o.gap_rel = 1e-10;
  const auto fit = fit_weighted_svm(mats, in.examples, o, q);
  ASSERT_EQ(fit.status, Termination::kConverged);
  const auto qp = detail::solve_hinge_qp(x, in.examples, o.lambda, 1.0, q);
  ASSERT_TRUE(qp.solved);
  EXPECT_LE(fit.dual, qp.objective + 1e-9);
  EXPECT_GE(fit.primal, qp.objective - 1e-9);
  EXPECT_NEAR(fit.primal, weighted_svm_primal(mats, in.examples, fit.model, o.lambda, 1.0, q),
              1e-12);
  EXPECT_LE(model_distance2(fit.model, qp.model, 1.0), 2 * (fit.gap + 1e-9) / o.lambda);
}

// Mostly-zero dense rows (walked through an internal CSR copy), real CSR rows, and shrinking on
// and off: every variant brackets the exact QP optimum within its own certified gap, and the
// dense and CSR runs take the same steps.
TEST(Sdca, MostlyZeroDenseCsrAndShrinkingMatchTheExactQp) {
  const SvmInstance in = make_instance(120, 10, 17, 0.2);
  const FeatureMatrix xd = in.dense_matrix();
  const FeatureMatrix xs = in.csr_matrix();
  const double lambda = 2e-3;
  const auto qp = detail::solve_hinge_qp(xd, in.examples, lambda, 1.0);
  ASSERT_TRUE(qp.solved);
  std::vector<WeightedSvmResult> fits;
  for (const bool shrinking : {true, false}) {
    for (const FeatureMatrix* x : {&xd, &xs}) {
      WeightedSvmOptions o;
      o.lambda = lambda;
      o.gap_rel = 1e-8;
      o.shrinking = shrinking;
      o.n_threads = 1;
      const FeatureMatrix* const mats[] = {x};
      const auto fit = fit_weighted_svm(mats, in.examples, o);
      ASSERT_EQ(fit.status, Termination::kConverged);
      EXPECT_LE(fit.dual, qp.objective + 1e-9);
      EXPECT_GE(fit.primal, qp.objective - 1e-9);
      EXPECT_LE(model_distance2(fit.model, qp.model, 1.0), 2 * (fit.gap + 1e-9) / lambda);
      EXPECT_NEAR(fit.primal, weighted_svm_primal(mats, in.examples, fit.model, lambda, 1.0),
                  1e-12);
      fits.push_back(fit);
    }
  }
  for (const std::size_t k : {std::size_t{0}, std::size_t{2}}) {
    EXPECT_EQ(fits[k].epochs, fits[k + 1].epochs);
    for (std::size_t j = 0; j < fits[k].model.weights.size(); ++j)
      EXPECT_NEAR(fits[k].model.weights[j], fits[k + 1].model.weights[j], 1e-12);
  }
}

TEST(Sdca, DenseAndSparseAgreeAndThreadCountDoesNotMatter) {
  const SvmInstance in = make_instance(300, 8, 3);
  const FeatureMatrix xd = in.dense_matrix();
  const FeatureMatrix xs = in.csr_matrix();
  WeightedSvmOptions o;
  o.lambda = 1e-3;
  o.gap_rel = 1e-6;
  o.n_threads = 1;
  const FeatureMatrix* const md[] = {&xd};
  const FeatureMatrix* const ms[] = {&xs};
  const auto a = fit_weighted_svm(md, in.examples, o);
  const auto b = fit_weighted_svm(ms, in.examples, o);
  o.n_threads = 2;
  const auto c = fit_weighted_svm(ms, in.examples, o);
  ASSERT_EQ(a.epochs, b.epochs) << a.epochs;
  EXPECT_EQ(a.status, Termination::kConverged) << a.epochs << " " << a.gap << " " << a.primal;
  for (std::size_t j = 0; j < a.model.weights.size(); ++j)
    EXPECT_NEAR(a.model.weights[j], b.model.weights[j], 1e-12);
  EXPECT_EQ(b.model.weights, c.model.weights);
  EXPECT_EQ(b.alpha, c.alpha);
  EXPECT_EQ(b.primal, c.primal);
}

TEST(Sdca, SeveralMatricesEqualOneStackedMatrix) {
  const SvmInstance in = make_instance(80, 5, 5);
  // Split rows into two matrices.
  const std::size_t half = 40;
  const FeatureMatrix top =
      FeatureMatrix::dense({in.dense.begin(), in.dense.begin() + half * 5}, half, 5);
  const FeatureMatrix bottom =
      FeatureMatrix::dense({in.dense.begin() + half * 5, in.dense.end()}, 80 - half, 5);
  std::vector<SvmExample> split = in.examples;
  for (auto& e : split)
    if (e.row >= half) {
      e.matrix = 1;
      e.row -= half;
    }
  const FeatureMatrix whole = in.dense_matrix();
  const FeatureMatrix* const m1[] = {&whole};
  const FeatureMatrix* const m2[] = {&top, &bottom};
  WeightedSvmOptions o;
  o.lambda = 1e-3;
  const auto a = fit_weighted_svm(m1, in.examples, o);
  const auto b = fit_weighted_svm(m2, split, o);
  EXPECT_EQ(a.alpha, b.alpha);
  EXPECT_EQ(a.model.weights, b.model.weights);
}

TEST(Sdca, WarmStartReachesTheSameOptimum) {
  const SvmInstance in = make_instance(400, 6, 9);
  const FeatureMatrix x = in.csr_matrix();
  const FeatureMatrix* const mats[] = {&x};
  WeightedSvmOptions o;
  o.lambda = 1e-3;
  o.gap_rel = 1e-8;
  const auto cold = fit_weighted_svm(mats, in.examples, o);
  // Perturb the weights a little (as between two multipliers of the ramp solver) and warm start.
  std::vector<SvmExample> changed = in.examples;
  for (auto& e : changed) e.weight *= 1.05;
  const auto warm = fit_weighted_svm(mats, changed, o, {}, cold.alpha);
  const auto fresh = fit_weighted_svm(mats, changed, o);
  ASSERT_EQ(warm.status, Termination::kConverged);
  ASSERT_EQ(fresh.status, Termination::kConverged);
  EXPECT_NEAR(warm.primal, fresh.primal, warm.gap + fresh.gap + 1e-12);
  EXPECT_LE(model_distance2(warm.model, fresh.model, 1.0),
            2 * (2 * (warm.gap + fresh.gap)) / o.lambda + 1e-12);
}

TEST(Sdca, MaxEpochsReportsTheGap) {
  const SvmInstance in = make_instance(200, 6, 13);
  const FeatureMatrix x = in.dense_matrix();
  WeightedSvmOptions o;
  o.lambda = 1e-5;
  o.gap_rel = 1e-14;
  o.max_epochs = 2;
  std::vector<std::int32_t> labels(in.rows);
  for (std::size_t i = 0; i < in.rows; ++i) labels[i] = static_cast<std::int32_t>(i % 2);
  const auto fit = fit_weighted_svm(x, labels, {}, o);
  EXPECT_EQ(fit.status, Termination::kMaxIterations);
  EXPECT_EQ(fit.epochs, 2);
  EXPECT_GT(fit.gap, 0);
  EXPECT_NEAR(fit.primal - fit.dual, fit.gap, 1e-12);
}

TEST(Sdca, ZeroRowsAndZeroWeights) {
  // Row 0 is zero and there is no bias: its hinge is the constant c, alpha = c.
  const FeatureMatrix x = FeatureMatrix::dense({0, 0, 1, 0, 0, -1}, 3, 2);
  const FeatureMatrix* const mats[] = {&x};
  const std::vector<SvmExample> ex{{0, 0, 1, 0.5}, {0, 1, 1, 1.0}, {0, 2, -1, 0.0}};
  WeightedSvmOptions o;
  o.lambda = 0.5;
  o.bias_feature = 0;
  const auto fit = fit_weighted_svm(mats, ex, o);
  ASSERT_EQ(fit.status, Termination::kConverged);
  EXPECT_EQ(fit.alpha[0], 0.5);
  EXPECT_EQ(fit.alpha[2], 0.0);
  // min 0.25 w^2 + max(0, 1 - w) + 0.5: w = 1 (subgradient 0.5 w - 1 * [w<1]... optimum at the
  // kink w = 1 since 0.5 * 1 <= 1), P = 0.25 + 0.5.
  EXPECT_NEAR(fit.model.weights[0], 1.0, 1e-6);
  EXPECT_NEAR(fit.primal, 0.75, 1e-6);
  EXPECT_EQ(fit.model.bias, 0.0);
}

TEST(Sdca, BadInputThrowsNamingTheArgument) {
  const FeatureMatrix x = FeatureMatrix::dense({1, 2, 3, 4}, 2, 2);
  const FeatureMatrix y3 = FeatureMatrix::dense({1, 2, 3}, 1, 3);
  const FeatureMatrix* const mats[] = {&x};
  const FeatureMatrix* const mixed[] = {&x, &y3};
  const FeatureMatrix* const null_mats[] = {nullptr};
  using test::contains;
  using test::error_of;
  const std::vector<SvmExample> ok{{0, 0, 1, 1}, {0, 1, -1, 1}};
  WeightedSvmOptions bad;
  bad.lambda = 0;
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] { (void)fit_weighted_svm(mats, ok, bad); }),
                       "lambda"));
  bad = {};
  bad.gap_abs = 0;
  bad.gap_rel = 0;
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] { (void)fit_weighted_svm(mats, ok, bad); }),
                       "gap_abs"));
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] {
                         (void)fit_weighted_svm(mats, {{{0, 5, 1, 1}}});
                       }),
                       "examples[0].row"));
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] {
                         (void)fit_weighted_svm(mats, {{{0, 0, 0.5, 1}}});
                       }),
                       "label"));
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] {
                         (void)fit_weighted_svm(mats, {{{0, 0, 1, -1}}});
                       }),
                       "weight"));
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] {
                         (void)fit_weighted_svm(mats, {{{2, 0, 1, 1}}});
                       }),
                       "matrix"));
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] { (void)fit_weighted_svm(mixed, ok); }), "columns"));
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] { (void)fit_weighted_svm(null_mats, ok); }), "null"));
  const std::vector<double> q3{1, 2, 3};
  EXPECT_TRUE(contains(error_of<InvalidArgument>([&] { (void)fit_weighted_svm(mats, ok, {}, q3); }),
                       "linear_term"));
  const std::vector<double> a1{1};
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] { (void)fit_weighted_svm(mats, ok, {}, {}, a1); }),
               "warm_alpha"));
  const std::vector<std::int32_t> labels{0, 2};
  EXPECT_TRUE(
      contains(error_of<InvalidArgument>([&] { (void)fit_weighted_svm(x, labels); }), "labels[1]"));
}

}  // namespace
}  // namespace rateopt
