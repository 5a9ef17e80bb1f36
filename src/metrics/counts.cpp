// Expected weighted confusion counts of a slice, with churn against a baseline
// (rateopt/metrics.hpp).
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "common/check.hpp"
#include "metrics/metrics_impl.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {

namespace {

using metrics_impl::selected;
using metrics_impl::weight_of;

bool is_probability(double p) noexcept {
  return p >= 0 && p <= 1;
}  // false for NaN

// Sequential accumulation of rows [begin, end) in row order (deterministic). `label_of(i)` gives
// y_i in {0, 1}, `baseline_of(i)` b_i in [0, 1] (only called when has_baseline). Predictions are
// probabilities (double) or hard 0/1 bytes (std::uint8_t): a byte converts to exactly 0.0 or 1.0,
// so both give the same bits for the same 0/1 predictions.
template <typename P, typename LabelOf, typename BaselineOf>
SliceCounts accumulate(std::size_t begin, std::size_t end, const P& predictions,
                       std::span<const double> weights, std::span<const std::uint8_t> mask,
                       bool has_baseline, LabelOf&& label_of, BaselineOf&& baseline_of) {
  SliceCounts out;
  Confusion& c = out.confusion;
  double total = 0, changes = 0, wins = 0, losses = 0;
  for (std::size_t i = begin; i < end; ++i) {
    if (!selected(mask, i)) continue;
    const double w = weight_of(weights, i);
    const auto p = static_cast<double>(predictions[i]);
    const bool y = label_of(i) != 0;
    total += w;
    if (y) {
      c.tp += w * p;
      c.fn += w * (1 - p);
    } else {
      c.fp += w * p;
      c.tn += w * (1 - p);
    }
    if (has_baseline) {
      const double b = baseline_of(i);
      changes += w * (p * (1 - b) + (1 - p) * b);
      // P(right) of the new prediction and of the baseline, independently.
      const double new_right = y ? p : 1 - p;
      const double base_right = y ? b : 1 - b;
      wins += w * new_right * (1 - base_right);
      losses += w * (1 - new_right) * base_right;
    }
  }
  out.total = total;
  if (has_baseline) {
    out.changes = changes;
    out.wins = wins;
    out.losses = losses;
  }
  return out;
}

void check_predictions(std::span<const double> predictions) {
  for (std::size_t i = 0; i < predictions.size(); ++i)
    RATEOPT_CHECK(is_probability(predictions[i]),
                  "predictions[{}] is {}, expected a probability in [0, 1]", i, predictions[i]);
}

// Probabilities coded in bytes: row i's is levels[codes[i]] (the same doubles, the same sums).
struct CodedPredictions {
  std::span<const std::uint8_t> codes;
  std::span<const double> levels;
  [[nodiscard]] std::size_t size() const noexcept { return codes.size(); }
  [[nodiscard]] double operator[](std::size_t i) const noexcept { return levels[codes[i]]; }
};

void check_predictions(const CodedPredictions& p) {
  for (std::size_t k = 0; k < p.levels.size(); ++k)
    RATEOPT_CHECK(is_probability(p.levels[k]),
                  "prediction level {} is {}, expected a probability in [0, 1]", k, p.levels[k]);
  for (std::size_t i = 0; i < p.codes.size(); ++i)
    RATEOPT_CHECK(p.codes[i] < p.levels.size(), "predictions[{}] is level {} of {}", i, p.codes[i],
                  p.levels.size());
}

void check_predictions(std::span<const std::uint8_t> positive) {
  for (std::size_t i = 0; i < positive.size(); ++i)
    RATEOPT_CHECK(positive[i] <= 1, "predictions[{}] is {}, expected 0 or 1 (hard predictions)", i,
                  positive[i]);
}

// Binary or unlabelled data, and one prediction per row (`what`: the function, for messages).
void check_counted(const Dataset& data, std::size_t predictions, std::string_view what) {
  const LabelKind kind = data.labels().kind;
  RATEOPT_CHECK(kind == LabelKind::kBinary || kind == LabelKind::kNone,
                "{} needs binary or unlabelled data, {} has {} labels", what,
                data.source().empty() ? std::string("the dataset") : data.source(),
                to_string(kind));
  RATEOPT_CHECK(predictions == data.num_rows(),
                "predictions have {} entries, expected {} (one per row)", predictions,
                data.num_rows());
}

// The dataset overloads of count_slice, over probabilities or hard 0/1 bytes.
template <typename P>
SliceCounts count_dataset(const Dataset& data, std::span<const std::uint8_t> mask,
                          const P& predictions) {
  const std::size_t n = data.num_rows();
  const Labels& y = data.labels();
  check_counted(data, predictions.size(), "count_slice");
  check_predictions(predictions);
  metrics_impl::check_mask(mask, n);
  std::span<const std::int32_t> labels;
  if (y.kind == LabelKind::kBinary) {
    labels = y.values;
    metrics_impl::check_binary_labels(labels, n);
  }

  // The baseline column: numeric values in [0, 1] are probabilities (0/1 hard predictions);
  // other values must be one of the binary label names. Missing values are an error only on
  // rows of the slice.
  const Column* base = data.find_column("baseline");
  std::vector<double> level_prob;
  if (base != nullptr) {
    level_prob = metrics_impl::baseline_level_probabilities(data);
    for (std::size_t i = 0; i < n; ++i) {
      if (!selected(mask, i)) continue;
      const std::int32_t code = base->codes[i];
      RATEOPT_CHECK(code >= 0, "baseline column: row {} of the slice has a missing value", i);
      RATEOPT_CHECK(!std::isnan(level_prob[static_cast<std::size_t>(code)]),
                    "baseline column: row {} has the value '{}', expected 0, 1, a probability in "
                    "[0, 1] or a label name",
                    i, base->levels[static_cast<std::size_t>(code)]);
    }
  }
  // Per file part, then the parts in order, continued over every rank (sum_over_parts): the
  // bits one process reading the same files gets.
  const std::vector<double> v = sum_over_parts(
      data.row_parts(), n, 8, [&](std::size_t begin, std::size_t end, std::span<double> out) {
        const SliceCounts c = accumulate(
            begin, end, predictions, data.weights(), mask, base != nullptr,
            [&](std::size_t i) { return labels.empty() ? 0 : labels[i]; },
            [&](std::size_t i) { return level_prob[static_cast<std::size_t>(base->codes[i])]; });
        out[0] = c.confusion.tp;
        out[1] = c.confusion.fp;
        out[2] = c.confusion.fn;
        out[3] = c.confusion.tn;
        out[4] = c.total;
        out[5] = c.changes;
        out[6] = c.wins;
        out[7] = c.losses;
      });
  SliceCounts out;
  out.confusion = {v[0], v[1], v[2], v[3]};
  out.total = v[4];
  if (base != nullptr) {
    out.changes = v[5];
    out.wins = v[6];
    out.losses = v[7];
  }
  return out;
}

// count_groups: each group's sums accumulate in row order as accumulate's do for its mask.
template <typename P>
std::vector<SliceCounts> count_groups_of(const Dataset& data, std::span<const std::int32_t> group,
                                         std::size_t groups, const P& predictions) {
  const std::size_t n = data.num_rows();
  const Labels& y = data.labels();
  check_counted(data, predictions.size(), "count_groups");
  RATEOPT_CHECK(data.find_column("baseline") == nullptr,
                "count_groups: the data have a baseline column (churn counts): use count_slice "
                "per slice");
  RATEOPT_CHECK(group.size() == n, "group has {} entries, expected {} (one per row)", group.size(),
                n);
  for (std::size_t i = 0; i < n; ++i)
    RATEOPT_CHECK(group[i] < 0 || static_cast<std::size_t>(group[i]) < groups,
                  "group[{}] is {}, expected a group below {} (or negative: none)", i, group[i],
                  groups);
  check_predictions(predictions);
  std::span<const std::int32_t> labels;
  if (y.kind == LabelKind::kBinary) {
    labels = y.values;
    metrics_impl::check_binary_labels(labels, n);
  }
  constexpr std::size_t kWidth = 5;  // tp, fp, fn, tn, total
  const std::vector<double> v =
      sum_over_parts(data.row_parts(), n, kWidth * groups,
                     [&](std::size_t begin, std::size_t end, std::span<double> out) {
                       for (std::size_t i = begin; i < end; ++i) {
                         if (group[i] < 0) continue;
                         double* o = out.data() + kWidth * static_cast<std::size_t>(group[i]);
                         const double w = weight_of(data.weights(), i);
                         const auto p = static_cast<double>(predictions[i]);
                         o[4] += w;
                         if (!labels.empty() && labels[i] != 0) {
                           o[0] += w * p;
                           o[2] += w * (1 - p);
                         } else {
                           o[1] += w * p;
                           o[3] += w * (1 - p);
                         }
                       }
                     });
  std::vector<SliceCounts> out(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    const double* o = v.data() + kWidth * g;
    out[g].confusion = {o[0], o[1], o[2], o[3]};
    out[g].total = o[4];
  }
  return out;
}

}  // namespace

