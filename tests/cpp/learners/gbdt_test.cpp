// rateopt/gbdt.hpp: boosted trees through XGBoost. Byte-identical models for any thread count,
// instance weights as row copies (an integer weight fits as that many copies of the row), sparse
// rows as their dense form, the model read back from its JSON scoring to the same bits, and
// errors. Skipped in a build without XGBoost, except the refusal.
#include "rateopt/gbdt.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"
#include "rateopt/model.hpp"
#include "test_util.hpp"

#if RATEOPT_TEST_XGBOOST_API
#include <xgboost/c_api.h>
#endif

namespace rateopt {
namespace {

struct Rows {
  FeatureMatrix x;
  std::vector<std::int32_t> y;
};

Rows make_rows(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(n * d);
  std::vector<std::int32_t> y(n);
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0;
    for (std::size_t j = 0; j < d; ++j) {
      v[i * d + j] = j % 3 == 2 ? std::floor(2 * normal(rng)) : normal(rng);
      s += (j % 2 == 0 ? 1.0 : -0.5) * v[i * d + j] * v[i * d + j] / (1.0 + static_cast<double>(j));
    }
    y[i] = s + 0.5 * normal(rng) > 0.8 ? 1 : 0;
  }
  return {FeatureMatrix::dense(std::move(v), n, d), std::move(y)};
}

std::vector<double> scores_of(const TreeEnsemble& t, const FeatureMatrix& x, int threads = 1) {
  std::vector<double> out(x.rows());
  t.scores(x, out, threads);
  return out;
}

TEST(Gbdt, SameModelBytesForAnyThreadCount) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(3000, 6, 1);
  GbdtOptions o;
  o.rounds = 20;
  o.subsample = 0.7;
  o.colsample = 0.8;
  o.seed = 5;
  o.n_threads = 1;
  const TreeEnsemble one = fit_gbdt(r.x, r.y, {}, o);
  EXPECT_EQ(one.rounds(), 20U);
  EXPECT_EQ(one.num_features(), 6U);
  for (const int threads : {2, 4}) {
    o.n_threads = threads;
    EXPECT_EQ(fit_gbdt(r.x, r.y, {}, o).json(), one.json()) << threads << " threads";
  }
  // The seed draws the subsamples.
  o.seed = 6;
  EXPECT_NE(fit_gbdt(r.x, r.y, {}, o).json(), one.json());
  // Scores: the same bits for any thread count, and from the model read back.
  const std::vector<double> s = scores_of(one, r.x, 1);
  EXPECT_TRUE(test::same_bits(s, scores_of(one, r.x, 3)));
  const TreeEnsemble back(one.json(), one.num_features());
  EXPECT_TRUE(test::same_bits(s, scores_of(back, r.x)));
  // The trees learn: training accuracy well above the majority's.
  std::size_t right = 0, positives = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    right += (s[i] > 0) == (r.y[i] == 1) ? 1 : 0;
    positives += r.y[i] == 1 ? 1 : 0;
  }
  const double majority = static_cast<double>(std::max(positives, s.size() - positives)) /
                          static_cast<double>(s.size());
  EXPECT_GT(static_cast<double>(right) / static_cast<double>(s.size()), majority + 0.1);
}

// Weight 2 on a row is that row twice, weight 0 is no row (no subsampling: both see every row).
TEST(Gbdt, IntegerWeightsAreRowCopies) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(400, 4, 2);
  const DenseView v = r.x.dense_view();
  std::vector<double> weights(400);
  std::vector<double> copies;
  std::vector<std::int32_t> copy_labels;
  for (std::size_t i = 0; i < 400; ++i) {
    weights[i] = static_cast<double>(i % 3);
    for (std::size_t k = 0; k < i % 3; ++k) {
      copies.insert(copies.end(), v.row(i).begin(), v.row(i).end());
      copy_labels.push_back(r.y[i]);
    }
  }
  const std::size_t m = copy_labels.size();
  const FeatureMatrix xc = FeatureMatrix::dense(std::move(copies), m, 4);
  GbdtOptions o;
  o.rounds = 10;
  o.max_depth = 3;
  const TreeEnsemble weighted = fit_gbdt(r.x, r.y, weights, o);
  const TreeEnsemble copied = fit_gbdt(xc, copy_labels, {}, o);
  const std::vector<double> a = scores_of(weighted, r.x);
  const std::vector<double> b = scores_of(copied, r.x);
  // XGBoost's histogram cuts are weighted quantiles of the rows it is given: with copies as rows
  // the cuts can differ by ties, so compare the fits' scores, not their bytes.
  double largest = 0;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::fabs(a[i] - b[i]));
  EXPECT_LT(largest, 1e-5);
}

