// EFP inference (Dembczynski et al. 2013; Waegeman et al. 2014, section 7.1) and the projection of
// an estimated GFM input onto a distribution. See rateopt/multilabel.hpp.
#include <algorithm>
#include <cmath>
#include <functional>

#include "common/check.hpp"
#include "common/parallel.hpp"
#include "learners/logistic_objective.hpp"
#include "rateopt/multilabel.hpp"

namespace rateopt {

std::vector<GfmInput> ExactFPlugin::predict_gfm_rows(const FeatureMatrix& x, std::size_t begin,
                                                     std::size_t end, bool consistent,
                                                     int n_threads) const {
  RATEOPT_CHECK(begin <= end && end <= x.rows(), "rows [{}, {}) out of range ({} rows)", begin, end,
                x.rows());
  std::vector<GfmInput> out(end - begin);
  detail::parallel_for(end - begin, n_threads, [&](std::size_t r) {
    out[r] = predict_gfm(x, begin + r);
    if (consistent) out[r] = make_consistent(out[r]);
  });
  return out;
}

GfmInput ExactFPlugin::predict_gfm(const FeatureMatrix& x, std::size_t i) const {
  const std::size_t m = label_models.size();
  RATEOPT_CHECK(m >= 1, "the EFP model has no labels");
  RATEOPT_CHECK(i < x.rows(), "row {} out of range ({} rows)", i, x.rows());
  GfmInput in;
  in.m = m;
  in.p.assign(m * m, 0.0);
  std::vector<double> p;
  for (std::size_t l = 0; l < m; ++l) {
    const MultinomialModel& mm = label_models[l];
    p.resize(mm.num_classes());
    mm.probabilities(x, i, p);
    for (std::size_t k = 0; k < mm.num_classes(); ++k) {
      const auto s = static_cast<std::size_t>(mm.classes[k]);
      if (s >= 1 && s <= m) in.p[l * m + (s - 1)] = p[k];
    }
  }
  in.p_zero = detail::sigmoid(empty_model.score(x, i));
  return in;
}

GfmInput make_consistent(const GfmInput& input) {
  const std::size_t m = input.m;
  RATEOPT_CHECK(input.p.size() == m * m, "P has {} entries, expected m * m = {}", input.p.size(),
                m * m);
  RATEOPT_CHECK(std::isfinite(input.p_zero) && input.p_zero >= 0 && input.p_zero <= 1,
                "p_zero is {}, expected a probability", input.p_zero);
  for (double v : input.p)
    RATEOPT_CHECK(std::isfinite(v) && v >= 0 && v <= 1, "P holds {}, expected probabilities", v);
  GfmInput out = input;
  std::vector<double> col(m);
  for (std::size_t s = 2; s <= m; ++s) {  // column s = 1 needs no cap: P[i][0] <= sum_j P[j][0]
    for (std::size_t i = 0; i < m; ++i) col[i] = input.p[i * m + (s - 1)];
    std::sort(col.begin(), col.end(), std::greater<>());
    double total = 0;
    for (double v : col) total += v;
    if (total <= 0 || static_cast<double>(s) * col[0] <= total) continue;  // consistent already
    // The largest c with s c <= sum_j min(v_j, c): on [v_(k+1), v_(k)] the sum is
    // k c + R_k (R_k the values after the k largest), so c = R_k / (s - k) if that lies there.
    double cap = 0;
    double rest = total;
    for (std::size_t k = 1; k < s; ++k) {
      rest -= col[k - 1];
      const double next = k < m ? col[k] : 0.0;
      const double c = rest / static_cast<double>(s - k);
      if (c >= next) {
        cap = std::min(c, col[k - 1]);
        break;
      }
    }
    for (std::size_t i = 0; i < m; ++i)
      out.p[i * m + (s - 1)] = std::min(out.p[i * m + (s - 1)], cap);
  }
  double mass = out.p_zero;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t s = 1; s <= m; ++s) mass += out.p[i * m + (s - 1)] / static_cast<double>(s);
  if (!(mass > 0)) {
    out.p_zero = 1;
    return out;
  }
  for (double& v : out.p) v /= mass;
  out.p_zero /= mass;
  return out;
}

}  // namespace rateopt
