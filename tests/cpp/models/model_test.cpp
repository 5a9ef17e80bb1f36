// Tests of linear scorers, the mixture classifier's predict modes and the model JSON format
// (src/models/model.cpp), including checked-in version-1 files.
#include "rateopt/model.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using Json = nlohmann::json;

// Two-sided tail probability of the tests below: |Z| > 4.8916 has probability 1e-6.
constexpr double kZ = 4.8916;

using test::expect_invalid;
using test::uniform;

using test::source_path;

std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() / fmt::format("{}_{}.json", stem, ::getpid()))
      .string();
}

Encoding libsvm_encoding(std::size_t d) {
  Encoding e;
  e.format = "libsvm";
  e.num_features = d;
  for (std::size_t j = 0; j < d; ++j) e.feature_names.push_back(fmt::format("f{}", j + 1));
  return e;
}

// A one-feature classifier with weight 1 and bias 0: the score is the feature itself.
Classifier identity_classifier(Link link) {
  return Classifier::single(LinearModel{{1.0}, 0.0}, link, libsvm_encoding(1));
}

// A column of values as a dense n x 1 matrix.
FeatureMatrix column(const std::vector<double>& v) {
  return FeatureMatrix::dense(v, v.size(), 1);
}

// Random CSR matrix with values in [-1, 1].
FeatureMatrix random_csr(std::size_t rows, std::size_t cols, double density, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<double> values;
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      if (uniform(rng) >= density) continue;
      indices.push_back(static_cast<std::int32_t>(j));
      values.push_back(2 * uniform(rng) - 1);
    }
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  return FeatureMatrix::csr(std::move(indptr), std::move(indices), std::move(values), cols);
}

// Two logistic components with random weights, mixture (0.35, 0.65).
Classifier random_mixture(std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Classifier c;
  c.kind = "three_player";
  c.link = Link::kLogistic;
  for (int m = 0; m < 2; ++m) {
    LinearModel lm;
    for (std::size_t j = 0; j < d; ++j) lm.weights.push_back(4 * uniform(rng) - 2);
    lm.bias = uniform(rng) - 0.5;
    c.components.push_back(lm);
  }
  c.mixture = {0.35, 0.65};
  c.best = 1;
  c.encoding = libsvm_encoding(d);
  return c;
}

std::vector<double> predict(const Classifier& c, const FeatureMatrix& x, PredictMode mode,
                            std::uint64_t seed = 0, int threads = 0) {
  std::vector<double> out(x.rows());
  c.predict(x, mode, out, seed, threads);
  return out;
}

// ---- LinearModel --------------------------------------------------------------------------------

TEST(ModelLinear, ScoresDenseAndCsrByHand) {
  const LinearModel m{{1.0, 2.0, -1.0}, 0.5};
  const auto dense = FeatureMatrix::dense({1, 1, 1, 0, 0, 2}, 2, 3);
  const auto csr = FeatureMatrix::csr({0, 3, 4}, {0, 1, 2, 2}, {1, 1, 1, 2}, 3);
  for (const FeatureMatrix* x : {&dense, &csr}) {
    EXPECT_EQ(m.score(*x, 0), 2.5);
    EXPECT_EQ(m.score(*x, 1), -1.5);
    std::vector<double> out(2);
    m.scores(*x, out, 1);
    EXPECT_EQ(out, (std::vector<double>{2.5, -1.5}));
  }
  EXPECT_THROW((void)m.score(dense, 2), InvalidArgument);
  std::vector<double> wrong(3);
  EXPECT_THROW(m.scores(dense, wrong), InvalidArgument);
}

TEST(ModelLinear, MissingTrailingColumnsCountAsZero) {
  // a9a.t lacks a9a's last feature: a matrix with fewer columns scores as if they were zero.
  const LinearModel m{{1.0, 2.0, 100.0}, -1.0};
  const auto dense = FeatureMatrix::dense({3, 4}, 1, 2);
  const auto csr = FeatureMatrix::csr({0, 2}, {0, 1}, {3, 4}, 2);
  for (const FeatureMatrix* x : {&dense, &csr}) {
    EXPECT_EQ(m.score(*x, 0), 10.0);
    std::vector<double> out(1);
    m.scores(*x, out);
    EXPECT_EQ(out[0], 10.0);
  }
}

