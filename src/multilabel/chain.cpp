// Inference with the probabilistic classifier chain (Dembczynski, Cheng & Huellermeier 2010):
// exact joint probabilities for small m, ancestral sampling, and the joint mode by uniform-cost
// search (Dembczynski, Waegeman & Huellermeier 2012). See rateopt/multilabel.hpp.
//
// Every logit is computed the same way: z_j = (x . w_j[0..d) + b_j) + sum over previous positive
// labels l, in increasing l, of w_j[d + l]; so the exact joint, the samples and the search see the
// same conditionals bit for bit.
#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>

#include "common/check.hpp"
#include "common/enum_names.hpp"
#include "common/parallel.hpp"
#include "learners/logistic_objective.hpp"
#include "multilabel/multilabel_impl.hpp"
#include "rateopt/multilabel.hpp"

namespace rateopt {

std::string_view to_string(SearchStatus s) noexcept {
  return detail::name_of(detail::kSearchStatusNames, s);
}

std::size_t ClassifierChain::num_features() const {
  RATEOPT_CHECK(!models.empty(), "the classifier chain has no labels");
  return models.front().weights.size();
}

void ClassifierChain::base_scores(const FeatureMatrix& x, std::size_t i,
                                  std::span<double> out) const {
  const std::size_t m = models.size();
  const std::size_t d = num_features();
  RATEOPT_CHECK(i < x.rows(), "row {} out of range ({} rows)", i, x.rows());
  RATEOPT_CHECK(out.size() == m, "output has {} entries, expected {}", out.size(), m);
  RATEOPT_CHECK(x.is_sparse() || x.cols() <= d, "features have {} columns, the chain {}", x.cols(),
                d);
  for (std::size_t j = 0; j < m; ++j) out[j] = 0;
  detail::for_row_entries(x, i, [&](std::size_t f, double v) {
    RATEOPT_CHECK(f < d, "row {} has feature {}, the chain only {} features", i, f, d);
    for (std::size_t j = 0; j < m; ++j) out[j] += v * models[j].weights[f];
  });
  for (std::size_t j = 0; j < m; ++j) out[j] += models[j].bias;
}

double ClassifierChain::log_joint_probability(const FeatureMatrix& x, std::size_t i,
                                              std::span<const std::int32_t> label_set) const {
  const std::size_t m = models.size();
  const std::size_t d = num_features();
  std::vector<double> z(m);
  base_scores(x, i, z);
  std::vector<char> on(m, 0);
  for (std::size_t k = 0; k < label_set.size(); ++k) {
    const std::int32_t l = label_set[k];
    RATEOPT_CHECK(l >= 0 && static_cast<std::size_t>(l) < m,
                  "label set holds {}, expected an index in [0, {})", l, m);
    RATEOPT_CHECK(k == 0 || label_set[k - 1] < l, "label set is not sorted and duplicate-free");
    on[static_cast<std::size_t>(l)] = 1;
  }
  double logp = 0;
  for (std::size_t j = 0; j < m; ++j) {
    logp -= on[j] != 0 ? detail::log1p_exp(-z[j]) : detail::log1p_exp(z[j]);
    if (on[j] != 0)
      for (std::size_t k = j + 1; k < m; ++k) z[k] += models[k].weights[d + j];
  }
  return logp;
}

namespace {

// Visits every label vector of the chain depth first (label 0 first, y_j = 0 before y_j = 1),
// calling leaf(mask, probability). z holds the logits of labels >= depth given the prefix.
template <typename Leaf>
void enumerate(const std::vector<LinearModel>& models, std::size_t d, std::vector<double>& z,
               std::size_t j, std::uint32_t mask, double logp, Leaf&& leaf) {
  const std::size_t m = models.size();
  if (j == m) {
    leaf(mask, std::exp(logp));
    return;
  }
  enumerate(models, d, z, j + 1, mask, logp - detail::log1p_exp(z[j]), leaf);
  const double on = logp - detail::log1p_exp(-z[j]);
  std::vector<double> saved(z.begin() + static_cast<std::ptrdiff_t>(j + 1), z.end());
  for (std::size_t k = j + 1; k < m; ++k) z[k] += models[k].weights[d + j];
  enumerate(models, d, z, j + 1, mask | (std::uint32_t{1} << j), on, leaf);
  std::copy(saved.begin(), saved.end(), z.begin() + static_cast<std::ptrdiff_t>(j + 1));
}

}  // namespace

std::vector<double> ClassifierChain::joint_probabilities(const FeatureMatrix& x,
                                                         std::size_t i) const {
  const std::size_t m = models.size();
  RATEOPT_CHECK(m <= kMaxExactLabels,
                "the exact joint enumerates 2^m label vectors: m = {}, expected at most {}", m,
                kMaxExactLabels);
  std::vector<double> z(m);
  base_scores(x, i, z);
  std::vector<double> out(std::size_t{1} << m, 0.0);
  enumerate(models, num_features(), z, 0, 0, 0.0,
            [&](std::uint32_t mask, double p) { out[mask] = p; });
  return out;
}

GfmInput ClassifierChain::exact_joint(const FeatureMatrix& x, std::size_t i) const {
  const std::size_t m = models.size();
  RATEOPT_CHECK(m <= kMaxExactLabels,
                "the exact joint enumerates 2^m label vectors: m = {}, expected at most {}", m,
                kMaxExactLabels);
  std::vector<double> z(m);
  base_scores(x, i, z);
  GfmInput in;
  in.m = m;
  in.p.assign(m * m, 0.0);
  enumerate(models, num_features(), z, 0, 0, 0.0, [&](std::uint32_t mask, double p) {
    const auto s = static_cast<std::size_t>(std::popcount(mask));
    if (s == 0) {
      in.p_zero += p;
      return;
    }
    for (std::uint32_t bits = mask; bits != 0; bits &= bits - 1)
      in.p[static_cast<std::size_t>(std::countr_zero(bits)) * m + (s - 1)] += p;
  });
  return in;
}

LabelSets ClassifierChain::sample(const FeatureMatrix& x, std::size_t i, std::size_t n_samples,
                                  std::uint64_t seed) const {
  const std::size_t m = models.size();
  const std::size_t d = num_features();
  std::vector<double> base(m), z(m);
  base_scores(x, i, base);
  LabelSets out;
  out.num_labels = m;
  out.indptr.reserve(n_samples + 1);
  const std::uint64_t row_key = detail::mix64(seed, i);
  for (std::size_t n = 0; n < n_samples; ++n) {
    const std::uint64_t key = detail::mix64(row_key, n);
    z = base;
    for (std::size_t j = 0; j < m; ++j) {
      const double p = detail::sigmoid(z[j]);
      if (!(detail::unit_uniform(detail::mix64(key, j)) < p)) continue;
      out.indices.push_back(static_cast<std::int32_t>(j));
      for (std::size_t k = j + 1; k < m; ++k) z[k] += models[k].weights[d + j];
    }
    out.indptr.push_back(static_cast<std::int64_t>(out.indices.size()));
  }
  return out;
}

LabelSets ClassifierChain::sample_rows(const FeatureMatrix& x, std::size_t begin, std::size_t end,
                                       std::size_t n_samples, std::uint64_t seed,
                                       int n_threads) const {
  RATEOPT_CHECK(begin <= end && end <= x.rows(), "rows [{}, {}) out of range ({} rows)", begin, end,
                x.rows());
  std::vector<LabelSets> parts(end - begin);
  detail::parallel_for(end - begin, n_threads,
                       [&](std::size_t r) { parts[r] = sample(x, begin + r, n_samples, seed); });
  LabelSets out;
  out.num_labels = models.size();
  for (const LabelSets& p : parts) {
    const auto offset = static_cast<std::int64_t>(out.indices.size());
    out.indices.insert(out.indices.end(), p.indices.begin(), p.indices.end());
    for (std::size_t k = 1; k < p.indptr.size(); ++k) out.indptr.push_back(offset + p.indptr[k]);
  }
  return out;
}

std::vector<JointModeResult> ClassifierChain::joint_mode_rows(const FeatureMatrix& x,
                                                              std::size_t begin, std::size_t end,
                                                              std::size_t max_expanded,
                                                              int n_threads) const {
  RATEOPT_CHECK(begin <= end && end <= x.rows(), "rows [{}, {}) out of range ({} rows)", begin, end,
                x.rows());
  std::vector<JointModeResult> out(end - begin);
  detail::parallel_for(end - begin, n_threads,
                       [&](std::size_t r) { out[r] = joint_mode(x, begin + r, max_expanded); });
  return out;
}

std::vector<GfmInput> ClassifierChain::exact_joint_rows(const FeatureMatrix& x, std::size_t begin,
                                                        std::size_t end, int n_threads) const {
  RATEOPT_CHECK(begin <= end && end <= x.rows(), "rows [{}, {}) out of range ({} rows)", begin, end,
                x.rows());
  RATEOPT_CHECK(models.size() <= kMaxExactLabels,
                "exact_joint enumerates all 2^m label vectors: m = {} is above {}", models.size(),
                kMaxExactLabels);
  std::vector<GfmInput> out(end - begin);
  detail::parallel_for(end - begin, n_threads,
                       [&](std::size_t r) { out[r] = exact_joint(x, begin + r); });
  return out;
}

JointModeResult ClassifierChain::joint_mode(const FeatureMatrix& x, std::size_t i,
                                            std::size_t max_expanded) const {
  const std::size_t m = models.size();
  const std::size_t d = num_features();
  std::vector<double> base(m);
  base_scores(x, i, base);

  // The greedy prediction (each label at its more probable value given the prefix): a lower
  // bound on the mode's probability, so prefixes below it are never pushed.
  JointModeResult greedy;
  {
    std::vector<double> z = base;
    double cost = 0;
    for (std::size_t j = 0; j < m; ++j) {
      const bool on = z[j] > 0;
      cost += on ? detail::log1p_exp(-z[j]) : detail::log1p_exp(z[j]);
      if (!on) continue;
      greedy.labels.push_back(static_cast<std::int32_t>(j));
      for (std::size_t k = j + 1; k < m; ++k) z[k] += models[k].weights[d + j];
    }
    greedy.probability = std::exp(-cost);
  }
  const double bound = -std::log(greedy.probability);
  const double slack = 1e-12 * (1 + bound);

  // Uniform-cost search: nodes are prefixes, cost = -log P(prefix | x); the first complete vector
  // popped has the smallest cost. Ties: the earlier-created node first.
  struct Node {
    double cost;
    std::int64_t parent;
    std::uint32_t depth;
    bool on;
  };
  std::vector<Node> nodes{{0.0, -1, 0, false}};
  using Entry = std::pair<double, std::size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  queue.push({0.0, 0});
  std::vector<std::int32_t> prefix;
  JointModeResult out;
  while (!queue.empty()) {
    const std::size_t id = queue.top().second;
    queue.pop();
    ++out.expanded;
    const Node node = nodes[id];
    prefix.clear();
    for (auto k = static_cast<std::int64_t>(id); nodes[k].parent >= 0; k = nodes[k].parent)
      if (nodes[k].on) prefix.push_back(static_cast<std::int32_t>(nodes[k].depth - 1));
    std::reverse(prefix.begin(), prefix.end());
    if (node.depth == m) {
      out.labels = prefix;
      out.probability = std::exp(-node.cost);
      return out;
    }
    if (out.expanded > max_expanded) break;
    const std::size_t j = node.depth;
    double z = base[j];
    for (std::int32_t l : prefix) z += models[j].weights[d + static_cast<std::size_t>(l)];
    const double off = node.cost + detail::log1p_exp(z);
    const double on = node.cost + detail::log1p_exp(-z);
    for (const auto& [cost, bit] : {std::pair{off, false}, std::pair{on, true}}) {
      if (cost > bound + slack) continue;
      nodes.push_back({cost, static_cast<std::int64_t>(id), node.depth + 1, bit});
      queue.push({cost, nodes.size() - 1});
    }
  }
  greedy.status = SearchStatus::kBudgetExceeded;
  greedy.expanded = out.expanded;
  return greedy;
}

}  // namespace rateopt
