// SDCA for the weighted L2-regularised hinge SVM (include/rateopt/sdca.hpp).
//
// Coordinate step: the dual restricted to alpha_i is a concave quadratic with curvature
// |x~_i|^2 / lambda (x~_i = (x_i, beta)), so its exact maximiser over [0, c_i] is
//   alpha_i <- clip(alpha_i + lambda (1 - y_i s_i) / |x~_i|^2, 0, c_i),
// and w moves by (delta y_i / lambda) x~_i. Every `check_every` epochs w is recomputed from alpha
// (no drift in the certificate) and the gap P(w(alpha)) - D(alpha) is evaluated.
#include "rateopt/sdca.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "common/check.hpp"
#include "common/csr.hpp"
#include "common/parallel.hpp"

namespace rateopt {
namespace {

void check_inputs(std::span<const FeatureMatrix* const> matrices,
                  std::span<const SvmExample> examples, std::span<const double> linear_term,
                  std::span<const double> warm_alpha) {
  RATEOPT_CHECK(!matrices.empty(), "matrices is empty, expected at least one feature matrix");
  for (std::size_t m = 0; m < matrices.size(); ++m) {
    RATEOPT_CHECK(matrices[m] != nullptr, "matrices[{}] is null", m);
    RATEOPT_CHECK(matrices[m]->cols() == matrices[0]->cols(),
                  "matrices[{}] has {} columns, expected {} (as matrices[0])", m,
                  matrices[m]->cols(), matrices[0]->cols());
  }
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const SvmExample& e = examples[i];
    RATEOPT_CHECK(e.matrix < matrices.size(), "examples[{}].matrix is {}, expected < {}", i,
                  e.matrix, matrices.size());
    RATEOPT_CHECK(e.row < matrices[e.matrix]->rows(), "examples[{}].row is {}, expected < {}", i,
                  e.row, matrices[e.matrix]->rows());
    RATEOPT_CHECK(e.label == 1.0 || e.label == -1.0, "examples[{}].label is {}, expected +1 or -1",
                  i, e.label);
    RATEOPT_CHECK(std::isfinite(e.weight) && e.weight >= 0,
                  "examples[{}].weight is {}, expected finite and >= 0", i, e.weight);
  }
  RATEOPT_CHECK(linear_term.empty() || linear_term.size() == matrices[0]->cols(),
                "linear_term has {} entries, expected 0 or {} (one per feature)",
                linear_term.size(), matrices[0]->cols());
  for (double q : linear_term)
    RATEOPT_CHECK(std::isfinite(q), "linear_term has a non-finite entry");
  RATEOPT_CHECK(warm_alpha.empty() || warm_alpha.size() == examples.size(),
                "warm_alpha has {} entries, expected 0 or {} (one per example)", warm_alpha.size(),
                examples.size());
}

void check_options(const WeightedSvmOptions& o) {
  RATEOPT_CHECK(std::isfinite(o.lambda) && o.lambda > 0, "lambda is {}, expected > 0", o.lambda);
  RATEOPT_CHECK(std::isfinite(o.bias_feature) && o.bias_feature >= 0,
                "bias_feature is {}, expected >= 0", o.bias_feature);
  RATEOPT_CHECK(o.gap_abs >= 0 && o.gap_rel >= 0 && (o.gap_abs > 0 || o.gap_rel > 0),
                "gap_abs = {} and gap_rel = {}: expected both >= 0 and not both 0", o.gap_abs,
                o.gap_rel);
  RATEOPT_CHECK(o.max_epochs > 0, "max_epochs is {}, expected > 0", o.max_epochs);
  RATEOPT_CHECK(o.check_every > 0, "check_every is {}, expected > 0", o.check_every);
}

// One example's row: (indices, values, length); indices null for a dense row.
struct RowRef {
  const std::int32_t* idx = nullptr;
  const double* val = nullptr;
  std::size_t len = 0;
  [[nodiscard]] double dot(const double* w) const {
    double s = 0;
    if (idx != nullptr) {
      for (std::size_t k = 0; k < len; ++k) s += val[k] * w[idx[k]];
    } else {
      for (std::size_t k = 0; k < len; ++k) s += val[k] * w[k];
    }
    return s;
  }
  void axpy(double a, double* w) const {
    if (idx != nullptr) {
      for (std::size_t k = 0; k < len; ++k) w[idx[k]] += a * val[k];
    } else {
      for (std::size_t k = 0; k < len; ++k) w[k] += a * val[k];
    }
  }
};

// A dense matrix whose entries are mostly zero (a9a read densely: 11% non-zero) is read from a
// CSR copy (detail::dense_to_csr), so that epochs cost O(nnz). Products skip only exact zeros, so
// they equal the dense ones.
bool mostly_zero(const FeatureMatrix& m) {
  if (m.is_sparse() || m.rows() == 0 || m.cols() == 0) return false;
  const std::size_t nz = detail::count_nonzeros(m.dense_view());
  return static_cast<double>(nz) < 0.5 * static_cast<double>(m.rows() * m.cols());
}

struct Solver {
  std::span<const SvmExample> ex;
  std::span<const RowRef> rows;
  std::span<const double> q;
  double lambda;
  double beta;
  int n_threads;
  std::size_t d;

