// Closed-form slack best responses against a brute-force grid on [0,1]^2.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "rateopt/error.hpp"
#include "rateopt/train.hpp"

namespace rateopt {
namespace {

double objective(SlackLoss loss, double l1, double l2, double p, double u1, double u2) {
  switch (loss) {
    case SlackLoss::kKld: {
      const auto t = [](double a, double b) {
        return a == 0 ? 0.0
                      : (b <= 0 ? std::numeric_limits<double>::infinity() : a * std::log(a / b));
      };
      return t(p, u1) + t(1 - p, u2) + l1 * u1 + l2 * u2;
    }
    case SlackLoss::kGmean:
      return 1 - std::sqrt(u1 * u2) + l1 * u1 + l2 * u2;
    case SlackLoss::kHmean:
      return 1 - (u1 + u2 > 0 ? 2 * u1 * u2 / (u1 + u2) : 0.0) + l1 * u1 + l2 * u2;
    case SlackLoss::kQmean:
      return std::sqrt((u1 * u1 + u2 * u2) / 2) - l1 * u1 - l2 * u2;
  }
  return 0;
}

// Grid 401 x 401 (step 1/400) plus a local refinement around the best grid point; the closed
// form must be no worse than the refined grid (up to 1e-9) and not better by more than the
// refinement's resolution allows (1e-6).
void check(SlackLoss loss, double l1, double l2, double p) {
  const SlackResponse r = slack_best_response(loss, l1, l2, p);
  ASSERT_GE(r.u1, 0);
  ASSERT_LE(r.u1, 1);
  ASSERT_GE(r.u2, 0);
  ASSERT_LE(r.u2, 1);
  EXPECT_NEAR(r.value, objective(loss, l1, l2, p, r.u1, r.u2), 1e-12);
  double best = std::numeric_limits<double>::infinity(), b1 = 0, b2 = 0;
  for (int i = 0; i <= 400; ++i)
    for (int j = 0; j <= 400; ++j) {
      const double v = objective(loss, l1, l2, p, i / 400.0, j / 400.0);
      if (v < best) best = v, b1 = i / 400.0, b2 = j / 400.0;
    }
  const double lo1 = std::max(0.0, b1 - 1 / 400.0), lo2 = std::max(0.0, b2 - 1 / 400.0);
  for (int i = 0; i <= 400; ++i)
    for (int j = 0; j <= 400; ++j) {
      const double u1 = std::min(1.0, lo1 + i / 400.0 * 2 / 400.0);
      const double u2 = std::min(1.0, lo2 + j / 400.0 * 2 / 400.0);
      best = std::min(best, objective(loss, l1, l2, p, u1, u2));
    }
  EXPECT_LE(r.value, best + 1e-9) << "loss " << static_cast<int>(loss) << " l=" << l1 << "," << l2;
  EXPECT_GE(r.value, best - 1e-5) << "loss " << static_cast<int>(loss) << " l=" << l1 << "," << l2;
}

TEST(SlackBestResponse, MatchesGrid) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1.5), up(0.05, 0.95);
  for (SlackLoss loss :
       {SlackLoss::kKld, SlackLoss::kGmean, SlackLoss::kHmean, SlackLoss::kQmean}) {
    // Hand cases: zero multipliers, the G-mean / H-mean / Q-mean thresholds, large multipliers.
    for (auto [a, b] : {std::pair{0.0, 0.0}, std::pair{0.5, 0.5}, std::pair{0.2, 2.0},
                        std::pair{1.0, 0.1}, std::pair{0.7, 0.7}, std::pair{3.0, 3.0}})
      check(loss, a, b, 0.3);
    for (int t = 0; t < 3; ++t) check(loss, u(rng), u(rng), up(rng));
  }
}

TEST(SlackBestResponse, BadArguments) {
  EXPECT_THROW((void)slack_best_response(SlackLoss::kGmean, -1, 0), InvalidArgument);
  EXPECT_THROW((void)slack_best_response(SlackLoss::kKld, 1, 1, 0.0), InvalidArgument);
}

}  // namespace
}  // namespace rateopt