TEST(Gbdt, SparseRowsScoreAsTheirDenseForm) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(800, 5, 3);
  // The same rows as CSR, zeros left out (a feature of floor(2 z) is often 0).
  const DenseView v = r.x.dense_view();
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<double> values;
  for (std::size_t i = 0; i < 800; ++i) {
    for (std::size_t j = 0; j < 5; ++j)
      if (v(i, j) != 0) {
        indices.push_back(static_cast<std::int32_t>(j));
        values.push_back(v(i, j));
      }
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  ASSERT_LT(values.size(), 800U * 5U);
  const FeatureMatrix csr = FeatureMatrix::csr(indptr, indices, values, 5);
  GbdtOptions o;
  o.rounds = 8;
  const TreeEnsemble dense_fit = fit_gbdt(r.x, r.y, {}, o);
  EXPECT_EQ(fit_gbdt(csr, r.y, {}, o).json(), dense_fit.json());
  EXPECT_TRUE(test::same_bits(scores_of(dense_fit, csr), scores_of(dense_fit, r.x)));
}

#if RATEOPT_TEST_XGBOOST_API
// XGBoost's own training continuation: `start` loaded into a booster that trains `rounds` more
// rounds on (x, y), unweighted; its margins of x.
std::vector<double> xgboost_continued(const TreeEnsemble& start, const Rows& r,
                                      const GbdtOptions& o) {
  const DenseView v = r.x.dense_view();
  std::vector<float> f(v.rows * v.cols);
  for (std::size_t i = 0; i < v.rows; ++i)
    for (std::size_t j = 0; j < v.cols; ++j) f[i * v.cols + j] = static_cast<float>(v(i, j));
  DMatrixHandle m = nullptr;
  EXPECT_EQ(XGDMatrixCreateFromMat(f.data(), v.rows, v.cols, std::nanf(""), &m), 0);
  std::vector<float> y(r.y.begin(), r.y.end());
  EXPECT_EQ(XGDMatrixSetFloatInfo(m, "label", y.data(), y.size()), 0);
  BoosterHandle b = nullptr;
  EXPECT_EQ(XGBoosterCreate(&m, 1, &b), 0);
  EXPECT_EQ(XGBoosterLoadModelFromBuffer(b, start.json().data(), start.json().size()), 0);
  const std::vector<std::pair<const char*, std::string>> params{
      {"objective", "binary:logistic"},
      {"tree_method", "hist"},
      {"nthread", "1"},
      {"max_depth", std::to_string(o.max_depth)},
      {"eta", fmt::format("{}", o.learning_rate)},
      {"seed", std::to_string(o.seed)},
      {"verbosity", "0"}};
  for (const auto& [key, value] : params) EXPECT_EQ(XGBoosterSetParam(b, key, value.c_str()), 0);
  const int first = static_cast<int>(start.rounds());
  for (int round = first; round < first + o.rounds; ++round)
    EXPECT_EQ(XGBoosterUpdateOneIter(b, round, m), 0);
  bst_ulong len = 0;
  const float* out = nullptr;
  EXPECT_EQ(XGBoosterPredict(b, m, 1, 0, 0, &len, &out), 0);
  std::vector<double> margins(out, out + len);
  XGBoosterFree(b);
  XGDMatrixFree(m);
  return margins;
}

