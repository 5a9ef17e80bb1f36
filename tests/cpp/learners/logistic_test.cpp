// Tests of L2-regularised logistic regression (src/learners/logistic.cpp): the objective's
// gradient, an independent Newton-method oracle, invariants (KKT, thread count, storage kind,
// weights), bad input, and accuracy on a9a against scikit-learn.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#if __has_include(<Eigen/Dense>)
#include <Eigen/Dense>
#else
#include <Eigen/Dense>
#endif

#include "common/csr.hpp"
#include "learners/logistic_objective.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "rateopt/logistic.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

// A labelled problem held in both storage kinds.
struct Problem {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> dense;  // row-major
  std::vector<std::int32_t> labels;
  std::vector<double> weights;

  [[nodiscard]] FeatureMatrix dense_matrix() const {
    return FeatureMatrix::dense(dense, rows, cols);
  }
  [[nodiscard]] FeatureMatrix csr_matrix() const {
    return detail::dense_to_csr_matrix(DenseView{dense.data(), rows, cols, cols});
  }
};

// Uniform in [0, 1) from the top 53 bits, so the data do not depend on the standard library.
using test::uniform;

// Random sparse-ish features in [-1, 1], labels from a noisy linear rule, weights in [0.5, 2).
Problem random_problem(std::size_t rows, std::size_t cols, std::uint64_t seed,
                       double density = 0.6) {
  std::mt19937_64 rng(seed);
  Problem p;
  p.rows = rows;
  p.cols = cols;
  std::vector<double> truth(cols);
  for (double& t : truth) t = 4 * uniform(rng) - 2;
  for (std::size_t i = 0; i < rows; ++i) {
    double z = 0.3;
    for (std::size_t j = 0; j < cols; ++j) {
      const double v = uniform(rng) < density ? 2 * uniform(rng) - 1 : 0.0;
      p.dense.push_back(v);
      z += truth[j] * v;
    }
    const double prob = 1 / (1 + std::exp(-z));
    p.labels.push_back(uniform(rng) < prob ? 1 : 0);
    p.weights.push_back(0.5 + 1.5 * uniform(rng));
  }
  return p;
}

double norm2(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// The documented stopping threshold: tol * max(min(W+, W-), mean non-zero weight) / W * |g(0)|_2,
// written here from the header's description.
double stopping_threshold(const detail::LogisticObjective& f, const std::vector<std::int32_t>& y,
                          const std::vector<double>& w, double tol) {
  double pos = 0;
  double neg = 0;
  double rows = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double wi = w.empty() ? 1.0 : w[i];
    (y[i] == 1 ? pos : neg) += wi;
    rows += wi > 0 ? 1 : 0;
  }
  const double total = pos + neg;
  std::vector<double> theta(f.dim(), 0.0);
  std::vector<double> g(f.dim());
  f.value_and_gradient(theta, g);
  return tol * std::max(std::min(pos, neg), total / rows) / total * norm2(g);
}

constexpr LogisticSolver kSolvers[] = {LogisticSolver::kNewton, LogisticSolver::kLbfgs};
const char* name(LogisticSolver s) {
  return s == LogisticSolver::kNewton ? "newton" : "lbfgs";
}

// ---- the objective ------------------------------------------------------------------------------

TEST(LogisticObjective, StableHelpers) {
  EXPECT_EQ(detail::log1p_exp(1000.0), 1000.0);
  EXPECT_DOUBLE_EQ(detail::log1p_exp(-745.0), std::exp(-745.0));
  EXPECT_NEAR(detail::log1p_exp(0.0), std::log(2.0), 1e-16);
  EXPECT_NEAR(detail::log1p_exp(-1e-3), std::log1p(std::exp(-1e-3)), 1e-16);
  EXPECT_EQ(detail::sigmoid(-1000.0), 0.0);
  EXPECT_EQ(detail::sigmoid(1000.0), 1.0);
  EXPECT_DOUBLE_EQ(detail::sigmoid(0.5) + detail::sigmoid(-0.5), 1.0);
  EXPECT_DOUBLE_EQ(detail::sigmoid(-30.0), std::exp(-30.0) / (1 + std::exp(-30.0)));
}

