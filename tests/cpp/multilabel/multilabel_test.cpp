// Tests of the multi-label joint models (src/multilabel/): the classifier chain's exact joint
// against brute-force products of its conditionals, ancestral sampling against the exact joint
// (total variation), seed determinism across thread counts, the joint mode against the argmax of
// the exact joint, EFP's P against hand recomputation and GFM on it against brute force, CV
// tuning of C, JSON round trips, make_consistent and bad input.
#include "rateopt/multilabel.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/decide_input.hpp"
#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::uniform;

// A multi-label problem whose labels depend on the features and on each other.
struct LabelSetProblem {
  FeatureMatrix x;
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::size_t m = 0;
  [[nodiscard]] LabelSetsView y() const { return {indptr, indices, m}; }
};

LabelSetProblem make_problem(std::size_t rows, std::size_t d, std::size_t m, std::uint64_t seed,
                             bool sparse = false) {
  std::mt19937_64 rng(seed);
  LabelSetProblem p;
  p.m = m;
  std::vector<double> data(rows * d);
  for (double& v : data) v = uniform(rng) < 0.5 ? 0.0 : 2 * uniform(rng) - 1;
  std::vector<double> w(m * d);
  for (double& v : w) v = 3 * (2 * uniform(rng) - 1);
  for (std::size_t i = 0; i < rows; ++i) {
    bool previous = false;
    for (std::size_t j = 0; j < m; ++j) {
      double z = previous ? 1.0 : -0.5;
      for (std::size_t f = 0; f < d; ++f) z += w[j * d + f] * data[i * d + f];
      previous = uniform(rng) < 1 / (1 + std::exp(-z));
      if (previous) p.indices.push_back(static_cast<std::int32_t>(j));
    }
    p.indptr.push_back(static_cast<std::int64_t>(p.indices.size()));
  }
  if (!sparse) {
    p.x = FeatureMatrix::dense(std::move(data), rows, d);
    return p;
  }
  std::vector<std::int64_t> ip{0};
  std::vector<std::int32_t> idx;
  std::vector<double> val;
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t f = 0; f < d; ++f)
      if (data[i * d + f] != 0) {
        idx.push_back(static_cast<std::int32_t>(f));
        val.push_back(data[i * d + f]);
      }
    ip.push_back(static_cast<std::int64_t>(idx.size()));
  }
  p.x = FeatureMatrix::csr(std::move(ip), std::move(idx), std::move(val), d);
  return p;
}

// A chain with random weights (no fitting): m labels over d features.
ClassifierChain random_chain(std::size_t d, std::size_t m, std::uint64_t seed, double scale = 2) {
  std::mt19937_64 rng(seed);
  ClassifierChain c;
  for (std::size_t j = 0; j < m; ++j) {
    LinearModel lm;
    for (std::size_t f = 0; f < d + j; ++f) lm.weights.push_back(scale * (2 * uniform(rng) - 1));
    lm.bias = scale * (2 * uniform(rng) - 1);
    c.models.push_back(std::move(lm));
    std::string name = std::to_string(j);
    name.insert(name.begin(), 'l');  // (not "l" + ...: GCC 12's -Wstringop-overflow)
    c.names.push_back(std::move(name));
  }
  return c;
}

// P(y | x) by the chain rule, written out independently: the product of the conditionals.
double brute_probability(const ClassifierChain& c, const std::vector<double>& x,
                         std::uint32_t mask) {
  const std::size_t d = x.size();
  double p = 1;
  for (std::size_t j = 0; j < c.models.size(); ++j) {
    double z = c.models[j].bias;
    for (std::size_t f = 0; f < d; ++f) z += c.models[j].weights[f] * x[f];
    for (std::size_t l = 0; l < j; ++l)
      if (mask >> l & 1U) z += c.models[j].weights[d + l];
    const double q = 1 / (1 + std::exp(-z));
    p *= (mask >> j & 1U) ? q : 1 - q;
  }
  return p;
}

std::vector<std::int32_t> set_of(std::uint32_t mask) {
  std::vector<std::int32_t> s;
  for (std::int32_t j = 0; j < 32; ++j)
    if (mask >> j & 1U) s.push_back(j);
  return s;
}