  // w (d entries) and w_b from alpha: w = (sum alpha y x - q) / lambda.
  void weights_from_alpha(std::span<const double> alpha, std::vector<double>& w, double& wb) const {
    std::fill(w.begin(), w.end(), 0.0);
    double sb = 0;
    for (std::size_t i = 0; i < ex.size(); ++i) {
      if (alpha[i] == 0) continue;
      rows[i].axpy(alpha[i] * ex[i].label, w.data());
      sb += alpha[i] * ex[i].label;
    }
    for (std::size_t j = 0; j < d; ++j) w[j] = (w[j] - (q.empty() ? 0.0 : q[j])) / lambda;
    wb = beta * sb / lambda;
  }

  struct Sums {
    double hinge = 0;
    double alpha = 0;
  };

  // Primal and dual values at (w, wb) = w(alpha); margins y_i s_i of every example into `margin`.
  void values(std::span<const double> alpha, std::span<const double> w, double wb,
              std::span<double> margin, double& primal, double& dual) const {
    const Sums s = detail::block_reduce<Sums>(
        ex.size(), n_threads,
        [&](std::size_t begin, std::size_t end) {
          Sums part;
          for (std::size_t i = begin; i < end; ++i) {
            const SvmExample& e = ex[i];
            part.alpha += alpha[i];
            const double m = e.label * (rows[i].dot(w.data()) + beta * wb);
            margin[i] = m;
            if (e.weight == 0) continue;
            part.hinge += e.weight * std::max(0.0, 1.0 - m);
          }
          return part;
        },
        [](Sums& a, const Sums& b) {
          a.hinge += b.hinge;
          a.alpha += b.alpha;
        });
    double norm2 = wb * wb;
    double lin = 0;
    for (std::size_t j = 0; j < d; ++j) {
      norm2 += w[j] * w[j];
      if (!q.empty()) lin += q[j] * w[j];
    }
    primal = 0.5 * lambda * norm2 + lin + s.hinge;
    dual = s.alpha - 0.5 * lambda * norm2;
  }
};

}  // namespace