// Boosting on from a booster gives what XGBoost's own continuation gives (unweighted rows, where
// both make the same bins), as one model holding both sets of trees.
TEST(Gbdt, BoostingOnIsXGBoostsContinuation) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(2000, 5, 11);
  GbdtOptions o;
  o.rounds = 15;
  o.max_depth = 4;
  o.n_threads = 1;
  const TreeEnsemble start = fit_gbdt(r.x, r.y, {}, o);
  BoostOn on(start, scores_of(start, r.x), r.x);
  o.rounds = 7;
  const GbdtFit fit = on.fit(r.y, {}, o);
  EXPECT_EQ(fit.model.rounds(), 22U);
  const std::vector<double> theirs = xgboost_continued(start, r, o);
  ASSERT_EQ(theirs.size(), fit.margins.size());
  double largest = 0;
  for (std::size_t i = 0; i < theirs.size(); ++i)
    largest = std::max(largest, std::fabs(theirs[i] - fit.margins[i]));
  EXPECT_LT(largest, 1e-5);
}
#endif

// Each fit's margins are its model's scores of the rows, bit for bit, over fits with other labels
// and weights (the bins stay the first fit's); the same bytes for any thread count; a fit without
// weights after a weighted one weighs every row 1.
TEST(Gbdt, BoostingOnMarginsAreTheModelsScores) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(1500, 6, 12);
  GbdtOptions o;
  o.rounds = 12;
  o.subsample = 0.8;
  o.colsample = 0.9;
  o.seed = 3;
  o.n_threads = 1;
  const TreeEnsemble start = fit_gbdt(r.x, r.y, {}, o);
  const std::vector<double> start_margins = scores_of(start, r.x);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> unit;
  std::vector<std::vector<std::int32_t>> labels;
  std::vector<std::vector<double>> weights;
  for (int k = 0; k < 3; ++k) {
    std::vector<std::int32_t> y = r.y;
    std::vector<double> w(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (unit(rng) < 0.2) y[i] = 1 - y[i];
      w[i] = k == 2 ? 1.0 : 3 * unit(rng);
    }
    labels.push_back(std::move(y));
    weights.push_back(std::move(w));
  }
  std::vector<std::string> models;
  for (const int threads : {1, 3}) {
    o.n_threads = threads;
    BoostOn on(start, start_margins, r.x);
    for (std::size_t k = 0; k < 3; ++k) {
      o.rounds = 5 + static_cast<int>(k);
      // The third fit: no weights (every row 1).
      const GbdtFit fit = on.fit(labels[k], k == 2 ? std::span<const double>() : weights[k], o);
      EXPECT_EQ(fit.model.rounds(), 12U + 5U + k);
      EXPECT_TRUE(test::same_bits(fit.margins, scores_of(fit.model, r.x, threads))) << k;
      if (threads == 1) {
        models.push_back(fit.model.json());
      } else {
        EXPECT_EQ(fit.model.json(), models[k]) << k << ": " << threads << " threads";
      }
    }
  }
  // Unit weights and no weights fit the same trees.
  BoostOn again(start, start_margins, r.x);
  o.n_threads = 1;
  o.rounds = 5;
  (void)again.fit(labels[0], weights[0], o);
  o.rounds = 7;
  EXPECT_EQ(again.fit(labels[2], weights[2], o).model.json(), models[2]);
  // fit_lazily: the same margins, and model() made after later fits, in any order, gives the
  // model fit gave, byte for byte.
  BoostOn lazily(start, start_margins, r.x);
  std::vector<BoostOn::LazyFit> fits;
  for (std::size_t k = 0; k < 3; ++k) {
    o.rounds = 5 + static_cast<int>(k);
    fits.push_back(
        lazily.fit_lazily(labels[k], k == 2 ? std::span<const double>() : weights[k], o));
    EXPECT_EQ(fits.back().rounds, 5U + k);
  }
  for (std::size_t k = 3; k-- > 0;) {
    const TreeEnsemble model = lazily.model(fits[k]);
    EXPECT_EQ(model.json(), models[k]) << k;
    EXPECT_TRUE(test::same_bits(fits[k].margins, scores_of(model, r.x))) << k;
  }
  test::expect_invalid([&] { (void)lazily.model(BoostOn::LazyFit{}); }, "holds no trees");
}