namespace metrics_impl {

std::vector<double> baseline_level_probabilities(const Dataset& data) {
  const Column* base = data.find_column("baseline");
  if (base == nullptr) return {};
  const Labels& y = data.labels();
  std::vector<double> level_prob(base->levels.size(), std::nan(""));
  for (std::size_t k = 0; k < base->levels.size(); ++k) {
    double v = 0;
    if (parse_number(base->levels[k], v) && is_probability(v)) {
      level_prob[k] = v;
    } else if (y.kind == LabelKind::kBinary) {
      for (std::size_t c = 0; c < y.names.size() && c < 2; ++c)
        if (y.names[c] == base->levels[k]) level_prob[k] = static_cast<double>(c);
    }
  }
  return level_prob;
}

}  // namespace metrics_impl

SliceCounts count_slice(std::span<const std::int32_t> labels, std::span<const double> predictions,
                        std::span<const double> weights, std::span<const std::uint8_t> mask,
                        std::span<const double> baseline) {
  const std::size_t n = predictions.size();
  metrics_impl::check_binary_labels(labels, n);
  check_predictions(predictions);
  metrics_impl::check_weights(weights, n);
  metrics_impl::check_mask(mask, n);
  RATEOPT_CHECK(baseline.empty() || baseline.size() == n,
                "baseline has {} entries, expected {} (one per example) or none", baseline.size(),
                n);
  for (std::size_t i = 0; i < baseline.size(); ++i)
    RATEOPT_CHECK(is_probability(baseline[i]),
                  "baseline[{}] is {}, expected 0, 1 or a probability in [0, 1]", i, baseline[i]);
  return accumulate(
      0, n, predictions, weights, mask, !baseline.empty(), [&](std::size_t i) { return labels[i]; },
      [&](std::size_t i) { return baseline[i]; });
}