TEST(LogisticObjective, HandComputedValue) {
  // Two rows, one feature: x = (1, -2), y = (1, 0), w = (1, 3), C = 2, beta = 0.5, b = -0.25.
  const auto x = FeatureMatrix::dense({1.0, -2.0}, 2, 1);
  const std::vector<std::int32_t> y{1, 0};
  const std::vector<double> w{1.0, 3.0};
  const detail::LogisticObjective f(x, y, w, 2.0, true, 1);
  const std::vector<double> theta{0.5, -0.25};
  std::vector<double> g(2);
  const double value = f.value_and_gradient(theta, g);
  const double z0 = 0.25;   // 1 * 0.5 - 0.25, t = +1
  const double z1 = -1.25;  // -2 * 0.5 - 0.25, t = -1
  const double expected =
      2 * (std::log1p(std::exp(-z0)) + 3 * std::log1p(std::exp(z1))) + 0.5 * 0.25;
  EXPECT_NEAR(value, expected, 1e-14);
  const double s0 = -1 / (1 + std::exp(z0));  // d/dz log(1 + exp(-z))
  const double s1 = 3 / (1 + std::exp(-z1));  // 3 * d/dz log(1 + exp(z))
  EXPECT_NEAR(g[0], 2 * (s0 * 1 + s1 * -2) + 0.5, 1e-14);
  EXPECT_NEAR(g[1], 2 * (s0 + s1), 1e-14);
}

TEST(LogisticObjective, GradientMatchesCentralDifferences) {
  const Problem p = random_problem(80, 7, 11);
  for (bool sparse : {false, true}) {
    for (bool intercept : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "sparse=" << sparse << " intercept=" << intercept);
      const FeatureMatrix x = sparse ? p.csr_matrix() : p.dense_matrix();
      const detail::LogisticObjective f(x, p.labels, p.weights, 0.8, intercept, 1);
      ASSERT_EQ(f.dim(), p.cols + (intercept ? 1 : 0));
      std::mt19937_64 rng(5);
      std::vector<double> theta(f.dim());
      for (double& t : theta) t = 2 * uniform(rng) - 1;
      std::vector<double> g(f.dim());
      std::vector<double> scratch(f.dim());
      f.value_and_gradient(theta, g);
      const double h = 1e-5;
      for (std::size_t k = 0; k < f.dim(); ++k) {
        auto plus = theta;
        auto minus = theta;
        plus[k] += h;
        minus[k] -= h;
        const double fd =
            (f.value_and_gradient(plus, scratch) - f.value_and_gradient(minus, scratch)) / (2 * h);
        EXPECT_NEAR(g[k], fd, 1e-6 * std::max(1.0, std::abs(fd))) << "coordinate " << k;
      }
    }
  }
}

TEST(LogisticObjective, HessianProductMatchesGradientDifferences) {
  const Problem p = random_problem(90, 6, 12);
  for (bool sparse : {false, true}) {
    for (bool intercept : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "sparse=" << sparse << " intercept=" << intercept);
      const FeatureMatrix x = sparse ? p.csr_matrix() : p.dense_matrix();
      const detail::LogisticObjective f(x, p.labels, p.weights, 1.3, intercept, 1);
      std::mt19937_64 rng(6);
      std::vector<double> theta(f.dim());
      std::vector<double> v(f.dim());
      for (double& t : theta) t = 2 * uniform(rng) - 1;
      for (double& t : v) t = 2 * uniform(rng) - 1;
      std::vector<double> g(f.dim());
      std::vector<double> curvature(p.rows);
      f.evaluate(theta, {}, g, curvature);
      std::vector<double> hv(f.dim());
      f.hessian_product(curvature, v, hv);
      // H v = (g(theta + h v) - g(theta - h v)) / 2h + O(h^2).
      const double h = 1e-5;
      std::vector<double> plus = theta;
      std::vector<double> minus = theta;
      for (std::size_t k = 0; k < f.dim(); ++k) {
        plus[k] += h * v[k];
        minus[k] -= h * v[k];
      }
      std::vector<double> gp(f.dim());
      std::vector<double> gm(f.dim());
      f.value_and_gradient(plus, gp);
      f.value_and_gradient(minus, gm);
      for (std::size_t k = 0; k < f.dim(); ++k) {
        const double fd = (gp[k] - gm[k]) / (2 * h);
        EXPECT_NEAR(hv[k], fd, 1e-6 * std::max(1.0, std::abs(fd))) << "coordinate " << k;
      }
    }
  }
}

