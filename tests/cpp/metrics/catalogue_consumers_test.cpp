// Issue 13, one catalogue: for every entry of metric_catalogue(), each consumer against the entry's
// definition (`compute`): its declared properties (aliases, ratio form, monotonicity), the
// training engine's form of the metric (closed forms, ratios and linear forms against the
// definition on random predictions), and decide (the decided set's expectation against brute force
// over all sets, or the refusal naming the complement). A new entry is checked by these tests as it
// is; eval against scikit-learn is tests/python/test_metrics_sklearn.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"
#include "train/train_impl.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

// "name" or, for a metric with a parameter, "name:2".
std::string spec_of(const MetricInfo& m) {
  return m.has_param ? std::string(m.name) + ":2" : std::string(m.name);
}

SliceCounts counts_of(double tp, double fp, double fn, double tn) {
  SliceCounts s;
  s.confusion = Confusion{tp, fp, fn, tn};
  s.total = tp + fp + fn + tn;
  return s;
}

SliceCounts random_counts(std::mt19937_64& rng, bool baseline) {
  std::uniform_real_distribution<double> u(0.05, 1.0);
  SliceCounts s = counts_of(u(rng), u(rng), u(rng), u(rng));
  if (baseline) {
    s.changes = u(rng) * s.total / 2;
    s.wins = u(rng) * s.changes / 2;
    s.losses = u(rng) * s.changes / 2;
  }
  return s;
}

TEST(CatalogueConsumers, AliasesAreCopiesOfTheirTarget) {
  for (const MetricInfo& m : metric_catalogue()) {
    if (m.alias_of.empty()) continue;
    const MetricInfo* t = find_metric(m.alias_of);
    ASSERT_NE(t, nullptr) << m.name;
    EXPECT_TRUE(t->alias_of.empty()) << m.name << ": an alias of an alias";
    EXPECT_EQ(m.compute, t->compute) << m.name;
    EXPECT_EQ(m.bigger_is_better, t->bigger_is_better) << m.name;
    EXPECT_EQ(m.needs_labels, t->needs_labels) << m.name;
    EXPECT_EQ(m.needs_baseline, t->needs_baseline) << m.name;
    EXPECT_EQ(m.shape, t->shape) << m.name;
    EXPECT_EQ(m.decide, t->decide) << m.name;
    EXPECT_EQ(m.monotone, t->monotone) << m.name;
  }
}

// kRatio entries: numerator / denominator equals the definition wherever the denominator is
// positive; the other entries have no ratio.
TEST(CatalogueConsumers, RatioFormsEqualTheDefinition) {
  std::mt19937_64 rng(41);
  for (const MetricInfo& m : metric_catalogue()) {
    EXPECT_EQ(m.shape == MetricShape::kRatio, m.ratio != nullptr) << m.name;
    if (m.ratio == nullptr) continue;
    for (const double param : {m.default_param, 0.5, 2.0, 3.7}) {
      if (!m.has_param && param != m.default_param) continue;
      CountForm num, den;
      m.ratio(param, num, den);
      for (int trial = 0; trial < 50; ++trial) {
        const SliceCounts s = random_counts(rng, m.needs_baseline);
        const double d = den.evaluate(s);
        ASSERT_GT(d, 0) << m.name;
        EXPECT_NEAR(num.evaluate(s) / d, m.compute(s, param), 1e-12) << m.name << " " << param;
      }
    }
  }
}

// monotone (oriented so that bigger is better): moving label-1 mass from fn to tp never lowers the
// metric, moving label-0 mass from tn to fp never raises it. Entries declared not monotone that
// depend on the labels alone are shown not to be (a counterexample on the grid).
TEST(CatalogueConsumers, MonotonicityAsDeclared) {
  std::mt19937_64 rng(43);
  for (const MetricInfo& m : metric_catalogue()) {
    if (m.needs_baseline) {
      EXPECT_FALSE(m.monotone) << m.name << ": depends on a baseline";
      continue;
    }
    const double sign = m.bigger_is_better ? 1 : -1;
    const double param = m.has_param ? 2.0 : m.default_param;
    bool violated = false;
    for (int trial = 0; trial < 400; ++trial) {
      const SliceCounts s = random_counts(rng, false);
      const Confusion& c = s.confusion;
      const double f = sign * m.compute(s, param);
      const double step = 0.03;
      const double up = sign * m.compute(counts_of(c.tp + step, c.fp, c.fn - step, c.tn), param);
      const double down = sign * m.compute(counts_of(c.tp, c.fp + step, c.fn, c.tn - step), param);
      if (c.fn <= step || c.tn <= step) continue;
      if (up < f - 1e-12 || down > f + 1e-12) violated = true;
      if (m.monotone) {
        EXPECT_GE(up, f - 1e-12) << m.name;
        EXPECT_LE(down, f + 1e-12) << m.name;
      }
    }
    if (!m.monotone) {
      EXPECT_TRUE(violated) << m.name << " is monotone on the grid";
    }
  }
}

