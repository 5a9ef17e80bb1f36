// group_threshold_oracle: group-wise thresholds on a fixed score as a cost-sensitive oracle (the
// plug-in oracle of COCO).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "common/check.hpp"
#include "common/distributed.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/train.hpp"
#include "train/train_impl.hpp"

namespace rateopt {

namespace {

// Group of each row: index into group_features, or group_features.size() for "no indicator".
std::vector<std::uint32_t> row_groups(const FeatureMatrix& x, std::span<const std::size_t> features,
                                      std::size_t dataset) {
  RATEOPT_CHECK(features.size() < std::numeric_limits<std::uint32_t>::max(),
                "group_threshold_oracle: {} group features are too many", features.size());
  std::vector<std::uint32_t> group(x.rows(), static_cast<std::uint32_t>(features.size()));
  for (std::size_t g = 0; g < features.size(); ++g) {
    RATEOPT_CHECK(features[g] < x.cols(),
                  "group_threshold_oracle: group feature {} is not a column (dataset {} has {})",
                  features[g], dataset, x.cols());
    for (std::size_t i = 0; i < x.rows(); ++i) {
      const double v = x.at(i, features[g]);
      if (v == 0) continue;
      RATEOPT_CHECK(v == 1,
                    "group_threshold_oracle: group feature {} has value {} in row {} of dataset "
                    "{}, expected 0 or 1",
                    features[g], v, i, dataset);
      RATEOPT_CHECK(group[i] == features.size(),
                    "group_threshold_oracle: row {} of dataset {} has two group indicators ({} "
                    "and {})",
                    i, dataset, features[group[i]], features[g]);
      group[i] = static_cast<std::uint32_t>(g);
    }
  }
  return group;
}

struct Scored {
  double score = 0;
  double cost = 0;
};

// The threshold t minimising sum_{score > t} cost: scan from "none positive" (cost 0) down the
// sorted scores; a strictly smaller cost wins, so ties keep fewer positives.
double best_threshold(std::vector<Scored>& rows) {
  if (rows.empty()) return 0;
  std::sort(rows.begin(), rows.end(),
            [](const Scored& a, const Scored& b) { return a.score < b.score; });
  double best_cost = 0, best_t = rows.back().score + 1, cost = 0;
  std::size_t k = rows.size();
  while (k > 0) {
    // Add every row with the next-highest distinct score.
    const double s = rows[k - 1].score;
    while (k > 0 && rows[k - 1].score == s) cost += rows[--k].cost;
    if (cost < best_cost) {
      best_cost = cost;
      best_t = k > 0 ? 0.5 * (rows[k - 1].score + s) : rows.front().score - 1;
    }
  }
  return best_t;
}

}  // namespace

CostSensitiveOracle group_threshold_oracle(GroupThresholdOracleOptions options) {
  return [o = std::move(options)](const RateProblem& problem,
                                  const OracleCosts& costs) -> LinearModel {
    const auto data = problem.data();
    const auto atoms = problem.atoms();
    RATEOPT_CHECK(costs.rows.size() == data.size(),
                  "group_threshold_oracle: costs for {} datasets, the problem has {}",
                  costs.rows.size(), data.size());
    RATEOPT_CHECK(!o.plugin || costs.atoms.size() == atoms.size(),
                  "group_threshold_oracle: {} atom costs, the problem has {} atoms",
                  costs.atoms.size(), atoms.size());
    RATEOPT_CHECK(o.probability_model.weights.size() <= problem.num_features(),
                  "group_threshold_oracle: the probability model has {} weights, the data {} "
                  "features",
                  o.probability_model.weights.size(), problem.num_features());
    const std::size_t ng = o.group_features.size() + 1;
    std::vector<std::vector<Scored>> per_group(ng);
    for (std::size_t d = 0; d < data.size(); ++d) {
      const FeatureMatrix& x = data[d].data->features();
      std::vector<double> s(x.rows());
      o.probability_model.scores(x, s, o.n_threads);
      const std::vector<std::uint32_t> group = row_groups(x, o.group_features, d);
      std::vector<double> plugin_costs;  // the plug-in costs; else the given row costs are used
      std::span<const double> a;
      if (o.plugin) {
        plugin_costs.assign(x.rows(), 0.0);
        // c(y) per row from the atom costs: a row of atom k (label y) adds beta_k coef to c(y)
        // and beta_sibling(k) coef to c(1 - y).
        std::vector<double> c0(x.rows(), 0.0), c1(x.rows(), 0.0);
        for (std::size_t k = 0; k < atoms.size(); ++k) {
          const Atom& atom = atoms[k];
          if (atom.dataset != d) continue;
          const double own = costs.atoms[k];
          const double other = atom.sibling != SIZE_MAX ? costs.atoms[atom.sibling] : own;
          std::vector<double>& cy = atom.label == 1 ? c1 : c0;
          std::vector<double>& cn = atom.label == 1 ? c0 : c1;
          atom.rows.for_each([&](std::size_t r, std::uint32_t row) {
            cy[row] += own * atom.coef_at(r);
            cn[row] += other * atom.coef_at(r);
          });
        }
        for (std::size_t i = 0; i < plugin_costs.size(); ++i) {
          const double eta = 1 / (1 + std::exp(-s[i]));
          plugin_costs[i] = eta * c1[i] + (1 - eta) * c0[i];
        }
        a = plugin_costs;
      } else {
        RATEOPT_CHECK(costs.rows[d].size() == x.rows(),
                      "group_threshold_oracle: {} row costs for dataset {}, expected {}",
                      costs.rows[d].size(), d, x.rows());
        a = costs.rows[d];
      }
      std::vector<std::size_t> count(ng, 0);
      for (const std::uint32_t g : group) ++count[g];
      for (std::size_t g = 0; g < ng; ++g) per_group[g].reserve(per_group[g].size() + count[g]);
      for (std::size_t i = 0; i < a.size(); ++i) per_group[group[i]].push_back({s[i], a[i]});
    }
    std::vector<double> t(ng);
    if (!is_distributed()) {
      for (std::size_t g = 0; g < ng; ++g) t[g] = best_threshold(per_group[g]);
    } else {
      // Over several ranks: every rank's rows of each group, in rank order, sorted on rank 0
      // (what one process holding every row in that order would sort); the thresholds broadcast.
      for (std::size_t g = 0; g < ng; ++g) {
        std::vector<Scored> all = detail::gather_to_first_rank(std::move(per_group[g]));
        if (process_group().rank() == 0) t[g] = best_threshold(all);
      }
      broadcast_from(0, t);
    }
    LinearModel m = o.probability_model;
    m.weights.resize(problem.num_features(), 0.0);
    const double t0 = t[ng - 1];
    for (std::size_t g = 0; g + 1 < ng; ++g) m.weights[o.group_features[g]] -= t[g] - t0;
    m.bias -= t0;
    return m;
  };
}

}  // namespace rateopt