TEST(ModelLinear, ExtraColumnsOnlyWhenSparseAndEmpty) {
  const LinearModel m{{1.0, 2.0}, 0.0};
  std::vector<double> out(2);
  // Dense with a third column: an error even where that column is zero.
  EXPECT_THROW(m.scores(FeatureMatrix::dense({1, 1, 0, 1, 1, 0}, 2, 3), out), InvalidArgument);
  EXPECT_THROW((void)m.score(FeatureMatrix::dense({1, 1, 0}, 1, 3), 0), InvalidArgument);
  // CSR with an empty third column: fine.
  const auto empty_extra = FeatureMatrix::csr({0, 2, 3}, {0, 1, 1}, {1, 1, 1}, 3);
  m.scores(empty_extra, out);
  EXPECT_EQ(out, (std::vector<double>{3.0, 2.0}));
  // CSR with a value in the third column: an error.
  const auto used_extra = FeatureMatrix::csr({0, 2, 3}, {0, 1, 2}, {1, 1, 1}, 3);
  EXPECT_THROW(m.scores(used_extra, out), InvalidArgument);
  EXPECT_EQ(m.score(used_extra, 0), 3.0);
  EXPECT_THROW((void)m.score(used_extra, 1), InvalidArgument);
}

TEST(ModelLinear, ScoresDoNotDependOnThreads) {
  const FeatureMatrix x = random_csr(5000, 30, 0.2, 3);
  LinearModel m;
  std::mt19937_64 rng(4);
  for (int j = 0; j < 30; ++j) m.weights.push_back(uniform(rng) - 0.5);
  m.bias = 0.125;
  std::vector<double> one(x.rows());
  std::vector<double> two(x.rows());
  m.scores(x, one, 1);
  m.scores(x, two, 2);
  EXPECT_EQ(one, two);
  for (std::size_t i = 0; i < x.rows(); i += 997) EXPECT_EQ(one[i], m.score(x, i));
}

// ---- names --------------------------------------------------------------------------------------

TEST(ModelNames, LinksAndPredictModes) {
  EXPECT_EQ(to_string(Link::kLogistic), "logistic");
  EXPECT_EQ(to_string(Link::kThreshold), "threshold");
  EXPECT_EQ(to_string(Link::kRamp), "ramp");
  for (PredictMode m :
       {PredictMode::kDeterministic, PredictMode::kStochastic, PredictMode::kProbability})
    EXPECT_EQ(parse_predict_mode(to_string(m)), m);
  EXPECT_EQ(to_string(PredictMode::kStochastic), "stochastic");
  try {
    (void)parse_predict_mode("random");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'random'"), std::string::npos) << what;
    EXPECT_NE(what.find("deterministic, stochastic, probability"), std::string::npos) << what;
  }
}

// ---- predict
// --------------------------------------------------------------------------------------