// The training engine's form of each metric (its leaf in a compiled RateProblem) against the
// definition, on random soft and hard predictions: the kind follows the shape, and the value
// through the leaf's argument rates (linear form, ratio, closed form or finite-difference form)
// equals the catalogue's value.
TEST(CatalogueConsumers, TrainFormsEqualTheDefinition) {
  const Dataset ds = test::synthetic(240, 17, true);
  std::mt19937_64 rng(47);
  std::uniform_real_distribution<double> u;
  for (const MetricInfo& m : metric_catalogue()) {
    for (const std::string slice : {"", "[g=a]"}) {
      const std::string expr = spec_of(m) + slice;
      const RateProblem problem = RateProblem::build(test::spec(expr), {{"train", &ds}});
      const auto& impl = problem.impl();
      ASSERT_EQ(impl.leaves.size(), 1U) << expr;
      const Leaf& leaf = impl.leaves[0];
      switch (m.shape) {
        case MetricShape::kLinear:
          EXPECT_EQ(leaf.kind, Leaf::Kind::kLinear) << expr;
          break;
        case MetricShape::kRatio:
          EXPECT_EQ(leaf.kind, Leaf::Kind::kRatio) << expr;
          break;
        case MetricShape::kGeneric:
          EXPECT_EQ(leaf.kind, Leaf::Kind::kGeneric) << expr;
          break;
        default:
          EXPECT_EQ(leaf.kind, Leaf::Kind::kNamed) << expr;
      }
      for (int trial = 0; trial < 6; ++trial) {
        std::vector<double> pred(ds.num_rows());
        for (double& p : pred) p = trial < 2 ? (u(rng) < 0.5 ? 1.0 : 0.0) : 0.02 + 0.96 * u(rng);
        const std::vector<std::vector<double>> preds{pred};
        const std::vector<double> atoms = problem.atom_values(preds);
        const double definition = leaf.value_from_atoms(atoms);
        Predictions P;
        P.prob_positive = pred;
        const NamedData nd[] = {{"train", &ds, &P}};
        EXPECT_NEAR(definition, evaluate_expression(Expression::parse(expr), nd).value, 1e-12)
            << expr;
        std::vector<double> args;
        for (const AffineForm& a : leaf.args) args.push_back(a.evaluate(atoms));
        std::vector<double> grad(args.size());
        const double via_form = leaf.value_from_args(args, grad);
        if (!std::isfinite(definition)) continue;  // kld at q in {0, 1}, winloss without losses
        EXPECT_NEAR(via_form, definition, 1e-9 * std::max(1.0, std::abs(definition)))
            << expr << " trial " << trial;
        if (leaf.kind == Leaf::Kind::kLinear) {
          EXPECT_NEAR(leaf.linear.evaluate(atoms), definition, 1e-12) << expr;
        }
      }
    }
  }
}

// Expected metric of predicting the set `mask` (bit i: item i positive) under independent
// marginals p, by enumerating all 2^n truths.
double expected_of(const MetricInfo& m, double param, const std::vector<double>& p,
                   std::uint32_t mask) {
  const std::size_t n = p.size();
  double e = 0;
  for (std::uint32_t y = 0; y < (1U << n); ++y) {
    double prob = 1;
    double tp = 0, fp = 0, fn = 0, tn = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool yi = (y >> i) & 1U;
      const bool hi = (mask >> i) & 1U;
      prob *= yi ? p[i] : 1 - p[i];
      (yi ? (hi ? tp : fn) : (hi ? fp : tn)) += 1;
    }
    e += prob * m.compute(counts_of(tp, fp, fn, tn), param);
  }
  return e;
}

// decide: each entry with a decide kernel is a decide metric of that family whose decided set is
// optimal against brute force over all 2^n sets; the others are refused, naming the complement.
TEST(CatalogueConsumers, DecideMatchesBruteForceOrRefuses) {
  std::mt19937_64 rng(53);
  std::uniform_real_distribution<double> u;
  for (const MetricInfo& m : metric_catalogue()) {
    const std::string spec = spec_of(m);
    if (m.decide == DecideKernel::kNone) {
      const std::string err =
          test::error_of<InvalidArgument>([&] { (void)DecideMetric::from_name(spec); });
      EXPECT_FALSE(err.empty()) << spec;
      if (!m.complement.empty()) {
        EXPECT_TRUE(test::contains(err, std::string(m.complement))) << err;
      }
      continue;
    }
    const DecideMetric metric = DecideMetric::from_name(spec);
    EXPECT_EQ(metric.family() == DecideMetric::Family::kOther, m.decide == DecideKernel::kGeneric)
        << spec;
    const double param = m.has_param ? 2.0 : m.default_param;
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<double> p(6);
      for (double& v : p) v = u(rng);
      const Decision d = decide_independent(p, metric, DecideOptions{});
      std::uint32_t chosen = 0;
      for (const std::size_t i : d.selected) chosen |= 1U << i;
      double best = -1e300;
      for (std::uint32_t s = 0; s < (1U << p.size()); ++s)
        best = std::max(best, expected_of(m, param, p, s));
      EXPECT_NEAR(expected_of(m, param, p, chosen), best, 1e-9) << spec << " trial " << trial;
      EXPECT_NEAR(d.expected, best, 1e-9) << spec << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace rateopt