TEST(ClassifierChain, ExactJointEqualsProductOfConditionals) {
  for (std::size_t m : {1u, 3u, 6u}) {
    const ClassifierChain c = random_chain(4, m, 10 + m);
    std::mt19937_64 rng(m);
    std::vector<double> xv(4);
    for (double& v : xv) v = 2 * uniform(rng) - 1;
    const FeatureMatrix x = FeatureMatrix::dense(xv, 1, 4);
    const std::vector<double> joint = c.joint_probabilities(x, 0);
    double total = 0;
    for (std::uint32_t mask = 0; mask < (1U << m); ++mask) {
      const double brute = brute_probability(c, xv, mask);
      EXPECT_NEAR(joint[mask], brute, 1e-14);
      EXPECT_NEAR(std::exp(c.log_joint_probability(x, 0, set_of(mask))), brute, 1e-14);
      total += joint[mask];
    }
    EXPECT_NEAR(total, 1.0, 1e-12);
    // GFM parameters from the same enumeration: P and p0 a distribution, P from the brute force.
    const GfmInput in = c.exact_joint(x, 0);
    EXPECT_EQ(check_gfm_distribution(in), "");
    std::vector<double> p(m * m, 0.0);
    double p0 = 0;
    for (std::uint32_t mask = 0; mask < (1U << m); ++mask) {
      const auto s = static_cast<std::size_t>(std::popcount(mask));
      if (s == 0) p0 += brute_probability(c, xv, mask);
      for (std::int32_t l : set_of(mask)) p[l * m + s - 1] += brute_probability(c, xv, mask);
    }
    EXPECT_NEAR(in.p_zero, p0, 1e-14);
    for (std::size_t k = 0; k < m * m; ++k) EXPECT_NEAR(in.p[k], p[k], 1e-13);
  }
}

TEST(ClassifierChain, ExactJointRefusesMoreThan20Labels) {
  const ClassifierChain c = random_chain(2, 21, 1);
  const FeatureMatrix x = FeatureMatrix::dense({0.5, 0.5}, 1, 2);
  EXPECT_THROW((void)c.exact_joint(x, 0), InvalidArgument);
  EXPECT_THROW((void)c.joint_probabilities(x, 0), InvalidArgument);
}

TEST(ClassifierChain, SamplesMatchTheExactJointInTotalVariation) {
  const std::size_t m = 5, n = 200000;
  const ClassifierChain c = random_chain(3, m, 4, 1.0);
  const FeatureMatrix x = FeatureMatrix::dense({0.3, -0.7, 0.2, 1.0, 0.1, -0.4}, 2, 3);
  for (std::size_t row = 0; row < 2; ++row) {
    const std::vector<double> joint = c.joint_probabilities(x, row);
    const LabelSets s = c.sample(x, row, n, /*seed=*/2024);
    ASSERT_EQ(s.size(), n);
    std::vector<double> freq(1U << m, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      std::uint32_t mask = 0;
      for (auto p = s.indptr[k]; p < s.indptr[k + 1]; ++p) mask |= 1U << s.indices[p];
      freq[mask] += 1.0 / n;
    }
    double tv = 0;
    for (std::size_t k = 0; k < freq.size(); ++k) tv += 0.5 * std::abs(freq[k] - joint[k]);
    // E[TV] <= 0.5 sum sqrt(p (1 - p) / N) <= 0.5 sqrt(2^m / N); three times that as the bound.
    const double bound = 3 * std::sqrt(static_cast<double>(1U << m) / n);
    EXPECT_LT(tv, bound) << "row " << row;
    // Marginals from the samples against the exact ones.
    const std::vector<double> marg = marginals_from_samples(s.view());
    const GfmInput in = c.exact_joint(x, row);
    for (std::size_t l = 0; l < m; ++l) {
      double exact = 0;
      for (std::size_t t = 0; t < m; ++t) exact += in.p[l * m + t];
      EXPECT_NEAR(marg[l], exact, 4 * std::sqrt(0.25 / n));
    }
  }
}