TEST(ClassifierPredict, ProbabilityForEachLinkByHand) {
  const FeatureMatrix x = column({-800.0, -3.0, -0.5, 0.0, 0.25, 2.0, 800.0});
  const auto logistic = predict(identity_classifier(Link::kLogistic), x, PredictMode::kProbability);
  EXPECT_EQ(logistic[0], 0.0);
  EXPECT_DOUBLE_EQ(logistic[1], 1 / (1 + std::exp(3.0)));
  EXPECT_DOUBLE_EQ(logistic[2], 1 / (1 + std::exp(0.5)));
  EXPECT_EQ(logistic[3], 0.5);
  EXPECT_DOUBLE_EQ(logistic[4], 1 / (1 + std::exp(-0.25)));
  EXPECT_DOUBLE_EQ(logistic[5], 1 / (1 + std::exp(-2.0)));
  EXPECT_EQ(logistic[6], 1.0);
  EXPECT_EQ(predict(identity_classifier(Link::kThreshold), x, PredictMode::kProbability),
            (std::vector<double>{0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(predict(identity_classifier(Link::kRamp), x, PredictMode::kProbability),
            (std::vector<double>{0, 0, 0.25, 0.5, 0.625, 1, 1}));
}

TEST(ClassifierPredict, DeterministicThresholdsTheBestComponent) {
  const FeatureMatrix x = column({-1.0, 0.0, 1e-300, 3.0});
  for (Link link : {Link::kLogistic, Link::kThreshold, Link::kRamp})
    EXPECT_EQ(predict(identity_classifier(link), x, PredictMode::kDeterministic),
              (std::vector<double>{0, 0, 1, 1}));
  Classifier c = identity_classifier(Link::kRamp);
  c.components.push_back(LinearModel{{-1.0}, 0.5});
  c.mixture = {0.9, 0.1};
  c.best = 1;  // the deterministic mode uses `best`, however small its mixture weight
  EXPECT_EQ(predict(c, x, PredictMode::kDeterministic), (std::vector<double>{1, 1, 1, 0}));
  std::vector<double> scores(4);
  c.decision_function(x, scores);
  EXPECT_EQ(scores, (std::vector<double>{1.5, 0.5, 0.5 - 1e-300, -2.5}));
}

TEST(ClassifierPredict, StochasticIsReproducibleAndThreadIndependent) {
  const FeatureMatrix x = random_csr(20000, 10, 0.5, 9);
  const Classifier c = random_mixture(10, 10);
  const auto a = predict(c, x, PredictMode::kStochastic, 7, 1);
  const auto b = predict(c, x, PredictMode::kStochastic, 7, 2);
  const auto again = predict(c, x, PredictMode::kStochastic, 7, 0);
  const auto other_seed = predict(c, x, PredictMode::kStochastic, 8, 1);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, again);
  EXPECT_NE(a, other_seed);
  for (double v : a) ASSERT_TRUE(v == 0.0 || v == 1.0);
  // Rows are keyed by index, not by the rows around them: a subset gets the same draws.
  const std::vector<double> first(a.begin(), a.begin() + 1000);
  std::vector<std::size_t> rows(1000);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  EXPECT_EQ(predict(c, x.select_rows(rows), PredictMode::kStochastic, 7, 2), first);
  // Probability 0 and 1 give 0 and 1 draws.
  const FeatureMatrix sure = column({-1.0, 1.0, -2.0, 2.0});
  EXPECT_EQ(predict(identity_classifier(Link::kThreshold), sure, PredictMode::kStochastic, 3),
            (std::vector<double>{0, 1, 0, 1}));
}

TEST(ClassifierPredict, StochasticMeanMatchesProbability) {
  // Constant probabilities: the number of ones is Binomial(n, p); the normal approximation is
  // accurate at this n. Each check fails with probability 1e-6 when the draws are right.
  const std::size_t n = 200000;
  for (double p : {0.01, 0.3, 0.5, 0.9}) {
    SCOPED_TRACE(::testing::Message() << "p=" << p);
    const double s = 2 * p - 1;  // ramp link: probability (1 + s) / 2 = p
    const Classifier c = identity_classifier(Link::kRamp);
    const auto draws = predict(c, column(std::vector<double>(n, s)), PredictMode::kStochastic, 42);
    double ones = 0;
    double pairs = 0;  // consecutive rows both 1: Binomial(n - 1, p^2) approximately
    for (std::size_t i = 0; i < n; ++i) {
      ones += draws[i];
      if (i > 0) pairs += draws[i] * draws[i - 1];
    }
    const double nd = static_cast<double>(n);
    EXPECT_LE(std::abs(ones - nd * p), kZ * std::sqrt(nd * p * (1 - p)));
    const double q = p * p;
    // Overlapping pairs are 1-dependent: the variance is at most 3x the independent one.
    EXPECT_LE(std::abs(pairs - (nd - 1) * q), kZ * std::sqrt(3 * (nd - 1) * q * (1 - q)));
  }
  // Varying probabilities from a mixture: the sum of draws has mean sum p_i and variance
  // sum p_i (1 - p_i).
  const FeatureMatrix x = random_csr(n, 10, 0.5, 12);
  const Classifier c = random_mixture(10, 13);
  const auto prob = predict(c, x, PredictMode::kProbability);
  const auto draws = predict(c, x, PredictMode::kStochastic, 2024);
  double mean = 0;
  double var = 0;
  double ones = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mean += prob[i];
    var += prob[i] * (1 - prob[i]);
    ones += draws[i];
  }
  EXPECT_LE(std::abs(ones - mean), kZ * std::sqrt(var));
}

TEST(ClassifierPredict, MixtureProbabilityIsTheWeightedLinkAverage) {
  const FeatureMatrix x = random_csr(300, 10, 0.5, 14);
  const Classifier c = random_mixture(10, 15);
  const auto prob = predict(c, x, PredictMode::kProbability);
  for (std::size_t i = 0; i < x.rows(); ++i) {
    double expected = 0;
    for (std::size_t m = 0; m < 2; ++m)
      expected += c.mixture[m] / (1 + std::exp(-c.components[m].linear().score(x, i)));
    EXPECT_NEAR(prob[i], expected, 1e-15);
  }
}

TEST(ClassifierPredict, RejectsWrongShapes) {
  Classifier c =
      Classifier::single(LinearModel{{1.0, 2.0, 3.0}, 0.0}, Link::kLogistic, libsvm_encoding(3));
  std::vector<double> out(1);
  EXPECT_THROW(c.predict(FeatureMatrix::dense({1, 2}, 1, 2), PredictMode::kProbability, out),
               InvalidArgument);
  EXPECT_THROW(c.predict(FeatureMatrix::dense({1, 2, 3, 4}, 1, 4), PredictMode::kProbability, out),
               InvalidArgument);
  EXPECT_THROW(c.decision_function(FeatureMatrix::dense({1, 2, 3, 4}, 1, 4), out), InvalidArgument);
  std::vector<double> two(2);
  EXPECT_THROW(c.predict(FeatureMatrix::dense({1, 2, 3}, 1, 3), PredictMode::kProbability, two),
               InvalidArgument);
  // A sparse file may lack trailing features (LIBSVM): they count as zero.
  c.predict(FeatureMatrix::csr({0, 2}, {0, 1}, {1, 1}, 2), PredictMode::kProbability, out);
  EXPECT_DOUBLE_EQ(out[0], 1 / (1 + std::exp(-3.0)));
}

// ---- validate -----------------------------------------------------------------------------------

TEST(ClassifierValidate, RejectsInconsistentModels) {
  const Classifier good = random_mixture(3, 16);
  EXPECT_NO_THROW(good.validate());
  auto expect_invalid = [](const Classifier& c, const std::string& fragment) {
    try {
      c.validate();
      ADD_FAILURE() << "expected InvalidArgument mentioning " << fragment;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  Classifier c = good;
  c.mixture = {0.5, 0.6};
  expect_invalid(c, "'mixture' sums to");
  c.mixture = {1.1, -0.1};
  expect_invalid(c, "'mixture[1]'");
  c.mixture = {1.0};
  expect_invalid(c, "'mixture' has 1 entries");
  c.mixture = {0.5, 0.5 + 5e-10};  // within the 1e-9 tolerance
  EXPECT_NO_THROW(c.validate());
  c = good;
  c.best = 2;
  expect_invalid(c, "'best' is 2");
  c = good;
  c.components[1].linear().weights[2] = std::nan("");
  expect_invalid(c, "'components[1].weights[2]'");
  c = good;
  c.components[0].linear().bias = INFINITY;
  expect_invalid(c, "'components[0].bias'");
  c = good;
  c.components[1].linear().weights.push_back(1.0);
  expect_invalid(c, "'components[1].weights' has 4 entries");
  c = good;
  c.encoding.num_features = 5;
  expect_invalid(c, "the encoding has 5 features");
  c = good;
  c.components.clear();
  expect_invalid(c, "'components' is empty");
  EXPECT_THROW((void)Classifier::single(LinearModel{{std::nan("")}, 0}, Link::kLogistic, {}),
               InvalidArgument);
}

// ---- JSON
// -----------------------------------------------------------------------------------------

TEST(ClassifierJson, AbsurdWeightsAreRefusedAtLoad) {
  // Issue 10: weights of 1e308 passed validation and predict printed -nan (w . x overflowing).
  Classifier c = random_mixture(6, 17);
  const std::string good = c.to_json();
  c.components[1].linear().weights[2] = 1e308;
  EXPECT_THROW(c.validate(), InvalidArgument);
  nlohmann::json j = nlohmann::json::parse(good);
  j["components"][0]["bias"] = 1e308;
  try {
    (void)Classifier::from_json(j.dump(), "m.json");
    FAIL() << "a bias of 1e308 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 1e+100"), std::string::npos) << e.what();
  }
}

TEST(ClassifierPredict, ScoreThatIsNotANumberIsAnError) {
  Classifier c = random_mixture(2, 3);
  for (ScoreModel& lm_model : c.components) lm_model.linear().weights = {1e100, -1e100};
  const std::size_t d = c.components[0].linear().weights.size();
  std::vector<double> x(2 * d, 1e300);  // w . x = 1e400 - 1e400: inf - inf
  const FeatureMatrix fm = FeatureMatrix::dense(std::move(x), 2, d);
  std::vector<double> out(2);
  for (PredictMode m : {PredictMode::kDeterministic, PredictMode::kProbability})
    EXPECT_THROW(c.predict(fm, m, out), InvalidArgument);
}

// predict_positive (1 byte a row, in blocks of 65536 rows) gives predict's 0/1 predictions: more
// than two blocks, any thread count, deterministic and stochastic (draws keyed by the row).
TEST(ClassifierPredict, PredictPositiveMatchesPredictOverBlocks) {
  const std::size_t n = 150001;
  const Dataset ds(random_csr(n, 4, 0.6, 21), Labels{});
  const Classifier c = random_mixture(4, 22);
  for (PredictMode mode : {PredictMode::kDeterministic, PredictMode::kStochastic}) {
    const std::vector<double> want = predict(c, ds.features(), mode, 5, 1);
    for (int threads : {1, 2}) {
      std::vector<std::uint8_t> got(n, 7);
      c.predict_positive(ds, mode, got, 5, threads);
      std::size_t ones = 0, differ = 0;
      for (std::size_t i = 0; i < n; ++i) {
        ones += got[i];
        differ += static_cast<double>(got[i]) != want[i] ? 1 : 0;
      }
      EXPECT_EQ(differ, 0u) << to_string(mode) << ", " << threads << " threads";
      EXPECT_GT(ones, 0u);
      EXPECT_LT(ones, n);
    }
  }
  std::vector<std::uint8_t> out(n);
  expect_invalid([&] { c.predict_positive(ds, PredictMode::kProbability, out); }, "probability");
  std::vector<std::uint8_t> short_out(n - 1);
  expect_invalid([&] { c.predict_positive(ds, PredictMode::kDeterministic, short_out); },
                 "output has 150000 entries");
  std::vector<std::uint8_t> none;
  const Dataset empty(FeatureMatrix::dense(std::vector<double>(), 0, 4), Labels{});
  c.predict_positive(empty, PredictMode::kDeterministic, none);
}

// Probabilities coded in bytes: a threshold-link mixture's levels give predict's bits for every
// row (components of weight 0 skipped); other links, group rules or more than 8 components: none.
TEST(ClassifierPredict, PredictLevelsGivesPredictsProbabilities) {
  const FeatureMatrix x = random_csr(5000, 6, 0.6, 31);
  Classifier c = random_mixture(6, 32);
  std::vector<std::uint8_t> codes(x.rows(), 0);
  EXPECT_FALSE(c.predict_levels(x, codes));  // logistic link
  c.link = Link::kThreshold;
  std::mt19937_64 rng(33);
  for (const std::size_t k : {1UL, 3UL, 8UL}) {
    c.components.resize(2);
    while (c.components.size() < k + 1) c.components.push_back(c.components[rng() % 2]);
    for (ScoreModel& m_model : c.components) m_model.linear().bias = uniform(rng) - 0.5;
    c.mixture.assign(k + 1, 0.0);
    for (std::size_t m = 1; m <= k; ++m) c.mixture[m] = 1.0 / 3.0 + static_cast<double>(m) / 10;
    double total = 0;
    for (const double v : c.mixture) total += v;
    for (double& v : c.mixture) v /= total;  // component 0 has weight 0
    c.best = 1;
    const std::vector<double> want = predict(c, x, PredictMode::kProbability);
    for (int threads : {1, 2}) {
      const std::optional<std::vector<double>> levels = c.predict_levels(x, codes, threads);
      ASSERT_TRUE(levels) << k;
      EXPECT_EQ(levels->size(), std::size_t{1} << k);
      std::size_t differ = 0;
      for (std::size_t i = 0; i < x.rows(); ++i)
        differ += test::same_bits({(*levels)[codes[i]]}, {want[i]}) ? 0 : 1;
      EXPECT_EQ(differ, 0u) << k << " components, " << threads << " threads";
    }
  }
  const LinearModel one = c.components[1].linear();
  c.components.assign(9, one);
  c.mixture.assign(9, 1.0 / 9);
  EXPECT_FALSE(c.predict_levels(x, codes)) << "more than 8 components";
}

// A score that is not a number in a later block is an error naming the row in the whole data.
TEST(ClassifierPredict, PredictPositiveNamesTheRowOfANanScore) {
  const std::size_t n = 70000;
  std::vector<double> x(2 * n, 0.5);
  x[2 * (n - 1)] = x[2 * (n - 1) + 1] = 1e300;  // w . x = 1e400 - 1e400: inf - inf
  const Dataset ds(FeatureMatrix::dense(std::move(x), n, 2), Labels{});
  Classifier c = random_mixture(2, 3);
  for (ScoreModel& lm_model : c.components) lm_model.linear().weights = {1e100, -1e100};
  std::vector<std::uint8_t> out(n);
  expect_invalid([&] { c.predict_positive(ds, PredictMode::kDeterministic, out); },
                 "row 69999: the model's score is not a number");
}

TEST(ClassifierJson, RoundTripIsBitExact) {
  Classifier c = random_mixture(6, 17);
  // Values whose shortest decimal forms are long or extreme.
  c.components[0].linear().weights[0] = 0.1;
  c.components[0].linear().weights[1] = 1.0 / 3.0;
  c.components[0].linear().weights[2] = 4.9406564584124654e-324;  // smallest subnormal
  c.components[0].linear().weights[3] = -9.8765432109876543e99;   // near the largest allowed, 1e100
  c.components[0].linear().weights[4] = -0.0;
  c.components[1].linear().bias = 2.0 / 3.0 * 1e-7;
  c.mixture = {1.0 / 3.0, 2.0 / 3.0};
  c.options_json = R"({"c":0.7,"constraint":"fpr(sex=Female) <= 0.1"})";
  c.report_json = R"({"iterations":12,"status":"converged"})";
  c.encoding.missing_policy = "drop";

  const std::string path = temp_path("rateopt_model_roundtrip");
  c.save(path);
  const Classifier loaded = Classifier::load(path);
  std::filesystem::remove(path);
  const Classifier parsed = Classifier::from_json(c.to_json());

  for (const Classifier* r : {&loaded, &parsed}) {
    EXPECT_EQ(r->kind, c.kind);
    EXPECT_EQ(r->link, c.link);
    EXPECT_EQ(r->best, c.best);
    EXPECT_EQ(r->mixture, c.mixture);
    ASSERT_EQ(r->components.size(), c.components.size());
    for (std::size_t m = 0; m < c.components.size(); ++m) {
      EXPECT_EQ(r->components[m].linear().weights, c.components[m].linear().weights);
      EXPECT_EQ(r->components[m].linear().bias, c.components[m].linear().bias);
    }
    EXPECT_TRUE(std::signbit(r->components[0].linear().weights[4]));
    EXPECT_EQ(Json::parse(r->options_json), Json::parse(c.options_json));
    EXPECT_EQ(Json::parse(r->report_json), Json::parse(c.report_json));
    EXPECT_EQ(r->encoding.to_json(), c.encoding.to_json());
    EXPECT_EQ(r->to_json(), c.to_json());
  }
  c.components[0].linear().weights[3] = -1.5;  // keep the scores finite for the predictions
  const Classifier reloaded = Classifier::from_json(c.to_json());
  const FeatureMatrix x = random_csr(2000, 6, 0.5, 18);
  for (PredictMode mode :
       {PredictMode::kDeterministic, PredictMode::kStochastic, PredictMode::kProbability})
    EXPECT_EQ(predict(reloaded, x, mode, 99), predict(c, x, mode, 99)) << to_string(mode);
}

TEST(ClassifierJson, WritesTheDocumentedFields) {
  const Json j = Json::parse(random_mixture(2, 19).to_json());
  EXPECT_EQ(j.at("format"), "rateopt.model");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("kind"), "three_player");
  EXPECT_EQ(j.at("link"), "logistic");
  EXPECT_EQ(j.at("components").size(), 2U);
  EXPECT_EQ(j.at("components")[0].at("weights").size(), 2U);
  EXPECT_TRUE(j.at("components")[0].at("bias").is_number());
  EXPECT_EQ(j.at("mixture"), Json({0.35, 0.65}));
  EXPECT_EQ(j.at("best"), 1);
  EXPECT_EQ(j.at("encoding").at("num_features"), 2);
  EXPECT_TRUE(j.at("options").is_object());
  EXPECT_TRUE(j.at("report").is_object());
  Classifier bad = random_mixture(2, 19);
  bad.options_json = "{not json";
  EXPECT_THROW((void)bad.to_json(), InvalidArgument);
}