SliceCounts count_slice(const Dataset& data, std::span<const std::uint8_t> mask,
                        std::span<const double> predictions) {
  return count_dataset(data, mask, predictions);
}

SliceCounts count_slice(const Dataset& data, std::span<const std::uint8_t> mask,
                        std::span<const std::uint8_t> positive) {
  return count_dataset(data, mask, positive);
}

SliceCounts count_slice(const Dataset& data, std::span<const std::uint8_t> mask,
                        std::span<const std::uint8_t> codes, std::span<const double> levels) {
  return count_dataset(data, mask, CodedPredictions{codes, levels});
}

std::vector<SliceCounts> count_groups(const Dataset& data, std::span<const std::int32_t> group,
                                      std::size_t groups, std::span<const double> predictions) {
  return count_groups_of(data, group, groups, predictions);
}

std::vector<SliceCounts> count_groups(const Dataset& data, std::span<const std::int32_t> group,
                                      std::size_t groups, std::span<const std::uint8_t> positive) {
  return count_groups_of(data, group, groups, positive);
}

std::vector<SliceCounts> count_groups(const Dataset& data, std::span<const std::int32_t> group,
                                      std::size_t groups, std::span<const std::uint8_t> codes,
                                      std::span<const double> levels) {
  return count_groups_of(data, group, groups, CodedPredictions{codes, levels});
}

}  // namespace rateopt