TEST(ClassifierChain, SamplingIsSeededAndIndependentOfThreads) {
  const ClassifierChain c = random_chain(3, 7, 8);
  const LabelSetProblem p = make_problem(40, 3, 7, 3);
  const LabelSets one = c.sample_rows(p.x, 0, 40, 300, 77, 1);
  for (int threads : {2, 4}) {
    const LabelSets many = c.sample_rows(p.x, 0, 40, 300, 77, threads);
    EXPECT_EQ(one.indptr, many.indptr);
    EXPECT_EQ(one.indices, many.indices);
  }
  const LabelSets row5 = c.sample(p.x, 5, 300, 77);
  const auto b = one.indptr[5 * 300];
  for (std::size_t k = 0; k < row5.indices.size(); ++k)
    EXPECT_EQ(row5.indices[k], one.indices[static_cast<std::size_t>(b) + k]);
  const LabelSets other = c.sample_rows(p.x, 0, 40, 300, 78, 1);
  EXPECT_NE(one.indices, other.indices);
}

// The row-range forms (what rateopt predict and the Python binding call) give the single-row
// results in order, for any thread count.
TEST(ClassifierChain, RowRangesEqualRowByRowForAnyThreads) {
  const ClassifierChain c = random_chain(3, 6, 9);
  const LabelSetProblem p = make_problem(30, 3, 6, 4);
  for (int threads : {1, 2, 3}) {
    const auto modes = c.joint_mode_rows(p.x, 4, 19, 100000, threads);
    const auto joints = c.exact_joint_rows(p.x, 4, 19, threads);
    ASSERT_EQ(modes.size(), 15U);
    ASSERT_EQ(joints.size(), 15U);
    for (std::size_t r = 0; r < 15; ++r) {
      const JointModeResult one = c.joint_mode(p.x, 4 + r, 100000);
      EXPECT_EQ(modes[r].labels, one.labels);
      EXPECT_EQ(modes[r].probability, one.probability);
      const GfmInput in = c.exact_joint(p.x, 4 + r);
      EXPECT_EQ(joints[r].p, in.p);
      EXPECT_EQ(joints[r].p_zero, in.p_zero);
    }
  }
  EXPECT_THROW((void)c.exact_joint_rows(p.x, 5, 31), InvalidArgument);
  EXPECT_THROW((void)random_chain(2, 21, 1).exact_joint_rows(p.x, 0, 1), InvalidArgument);
}

TEST(ClassifierChain, JointModeIsTheArgmaxOfTheExactJoint) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const std::size_t m = 2 + seed % 9;
    const ClassifierChain c = random_chain(3, m, 100 + seed, seed % 2 == 0 ? 1.0 : 3.0);
    std::mt19937_64 rng(seed);
    std::vector<double> xv(3);
    for (double& v : xv) v = 2 * uniform(rng) - 1;
    const FeatureMatrix x = FeatureMatrix::dense(xv, 1, 3);
    const std::vector<double> joint = c.joint_probabilities(x, 0);
    std::uint32_t best = 0;
    for (std::uint32_t k = 1; k < joint.size(); ++k)
      if (joint[k] > joint[best]) best = k;
    const JointModeResult r = c.joint_mode(x, 0);
    EXPECT_EQ(r.status, SearchStatus::kExact);
    EXPECT_EQ(r.labels, set_of(best)) << "seed " << seed;
    EXPECT_NEAR(r.probability, joint[best], 1e-14);
  }
  // A budget of one node: the greedy prediction, flagged.
  const ClassifierChain c = random_chain(3, 8, 5, 0.1);
  const FeatureMatrix x = FeatureMatrix::dense({0.1, 0.2, 0.3}, 1, 3);
  const JointModeResult r = c.joint_mode(x, 0, 1);
  EXPECT_EQ(r.status, SearchStatus::kBudgetExceeded);
  EXPECT_NEAR(std::exp(c.log_joint_probability(x, 0, r.labels)), r.probability, 1e-14);
}

