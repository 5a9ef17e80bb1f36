// examples/cpp/decide.cpp: Bayes-optimal set prediction (rateopt/decide.hpp, docs/decide.md).
//
//   1. Independent marginals: the items to predict positive so that the *expected* F1 is largest,
//      against the usual rule "predict every item with probability >= 0.5".
//   2. Any joint distribution of labels (GFM): a distribution over the label sets of three labels,
//      given as weighted label sets; the F1-optimal set for it, and what the set chosen from the
//      marginals alone (as if the labels were independent) scores under the true joint.
//
// Run: example_decide (no arguments). The test `example_decide` checks its output against
// decide.output.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "rateopt/rateopt.hpp"

namespace {

std::string set_text(std::span<const std::size_t> items) {
  std::string s = "{";
  for (std::size_t i = 0; i < items.size(); ++i)
    s += (i > 0 ? ", " : "") + std::to_string(items[i]);
  return s + "}";
}

// E[F1(predicted, y)] when y is label set k with probability weights[k] (sets in CSR form).
double expected_f1(std::span<const std::size_t> predicted, const rateopt::LabelSetsView& sets,
                   std::span<const double> weights) {
  double e = 0;
  for (std::size_t k = 0; k < sets.size(); ++k) {
    rateopt::Confusion c;
    std::vector<bool> truth(sets.num_labels, false);
    for (auto j = sets.indptr[k]; j < sets.indptr[k + 1]; ++j) truth[sets.indices[j]] = true;
    std::vector<bool> pred(sets.num_labels, false);
    for (std::size_t i : predicted) pred[i] = true;
    for (std::size_t i = 0; i < sets.num_labels; ++i) {
      c.tp += truth[i] && pred[i];
      c.fp += !truth[i] && pred[i];
      c.fn += truth[i] && !pred[i];
      c.tn += !truth[i] && !pred[i];
    }
    e += weights[k] * rateopt::fbeta_score(c, 1.0);  // F1(empty, empty) = 1 (docs/metrics.md)
  }
  return e;
}

}  // namespace

int main() {
  const rateopt::DecideMetric f1 = rateopt::DecideMetric::from_name("f1");

  // ---- 1. independent marginals ----------------------------------------------------------------
  const std::vector<double> p = {0.95, 0.8, 0.55, 0.45, 0.3, 0.2, 0.1, 0.05};
  const rateopt::Decision best = rateopt::decide_independent(p, f1, {.all_k = true});
  // expected_by_k[k] = E[F1] of the k most probable items; thresholding picks the items >= 0.5.
  const std::vector<std::size_t> thresholded = rateopt::select_threshold(p, 0.5);
  std::printf("independent: F1-optimal set %s, E[F1] = %.4f (method %s)\n",
              set_text(best.selected).c_str(), best.expected,
              std::string(rateopt::to_string(best.method)).c_str());
  std::printf("independent: threshold 0.5 set %s, E[F1] = %.4f\n", set_text(thresholded).c_str(),
              best.expected_by_k[thresholded.size()]);

  // ---- 2. a joint distribution (GFM) -----------------------------------------------------------
  // P(y = {0, 1}) = 0.4, P(y = {2}) = 0.1, P(y = {}) = 0.5: labels 0 and 1 always come together,
  // and half of the time no label is present.
  const std::vector<std::int64_t> indptr = {0, 2, 3, 3};
  const std::vector<std::int32_t> indices = {0, 1, 2};
  const std::vector<double> weights = {0.4, 0.1, 0.5};
  const rateopt::LabelSetsView joint{.indptr = indptr, .indices = indices, .num_labels = 3};

  // The GFM input: P[i][s - 1] = P(y_i = 1, |y| = s) and P(y = {}).
  const rateopt::GfmInput gfm = rateopt::gfm_from_samples(joint, weights, joint.num_labels);
  std::printf("gfm: P(y = {}) = %.2f\n", gfm.p_zero);
  std::vector<double> marginals(gfm.m, 0.0);
  for (std::size_t i = 0; i < gfm.m; ++i) {
    std::printf("gfm: P(y_%zu = 1, |y| = s), s = 1..%zu:", i, gfm.m);
    for (std::size_t s = 0; s < gfm.m; ++s) {
      std::printf(" %.2f", gfm.p[i * gfm.m + s]);
      marginals[i] += gfm.p[i * gfm.m + s];
    }
    std::printf("\n");
  }
  // `selected` lists the labels by decreasing share of E[F1]. Here it is empty: predicting no
  // label scores F1 = 1 whenever y is empty (docs/metrics.md), half of the time.
  const rateopt::Decision g = rateopt::decide_gfm(gfm, f1);
  std::printf("gfm: F1-optimal set %s, E[F1] = %.4f\n", set_text(g.selected).c_str(), g.expected);
  // The same decision straight from the samples (no m x m matrix; e.g. neighbours' label sets).
  const rateopt::Decision gs = rateopt::decide_gfm_samples(joint, weights, joint.num_labels, f1);
  std::printf("gfm from samples: F1-optimal set %s, E[F1] = %.4f\n", set_text(gs.selected).c_str(),
              gs.expected);

  // Deciding from the marginals alone assumes independent labels: it expects more than it gets.
  const rateopt::Decision from_marginals = rateopt::decide_independent(marginals, f1);
  std::printf("marginals only: set %s, E[F1] if independent = %.4f, under the joint = %.4f\n",
              set_text(from_marginals.selected).c_str(), from_marginals.expected,
              expected_f1(from_marginals.selected, joint, weights));
  return 0;
}
