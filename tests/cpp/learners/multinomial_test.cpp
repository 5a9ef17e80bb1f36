// Tests of multinomial (softmax) logistic regression (src/learners/multinomial.cpp), both solvers
// (Newton-CG and L-BFGS): optimality of the solution (finite-difference gradient ~0, objective
// below random perturbations), equivalence with the binary logistic regression at 2 classes,
// thread-count determinism, dense vs CSR, unseen classes and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "common/csr.hpp"
#include "rateopt/error.hpp"
#include "rateopt/logistic.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

struct Data {
  std::size_t rows = 0, cols = 0;
  std::vector<double> x;  // row-major
  std::vector<std::int32_t> y;
  std::vector<double> w;
};

using test::uniform;

// Classes drawn from a softmax of a random linear model (class values 0, 2, 5, ... spaced by
// `spacing`, so that class values and indices differ).
Data make_data(std::size_t rows, std::size_t cols, std::size_t K, std::uint64_t seed,
               int spacing = 1, bool weighted = false) {
  std::mt19937_64 rng(seed);
  Data d;
  d.rows = rows;
  d.cols = cols;
  std::vector<double> truth(cols * K);
  for (double& v : truth) v = 2 * uniform(rng) - 1;
  for (std::size_t i = 0; i < rows; ++i) {
    std::vector<double> z(K, 0.0);
    for (std::size_t j = 0; j < cols; ++j) {
      const double v = uniform(rng) < 0.6 ? 2 * uniform(rng) - 1 : 0.0;
      d.x.push_back(v);
      for (std::size_t k = 0; k < K; ++k) z[k] += 2 * v * truth[j * K + k];
    }
    double sum = 0;
    for (double& v : z) sum += (v = std::exp(v));
    double u = uniform(rng) * sum;
    std::size_t k = 0;
    while (k + 1 < K && u >= z[k]) u -= z[k++];
    d.y.push_back(static_cast<std::int32_t>(k) * spacing);
    if (weighted) d.w.push_back(0.5 + uniform(rng));
  }
  return d;
}

FeatureMatrix csr_of(const Data& d) {
  return detail::dense_to_csr_matrix(DenseView{d.x.data(), d.rows, d.cols, d.cols});
}

// The objective, computed independently of the library (theta: W feature-major, then b).
double objective(const Data& d, const std::vector<std::int32_t>& classes, double c,
                 const std::vector<double>& theta) {
  const std::size_t K = classes.size();
  double loss = 0;
  for (std::size_t i = 0; i < d.rows; ++i) {
    std::vector<double> z(K);
    for (std::size_t k = 0; k < K; ++k) {
      z[k] = theta[d.cols * K + k];
      for (std::size_t j = 0; j < d.cols; ++j) z[k] += d.x[i * d.cols + j] * theta[j * K + k];
    }
    double top = z[0];
    for (double v : z) top = std::max(top, v);
    double s = 0;
    for (double v : z) s += std::exp(v - top);
    std::size_t y = 0;
    while (classes[y] != d.y[i]) ++y;
    loss += (d.w.empty() ? 1.0 : d.w[i]) * (top + std::log(s) - z[y]);
  }
  double penalty = 0;
  for (std::size_t j = 0; j < d.cols * K; ++j) penalty += theta[j] * theta[j];
  return c * loss + 0.5 * penalty;
}

std::vector<double> theta_of(const MultinomialModel& m) {
  std::vector<double> t = m.weights;
  t.insert(t.end(), m.biases.begin(), m.biases.end());
  return t;
}