TEST(ClassifierJson, RejectsMalformedFiles) {
  const Json good = Json::parse(random_mixture(2, 20).to_json());
  ASSERT_NO_THROW((void)Classifier::from_json(good.dump(), "good.json"));
  // Each case: an edit of a valid model and a fragment the message must contain.
  struct Case {
    std::string name;
    std::function<void(Json&)> edit;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"wrong format", [](Json& j) { j["format"] = "xgboost.model"; }, "'format'"},
      {"format not a string", [](Json& j) { j["format"] = 3; }, "'format'"},
      {"newer version", [](Json& j) { j["version"] = 99; }, "'version': 99 is not supported"},
      {"version zero", [](Json& j) { j["version"] = 0; }, "'version'"},
      {"version as string", [](Json& j) { j["version"] = "1"; }, "'version'"},
      {"missing version", [](Json& j) { j.erase("version"); }, "'version': missing"},
      {"missing components", [](Json& j) { j.erase("components"); }, "'components': missing"},
      {"components not an array", [](Json& j) { j["components"] = Json::object(); },
       "'components'"},
      {"no components", [](Json& j) { j["components"] = Json::array(); }, "'components' is empty"},
      {"missing weights", [](Json& j) { j["components"][1].erase("weights"); },
       "'components[1].weights': missing"},
      {"weight not a number", [](Json& j) { j["components"][0]["weights"][1] = "x"; },
       "'components[0].weights[1]'"},
      {"weight null (NaN)", [](Json& j) { j["components"][0]["weights"][0] = nullptr; },
       "'components[0].weights[0]'"},
      {"missing bias", [](Json& j) { j["components"][0].erase("bias"); },
       "'components[0].bias': missing"},
      {"weights of the wrong size", [](Json& j) { j["components"][1]["weights"].push_back(1.0); },
       "'components[1].weights' has 3 entries"},
      {"mixture not summing to 1",
       [](Json& j) {
         j["mixture"] = {0.5, 0.4};
       },
       "'mixture' sums"},
      {"mixture too short", [](Json& j) { j["mixture"] = {1.0}; }, "'mixture' has 1 entries"},
      {"negative mixture",
       [](Json& j) {
         j["mixture"] = {1.5, -0.5};
       },
       "'mixture[1]'"},
      {"missing mixture", [](Json& j) { j.erase("mixture"); }, "'mixture': missing"},
      {"best out of range", [](Json& j) { j["best"] = 2; }, "'best' is 2"},
      {"negative best", [](Json& j) { j["best"] = -1; }, "'best'"},
      {"unknown link", [](Json& j) { j["link"] = "softmax"; }, "'link'"},
      {"missing kind", [](Json& j) { j.erase("kind"); }, "'kind': missing"},
      {"missing encoding", [](Json& j) { j.erase("encoding"); }, "'encoding': missing"},
      {"encoding lacks a field", [](Json& j) { j["encoding"].erase("num_features"); },
       "'encoding'"},
      {"encoding size mismatch",
       [](Json& j) {
         j["encoding"]["num_features"] = 7;
         j["encoding"]["feature_names"] = Json::array();
       },
       "the encoding has 7 features"},
      {"encoding inconsistent", [](Json& j) { j["encoding"]["num_features"] = 7; }, "'encoding'"},
      {"options not an object", [](Json& j) { j["options"] = "fast"; }, "'options'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json j = good;
    c.edit(j);
    try {
      (void)Classifier::from_json(j.dump(), "bad.json");
      ADD_FAILURE() << "expected ParseError";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), "bad.json");
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)Classifier::from_json("{\"format\": ", "x.json"), ParseError);
  EXPECT_THROW((void)Classifier::from_json("[1, 2]", "x.json"), ParseError);
  EXPECT_THROW((void)Classifier::from_json("", "x.json"), ParseError);
}