WeightedSvmResult fit_weighted_svm(std::span<const FeatureMatrix* const> matrices,
                                   std::span<const SvmExample> examples,
                                   const WeightedSvmOptions& options,
                                   std::span<const double> linear_term,
                                   std::span<const double> warm_alpha) {
  check_options(options);
  check_inputs(matrices, examples, linear_term, warm_alpha);
  const std::size_t n = examples.size();
  const std::size_t d = matrices[0]->cols();
  const double lambda = options.lambda;
  const double beta = options.bias_feature;

  // CSR copies of mostly-zero dense matrices that some example uses.
  std::vector<char> used(matrices.size(), 0);
  for (const SvmExample& e : examples) used[e.matrix] = 1;
  std::vector<detail::CsrArrays> copies(matrices.size());
  std::vector<char> copied(matrices.size(), 0);
  for (std::size_t m = 0; m < matrices.size(); ++m)
    if (used[m] != 0 && mostly_zero(*matrices[m])) {
      copies[m] = detail::dense_to_csr(matrices[m]->dense_view());
      copied[m] = 1;
    }

  std::vector<RowRef> rows(n);
  std::vector<double> sq(n);
  // Per-row set-up: tasks of 4096 rows (a task per row would cost more than the work).
  detail::parallel_for(
      n, options.n_threads,
      [&](std::size_t i) {
        const SvmExample& e = examples[i];
        const FeatureMatrix& m = *matrices[e.matrix];
        if (copied[e.matrix] != 0) {
          const detail::CsrArrays& c = copies[e.matrix];
          const auto b = static_cast<std::size_t>(c.indptr[e.row]);
          const auto len = static_cast<std::size_t>(c.indptr[e.row + 1]) - b;
          rows[i] = RowRef{c.indices.data() + b, c.values.data() + b, len};
        } else if (m.is_sparse()) {
          const CsrView v = m.csr_view();
          const auto b = static_cast<std::size_t>(v.indptr[e.row]);
          const auto len = static_cast<std::size_t>(v.indptr[e.row + 1]) - b;
          rows[i] = RowRef{v.indices.data() + b, v.values.data() + b, len};
        } else {
          rows[i] = RowRef{nullptr, m.dense_view().row(e.row).data(), d};
        }
        double s = beta * beta;
        for (std::size_t k = 0; k < rows[i].len; ++k) s += rows[i].val[k] * rows[i].val[k];
        sq[i] = s;
      },
      4096);
  Solver solver{examples, rows, linear_term, lambda, beta, options.n_threads, d};

  WeightedSvmResult r;
  r.alpha.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double c = examples[i].weight;
    // A zero row has a constant hinge of c: its optimal dual value is c.
    if (sq[i] == 0) {
      r.alpha[i] = c;
    } else if (!warm_alpha.empty()) {
      r.alpha[i] = std::clamp(std::isfinite(warm_alpha[i]) ? warm_alpha[i] : 0.0, 0.0, c);
    }
  }
  std::vector<double> w(d, 0.0);
  double wb = 0;
  solver.weights_from_alpha(r.alpha, w, wb);

  // Examples that can move; `order` is the active set (shrinking, as in LIBLINEAR's dual
  // coordinate descent: an example at a bound whose gradient points out of the box by more than
  // the previous epoch's largest projected gradient leaves the set). The gap is always computed
  // over all examples, and every gap check puts back each shrunk example that violates its
  // optimality condition (alpha = 0 needs margin >= 1, alpha = c needs margin <= 1).
  std::vector<std::size_t> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (sq[i] > 0 && examples[i].weight > 0) order.push_back(i);
  std::vector<std::size_t> shrunk;
  std::vector<double> margin(n, 0.0);
  std::mt19937_64 rng(options.seed);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double pg_max_old = kInf, pg_min_old = -kInf;

  r.status = Termination::kMaxIterations;
  int next_check = options.check_every;
  for (int epoch = 1; epoch <= options.max_epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    double* wp = w.data();
    double pg_max = -kInf, pg_min = kInf;
    std::size_t kept = 0;
    for (std::size_t t = 0; t < order.size(); ++t) {
      const std::size_t i = order[t];
      const SvmExample& e = examples[i];
      const RowRef row = rows[i];
      const double s = row.dot(wp) + beta * wb;
      const double a = r.alpha[i];
      const double g = e.label * s - 1.0;  // gradient of the (minimised) negative dual
      double pg = g;                       // projected gradient
      if (a == 0) {
        if (options.shrinking && g > pg_max_old) {
          shrunk.push_back(i);
          continue;
        }
        pg = std::min(g, 0.0);
      } else if (a == e.weight) {
        if (options.shrinking && g < pg_min_old) {
          shrunk.push_back(i);
          continue;
        }
        pg = std::max(g, 0.0);
      }
      order[kept++] = i;
      pg_max = std::max(pg_max, pg);
      pg_min = std::min(pg_min, pg);
      const double next = std::clamp(a - lambda * g / sq[i], 0.0, e.weight);
      if (next == a) continue;
      const double step = (next - a) * e.label / lambda;
      row.axpy(step, wp);
      wb += step * beta;
      r.alpha[i] = next;
    }
    order.resize(kept);
    // clang-tidy 14 takes an infinite constant in ?: for a narrowing conversion.
    // NOLINTNEXTLINE(bugprone-narrowing-conversions)
    pg_max_old = pg_max <= 0 ? kInf : pg_max;
    pg_min_old = pg_min >= 0 ? -kInf : pg_min;
    r.epochs = epoch;
    // Gap checks every check_every epochs, and no more often than every epoch/8 epochs (the gap
    // costs about one epoch; this bounds the overshoot to 1/8 while checking O(log) times) --
    // and at once when the active set has converged (its projected gradients within 1e-3 of 0)
    // or emptied.
    const bool settled = order.empty() || (pg_max - pg_min <= 1e-3 && !shrunk.empty());
    if (epoch < next_check && epoch != options.max_epochs && !settled) continue;
    next_check = epoch + std::max(options.check_every, epoch / 8);
    solver.weights_from_alpha(r.alpha, w, wb);
    solver.values(r.alpha, w, wb, margin, r.primal, r.dual);
    r.gap = r.primal - r.dual;
    if (r.gap <= std::max(options.gap_abs, options.gap_rel * std::abs(r.primal))) {
      r.status = Termination::kConverged;
      break;
    }
    // Not converged: put back the shrunk examples that violate their optimality condition, or
    // all of them when the active set has converged (LIBLINEAR's unshrinking).
    std::size_t back = 0;
    for (std::size_t i : shrunk) {
      const bool violates = r.alpha[i] == 0
                                ? margin[i] < 1.0
                                : (r.alpha[i] == examples[i].weight ? margin[i] > 1.0 : true);
      if (violates || settled) {
        order.push_back(i);
      } else {
        shrunk[back++] = i;
      }
    }
    if (back != shrunk.size()) {
      shrunk.resize(back);
      pg_max_old = kInf;
      pg_min_old = -kInf;
    }
  }
  r.model.weights = std::move(w);
  r.model.bias = beta * wb;
  return r;
}