TEST(ClassifierChain, FitsDenseAndSparseAlikeAndRoundTripsThroughJson) {
  const LabelSetProblem dense = make_problem(300, 4, 4, 21);
  const LabelSetProblem sparse = make_problem(300, 4, 4, 21, true);
  MultilabelFitOptions o;
  o.c = 2.0;
  o.tol = 1e-10;
  const ClassifierChain a = ClassifierChain::fit(dense.x, dense.y(), {}, o);
  const ClassifierChain b = ClassifierChain::fit(sparse.x, sparse.y(), {}, o);
  ASSERT_EQ(a.num_labels(), 4u);
  for (std::size_t j = 0; j < 4; ++j) {
    ASSERT_EQ(a.models[j].weights.size(), 4 + j);
    for (std::size_t f = 0; f < 4 + j; ++f)
      EXPECT_NEAR(a.models[j].weights[f], b.models[j].weights[f], 1e-6);
    EXPECT_EQ(a.fits[j].status, Termination::kConverged);
  }
  const ClassifierChain back = ClassifierChain::from_json(a.to_json());
  EXPECT_EQ(back.to_json(), a.to_json());
  for (std::size_t j = 0; j < 4; ++j) {
    EXPECT_EQ(back.models[j].weights, a.models[j].weights);
    EXPECT_EQ(back.models[j].bias, a.models[j].bias);
  }
  EXPECT_EQ(model_format(a.to_json()), "rateopt.classifier_chain");
  EXPECT_THROW((void)ClassifierChain::from_json("{\"format\": \"rateopt.efp\", \"version\": 1}"),
               ParseError);
}

TEST(MultilabelFit, CrossValidationPicksASensibleC) {
  // Pure-noise labels: the best held-out log-loss comes from strong regularisation (small C);
  // a strong signal with many rows: weak regularisation (large C).
  std::mt19937_64 rng(3);
  const std::size_t rows = 400, d = 20;
  std::vector<double> data(rows * d);
  for (double& v : data) v = 2 * uniform(rng) - 1;
  const FeatureMatrix x = FeatureMatrix::dense(data, rows, d);
  std::vector<std::int64_t> noise_ptr{0}, signal_ptr{0};
  std::vector<std::int32_t> noise_idx, signal_idx;
  for (std::size_t i = 0; i < rows; ++i) {
    if (uniform(rng) < 0.5) noise_idx.push_back(0);
    noise_ptr.push_back(static_cast<std::int64_t>(noise_idx.size()));
    double z = 0;
    for (std::size_t f = 0; f < d; ++f) z += 4 * data[i * d + f];
    if (uniform(rng) < 1 / (1 + std::exp(-z))) signal_idx.push_back(0);
    signal_ptr.push_back(static_cast<std::int64_t>(signal_idx.size()));
  }
  MultilabelFitOptions o;
  o.tune_c = true;
  std::vector<BaseModelFit> fits;
  (void)fit_binary_relevance(x, {noise_ptr, noise_idx, 1}, {}, o, &fits);
  EXPECT_LE(fits[0].c, 1e-2);
  EXPECT_GT(fits[0].cv_log_loss, 0.6);
  (void)fit_binary_relevance(x, {signal_ptr, signal_idx, 1}, {}, o, &fits);
  EXPECT_GE(fits[0].c, 1.0);
  EXPECT_LT(fits[0].cv_log_loss, 0.5);
  // Deterministic: the same seed picks the same C and the same model.
  std::vector<BaseModelFit> again;
  const OneVsRest a = fit_binary_relevance(x, {signal_ptr, signal_idx, 1}, {}, o, &again);
  const OneVsRest b = fit_binary_relevance(x, {signal_ptr, signal_idx, 1}, {}, o, &fits);
  EXPECT_EQ(a.outputs[0].components[0].linear().weights,
            b.outputs[0].components[0].linear().weights);
  EXPECT_EQ(again[0].c, fits[0].c);
  // The folds run in parallel: the same choice and model for any thread count.
  for (int threads : {1, 2, 4}) {
    o.n_threads = threads;
    std::vector<BaseModelFit> t;
    const OneVsRest m = fit_binary_relevance(x, {signal_ptr, signal_idx, 1}, {}, o, &t);
    EXPECT_EQ(m.outputs[0].components[0].linear().weights,
              a.outputs[0].components[0].linear().weights);
    EXPECT_EQ(t[0].cv_log_loss, again[0].cv_log_loss);
  }
}