TEST(LogisticObjective, EvaluateMatchesValueAndGradient) {
  // evaluate() gives the same value and gradient as value_and_gradient(), the gradient at zero
  // matches gradient_at_zero(), and the loss decrease of a step matches the difference of the
  // values for a large step and stays accurate (no cancellation) for a tiny one.
  const Problem p = random_problem(70, 5, 13);
  for (bool sparse : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "sparse=" << sparse);
    const FeatureMatrix x = sparse ? p.csr_matrix() : p.dense_matrix();
    const double c = 0.9;
    const detail::LogisticObjective f(x, p.labels, p.weights, c, true, 1);
    std::vector<double> zero(f.dim(), 0.0);
    std::vector<double> g(f.dim());
    std::vector<double> g_eval(f.dim());
    std::vector<double> g_zero(f.dim());
    f.value_and_gradient(zero, g);
    f.gradient_at_zero(g_zero);
    for (std::size_t k = 0; k < f.dim(); ++k) EXPECT_NEAR(g_zero[k], g[k], 1e-13) << k;

    std::mt19937_64 rng(7);
    std::vector<double> theta(f.dim());
    std::vector<double> step(f.dim());
    for (double& t : theta) t = 2 * uniform(rng) - 1;
    for (double& t : step) t = 2 * uniform(rng) - 1;
    const double value = f.value_and_gradient(theta, g);
    std::vector<double> curvature(p.rows);
    const auto at = f.evaluate(theta, {}, g_eval, curvature);
    EXPECT_EQ(at.value, value);
    EXPECT_EQ(at.loss_decrease, 0.0);
    EXPECT_EQ(g_eval, g);
    for (double scale : {1.0, 1e-9}) {
      SCOPED_TRACE(::testing::Message() << "step scale " << scale);
      std::vector<double> from(f.dim());
      std::vector<double> s(f.dim());
      for (std::size_t k = 0; k < f.dim(); ++k) {
        s[k] = scale * step[k];
        from[k] = theta[k] - s[k];
      }
      std::vector<double> with_step(p.rows);
      const auto e = f.evaluate(theta, s, g_eval, with_step);
      // The curvature depends on theta alone, bit for bit (the Newton solver recomputes theta's
      // after a rejected step instead of keeping a second copy).
      EXPECT_TRUE(test::same_bits(with_step, curvature));
      // penalty(from) - penalty(theta), then the loss part of f(from) - f(theta).
      double penalty_decrease = 0;
      for (std::size_t k = 0; k + 1 < f.dim(); ++k)
        penalty_decrease += 0.5 * (from[k] * from[k] - theta[k] * theta[k]);
      if (scale == 1.0) {
        std::vector<double> scratch(f.dim());
        const double expected =
            (f.value_and_gradient(from, scratch) - value - penalty_decrease) / c;
        EXPECT_NEAR(e.loss_decrease, expected, 1e-11 * std::abs(value));
      } else {
        // First order: loss(from) - loss(theta) = -(g_loss . s), g_loss = (g - P theta) / C.
        double expected = 0;
        for (std::size_t k = 0; k < f.dim(); ++k)
          expected -= (g[k] - (k + 1 < f.dim() ? theta[k] : 0.0)) / c * s[k];
        EXPECT_NEAR(e.loss_decrease, expected, 1e-6 * std::abs(expected));
      }
    }
  }
}

// ---- an independent oracle: Newton's method with the exact Hessian ------------------------------

struct NewtonSolution {
  Eigen::VectorXd theta;
  double objective = 0;
};

// Minimises the same objective by damped Newton steps written here with Eigen, from scratch.
NewtonSolution newton_oracle(const Problem& p, double c, bool intercept) {
  const auto n = static_cast<Eigen::Index>(p.rows);
  const auto d = static_cast<Eigen::Index>(p.cols);
  const Eigen::Index k = d + (intercept ? 1 : 0);
  Eigen::MatrixXd a = Eigen::MatrixXd::Ones(n, k);  // features plus a column of ones
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < d; ++j) a(i, j) = p.dense[static_cast<std::size_t>(i * d + j)];
  Eigen::VectorXd t(n);
  Eigen::VectorXd w(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    t(i) = p.labels[static_cast<std::size_t>(i)] == 1 ? 1.0 : -1.0;
    w(i) = p.weights[static_cast<std::size_t>(i)];
  }
  Eigen::VectorXd penalty = Eigen::VectorXd::Ones(k);
  if (intercept) penalty(d) = 0;
  auto objective = [&](const Eigen::VectorXd& theta) {
    const Eigen::VectorXd m = t.cwiseProduct(a * theta);
    double loss = 0;
    for (Eigen::Index i = 0; i < n; ++i)
      loss += w(i) * (m(i) > 0 ? std::log1p(std::exp(-m(i))) : -m(i) + std::log1p(std::exp(m(i))));
    return c * loss + 0.5 * theta.cwiseProduct(penalty).dot(theta);
  };
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(k);
  for (int iter = 0; iter < 100; ++iter) {
    const Eigen::VectorXd m = t.cwiseProduct(a * theta);
    Eigen::VectorXd r(n);  // d loss_i / d z_i
    Eigen::VectorXd h(n);  // d^2 loss_i / d z_i^2
    for (Eigen::Index i = 0; i < n; ++i) {
      const double s = 1 / (1 + std::exp(m(i)));  // sigma(-m)
      r(i) = -t(i) * w(i) * s;
      h(i) = w(i) * s * (1 - s);
    }
    const Eigen::VectorXd grad = c * a.transpose() * r + penalty.cwiseProduct(theta);
    Eigen::MatrixXd hess = c * a.transpose() * h.asDiagonal() * a;
    hess.diagonal() += penalty;
    const Eigen::VectorXd step = hess.ldlt().solve(-grad);
    double alpha = 1;
    const double f0 = objective(theta);
    while (alpha > 1e-10 && objective(theta + alpha * step) > f0) alpha /= 2;
    theta += alpha * step;
    if (step.lpNorm<Eigen::Infinity>() < 1e-15) break;
  }
  return {theta, objective(theta)};
}

