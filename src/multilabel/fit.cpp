// Fitting the multi-label learners (rateopt/multilabel.hpp): the regularisation protocol of
// Waegeman et al. 2014, section 7.1 (C per base model by k-fold CV on log-loss), binary relevance,
// the probabilistic classifier chain (Dembczynski et al. 2010) and the exact-F plug-in EFP
// (Dembczynski et al. 2013).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/check.hpp"
#include "common/parallel.hpp"
#include "multilabel/multilabel_impl.hpp"
#include "rateopt/multilabel.hpp"

namespace rateopt {

namespace detail {

namespace {

// Held-out probabilities are clipped into [kClip, 1 - kClip] (scikit-learn's log_loss eps), so a
// class unseen in a training fold costs -log(1e-15) = 34.5, not infinity.
constexpr double kClip = 1e-15;

double clipped_log(double p) {
  return std::log(std::clamp(p, kClip, 1 - kClip));
}

struct FoldData {
  FeatureMatrix train_x, test_x;
  std::vector<std::int32_t> train_y, test_y;
  std::vector<double> train_w, test_w;
};

FoldData split(const FeatureMatrix& x, std::span<const std::int32_t> y, std::span<const double> w,
               const std::vector<int>& folds, int f) {
  std::vector<std::size_t> train, test;
  for (std::size_t i = 0; i < folds.size(); ++i) (folds[i] == f ? test : train).push_back(i);
  FoldData d;
  d.train_x = x.select_rows(train);
  d.test_x = x.select_rows(test);
  for (std::size_t i : train) {
    d.train_y.push_back(y[i]);
    if (!w.empty()) d.train_w.push_back(w[i]);
  }
  for (std::size_t i : test) {
    d.test_y.push_back(y[i]);
    d.test_w.push_back(w.empty() ? 1.0 : w[i]);
  }
  return d;
}

// Picks C from the grid: fit_fold(fold, c, warm) returns the held-out weighted log-loss sum and
// the held-out weight; grid values are visited in increasing order per fold (warm starts), the
// smallest mean loss wins, ties to the smaller C.
template <typename FoldFn>
std::pair<double, double> choose_c(const MultilabelFitOptions& o, FoldFn&& fold_loss) {
  std::vector<double> grid = o.c_grid;
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  // Folds run in parallel (the fits inside then run serially), each into its own sums, combined
  // in fold order: the same result for any thread count.
  const auto folds = static_cast<std::size_t>(o.cv_folds);
  std::vector<std::vector<double>> fold_sums(folds, std::vector<double>(grid.size(), 0.0));
  std::vector<double> fold_weight(folds, 0.0);
  parallel_for(folds, o.n_threads, [&](std::size_t f) {
    fold_weight[f] = fold_loss(static_cast<int>(f), grid, fold_sums[f]);
  });
  std::vector<double> loss(grid.size(), 0.0);
  double weight = 0;
  for (std::size_t f = 0; f < folds; ++f) {
    weight += fold_weight[f];
    for (std::size_t g = 0; g < grid.size(); ++g) loss[g] += fold_sums[f][g];
  }
  std::size_t best = 0;
  for (std::size_t g = 1; g < grid.size(); ++g)
    if (loss[g] < loss[best]) best = g;
  return {grid[best], weight > 0 ? loss[best] / weight : 0.0};
}

}  // namespace

std::vector<int> assign_folds(std::size_t rows, int folds, std::uint64_t seed) {
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::uint64_t> key(rows);
  for (std::size_t i = 0; i < rows; ++i) key[i] = mix64(seed, i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return key[a] != key[b] ? key[a] < key[b] : a < b;
  });
  std::vector<int> fold(rows);
  for (std::size_t r = 0; r < rows; ++r)
    fold[order[r]] = static_cast<int>(r % static_cast<std::size_t>(std::max(folds, 1)));
  return fold;
}

std::pair<LinearModel, BaseModelFit> fit_binary_base(const FeatureMatrix& x,
                                                     std::span<const std::int32_t> labels,
                                                     std::span<const double> weights,
                                                     const MultilabelFitOptions& o,
                                                     const std::vector<int>& folds) {
  LogisticRegressionOptions lo;
  lo.tol = o.tol;
  lo.max_iter = o.max_iter;
  lo.n_threads = o.n_threads;
  BaseModelFit info;
  info.c = o.c;
  if (o.tune_c) {
    const auto [c, loss] =
        choose_c(o, [&](int f, const std::vector<double>& grid, std::vector<double>& sums) {
          const FoldData d = split(x, labels, weights, folds, f);
          LogisticRegressionOptions fo = lo;
          double held_out_weight = 0;
          for (double w : d.test_w) held_out_weight += w;
          for (std::size_t g = 0; g < grid.size(); ++g) {
            fo.c = grid[g];
            const auto fit = fit_logistic_regression(d.train_x, d.train_y, d.train_w, fo);
            fo.initial = fit.model;
            for (std::size_t i = 0; i < d.test_y.size(); ++i) {
              const double s = fit.model.score(d.test_x, i);
              const double p = 1 / (1 + std::exp(-s));
              sums[g] -= d.test_w[i] * clipped_log(d.test_y[i] == 1 ? p : 1 - p);
            }
          }
          return held_out_weight;
        });
    info.c = c;
    info.cv_log_loss = loss;
  }
  lo.c = info.c;
  const auto fit = fit_logistic_regression(x, labels, weights, lo);
  info.status = fit.status;
  info.iterations = fit.iterations;
  return {fit.model, info};
}

std::pair<MultinomialModel, BaseModelFit> fit_multinomial_base(
    const FeatureMatrix& x, std::span<const std::int32_t> classes, std::span<const double> weights,
    const MultilabelFitOptions& o, const std::vector<int>& folds) {
  MultinomialLogisticOptions mo;
  mo.tol = o.tol;
  mo.max_iter = o.max_iter;
  mo.n_threads = o.n_threads;
  BaseModelFit info;
  info.c = o.c;
  if (o.tune_c) {
    const auto [c, loss] = choose_c(o, [&](int f, const std::vector<double>& grid,
                                           std::vector<double>& sums) {
      const FoldData d = split(x, classes, weights, folds, f);
      MultinomialLogisticOptions fo = mo;
      double held_out_weight = 0;
      for (double w : d.test_w) held_out_weight += w;
      for (std::size_t g = 0; g < grid.size(); ++g) {
        fo.c = grid[g];
        const auto fit = fit_multinomial_logistic_regression(d.train_x, d.train_y, d.train_w, fo);
        fo.initial = fit.model;
        for (std::size_t i = 0; i < d.test_y.size(); ++i)
          sums[g] -= d.test_w[i] * clipped_log(fit.model.probability_of(d.test_x, i, d.test_y[i]));
      }
      return held_out_weight;
    });
    info.c = c;
    info.cv_log_loss = loss;
  }
  mo.c = info.c;
  const auto fit = fit_multinomial_logistic_regression(x, classes, weights, mo);
  info.status = fit.status;
  info.iterations = fit.iterations;
  return {fit.model, info};
}

void check_label_sets(const FeatureMatrix& x, LabelSetsView y, std::span<const double> weights) {
  RATEOPT_CHECK(y.num_labels >= 1, "label sets have num_labels = 0, expected at least 1 label");
  RATEOPT_CHECK(y.size() == x.rows(), "{} label sets for {} feature rows", y.size(), x.rows());
  RATEOPT_CHECK(x.rows() > 0, "the feature matrix has no rows");
  RATEOPT_CHECK(weights.empty() || weights.size() == x.rows(),
                "weights have {} entries, expected 0 or {}", weights.size(), x.rows());
  RATEOPT_CHECK(
      y.indptr.front() == 0 && static_cast<std::size_t>(y.indptr.back()) == y.indices.size(),
      "label set indptr does not span the {} indices", y.indices.size());
  // Offsets first (with both ends checked, monotone offsets keep every set inside indices).
  for (std::size_t i = 0; i < y.size(); ++i)
    RATEOPT_CHECK(y.indptr[i] <= y.indptr[i + 1], "label set indptr decreases at {}", i);
  for (std::size_t i = 0; i < y.size(); ++i) {
    for (auto k = y.indptr[i]; k < y.indptr[i + 1]; ++k) {
      const std::int32_t l = y.indices[static_cast<std::size_t>(k)];
      RATEOPT_CHECK(l >= 0 && static_cast<std::size_t>(l) < y.num_labels,
                    "label set {} holds label {}, expected an index in [0, {})", i, l,
                    y.num_labels);
      RATEOPT_CHECK(k == y.indptr[i] || y.indices[static_cast<std::size_t>(k - 1)] < l,
                    "label set {} is not sorted and duplicate-free", i);
    }
  }
}

}  // namespace detail