// E[F1(y, h)] under an explicit joint distribution over label masks.
double expected_f1(const std::vector<double>& joint, std::uint32_t h) {
  double e = 0;
  for (std::uint32_t y = 0; y < joint.size(); ++y) {
    const int both = std::popcount(y & h), sy = std::popcount(y), sh = std::popcount(h);
    e += joint[y] * (sy + sh == 0 ? 1.0 : 2.0 * both / (sy + sh));
  }
  return e;
}

TEST(ExactFPlugin, PRowsComeFromTheMultinomialProbabilities) {
  const LabelSetProblem p = make_problem(250, 3, 3, 5);
  MultilabelFitOptions o;
  o.c = 0.5;
  const ExactFPlugin e = ExactFPlugin::fit(p.x, p.y(), {}, o);
  ASSERT_EQ(e.num_labels(), 3u);
  EXPECT_EQ(e.fits.size(), 4u);
  for (std::size_t row = 0; row < 5; ++row) {
    const GfmInput in = e.predict_gfm(p.x, row);
    for (std::size_t l = 0; l < 3; ++l) {
      const MultinomialModel& mm = e.label_models[l];
      // By hand: softmax of the class scores.
      std::vector<double> z(mm.num_classes());
      double top = -1e300;
      for (std::size_t k = 0; k < z.size(); ++k) {
        z[k] = mm.biases[k];
        for (std::size_t f = 0; f < 3; ++f)
          z[k] += p.x.at(row, f) * mm.weights[f * mm.num_classes() + k];
        top = std::max(top, z[k]);
      }
      double sum = 0;
      for (double& v : z) sum += (v = std::exp(v - top));
      for (std::size_t s = 1; s <= 3; ++s) {
        double expect = 0;
        for (std::size_t k = 0; k < z.size(); ++k)
          if (mm.classes[k] == static_cast<std::int32_t>(s)) expect = z[k] / sum;
        EXPECT_NEAR(in.p[l * 3 + s - 1], expect, 1e-14);
      }
    }
    const double s0 = e.empty_model.score(p.x, row);
    EXPECT_NEAR(in.p_zero, 1 / (1 + std::exp(-s0)), 1e-14);
  }
  const ExactFPlugin back = ExactFPlugin::from_json(e.to_json());
  EXPECT_EQ(back.to_json(), e.to_json());
  EXPECT_EQ(model_format(e.to_json()), "rateopt.efp");
}

TEST(ExactFPlugin, RowRangesEqualRowByRowForAnyThreads) {
  const LabelSetProblem p = make_problem(120, 3, 4, 6);
  MultilabelFitOptions o;
  o.c = 0.5;
  const ExactFPlugin e = ExactFPlugin::fit(p.x, p.y(), {}, o);
  for (int threads : {1, 3}) {
    for (const bool consistent : {false, true}) {
      const auto rows = e.predict_gfm_rows(p.x, 10, 40, consistent, threads);
      ASSERT_EQ(rows.size(), 30U);
      for (std::size_t r = 0; r < 30; ++r) {
        const GfmInput raw = e.predict_gfm(p.x, 10 + r);
        const GfmInput want = consistent ? make_consistent(raw) : raw;
        EXPECT_EQ(rows[r].p, want.p);
        EXPECT_EQ(rows[r].p_zero, want.p_zero);
      }
    }
  }
}

