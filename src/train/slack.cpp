// Closed-form slack best responses (Narasimhan et al. 2019, Lemma 1; train-notes 5.8).
#include <cmath>
#include <initializer_list>
#include <limits>

#include "common/check.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

namespace {

double kld_loss(double p, double u1, double u2) {
  const auto term = [](double a, double b) {
    if (a == 0) return 0.0;
    if (b <= 0) return std::numeric_limits<double>::infinity();
    return a * std::log(a / b);
  };
  return term(p, u1) + term(1 - p, u2);
}

// Candidates of a positively homogeneous objective on [0,1]^2: 0 and the two faces u1 = 1 and
// u2 = 1 (scaling a minimiser with negative value up to the box boundary only lowers it).
template <typename H, typename Face>
SlackResponse best_of_faces(H h, Face face_other) {
  SlackResponse best{0, 0, h(0.0, 0.0)};
  const auto consider = [&](double u1, double u2) {
    const double v = h(u1, u2);
    if (v < best.value - 1e-15) best = {u1, u2, v};
  };
  consider(1.0, face_other(1));  // u1 = 1, the optimal u2 on that face
  consider(face_other(0), 1.0);  // u2 = 1, the optimal u1 on that face
  return best;
}

double clip01(double x) {
  return x < 0 ? 0 : (x > 1 ? 1 : x);
}

}  // namespace

SlackResponse slack_best_response(SlackLoss loss, double lambda1, double lambda2, double p) {
  RATEOPT_CHECK(lambda1 >= 0 && lambda2 >= 0 && std::isfinite(lambda1) && std::isfinite(lambda2),
                "slack_best_response: lambda must be finite and >= 0, got ({}, {})", lambda1,
                lambda2);
  const double l1 = lambda1, l2 = lambda2;
  switch (loss) {
    case SlackLoss::kKld: {
      RATEOPT_CHECK(p > 0 && p < 1, "slack_best_response: p must be in (0, 1), got {}", p);
      SlackResponse r;
      r.u1 = l1 > 0 ? std::min(1.0, p / l1) : 1.0;
      r.u2 = l2 > 0 ? std::min(1.0, (1 - p) / l2) : 1.0;
      r.value = kld_loss(p, r.u1, r.u2) + l1 * r.u1 + l2 * r.u2;
      return r;
    }
    case SlackLoss::kGmean: {
      const auto h = [&](double u1, double u2) {
        return 1 - std::sqrt(u1 * u2) + l1 * u1 + l2 * u2;
      };
      // On the face u_k = 1 the other coordinate minimises l * u - sqrt(u): u = 1 / (4 l^2).
      const auto other = [&](int face) {
        const double l = face == 1 ? l2 : l1;
        return l > 0 ? clip01(1 / (4 * l * l)) : 1.0;
      };
      return best_of_faces(h, other);
    }
    case SlackLoss::kHmean: {
      const auto h = [&](double u1, double u2) {
        const double s = u1 + u2;
        return 1 - (s > 0 ? 2 * u1 * u2 / s : 0.0) + l1 * u1 + l2 * u2;
      };
      // Face u_k = 1: minimise l * u - 2u / (1 + u): (1 + u)^2 = 2 / l.
      const auto other = [&](int face) {
        const double l = face == 1 ? l2 : l1;
        return l > 0 ? clip01(std::sqrt(2 / l) - 1) : 1.0;
      };
      return best_of_faces(h, other);
    }
    case SlackLoss::kQmean: {
      const auto h = [&](double z1, double z2) {
        return std::sqrt((z1 * z1 + z2 * z2) / 2) - l1 * z1 - l2 * z2;
      };
      // Face z_k = 1: minimise sqrt((1 + z^2)/2) - l z: z / sqrt(1 + z^2) = sqrt(2) l.
      const auto other = [&](int face) {
        const double l = face == 1 ? l2 : l1;
        const double s = std::sqrt(2.0) * l;
        return s >= 1 ? 1.0 : clip01(s / std::sqrt(1 - s * s));
      };
      return best_of_faces(h, other);
    }
  }
  return {};
}

}  // namespace rateopt