TEST(ClassifierJson, FileErrorsAreIoErrors) {
  EXPECT_THROW((void)Classifier::load(temp_path("rateopt_no_such_model")), IoError);
  const Classifier c = identity_classifier(Link::kLogistic);
  EXPECT_THROW(c.save("/nonexistent-rateopt-dir/model.json"), IoError);
  // A file that exists but is not a model is a ParseError naming the file.
  const std::string path = temp_path("rateopt_not_a_model");
  std::ofstream(path) << "hello";
  try {
    (void)Classifier::load(path);
    ADD_FAILURE() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
  }
  std::filesystem::remove(path);
}

// ---- backward compatibility: checked-in version-1 files
// -------------------------------------------

TEST(ClassifierJson, LoadsCheckedInVersion1LogisticModel) {
  const Classifier c = Classifier::load(source_path("tests/data/models/logistic_v1.json"));
  EXPECT_EQ(c.kind, "logistic_regression");
  EXPECT_EQ(c.link, Link::kLogistic);
  ASSERT_EQ(c.components.size(), 1U);
  EXPECT_EQ(c.components[0].linear().weights, (std::vector<double>{0.5, -1.25, 2.0}));
  EXPECT_EQ(c.components[0].linear().bias, -0.75);
  EXPECT_EQ(c.encoding.format, "libsvm");
  EXPECT_EQ(c.encoding.feature_names, (std::vector<std::string>{"f1", "f2", "f3"}));
  EXPECT_EQ(Json::parse(c.options_json).at("c"), 1.0);
  EXPECT_EQ(Json::parse(c.report_json).at("iterations"), 12);
  // Scores -0.25, 0, 0.5, -0.75.
  const auto x = FeatureMatrix::dense({1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0}, 4, 3);
  EXPECT_EQ(predict(c, x, PredictMode::kDeterministic), (std::vector<double>{0, 0, 1, 0}));
  const auto p = predict(c, x, PredictMode::kProbability);
  const std::vector<double> s{-0.25, 0.0, 0.5, -0.75};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(p[i], 1 / (1 + std::exp(-s[i])));
}