TEST(LogisticRegression, MatchesNewtonOracle) {
  for (const LogisticSolver solver : kSolvers) {
    for (bool intercept : {true, false}) {
      SCOPED_TRACE(::testing::Message()
                   << name(solver) << " intercept=" << intercept << " seed=21");
      const Problem p = random_problem(300, 6, 21);
      const double c = 0.7;
      const NewtonSolution oracle = newton_oracle(p, c, intercept);
      LogisticRegressionOptions o;
      o.c = c;
      o.fit_intercept = intercept;
      o.tol = 1e-10;
      o.n_threads = 1;
      o.solver = solver;
      const auto fit = fit_logistic_regression(p.dense_matrix(), p.labels, p.weights, o);
      EXPECT_EQ(fit.status, Termination::kConverged);
      ASSERT_EQ(fit.model.weights.size(), p.cols);
      for (std::size_t j = 0; j < p.cols; ++j)
        EXPECT_NEAR(fit.model.weights[j], oracle.theta(static_cast<Eigen::Index>(j)), 1e-6)
            << "weight " << j;
      const double oracle_bias = intercept ? oracle.theta(static_cast<Eigen::Index>(p.cols)) : 0.0;
      EXPECT_NEAR(fit.model.bias, oracle_bias, 1e-6);
      EXPECT_NEAR(fit.objective, oracle.objective, 1e-10 * std::abs(oracle.objective));
      EXPECT_GT(fit.iterations, 0);
      if (solver == LogisticSolver::kNewton) {
        EXPECT_GE(fit.inner_iterations, fit.iterations);
      }
    }
  }
}

TEST(LogisticRegression, DenseAndCsrGiveTheSameModel) {
  const Problem p = random_problem(500, 12, 31, 0.3);
  LogisticRegressionOptions o;
  o.c = 2.0;
  o.tol = 1e-9;
  const auto dense = fit_logistic_regression(p.dense_matrix(), p.labels, p.weights, o);
  const auto sparse = fit_logistic_regression(p.csr_matrix(), p.labels, p.weights, o);
  EXPECT_EQ(dense.status, Termination::kConverged);
  EXPECT_EQ(sparse.status, Termination::kConverged);
  for (std::size_t j = 0; j < p.cols; ++j)
    EXPECT_NEAR(dense.model.weights[j], sparse.model.weights[j], 1e-9);
  EXPECT_NEAR(dense.model.bias, sparse.model.bias, 1e-9);
  EXPECT_NEAR(dense.objective, sparse.objective, 1e-12 * std::abs(dense.objective));
}

TEST(LogisticRegression, MostlyZeroDenseFitsLikeItsCsrCopy) {
  // A dense matrix with <= 30% non-zeros is fitted from a CSR copy: the same model, bit for bit,
  // as fitting the CSR matrix itself.
  const Problem p = random_problem(700, 20, 33, 0.15);
  for (const LogisticSolver solver : kSolvers) {
    SCOPED_TRACE(name(solver));
    LogisticRegressionOptions o;
    o.solver = solver;
    o.n_threads = 1;
    const auto dense = fit_logistic_regression(p.dense_matrix(), p.labels, p.weights, o);
    const auto sparse = fit_logistic_regression(p.csr_matrix(), p.labels, p.weights, o);
    EXPECT_EQ(dense.status, Termination::kConverged);
    EXPECT_EQ(dense.iterations, sparse.iterations);
    EXPECT_EQ(dense.objective, sparse.objective);
    EXPECT_EQ(dense.model.bias, sparse.model.bias);
    EXPECT_EQ(dense.model.weights, sparse.model.weights);
  }
}

