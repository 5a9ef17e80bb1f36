// Private: the L-BFGS line search and driver shared by the logistic and multinomial regressions
// (src/learners/logistic.cpp, src/learners/multinomial.cpp).
//
// The function object passed to LBFGSpp must provide, besides operator()(x, grad):
//   void begin_line_search(const Vector& iterate)  the iterate the search starts from;
//   void end_line_search(Vector& grad)              called with the gradient at the accepted step
//                                                  (zero it to stop LBFGSpp at this step).
#pragma once

#include <LBFGS.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace rateopt::detail {

// LBFGSpp's strong-Wolfe line search (Nocedal & Wright, Algorithms 3.5/3.6), wrapped to
//  - record the iterate it starts from (returned if the solver fails),
//  - reject a step that did not decrease the objective (the wrapped routine returns silently
//    when it runs out of trials),
//  - fall back, when it fails, to a search on the directional derivative alone. Near the optimum
//    the decrease of f falls below its rounding error and value-based tests become noise, while
//    the gradient is still accurate. The objective is convex, so phi(a) = f(xp + a d) has an
//    increasing derivative, and ftol * phi'(0) >= phi'(a) >= wolfe * phi'(0) implies both Wolfe
//    conditions: phi(a) - phi(0) <= a phi'(a) <= a ftol phi'(0).
template <typename Scalar>
class RecordingLineSearch {
 public:
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Param = LBFGSpp::LBFGSParam<Scalar>;

  template <typename Foo>
  static void LineSearch(Foo& f, Scalar& fx, Vec& x, Vec& grad, Scalar& step,  // NOLINT
                         const Vec& drt, const Vec& xp, const Param& param) {
    f.begin_line_search(xp);
    const Scalar fx_init = fx;
    const Scalar step_init = step;
    const Scalar dg_init = grad.dot(drt);
    const Vec grad_init = grad;
    if (!(dg_init < 0)) throw std::runtime_error("the search direction is not a descent direction");
    try {
      LBFGSpp::LineSearchNocedalWright<Scalar>::LineSearch(f, fx, x, grad, step, drt, xp, param);
      // The wrapped routine can return without meeting the conditions (out of trials); check.
      const Scalar dg = grad.dot(drt);
      if (fx <= fx_init + step * param.ftol * dg_init && std::abs(dg) <= -param.wolfe * dg_init) {
        f.end_line_search(grad);
        return;
      }
    } catch (const std::runtime_error&) {
      // fall through to the derivative search
    }
    fx = fx_init;
    grad = grad_init;
    step = derivative_search(f, fx, x, grad, step_init, drt, xp, dg_init, param);
    // The value may exceed the start by rounding only.
    const Scalar slack = Scalar(1e-10) * std::max(Scalar(1), std::abs(fx_init));
    if (!(fx <= fx_init + slack))
      throw std::runtime_error("the line search did not decrease the objective");
    f.end_line_search(grad);
  }

 private:
  // Returns the accepted step; x, fx and grad are at xp + step * drt.
  template <typename Foo>
  static Scalar derivative_search(Foo& f, Scalar& fx, Vec& x, Vec& grad, Scalar step,
                                  const Vec& drt, const Vec& xp, Scalar dg_init,
                                  const Param& param) {
    const Scalar steep = param.wolfe * dg_init;  // phi'(a) below this: the step is too short
    const Scalar flat = param.ftol * dg_init;    // phi'(a) above this: the step is too long
    Scalar lo = 0;
    Scalar hi = std::numeric_limits<Scalar>::infinity();
    constexpr int kMaxTrials = 100;
    for (int trial = 0; trial < kMaxTrials; ++trial) {
      x.noalias() = xp + step * drt;
      fx = f(x, grad);
      const Scalar dg = grad.dot(drt);
      const bool finite = std::isfinite(fx) && std::isfinite(dg);
      if (finite && dg >= steep && dg <= flat) return step;
      if (finite && dg < steep) {
        lo = step;
      } else {
        hi = step;
      }
      step = std::isfinite(hi) ? lo + (hi - lo) / 2 : 2 * step;
      if (step <= lo || step >= hi || step < param.min_step || step > param.max_step) break;
    }
    throw std::runtime_error("the derivative line search failed");
  }
};

// How run_lbfgs ended: its iterations, and whether LBFGSpp or the line search gave up (theta is
// then the iterate the failed iteration started from).
struct LbfgsRun {
  int iterations = 0;
  bool failed = false;
};

// L-BFGS (LBFGSpp, `memory` corrections, the strong-Wolfe RecordingLineSearch above) on
// value_and_gradient(theta, grad) -> f(theta) from theta, for at most max_iter iterations, stopping
// at the first accepted step whose gradient has Euclidean norm <= threshold (LBFGSpp's own tests
// are switched off: the gradient handed back is zeroed there, which ends its run at that step).
template <typename ValueAndGradient>
LbfgsRun run_lbfgs(ValueAndGradient&& value_and_gradient, Eigen::VectorXd& theta, int memory,
                   int max_iter, double threshold) {
  using Vector = Eigen::VectorXd;
  struct Function {  // the interface RecordingLineSearch expects
    ValueAndGradient& f;
    double threshold = 0;
    int line_searches = 0;
    Vector last_iterate;
    double operator()(const Vector& x, Vector& grad) { return f(x, grad); }
    void begin_line_search(const Vector& iterate) {
      ++line_searches;
      last_iterate = iterate;
    }
    void end_line_search(Vector& grad) const {
      double s = 0;
      for (Eigen::Index j = 0; j < grad.size(); ++j) s += grad[j] * grad[j];
      if (std::sqrt(s) <= threshold) grad.setZero();
    }
  };
  LBFGSpp::LBFGSParam<double> param;
  param.m = memory;
  param.epsilon = 0;
  param.epsilon_rel = 0;
  param.past = 0;
  param.max_iterations = max_iter;
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  LBFGSpp::LBFGSSolver<double, RecordingLineSearch> solver(param);
  Function fn{value_and_gradient, threshold, 0, Vector()};
  LbfgsRun out;
  double fx = 0;
  try {
    out.iterations = solver.minimize(fn, theta, fx);
  } catch (const std::runtime_error&) {
    out.failed = true;
  } catch (const std::logic_error&) {
    out.failed = true;
  }
  if (out.failed) {
    // The iteration that failed did not complete: return the iterate it started from.
    out.iterations = std::max(fn.line_searches - 1, 0);
    if (fn.line_searches > 0) theta = fn.last_iterate;
  }
  return out;
}

}  // namespace rateopt::detail