TEST(MultinomialLogistic, SolutionIsOptimal) {
  for (const MultinomialSolver solver : {MultinomialSolver::kNewton, MultinomialSolver::kLbfgs}) {
    SCOPED_TRACE(solver == MultinomialSolver::kNewton ? "newton" : "lbfgs");
    const Data d = make_data(300, 5, 4, 11, /*spacing=*/3, /*weighted=*/true);
    const FeatureMatrix x = FeatureMatrix::dense(d.x, d.rows, d.cols);
    const auto fit = fit_multinomial_logistic_regression(
        x, d.y, d.w, {.c = 0.7, .tol = 1e-10, .max_iter = 5000, .solver = solver});
    ASSERT_EQ(fit.status, Termination::kConverged);
    EXPECT_EQ(fit.model.classes, (std::vector<std::int32_t>{0, 3, 6, 9}));
    const std::vector<double> theta = theta_of(fit.model);
    const double f0 = objective(d, fit.model.classes, 0.7, theta);
    EXPECT_NEAR(f0, fit.objective, 1e-9 * std::abs(f0));
    // Central finite differences of the independent objective: every component ~0.
    double gnorm = 0;
    for (std::size_t j = 0; j < theta.size(); ++j) {
      std::vector<double> a = theta, b = theta;
      const double h = 1e-5;
      a[j] += h;
      b[j] -= h;
      const double g =
          (objective(d, fit.model.classes, 0.7, a) - objective(d, fit.model.classes, 0.7, b)) /
          (2 * h);
      gnorm += g * g;
    }
    EXPECT_LT(std::sqrt(gnorm), 1e-5);
    // Random perturbations never decrease the objective.
    std::mt19937_64 rng(5);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<double> t = theta;
      const double scale = trial < 25 ? 1e-3 : 1e-1;
      for (double& v : t) v += scale * (2 * uniform(rng) - 1);
      EXPECT_GE(objective(d, fit.model.classes, 0.7, t), f0 - 1e-10);
    }
    // Intercepts sum to zero (the solver stays in that subspace).
    double bsum = 0;
    for (double b : fit.model.biases) bsum += b;
    EXPECT_NEAR(bsum, 0.0, 1e-8);
  }
}

TEST(MultinomialLogistic, TwoClassesEqualBinaryLogisticRegressionAtTwiceC) {
  for (const double c : {0.05, 1.0, 20.0})
    for (const MultinomialSolver solver : {MultinomialSolver::kNewton, MultinomialSolver::kLbfgs}) {
      const Data d = make_data(400, 6, 2, 7, 1, true);
      const FeatureMatrix x = FeatureMatrix::dense(d.x, d.rows, d.cols);
      const auto multi = fit_multinomial_logistic_regression(
          x, d.y, d.w, {.c = c, .tol = 1e-10, .max_iter = 5000, .solver = solver});
      ASSERT_EQ(multi.status, Termination::kConverged);
      const auto binary = fit_logistic_regression(x, d.y, d.w, {.c = 2 * c, .tol = 1e-10});
      ASSERT_EQ(binary.status, Termination::kConverged);
      std::vector<double> p(2);
      for (std::size_t i = 0; i < d.rows; ++i) {
        multi.model.probabilities(x, i, p);
        const double s = binary.model.score(x, i);
        EXPECT_NEAR(p[1], 1 / (1 + std::exp(-s)), 1e-5) << "C " << c << " row " << i;
        EXPECT_NEAR(p[0] + p[1], 1.0, 1e-12);
      }
    }
}

TEST(MultinomialLogistic, BitIdenticalForAnyThreadCountAndCloseForCsr) {
  const Data d = make_data(9000, 4, 3, 3);  // > 2 reduction blocks
  const FeatureMatrix x = FeatureMatrix::dense(d.x, d.rows, d.cols);
  for (const MultinomialSolver solver : {MultinomialSolver::kNewton, MultinomialSolver::kLbfgs}) {
    const auto one =
        fit_multinomial_logistic_regression(x, d.y, {}, {.n_threads = 1, .solver = solver});
    for (int threads : {2, 4}) {
      const auto many =
          fit_multinomial_logistic_regression(x, d.y, {}, {.n_threads = threads, .solver = solver});
      EXPECT_EQ(one.model.weights, many.model.weights);
      EXPECT_EQ(one.model.biases, many.model.biases);
      EXPECT_EQ(one.iterations, many.iterations);
    }
  }
  const auto sparse = fit_multinomial_logistic_regression(csr_of(d), d.y, {}, {.tol = 1e-10});
  const auto dense = fit_multinomial_logistic_regression(x, d.y, {}, {.tol = 1e-10});
  std::vector<double> a(3), b(3);
  for (std::size_t i = 0; i < 200; ++i) {
    sparse.model.probabilities(x, i, a);
    dense.model.probabilities(x, i, b);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(a[k], b[k], 1e-7);
  }
}