// A booster's first k trees are the booster that k rounds fit (boosting is sequential, and the
// seed draws each round's subsample the same way), scoring to the same bits.
TEST(Gbdt, FirstRoundsAreTheShorterFit) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(1000, 4, 14);
  GbdtOptions o;
  o.rounds = 20;
  o.subsample = 0.7;
  o.seed = 9;
  o.n_threads = 1;
  TreeEnsemble whole = fit_gbdt(r.x, r.y, {}, o);
  o.rounds = 12;
  const TreeEnsemble shorter = fit_gbdt(r.x, r.y, {}, o);
  whole.set_offset(1.5);  // not carried over
  const TreeEnsemble first = whole.first_rounds(12);
  EXPECT_EQ(first.rounds(), 12U);
  EXPECT_EQ(first.offset(), 0.0);
  EXPECT_TRUE(test::same_bits(scores_of(first, r.x), scores_of(shorter, r.x)));
  EXPECT_EQ(whole.first_rounds(20).rounds(), 20U);
  test::expect_invalid([&] { (void)whole.first_rounds(0); }, "expected 1 to 20");
  test::expect_invalid([&] { (void)whole.first_rounds(21); }, "first 21 rounds");
}

// fit_gbdt_with_margins: the model fit_gbdt gives, its margins of the rows and those of its first
// rounds (read from XGBoost's training cache while boosting) the bits scoring them anew gives,
// with row subsampling and weights.
TEST(Gbdt, FitWithMarginsGivesTheScoresOfTheModelAndItsFirstRounds) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(1200, 5, 15);
  std::vector<double> w(r.y.size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.25 + static_cast<double>(i % 7) / 3;
  GbdtOptions o;
  o.rounds = 15;
  o.subsample = 0.8;
  o.seed = 5;
  o.n_threads = 1;
  const GbdtFit fit = fit_gbdt_with_margins(r.x, r.y, w, o, 11);
  EXPECT_EQ(fit.model.json(), fit_gbdt(r.x, r.y, w, o).json());
  EXPECT_TRUE(test::same_bits(fit.margins, scores_of(fit.model, r.x)));
  EXPECT_TRUE(test::same_bits(fit.prefix_margins, scores_of(fit.model.first_rounds(11), r.x)));
  EXPECT_FALSE(test::same_bits(fit.prefix_margins, fit.margins));
  const GbdtFit none = fit_gbdt_with_margins(r.x, r.y, w, o);
  EXPECT_TRUE(none.prefix_margins.empty());
  EXPECT_TRUE(test::same_bits(none.margins, fit.margins));
  test::expect_invalid([&] { (void)fit_gbdt_with_margins(r.x, r.y, w, o, 15); },
                       "prefix_rounds is 15, expected 0 (none) to 14");
  test::expect_invalid([&] { (void)fit_gbdt_with_margins(r.x, r.y, w, o, -1); },
                       "prefix_rounds is -1");
}

TEST(Gbdt, BoostingOnBadInputsAreErrors) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(300, 3, 13);
  GbdtOptions o;
  o.rounds = 3;
  const TreeEnsemble start = fit_gbdt(r.x, r.y, {}, o);
  const std::vector<double> m = scores_of(start, r.x);
  test::expect_invalid([&] { (void)BoostOn(TreeEnsemble(), m, r.x); }, "empty boosted-tree model");
  test::expect_invalid([&] { (void)BoostOn(start, std::span<const double>(m).first(10), r.x); },
                       "start_margins has 10 entries, expected 300");
  std::vector<double> bad = m;
  bad[7] = std::nan("");
  test::expect_invalid([&] { (void)BoostOn(start, bad, r.x); }, "start_margins[7] is nan");
  TreeEnsemble shifted = start;
  shifted.set_offset(0.5);
  test::expect_invalid([&] { (void)BoostOn(shifted, m, r.x); }, "has an offset (0.5)");
  const Rows wide = make_rows(300, 4, 13);
  test::expect_invalid([&] { (void)BoostOn(start, m, wide.x); },
                       "reads 3 features, the data has 4");
  BoostOn on(start, m, r.x);
  test::expect_invalid([&] { (void)on.fit(std::span<const std::int32_t>(r.y).first(5), {}, o); },
                       "labels has 5 entries, expected 300");
  std::vector<double> w(300, 1.0);
  w[2] = -1;
  test::expect_invalid([&] { (void)on.fit(r.y, w, o); }, "weights[2] is -1");
  o.rounds = 0;
  test::expect_invalid([&] { (void)on.fit(r.y, {}, o); }, "gbdt rounds is 0");
}