WeightedSvmResult fit_weighted_svm(const FeatureMatrix& x, std::span<const std::int32_t> labels,
                                   std::span<const double> weights,
                                   const WeightedSvmOptions& options) {
  RATEOPT_CHECK(labels.size() == x.rows(), "labels has {} entries, expected {} (one per row)",
                labels.size(), x.rows());
  RATEOPT_CHECK(weights.empty() || weights.size() == x.rows(),
                "weights has {} entries, expected 0 or {} (one per row)", weights.size(), x.rows());
  std::vector<SvmExample> ex(x.rows());
  for (std::size_t i = 0; i < x.rows(); ++i) {
    const std::int32_t y = labels[i];
    RATEOPT_CHECK(y == 0 || y == 1 || y == -1, "labels[{}] is {}, expected 0/1 or -1/+1", i, y);
    ex[i] = SvmExample{0, i, y == 1 ? 1.0 : -1.0, weights.empty() ? 1.0 : weights[i]};
  }
  const FeatureMatrix* const m[] = {&x};
  return fit_weighted_svm(m, ex, options);
}

double weighted_svm_primal(std::span<const FeatureMatrix* const> matrices,
                           std::span<const SvmExample> examples, const LinearModel& model,
                           double lambda, double bias_feature,
                           std::span<const double> linear_term) {
  check_inputs(matrices, examples, linear_term, {});
  const std::size_t d = matrices[0]->cols();
  RATEOPT_CHECK(model.weights.size() == d, "model has {} weights, expected {}",
                model.weights.size(), d);
  RATEOPT_CHECK(bias_feature > 0 || model.bias == 0,
                "model.bias is {} but bias_feature is 0 (no bias coordinate)", model.bias);
  const double wb = bias_feature > 0 ? model.bias / bias_feature : 0.0;
  double norm2 = wb * wb;
  double lin = 0;
  for (std::size_t j = 0; j < d; ++j) {
    norm2 += model.weights[j] * model.weights[j];
    if (!linear_term.empty()) lin += linear_term[j] * model.weights[j];
  }
  double hinge = 0;
  for (const SvmExample& e : examples) {
    const double s = matrices[e.matrix]->row_dot(e.row, model.weights) + model.bias;
    hinge += e.weight * std::max(0.0, 1.0 - e.label * s);
  }
  return 0.5 * lambda * norm2 + lin + hinge;
}

}  // namespace rateopt