std::vector<double> default_c_grid() {
  return {1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0};
}

void validate(const MultilabelFitOptions& o) {
  RATEOPT_CHECK(std::isfinite(o.c) && o.c > 0, "c is {}, expected a finite value > 0", o.c);
  RATEOPT_CHECK(std::isfinite(o.tol) && o.tol > 0, "tol is {}, expected a finite value > 0", o.tol);
  RATEOPT_CHECK(o.max_iter > 0, "max_iter is {}, expected > 0", o.max_iter);
  if (!o.tune_c) return;
  RATEOPT_CHECK(!o.c_grid.empty(), "c_grid is empty, expected at least one value");
  for (double c : o.c_grid)
    RATEOPT_CHECK(std::isfinite(c) && c > 0, "c_grid holds {}, expected finite values > 0", c);
  RATEOPT_CHECK(o.cv_folds >= 2, "cv_folds is {}, expected >= 2", o.cv_folds);
}

std::vector<double> marginals_from_samples(LabelSetsView samples, std::span<const double> weights) {
  RATEOPT_CHECK(weights.empty() || weights.size() == samples.size(),
                "weights have {} entries for {} samples", weights.size(), samples.size());
  std::vector<double> out(samples.num_labels, 0.0);
  double total = 0;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const double w = weights.empty() ? 1.0 : weights[k];
    total += w;
    for (auto p = samples.indptr[k]; p < samples.indptr[k + 1]; ++p) {
      const std::int32_t l = samples.indices[static_cast<std::size_t>(p)];
      RATEOPT_CHECK(l >= 0 && static_cast<std::size_t>(l) < samples.num_labels,
                    "sample {} holds label {}, expected an index in [0, {})", k, l,
                    samples.num_labels);
      out[static_cast<std::size_t>(l)] += w;
    }
  }
  if (total > 0)
    for (double& v : out) v /= total;
  return out;
}