TEST(LogisticRegression, ThreadCountDoesNotChangeTheResult) {
  // More rows than three reduction blocks, so two threads really split the work.
  const Problem p = random_problem(3 * 4096 + 123, 15, 41, 0.4);
  for (const LogisticSolver solver : kSolvers) {
    for (bool sparse : {false, true}) {
      SCOPED_TRACE(::testing::Message() << name(solver) << " sparse=" << sparse);
      const FeatureMatrix x = sparse ? p.csr_matrix() : p.dense_matrix();
      const detail::LogisticObjective f(x, p.labels, p.weights, 1.0, true, 1);
      ASSERT_LT(f.block_rows(), p.rows / 2);
      LogisticRegressionOptions o;
      o.solver = solver;
      o.n_threads = 1;
      const auto one = fit_logistic_regression(x, p.labels, p.weights, o);
      o.n_threads = 2;
      const auto two = fit_logistic_regression(x, p.labels, p.weights, o);
      EXPECT_EQ(one.status, Termination::kConverged);
      EXPECT_EQ(one.iterations, two.iterations);
      EXPECT_EQ(one.inner_iterations, two.inner_iterations);
      EXPECT_EQ(one.objective, two.objective);
      EXPECT_EQ(one.model.bias, two.model.bias);
      for (std::size_t j = 0; j < p.cols; ++j)
        EXPECT_EQ(one.model.weights[j], two.model.weights[j]) << "weight " << j;
    }
  }
}

// Curvature kept per row or computed again in every Hessian product (curvature_rows_limit): the
// same iterations and bits, with weights, a warm start, dense and CSR rows; and rows in classes
// (fit_logistic_regression_by_class) the bits of the same labels and weights given per row.
TEST(LogisticRegression, CurvatureRecomputedOrByClassGivesTheSameBits) {
  const Problem p = random_problem(2 * 4096 + 77, 12, 43, 0.5);
  for (bool sparse : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "sparse=" << sparse);
    const FeatureMatrix x = sparse ? p.csr_matrix() : p.dense_matrix();
    LogisticRegressionOptions o;
    o.c = 10;  // a harder fit: more Newton and conjugate-gradient steps
    o.tol = 1e-10;
    const auto kept = fit_logistic_regression(x, p.labels, p.weights, o);
    o.curvature_rows_limit = 0;
    const auto again = fit_logistic_regression(x, p.labels, p.weights, o);
    EXPECT_GT(kept.inner_iterations, 5);
    EXPECT_EQ(kept.iterations, again.iterations);
    EXPECT_EQ(kept.inner_iterations, again.inner_iterations);
    EXPECT_TRUE(
        test::same_bits({kept.objective, kept.model.bias}, {again.objective, again.model.bias}));
    EXPECT_TRUE(test::same_bits(kept.model.weights, again.model.weights));
    // Warm-started from a point away from the optimum.
    o.initial = LinearModel{std::vector<double>(p.cols, 0.5), -1.0};
    const auto warm = fit_logistic_regression(x, p.labels, p.weights, o);
    o.curvature_rows_limit = std::size_t{1} << 22;
    const auto warm_kept = fit_logistic_regression(x, p.labels, p.weights, o);
    EXPECT_TRUE(test::same_bits(warm.model.weights, warm_kept.model.weights));
    // Three classes of (label, weight): per row and by class.
    std::vector<std::uint8_t> cls(p.rows);
    const std::vector<std::int32_t> class_labels{0, 1, 1};
    const std::vector<double> class_weights{0.7, 1.3, 0.0};
    std::vector<std::int32_t> labels(p.rows);
    std::vector<double> weights(p.rows);
    for (std::size_t i = 0; i < p.rows; ++i) {
      cls[i] = static_cast<std::uint8_t>((p.labels[i] + i) % 3);
      labels[i] = class_labels[cls[i]];
      weights[i] = class_weights[cls[i]];
    }
    o.initial.reset();
    const auto rows = fit_logistic_regression(x, labels, weights, o);
    const auto classes =
        detail::fit_logistic_regression_by_class(x, cls, class_labels, class_weights, o);
    EXPECT_EQ(rows.iterations, classes.iterations);
    EXPECT_TRUE(test::same_bits(rows.model.weights, classes.model.weights));
    EXPECT_TRUE(test::same_bits({rows.model.bias}, {classes.model.bias}));
    const std::vector<std::uint8_t> bad(p.rows, 3);
    EXPECT_THROW(
        (void)detail::fit_logistic_regression_by_class(x, bad, class_labels, class_weights, o),
        InvalidArgument);
  }
}

