// Multilabel and multiclass scores (rateopt/metrics.hpp); scikit-learn's definitions with
// zero_division = 1.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/check.hpp"
#include "metrics/metrics_impl.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {

namespace {

using metrics_impl::selected;
using metrics_impl::weight_of;

// 2tp / (2tp + fp + fn), 1 when tp = fp = fn = 0.
double f1_of(double tp, double fp, double fn) noexcept {
  const double den = 2 * tp + fp + fn;
  return den > 0 ? 2 * tp / den : 1.0;
}

void check_label_sets(LabelSetsView s, std::string_view name) {
  if (s.indptr.empty()) {
    RATEOPT_CHECK(s.indices.empty(), "{}: indptr is empty but indices has {} entries", name,
                  s.indices.size());
    return;
  }
  RATEOPT_CHECK(s.indptr.front() == 0, "{}: indptr[0] is {}, expected 0", name, s.indptr.front());
  RATEOPT_CHECK(
      s.indptr.back() >= 0 && static_cast<std::size_t>(s.indptr.back()) == s.indices.size(),
      "{}: indptr ends at {}, expected the number of indices {}", name, s.indptr.back(),
      s.indices.size());
  // Offsets first (with both ends checked, monotone offsets keep every set inside indices).
  for (std::size_t i = 0; i + 1 < s.indptr.size(); ++i)
    RATEOPT_CHECK(s.indptr[i] <= s.indptr[i + 1], "{}: indptr decreases at set {} ({} > {})", name,
                  i, s.indptr[i], s.indptr[i + 1]);
  for (std::size_t i = 0; i + 1 < s.indptr.size(); ++i) {
    for (auto k = s.indptr[i]; k < s.indptr[i + 1]; ++k) {
      const auto j = s.indices[static_cast<std::size_t>(k)];
      RATEOPT_CHECK(j >= 0 && static_cast<std::size_t>(j) < s.num_labels,
                    "{}: set {} holds label {}, expected a label in [0, {})", name, i, j,
                    s.num_labels);
      RATEOPT_CHECK(k == s.indptr[i] || s.indices[static_cast<std::size_t>(k - 1)] < j,
                    "{}: the labels of set {} are not sorted and unique", name, i);
    }
  }
}

}  // namespace

MultilabelScores multilabel_scores(LabelSetsView truth, LabelSetsView predicted,
                                   std::span<const double> weights,
                                   std::span<const std::uint8_t> mask) {
  check_label_sets(truth, "truth");
  check_label_sets(predicted, "predicted");
  RATEOPT_CHECK(truth.num_labels > 0, "truth: num_labels is 0, expected at least one label");
  RATEOPT_CHECK(predicted.num_labels == truth.num_labels,
                "predicted has num_labels = {}, expected {} (as truth)", predicted.num_labels,
                truth.num_labels);
  const std::size_t n = truth.size();
  RATEOPT_CHECK(predicted.size() == n, "predicted has {} label sets, expected {} (as truth)",
                predicted.size(), n);
  metrics_impl::check_weights(weights, n);
  metrics_impl::check_mask(mask, n);

  const std::size_t num_labels = truth.num_labels;
  std::vector<double> tp(num_labels, 0.0), fp(num_labels, 0.0), fn(num_labels, 0.0);
  double total = 0, f1_sum = 0, jaccard_sum = 0, hamming_sum = 0, subset_sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!selected(mask, i)) continue;
    const double w = weight_of(weights, i);
    total += w;
    // Merge the two sorted sets.
    auto a = static_cast<std::size_t>(truth.indptr[i]);
    const auto a_end = static_cast<std::size_t>(truth.indptr[i + 1]);
    auto b = static_cast<std::size_t>(predicted.indptr[i]);
    const auto b_end = static_cast<std::size_t>(predicted.indptr[i + 1]);
    std::size_t both = 0, only_truth = 0, only_pred = 0;
    while (a < a_end || b < b_end) {
      if (b == b_end || (a < a_end && truth.indices[a] < predicted.indices[b])) {
        fn[static_cast<std::size_t>(truth.indices[a++])] += w;
        ++only_truth;
      } else if (a == a_end || predicted.indices[b] < truth.indices[a]) {
        fp[static_cast<std::size_t>(predicted.indices[b++])] += w;
        ++only_pred;
      } else {
        tp[static_cast<std::size_t>(truth.indices[a])] += w;
        ++a;
        ++b;
        ++both;
      }
    }
    const auto inter = static_cast<double>(both);
    const auto wrong = static_cast<double>(only_truth + only_pred);
    f1_sum += w * f1_of(inter, static_cast<double>(only_pred), static_cast<double>(only_truth));
    jaccard_sum += w * (both + only_truth + only_pred > 0 ? inter / (inter + wrong) : 1.0);
    hamming_sum += w * wrong / static_cast<double>(num_labels);
    subset_sum += w * (only_truth + only_pred == 0 ? 1.0 : 0.0);
  }

  MultilabelScores out;
  if (total > 0) {
    out.instance_f1 = f1_sum / total;
    out.instance_jaccard = jaccard_sum / total;
    out.hamming_loss = hamming_sum / total;
    out.subset_accuracy = subset_sum / total;
  }
  double tp_all = 0, fp_all = 0, fn_all = 0, macro = 0;
  for (std::size_t j = 0; j < num_labels; ++j) {
    tp_all += tp[j];
    fp_all += fp[j];
    fn_all += fn[j];
    macro += f1_of(tp[j], fp[j], fn[j]);
  }
  out.micro_f1 = f1_of(tp_all, fp_all, fn_all);
  out.macro_f1 = macro / static_cast<double>(num_labels);
  return out;
}

MulticlassScores multiclass_scores(std::span<const std::int32_t> truth,
                                   std::span<const std::int32_t> predicted, std::size_t num_classes,
                                   std::span<const double> weights,
                                   std::span<const std::uint8_t> mask) {
  const std::size_t n = truth.size();
  RATEOPT_CHECK(num_classes > 0, "num_classes is 0, expected at least one class");
  RATEOPT_CHECK(predicted.size() == n, "predicted has {} entries, expected {} (as truth)",
                predicted.size(), n);
  metrics_impl::check_weights(weights, n);
  metrics_impl::check_mask(mask, n);
  for (std::size_t i = 0; i < n; ++i) {
    RATEOPT_CHECK(truth[i] >= 0 && static_cast<std::size_t>(truth[i]) < num_classes,
                  "truth[{}] is {}, expected a class in [0, {})", i, truth[i], num_classes);
    RATEOPT_CHECK(predicted[i] >= 0 && static_cast<std::size_t>(predicted[i]) < num_classes,
                  "predicted[{}] is {}, expected a class in [0, {})", i, predicted[i], num_classes);
  }
  std::vector<double> tp(num_classes, 0.0), fp(num_classes, 0.0), fn(num_classes, 0.0);
  double total = 0, right = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!selected(mask, i)) continue;
    const double w = weight_of(weights, i);
    const auto y = static_cast<std::size_t>(truth[i]);
    const auto h = static_cast<std::size_t>(predicted[i]);
    total += w;
    if (y == h) {
      right += w;
      tp[y] += w;
    } else {
      fn[y] += w;
      fp[h] += w;
    }
  }
  MulticlassScores out;
  out.accuracy = total > 0 ? right / total : 0.0;
  double macro = 0;
  for (std::size_t c = 0; c < num_classes; ++c) macro += f1_of(tp[c], fp[c], fn[c]);
  out.macro_f1 = macro / static_cast<double>(num_classes);
  return out;
}

}  // namespace rateopt