TEST(Gbdt, BadInputsAreErrors) {
  const Rows r = make_rows(50, 3, 4);
  GbdtOptions o;
  o.rounds = 0;
  test::expect_invalid([&] { (void)fit_gbdt(r.x, r.y, {}, o); }, "rounds is 0");
  o = {};
  o.learning_rate = 1.5;
  test::expect_invalid([&] { (void)fit_gbdt(r.x, r.y, {}, o); }, "learning_rate is 1.5");
  o = {};
  o.subsample = 0;
  test::expect_invalid([&] { (void)fit_gbdt(r.x, r.y, {}, o); }, "subsample is 0");
  if (!gbdt_available()) {
    test::expect_invalid([&] { (void)fit_gbdt(r.x, r.y, {}, GbdtOptions{}); }, "libxgboost-dev");
    return;
  }
  std::vector<std::int32_t> y = r.y;
  y[7] = 2;
  test::expect_invalid([&] { (void)fit_gbdt(r.x, y, {}, GbdtOptions{}); }, "labels[7] is 2");
  std::vector<double> w(50, 1.0);
  w[3] = std::nan("");
  test::expect_invalid([&] { (void)fit_gbdt(r.x, r.y, w, GbdtOptions{}); }, "weights[3] is nan");
  test::expect_invalid([&] { (void)fit_gbdt(r.x, r.y, std::vector<double>(3), GbdtOptions{}); },
                       "weights has 3 entries");
  test::expect_invalid([] { (void)TreeEnsemble("{not json", 3); }, "XGBoost");
  const TreeEnsemble t = fit_gbdt(r.x, r.y, {}, GbdtOptions{.rounds = 2});
  test::expect_invalid([&] { (void)TreeEnsemble(t.json(), 4); }, "reads 3 features");
  const Rows wide = make_rows(5, 4, 5);
  std::vector<double> out(5);
  test::expect_invalid([&] { t.scores(wide.x, out); }, "the data has 4 features");
}

// A classifier whose components are boosted trees (and a linear one beside them): every prediction
// mode against the components' own scores, levels as predict gives them, the JSON round trip to
// the same bytes (version 3, the booster's text kept), and a tampered booster blamed on the model.
// An offset (the guaranteed mode's moved threshold) adds to every margin, is saved only when it is
// not 0 and loads back to the same bytes and scores; a non-finite one is an error.
TEST(Gbdt, OffsetShiftsTheMarginsAndRoundTrips) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(500, 4, 8);
  GbdtOptions o;
  o.rounds = 4;
  TreeEnsemble t = fit_gbdt(r.x, r.y, {}, o);
  std::vector<double> plain(500), moved(500);
  t.scores(r.x, plain);
  t.set_offset(-0.375);
  t.scores(r.x, moved);
  for (std::size_t i = 0; i < 500; ++i) ASSERT_EQ(moved[i], plain[i] - 0.375) << i;
  Encoding enc;
  enc.num_features = 4;
  Classifier c;
  c.kind = "gbdt";
  c.components = {t};
  c.mixture = {1.0};
  c.link = Link::kThreshold;
  c.encoding = enc;
  const std::string json = c.to_json();
  EXPECT_NE(json.find("\"offset\": -0.375"), std::string::npos);
  const Classifier back = Classifier::from_json(json);
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.components[0].trees()->offset(), -0.375);
  t.set_offset(0);
  c.components = {t};
  EXPECT_EQ(c.to_json().find("offset"), std::string::npos);
  test::expect_invalid([&] { t.set_offset(std::nan("")); }, "offset");
}