namespace {

void check_fold_count(const FeatureMatrix& x, const MultilabelFitOptions& o) {
  validate(o);
  if (o.tune_c)
    RATEOPT_CHECK(static_cast<std::size_t>(o.cv_folds) <= x.rows(),
                  "cv_folds is {}, but there are only {} rows", o.cv_folds, x.rows());
}

// 0/1 labels of label j.
std::vector<std::int32_t> label_column(LabelSetsView y, std::size_t j) {
  std::vector<std::int32_t> out(y.size(), 0);
  for (std::size_t i = 0; i < y.size(); ++i)
    for (auto k = y.indptr[i]; k < y.indptr[i + 1]; ++k)
      if (static_cast<std::size_t>(y.indices[static_cast<std::size_t>(k)]) == j) out[i] = 1;
  return out;
}

std::vector<std::string> default_names(std::size_t m) {
  std::vector<std::string> names;
  for (std::size_t j = 0; j < m; ++j) names.push_back("label" + std::to_string(j));
  return names;
}

// x with the 0/1 columns y_0..y_{j-1} appended (columns d..d+j-1), in x's storage kind.
FeatureMatrix augment(const FeatureMatrix& x, LabelSetsView y, std::size_t j) {
  const std::size_t d = x.cols();
  if (x.is_sparse()) {
    const CsrView v = x.csr_view();
    std::vector<std::int64_t> indptr{0};
    std::vector<std::int32_t> indices;
    std::vector<double> values;
    indices.reserve(v.indices.size() + y.indices.size());
    values.reserve(v.indices.size() + y.indices.size());
    for (std::size_t i = 0; i < v.rows; ++i) {
      for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
        indices.push_back(v.indices[static_cast<std::size_t>(k)]);
        values.push_back(v.values[static_cast<std::size_t>(k)]);
      }
      for (auto k = y.indptr[i]; k < y.indptr[i + 1]; ++k) {
        const std::int32_t l = y.indices[static_cast<std::size_t>(k)];
        if (static_cast<std::size_t>(l) >= j) break;
        indices.push_back(static_cast<std::int32_t>(d) + l);
        values.push_back(1.0);
      }
      indptr.push_back(static_cast<std::int64_t>(indices.size()));
    }
    return FeatureMatrix::csr(std::move(indptr), std::move(indices), std::move(values), d + j);
  }
  const DenseView v = x.dense_view();
  std::vector<double> data(v.rows * (d + j), 0.0);
  for (std::size_t i = 0; i < v.rows; ++i) {
    double* out = data.data() + i * (d + j);
    std::copy(v.data + i * v.row_stride, v.data + i * v.row_stride + d, out);
    for (auto k = y.indptr[i]; k < y.indptr[i + 1]; ++k) {
      const std::int32_t l = y.indices[static_cast<std::size_t>(k)];
      if (static_cast<std::size_t>(l) >= j) break;
      out[d + static_cast<std::size_t>(l)] = 1.0;
    }
  }
  return FeatureMatrix::dense(std::move(data), v.rows, d + j);
}

}  // namespace