TEST(ExactFPlugin, GfmOnAnExactPEqualsBruteForceOverAllPredictions) {
  // P built from a joint distribution given directly (what EFP estimates): decide_gfm picks a
  // prediction whose expected F1 equals the brute-force maximum over all 2^m predictions.
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 30; ++trial) {
    const std::size_t m = 2 + trial % 5;
    std::vector<double> joint(1U << m);
    double total = 0;
    for (double& v : joint) total += (v = std::pow(uniform(rng), 3));
    for (double& v : joint) v /= total;
    GfmInput in;
    in.m = m;
    in.p.assign(m * m, 0.0);
    for (std::uint32_t y = 0; y < joint.size(); ++y) {
      const int s = std::popcount(y);
      if (s == 0) in.p_zero += joint[y];
      for (std::int32_t l : set_of(y)) in.p[l * m + s - 1] += joint[y];
    }
    double best = 0;
    for (std::uint32_t h = 0; h < joint.size(); ++h) best = std::max(best, expected_f1(joint, h));
    const Decision d = decide_gfm(in, DecideMetric::from_name("f1"));
    std::uint32_t h = 0;
    for (std::size_t l : d.selected) h |= 1U << l;
    EXPECT_NEAR(expected_f1(joint, h), best, 1e-12) << "trial " << trial;
    EXPECT_NEAR(d.expected, best, 1e-12);
    // make_consistent leaves an exact P unchanged.
    const GfmInput same = make_consistent(in);
    for (std::size_t k = 0; k < in.p.size(); ++k) EXPECT_NEAR(same.p[k], in.p[k], 1e-14);
  }
}

TEST(MakeConsistent, ProjectsEstimatesOntoADistribution) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t m = 1 + trial % 7;
    GfmInput in;
    in.m = m;
    for (std::size_t k = 0; k < m * m; ++k)
      in.p.push_back(uniform(rng) < 0.4 ? 0 : uniform(rng) / m);
    in.p_zero = uniform(rng) * 0.5;
    const GfmInput out = make_consistent(in);
    EXPECT_EQ(check_gfm_distribution(out), "") << "trial " << trial;
  }
  // A label alone in the size-2 column cannot be: its mass goes.
  GfmInput lone{2, {0.0, 0.5, 0.3, 0.0}, 0.2};
  const GfmInput out = make_consistent(lone);
  EXPECT_EQ(out.p[1], 0.0);
  EXPECT_EQ(check_gfm_distribution(out), "");
}

TEST(MultilabelFit, RejectsBadInput) {
  const LabelSetProblem p = make_problem(20, 2, 3, 1);
  MultilabelFitOptions o;
  o.c = -1;
  EXPECT_THROW((void)ClassifierChain::fit(p.x, p.y(), {}, o), InvalidArgument);
  o.c = 1;
  o.tune_c = true;
  o.cv_folds = 1;
  EXPECT_THROW((void)ExactFPlugin::fit(p.x, p.y(), {}, o), InvalidArgument);
  o.cv_folds = 5;
  std::vector<std::int32_t> bad = p.indices;
  if (!bad.empty()) bad[0] = 7;
  EXPECT_THROW((void)ClassifierChain::fit(p.x, {p.indptr, bad, 3}, {}, o), InvalidArgument);
  EXPECT_THROW((void)fit_binary_relevance(p.x, {p.indptr, p.indices, 0}, {}, o), InvalidArgument);
}

}  // namespace
}  // namespace rateopt

namespace rateopt {
namespace {

// Offsets that run past the end of indices before they decrease again ([0, 3, 1] over one
// index): every label-set check rejects them before reading a set, never reading out of bounds
// (the pattern the binary dataset fuzz target found in FeatureMatrix::csr).
TEST(LabelSetOffsets, PastTheEndBeforeDecreasingIsRejectedUpFront) {
  const std::vector<std::int64_t> indptr{0, 3, 1};
  const std::vector<std::int32_t> indices{0};
  const LabelSetsView bad{indptr, indices, 4};
  const std::vector<std::int64_t> ok_ptr{0, 1, 1};
  const LabelSetsView ok{ok_ptr, indices, 4};
  test::expect_invalid([&] { (void)multilabel_scores(bad, ok); }, "indptr decreases");
  test::expect_invalid([&] { (void)decide_gfm_samples(bad, {}, 4, DecideMetric::from_name("f1")); },
                       "indptr decreases");
  const FeatureMatrix x = FeatureMatrix::dense({1.0, 2.0}, 2, 1);
  test::expect_invalid([&] { (void)fit_binary_relevance(x, bad, {}, MultilabelFitOptions{}); },
                       "indptr decreases");
}

}  // namespace
}  // namespace rateopt