TEST(LogisticRegression, KktConditionHoldsAtTheSolution) {
  const Problem p = random_problem(400, 9, 51);
  for (const LogisticSolver solver : kSolvers) {
    for (double tol : {1e-4, 1e-6, 1e-8}) {
      SCOPED_TRACE(::testing::Message() << name(solver) << " tol=" << tol);
      LogisticRegressionOptions o;
      o.c = 3.0;
      o.tol = tol;
      o.solver = solver;
      const FeatureMatrix x = p.csr_matrix();
      const auto fit = fit_logistic_regression(x, p.labels, p.weights, o);
      ASSERT_EQ(fit.status, Termination::kConverged);
      const detail::LogisticObjective f(x, p.labels, p.weights, o.c, true, 1);
      const double threshold = stopping_threshold(f, p.labels, p.weights, tol);
      std::vector<double> theta(f.dim(), 0.0);
      std::vector<double> g(f.dim());
      std::copy(fit.model.weights.begin(), fit.model.weights.end(), theta.begin());
      theta.back() = fit.model.bias;
      const double value = f.value_and_gradient(theta, g);
      EXPECT_LE(norm2(g), threshold);
      EXPECT_EQ(fit.gradient_norm, norm2(g));
      EXPECT_EQ(fit.objective, value);
    }
  }
}

TEST(LogisticRegression, StoppingThresholdIsRelativeToTheGradientAtZero) {
  // The test is |g|_2 <= tol * factor * |g(0)|_2 (factor from the class weights) from any start:
  // a warm start at the solution meets a loose test at once, and one far away stops at the
  // threshold computed from the gradient at zero, not at the start.
  const Problem p = random_problem(500, 8, 52);
  const FeatureMatrix x = p.csr_matrix();
  LogisticRegressionOptions o;
  o.c = 2.0;
  o.tol = 1e-9;
  const auto exact = fit_logistic_regression(x, p.labels, p.weights, o);
  ASSERT_EQ(exact.status, Termination::kConverged);
  const detail::LogisticObjective f(x, p.labels, p.weights, o.c, true, 1);
  const double loose = stopping_threshold(f, p.labels, p.weights, 1e-3);
  for (const LogisticSolver solver : kSolvers) {
    SCOPED_TRACE(name(solver));
    LogisticRegressionOptions warm = o;
    warm.solver = solver;
    warm.tol = 1e-3;
    warm.initial = exact.model;
    const auto again = fit_logistic_regression(x, p.labels, p.weights, warm);
    EXPECT_EQ(again.status, Termination::kConverged);
    EXPECT_EQ(again.iterations, 0);
    EXPECT_EQ(again.model.weights, exact.model.weights);

    LinearModel far = exact.model;
    for (double& w : far.weights) w = -3 * w + 1;
    far.bias = 2;
    warm.initial = far;
    const auto from_far = fit_logistic_regression(x, p.labels, p.weights, warm);
    EXPECT_EQ(from_far.status, Termination::kConverged);
    EXPECT_GT(from_far.iterations, 0);
    EXPECT_LE(from_far.gradient_norm, loose);
    // The gradient at the far start is larger than at zero; a threshold relative to it would
    // stop earlier than this one.
    std::vector<double> theta(far.weights);
    theta.push_back(far.bias);
    std::vector<double> g(f.dim());
    f.value_and_gradient(theta, g);
    std::vector<double> zero(f.dim(), 0.0);
    std::vector<double> g0(f.dim());
    f.value_and_gradient(zero, g0);
    EXPECT_GT(norm2(g), norm2(g0));
  }
}

TEST(LogisticRegression, SampleWeightsActLikeRepeatedRows) {
  // Weight 2 on a row is the same objective as the row twice; weight 0 as the row absent.
  const Problem p = random_problem(60, 4, 61);
  std::vector<double> w(p.rows, 1.0);
  Problem repeated = p;
  repeated.dense.clear();
  repeated.labels.clear();
  std::size_t rows = 0;
  for (std::size_t i = 0; i < p.rows; ++i) {
    const int copies = static_cast<int>(i % 3);  // 0, 1 or 2
    w[i] = copies;
    for (int r = 0; r < copies; ++r) {
      repeated.dense.insert(repeated.dense.end(), p.dense.begin() + static_cast<long>(i * p.cols),
                            p.dense.begin() + static_cast<long>((i + 1) * p.cols));
      repeated.labels.push_back(p.labels[i]);
      ++rows;
    }
  }
  repeated.rows = rows;
  LogisticRegressionOptions o;
  o.tol = 1e-10;
  const auto weighted = fit_logistic_regression(p.dense_matrix(), p.labels, w, o);
  const auto copied = fit_logistic_regression(repeated.dense_matrix(), repeated.labels, {}, o);
  EXPECT_EQ(weighted.status, Termination::kConverged);
  for (std::size_t j = 0; j < p.cols; ++j)
    EXPECT_NEAR(weighted.model.weights[j], copied.model.weights[j], 1e-7);
  EXPECT_NEAR(weighted.model.bias, copied.model.bias, 1e-7);
}

