// LP shrinking against brute force over pairs (one constraint: an optimal mixture needs at most
// two candidates), support <= m + 1, and the best-iterate rule on hand cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/train.hpp"

namespace rateopt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// min over mixtures of pairs of sum w f s.t. sum w g <= v (g scalar per candidate).
double brute_pairs(const std::vector<double>& f, const std::vector<double>& g, double v) {
  double best = kInf;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (g[i] <= v) best = std::min(best, f[i]);
    for (std::size_t j = 0; j < f.size(); ++j) {
      if (!(g[i] <= v && g[j] > v)) continue;
      const double a = (g[j] - v) / (g[j] - g[i]);  // weight on i making the constraint tight
      best = std::min(best, a * f[i] + (1 - a) * f[j]);
    }
  }
  return best;
}

std::size_t support(const std::vector<double>& w) {
  return static_cast<std::size_t>(
      std::count_if(w.begin(), w.end(), [](double x) { return x > 0; }));
}

TEST(ShrinkCandidates, OneConstraintMatchesPairs) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int t = 0; t < 20; ++t) {
    const std::size_t n = 30;
    std::vector<double> f(n), g(n);
    for (std::size_t i = 0; i < n; ++i) {
      g[i] = u(rng) + 0.3;
      f[i] = -g[i] + 0.5 * u(rng);  // objective trades off against the constraint
    }
    const ShrinkResult r = shrink_candidates(f, g, 1);
    ASSERT_TRUE(r.feasible);
    EXPECT_LE(support(r.weights), 2u);
    EXPECT_NEAR(r.objective, brute_pairs(f, g, 0), 1e-9);
    EXPECT_LE(r.max_violation, 1e-9);
  }
}

TEST(ShrinkCandidates, InfeasibleBisectsToSmallestViolation) {
  const std::vector<double> f = {0, 1, 2};
  const std::vector<double> g = {0.5, 0.2, 0.3};  // every candidate violates; min is 0.2
  const ShrinkResult r = shrink_candidates(f, g, 1, 1e-9);
  EXPECT_FALSE(r.feasible);
  EXPECT_NEAR(r.max_violation, 0.2, 1e-8);
  EXPECT_NEAR(r.objective, 1, 1e-6);
}

TEST(ShrinkCandidates, SeveralConstraintsSupportAndUniformBound) {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int t = 0; t < 10; ++t) {
    const std::size_t n = 60, m = 3;
    std::vector<double> f(n), g(n * m);
    for (double& x : f) x = u(rng);
    for (double& x : g) x = u(rng) - 0.05;
    // The uniform mixture, shifted to be feasible, bounds the LP optimum.
    std::vector<double> avg(m, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j) avg[j] += g[i * m + j] / n;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j) g[i * m + j] -= std::max(0.0, avg[j]);
    double uniform = 0;
    for (double x : f) uniform += x / n;
    const ShrinkResult r = shrink_candidates(f, g, m);
    ASSERT_TRUE(r.feasible);
    EXPECT_LE(support(r.weights), m + 1);
    EXPECT_LE(r.objective, uniform + 1e-9);
    EXPECT_LE(r.max_violation, 1e-9);
    double s = 0;
    for (double w : r.weights) s += w;
    EXPECT_NEAR(s, 1, 1e-12);
  }
}

// Ratio objective with one linear constraint: the mixture ratio is monotone along a pair, so
// the optimum over pairs sits at an end of the feasible segment.
TEST(ShrinkCandidates, RatioMatchesPairs) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.1, 1);
  for (int t = 0; t < 10; ++t) {
    const std::size_t n = 25;
    std::vector<double> num(n), den(n), g(n);
    for (std::size_t i = 0; i < n; ++i) {
      num[i] = u(rng);
      den[i] = u(rng);
      g[i] = u(rng) - 0.5;
    }
    double best = kInf;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        for (double a : {0.0, 1.0, -1.0}) {
          double w = a;
          if (a < 0) {
            if (g[i] == g[j]) continue;
            w = g[j] / (g[j] - g[i]);
            if (w < 0 || w > 1) continue;
          }
          if (w * g[i] + (1 - w) * g[j] > 1e-12) continue;
          best = std::min(best, (w * num[i] + (1 - w) * num[j]) / (w * den[i] + (1 - w) * den[j]));
        }
    const ShrinkResult r = shrink_candidates_ratio(num, den, g, 1);
    ASSERT_TRUE(r.feasible);
    EXPECT_LE(support(r.weights), 2u);
    EXPECT_NEAR(r.objective, best, 1e-9);
  }
}

TEST(BestCandidate, HandCases) {
  // All feasible: the smallest objective.
  EXPECT_EQ(best_candidate(std::vector<double>{3, 1, 2}, std::vector<double>{-1, -1, -1}, 1), 1u);
  // None feasible: the smallest violation (0.1, candidate 1).
  EXPECT_EQ(best_candidate(std::vector<double>{1, 2, 3}, std::vector<double>{0.5, 0.1, 0.3}, 1),
            1u);
  // Constraints collapse by max: violations 0.01, -0.5, -0.5 -> candidates 1 and 2 feasible, 1 has
  // the smaller objective. With tolerance 0.02 all are feasible -> candidate 0.
  const std::vector<double> f3 = {1, 2, 3}, g3 = {-1, 0.01, -1, -1, -0.5, -1};
  EXPECT_EQ(best_candidate(f3, g3, 2), 1u);
  EXPECT_EQ(best_candidate(f3, g3, 2, 0.02), 0u);
  // Feasible first: f = {1, 2, 7, 8}, violations {0.5, 0.4, 0, 0} give f ranks 1,2,3,4 and
  // violation ranks 4,3,1,1, max ranks 4,3,3,4; Cotter's rank rule would pick candidate 1
  // (infeasible, smaller objective on the tie); a feasible candidate exists, so 2 wins.
  // None feasible: the smallest violation, not the best objective (the unconstrained start).
  EXPECT_EQ(
      best_candidate(std::vector<double>{0.1, 0.2, 0.3}, std::vector<double>{0.09, 0.02, 0.03}, 1),
      1u);
  EXPECT_EQ(best_candidate(std::vector<double>{1, 2, 7, 8}, std::vector<double>{0.5, 0.4, 0, 0}, 1),
            2u);
  EXPECT_THROW((void)best_candidate(std::vector<double>{}, std::vector<double>{}, 0),
               InvalidArgument);
}

}  // namespace
}  // namespace rateopt