OneVsRest fit_binary_relevance(const FeatureMatrix& x, LabelSetsView y,
                               std::span<const double> weights, const MultilabelFitOptions& o,
                               std::vector<BaseModelFit>* fits) {
  detail::check_label_sets(x, y, weights);
  check_fold_count(x, o);
  const std::size_t m = y.num_labels;
  const std::vector<int> folds = detail::assign_folds(x.rows(), o.cv_folds, o.seed);
  OneVsRest model;
  model.label_kind = LabelKind::kMultilabel;
  model.names = default_names(m);
  if (fits != nullptr) fits->clear();
  for (std::size_t j = 0; j < m; ++j) {
    const std::vector<std::int32_t> yj = label_column(y, j);
    auto [lm, info] = detail::fit_binary_base(x, yj, weights, o, folds);
    Classifier c = Classifier::single(std::move(lm), Link::kLogistic, {});
    c.kind = "logistic_regression";
    model.outputs.push_back(std::move(c));
    if (fits != nullptr) fits->push_back(info);
    if (o.progress) o.progress(j, m, model.names[j], info);
  }
  return model;
}

ClassifierChain ClassifierChain::fit(const FeatureMatrix& x, LabelSetsView y,
                                     std::span<const double> weights,
                                     const MultilabelFitOptions& o) {
  detail::check_label_sets(x, y, weights);
  check_fold_count(x, o);
  const std::size_t m = y.num_labels;
  const std::vector<int> folds = detail::assign_folds(x.rows(), o.cv_folds, o.seed);
  ClassifierChain chain;
  chain.names = default_names(m);
  for (std::size_t j = 0; j < m; ++j) {
    const FeatureMatrix xj = augment(x, y, j);
    const std::vector<std::int32_t> yj = label_column(y, j);
    auto [lm, info] = detail::fit_binary_base(xj, yj, weights, o, folds);
    lm.weights.resize(x.cols() + j, 0.0);  // a dense fit on a CSR copy keeps every column anyway
    chain.models.push_back(std::move(lm));
    chain.fits.push_back(info);
    if (o.progress) o.progress(j, m, chain.names[j], info);
  }
  return chain;
}

ExactFPlugin ExactFPlugin::fit(const FeatureMatrix& x, LabelSetsView y,
                               std::span<const double> weights, const MultilabelFitOptions& o) {
  detail::check_label_sets(x, y, weights);
  check_fold_count(x, o);
  const std::size_t m = y.num_labels;
  const std::vector<int> folds = detail::assign_folds(x.rows(), o.cv_folds, o.seed);
  ExactFPlugin efp;
  efp.names = default_names(m);
  std::vector<std::int32_t> size(y.size());
  for (std::size_t i = 0; i < y.size(); ++i)
    size[i] = static_cast<std::int32_t>(y.indptr[i + 1] - y.indptr[i]);
  for (std::size_t j = 0; j < m; ++j) {
    std::vector<std::int32_t> t = label_column(y, j);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] *= size[i];  // [y_j = 1] * |y|
    auto [mm, info] = detail::fit_multinomial_base(x, t, weights, o, folds);
    efp.label_models.push_back(std::move(mm));
    efp.fits.push_back(info);
    if (o.progress) o.progress(j, m + 1, efp.names[j], info);
  }
  std::vector<std::int32_t> empty(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) empty[i] = size[i] == 0 ? 1 : 0;
  auto [lm, info] = detail::fit_binary_base(x, empty, weights, o, folds);
  efp.empty_model = std::move(lm);
  efp.fits.push_back(info);
  if (o.progress) o.progress(m, m + 1, "y = 0", info);
  return efp;
}

}  // namespace rateopt