TEST(Gbdt, ClassifierOfTreesPredictsSavesAndLoads) {
  if (!gbdt_available()) GTEST_SKIP() << "built without XGBoost";
  const Rows r = make_rows(1000, 4, 6);
  GbdtOptions o;
  o.rounds = 6;
  const TreeEnsemble a = fit_gbdt(r.x, r.y, {}, o);
  o.max_depth = 2;
  const TreeEnsemble b = fit_gbdt(r.x, r.y, {}, o);
  Encoding enc;
  enc.num_features = 4;
  Classifier c;
  c.kind = "gbdt";
  c.components = {a, b, ScoreModel({0.5, -0.25, 0.0, 1.0}, -0.1)};
  c.mixture = {0.5, 0.3, 0.2};
  c.best = 1;
  c.link = Link::kThreshold;
  c.encoding = enc;
  c.validate();
  EXPECT_FALSE(c.is_linear());
  EXPECT_EQ(c.components[0].family(), "gbdt");
  test::expect_invalid([&] { (void)c.components[0].linear("coef_"); }, "coef_ needs a linear");

  std::vector<std::vector<double>> s(3, std::vector<double>(1000));
  for (std::size_t m = 0; m < 3; ++m) c.components[m].scores(r.x, s[m]);
  std::vector<double> prob(1000), det(1000), dec(1000);
  c.predict(r.x, PredictMode::kProbability, prob, 0, 2);
  c.predict(r.x, PredictMode::kDeterministic, det);
  c.decision_function(r.x, dec);
  for (std::size_t i = 0; i < 1000; ++i) {
    double p = 0;
    for (std::size_t m = 0; m < 3; ++m) p += c.mixture[m] * (s[m][i] > 0 ? 1.0 : 0.0);
    ASSERT_EQ(prob[i], std::clamp(p, 0.0, 1.0)) << i;
    ASSERT_EQ(det[i], s[1][i] > 0 ? 1.0 : 0.0) << i;
    ASSERT_EQ(dec[i], s[1][i]) << i;
  }
  std::vector<std::uint8_t> code(1000);
  const auto levels = c.predict_levels(r.x, code);
  ASSERT_TRUE(levels.has_value());
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ((*levels)[code[i]], prob[i]) << i;
  // The logistic link: XGBoost's own probabilities.
  c.link = Link::kLogistic;
  c.predict(r.x, PredictMode::kProbability, prob);
  for (std::size_t i = 0; i < 1000; ++i) {
    double p = 0;
    for (std::size_t m = 0; m < 3; ++m)
      p += c.mixture[m] * std::exp(s[m][i]) / (1 + std::exp(s[m][i]));
    ASSERT_NEAR(prob[i], p, 1e-15) << i;
  }

  const std::string json = c.to_json();
  EXPECT_NE(json.find("\"version\": 3"), std::string::npos);
  const Classifier back = Classifier::from_json(json);
  EXPECT_EQ(back.to_json(), json);
  ASSERT_NE(back.components[0].trees(), nullptr);
  EXPECT_EQ(back.components[0].trees()->json(), a.json());
  std::vector<double> again(1000);
  back.predict(r.x, PredictMode::kProbability, again);
  EXPECT_TRUE(test::same_bits(again, prob));

  std::string tampered = json;
  const std::size_t at = tampered.find("\"booster\": \"");
  ASSERT_NE(at, std::string::npos);
  tampered.insert(at + 12, "x");
  try {
    (void)Classifier::from_json(tampered, "m.json");
    ADD_FAILURE() << "a tampered booster was read";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("components[0].booster"), std::string::npos) << e.what();
  }
  // A component reading other features than the rest.
  Classifier wrong = c;
  wrong.components[2] = ScoreModel({1.0, 2.0}, 0.0);
  test::expect_invalid([&] { wrong.validate(); }, "'components[2]");
}

}  // namespace
}  // namespace rateopt