TEST(ClassifierJson, LoadsCheckedInVersion1RampMixture) {
  const Classifier c = Classifier::load(source_path("tests/data/models/ramp_mixture_v1.json"));
  EXPECT_EQ(c.kind, "three_player");
  EXPECT_EQ(c.link, Link::kRamp);
  EXPECT_EQ(c.mixture, (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(c.best, 1U);
  ASSERT_EQ(c.encoding.specs.size(), 2U);
  EXPECT_EQ(c.encoding.specs[0].offset, 38.5);
  EXPECT_EQ(c.encoding.specs[1].levels, (std::vector<std::string>{"Male"}));
  EXPECT_EQ(c.encoding.excluded_columns, (std::vector<std::string>{"race"}));
  // Component scores (x0, 0.25 - 0.5 x1); probability 0.25 ramp(s0) + 0.75 ramp(s1).
  const auto x = FeatureMatrix::dense({0.5, 1, 2, 0, -3, 0}, 3, 2);
  EXPECT_EQ(predict(c, x, PredictMode::kProbability),
            (std::vector<double>{0.46875, 0.71875, 0.46875}));
  EXPECT_EQ(predict(c, x, PredictMode::kDeterministic), (std::vector<double>{0, 1, 1}));
}

TEST(ClassifierJson, LoadsCheckedInVersion2GroupThreshold) {
  const Classifier c = Classifier::load(source_path("tests/data/models/group_threshold_v2.json"));
  EXPECT_EQ(c.kind, "group_threshold");
  EXPECT_EQ(c.group_columns, (std::vector<std::string>{"sex"}));
  ASSERT_EQ(c.group_rules.size(), 2U);
  EXPECT_EQ(c.group_rules[0].key, (std::vector<std::string>{"Male"}));
  // Scores 2 x0 - x1 + 0.5: 0.5, 1.5, -0.5, 0.5; Male: 1{s > 0} w.p. 1/4, 1{s > 1} w.p. 3/4;
  // Female: 1{s > -1}.
  Dataset ds(FeatureMatrix::dense({0, 0, 1, 1, 0, 1, 0, 0}, 4, 2), Labels{});
  Column sex;
  sex.name = "sex";
  for (const char* v : {"Male", "Male", "Male", "Female"}) sex.push_back(v);
  ds.add_column(std::move(sex));
  std::vector<double> out(4);
  c.predict(ds, PredictMode::kProbability, out);
  EXPECT_EQ(out, (std::vector<double>{0.25, 1, 0, 1}));
  c.predict(ds, PredictMode::kDeterministic, out);
  EXPECT_EQ(out, (std::vector<double>{0, 1, 0, 1}));
  EXPECT_THROW(c.predict(ds.features(), PredictMode::kProbability, out), InvalidArgument);
}

}  // namespace
}  // namespace rateopt