TEST(LogisticRegression, SeparableDataHasAFiniteRegularisedSolution) {
  // Perfectly separable in one feature; without the penalty the weight would diverge.
  std::vector<double> xs;
  std::vector<std::int32_t> ys;
  for (int i = -20; i <= 20; ++i) {
    if (i == 0) continue;
    xs.push_back(i / 10.0);
    ys.push_back(i > 0 ? 1 : 0);
  }
  const auto x = FeatureMatrix::dense(xs, xs.size(), 1);
  for (double c : {1.0, 100.0}) {
    SCOPED_TRACE(::testing::Message() << "C=" << c);
    LogisticRegressionOptions o;
    o.c = c;
    const auto fit = fit_logistic_regression(x, ys, {}, o);
    EXPECT_EQ(fit.status, Termination::kConverged);
    ASSERT_TRUE(std::isfinite(fit.model.weights[0]));
    EXPECT_GT(fit.model.weights[0], 0);
    EXPECT_NEAR(fit.model.bias, 0.0, 1e-3 * std::abs(fit.model.weights[0]));  // symmetric data
    // 0.5 beta^2 <= f(beta) <= f(0) = C * n * log 2.
    EXPECT_LE(0.5 * fit.model.weights[0] * fit.model.weights[0], c * 40 * std::log(2.0));
    for (std::size_t i = 0; i < xs.size(); ++i)
      EXPECT_EQ(xs[i] * fit.model.weights[0] + fit.model.bias > 0, ys[i] == 1) << "row " << i;
  }
}

TEST(LogisticRegression, ReportsMaxIterations) {
  const Problem p = random_problem(200, 8, 71);
  for (const LogisticSolver solver : kSolvers) {
    SCOPED_TRACE(name(solver));
    LogisticRegressionOptions o;
    o.max_iter = 2;
    o.tol = 1e-12;
    o.solver = solver;
    const auto fit = fit_logistic_regression(p.dense_matrix(), p.labels, p.weights, o);
    EXPECT_EQ(fit.status, Termination::kMaxIterations);
    EXPECT_EQ(fit.iterations, 2);
    EXPECT_TRUE(std::isfinite(fit.objective));
    EXPECT_GT(fit.gradient_norm, 0);
  }
}

TEST(LogisticRegression, LineSearchFailureReturnsTheLastIterate) {
  // Features of size 1e100: the first step overshoots by ~100 orders of magnitude, beyond what
  // either line search can shrink (min_step 1e-20). The fit must report a numerical error and
  // return the last accepted iterate -- the start -- instead of throwing or returning garbage.
  std::vector<double> xs;
  std::vector<std::int32_t> ys;
  for (int i = 0; i < 20; ++i) {
    xs.push_back(1e100 * ((i % 5) - 2.0 + 0.1 * i));
    ys.push_back(i % 3 == 0 ? 1 : 0);
  }
  const auto fit = fit_logistic_regression(FeatureMatrix::dense(xs, 20, 1), ys, {}, {});
  EXPECT_EQ(fit.status, Termination::kNumericalError);
  EXPECT_EQ(fit.iterations, 0);
  EXPECT_EQ(fit.model.weights, std::vector<double>{0.0});
  EXPECT_EQ(fit.model.bias, 0.0);
  EXPECT_DOUBLE_EQ(fit.objective, 20 * std::log(2.0));
  EXPECT_GT(fit.gradient_norm, 1e99);
}

TEST(LogisticRegression, AlreadyOptimalStartStopsAtOnce) {
  // All weights zero: the objective is 0.5 |beta|^2, minimised at the start.
  const Problem p = random_problem(30, 3, 81);
  const std::vector<double> zero(p.rows, 0.0);
  const auto fit = fit_logistic_regression(p.dense_matrix(), p.labels, zero, {});
  EXPECT_EQ(fit.status, Termination::kConverged);
  EXPECT_EQ(fit.iterations, 0);
  EXPECT_EQ(fit.objective, 0.0);
  for (double w : fit.model.weights) EXPECT_EQ(w, 0.0);
}