TEST(MultinomialLogistic, UnseenClassesHaveProbabilityZeroAndOneClassIsCertain) {
  const Data d = make_data(100, 3, 3, 9, 2);  // classes 0, 2, 4
  const FeatureMatrix x = FeatureMatrix::dense(d.x, d.rows, d.cols);
  const auto fit = fit_multinomial_logistic_regression(x, d.y, {}, {});
  EXPECT_EQ(fit.model.probability_of(x, 0, 1), 0.0);
  EXPECT_EQ(fit.model.probability_of(x, 0, 7), 0.0);
  const double total = fit.model.probability_of(x, 0, 0) + fit.model.probability_of(x, 0, 2) +
                       fit.model.probability_of(x, 0, 4);
  EXPECT_NEAR(total, 1.0, 1e-12);
  const std::vector<std::int32_t> same(d.rows, 5);
  const auto single = fit_multinomial_logistic_regression(x, same, {}, {});
  EXPECT_EQ(single.model.num_classes(), 1u);
  EXPECT_EQ(single.model.probability_of(x, 3, 5), 1.0);
  EXPECT_NO_THROW(single.model.validate());
}

TEST(MultinomialLogistic, WarmStartReachesTheSameSolution) {
  const Data d = make_data(300, 5, 3, 17);
  const FeatureMatrix x = FeatureMatrix::dense(d.x, d.rows, d.cols);
  const auto small = fit_multinomial_logistic_regression(x, d.y, {}, {.c = 0.1});
  const auto cold = fit_multinomial_logistic_regression(x, d.y, {}, {.c = 10, .tol = 1e-10});
  MultinomialLogisticOptions o{.c = 10, .tol = 1e-10};
  o.initial = small.model;
  const auto warm = fit_multinomial_logistic_regression(x, d.y, {}, o);
  ASSERT_EQ(warm.status, Termination::kConverged);
  EXPECT_LE(warm.iterations, cold.iterations);
  for (std::size_t j = 0; j < cold.model.weights.size(); ++j)
    EXPECT_NEAR(warm.model.weights[j], cold.model.weights[j], 1e-6);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(warm.model.biases[k], cold.model.biases[k], 1e-6);
}

TEST(MultinomialLogistic, RejectsBadInput) {
  const Data d = make_data(20, 2, 2, 1);
  const FeatureMatrix x = FeatureMatrix::dense(d.x, d.rows, d.cols);
  EXPECT_THROW((void)fit_multinomial_logistic_regression(x, d.y, {}, {.c = 0}), InvalidArgument);
  std::vector<std::int32_t> short_y(d.y.begin(), d.y.end() - 1);
  EXPECT_THROW((void)fit_multinomial_logistic_regression(x, short_y, {}, {}), InvalidArgument);
  std::vector<std::int32_t> negative = d.y;
  negative[3] = -1;
  EXPECT_THROW((void)fit_multinomial_logistic_regression(x, negative, {}, {}), InvalidArgument);
  std::vector<double> w(d.rows, 1.0);
  w[0] = -1;
  EXPECT_THROW((void)fit_multinomial_logistic_regression(x, d.y, w, {}), InvalidArgument);
  std::vector<double> bad = d.x;
  bad[1] = NAN;
  EXPECT_THROW(
      (void)fit_multinomial_logistic_regression(FeatureMatrix::dense(bad, 20, 2), d.y, {}, {}),
      InvalidArgument);
}

}  // namespace
}  // namespace rateopt