TEST(LogisticRegression, RejectsBadInput) {
  const auto x = FeatureMatrix::dense({1, 2, 3, 4, 5, 6}, 3, 2);
  const std::vector<std::int32_t> y{0, 1, 1};
  auto fit = [&](const FeatureMatrix& m, std::vector<std::int32_t> labels,
                 std::vector<double> weights, LogisticRegressionOptions o) {
    (void)fit_logistic_regression(m, labels, weights, o);
  };
  EXPECT_NO_THROW(fit(x, y, {}, {}));
  EXPECT_THROW(fit(x, {0, 2, 1}, {}, {}), InvalidArgument);
  EXPECT_THROW(fit(x, {0, -1, 1}, {}, {}), InvalidArgument);
  EXPECT_THROW(fit(x, {0, 1}, {}, {}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {1, 1}, {}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {1, -1, 1}, {}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {1, std::nan(""), 1}, {}), InvalidArgument);
  EXPECT_THROW(fit(FeatureMatrix::dense({1, std::nan(""), 3, 4, 5, 6}, 3, 2), y, {}, {}),
               InvalidArgument);
  EXPECT_THROW(fit(FeatureMatrix::csr({0, 1, 1, 2}, {0, 1},
                                      {1.0, std::numeric_limits<double>::infinity()}, 2),
                   y, {}, {}),
               InvalidArgument);
  EXPECT_THROW(fit(FeatureMatrix::dense({}, 0, 2), {}, {}, {}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {}, {.c = 0}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {}, {.c = -1}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {}, {.c = std::nan("")}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {}, {.tol = 0}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {}, {.max_iter = 0}), InvalidArgument);
  EXPECT_THROW(fit(x, y, {}, {.memory = 0}), InvalidArgument);
  LogisticRegressionOptions bad_solver;
  bad_solver.solver = static_cast<LogisticSolver>(7);
  EXPECT_THROW(fit(x, y, {}, bad_solver), InvalidArgument);
  try {
    fit(x, {0, 7, 1}, {}, {});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("label of row 1 is 7"), std::string::npos) << e.what();
  }
}

// ---- a9a against scikit-learn
// ---------------------------------------------------------------------

bool require_data() {
  const char* env = std::getenv("RATEOPT_REQUIRE_DATA");
  return env != nullptr && std::string(env) == "1";
}

TEST(LogisticA9a, TestAccuracyMatchesScikitLearn) {
  const std::string train_path = test::data_dir() + "/adult/a9a.gz";
  const std::string test_path = test::data_dir() + "/adult/a9a.t";
  if (!std::filesystem::exists(train_path) || !std::filesystem::exists(test_path)) {
    if (require_data()) FAIL() << "a9a not found under " << test::data_dir();
    GTEST_SKIP() << "a9a not found under " << test::data_dir() << " (set RATEOPT_DATA_DIR)";
  }
  LibsvmOptions lo;
  lo.num_features = 123;
  const Dataset train = read_libsvm(train_path, lo);
  const Dataset test = read_libsvm(test_path, lo);
  ASSERT_EQ(train.num_rows(), 32561U);
  ASSERT_EQ(test.num_rows(), 16281U);
  ASSERT_EQ(test.num_features(), 123U);

  LogisticRegressionOptions o;
  o.c = 1.0;
  o.n_threads = 1;  // bit-identical for any count; one thread suits a parallel ctest best
  const auto fit =
      fit_logistic_regression(train.features(), train.labels().values, train.weights(), o);
  EXPECT_EQ(fit.status, Termination::kConverged);

  std::vector<double> scores(test.num_rows());
  fit.model.scores(test.features(), scores);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < scores.size(); ++i)
    correct += static_cast<std::size_t>((scores[i] > 0) == (test.labels().values[i] == 1));
  const double accuracy = static_cast<double>(correct) / static_cast<double>(scores.size());

  // scikit-learn 1.2.1 test accuracy (13835 / 16281), from
  //   /usr/bin/python3 -c 'from sklearn.datasets import load_svmlight_files as l;
  //     from sklearn.linear_model import LogisticRegression as LR; d="<data>/adult/";
  //     a,b,c,e=l([d+"a9a.gz",d+"a9a.t"],n_features=123);
  //     print(LR(C=1.0,solver="lbfgs",max_iter=5000,tol=1e-8).fit(a,b).score(c,e))'
  constexpr double kSklearnAccuracy = 0.849763528;
  EXPECT_NEAR(accuracy, kSklearnAccuracy, 0.005);
}

}  // namespace
}  // namespace rateopt
