// Rate names beyond the metric catalogue, and "did you mean" suggestions.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "expr/expr_impl.hpp"

namespace rateopt {

namespace {

struct ExtraName {
  std::string_view name;
  std::string_view canonical;
  RateFamily family;
};

constexpr std::array<ExtraName, 11> kExtraNames{{
    {"roc_auc", "roc_auc", RateFamily::kRanking},
    {"auc", "roc_auc", RateFamily::kRanking},
    {"average_precision", "average_precision", RateFamily::kRanking},
    {"ap", "average_precision", RateFamily::kRanking},
    {"instance_f1", "instance_f1", RateFamily::kMultilabel},
    {"instance_jaccard", "instance_jaccard", RateFamily::kMultilabel},
    {"micro_f1", "micro_f1", RateFamily::kMultilabel},
    {"macro_f1", "macro_f1", RateFamily::kMultilabel},
    {"hamming_loss", "hamming_loss", RateFamily::kMultilabel},
    {"hamming", "hamming_loss", RateFamily::kMultilabel},
    {"subset_accuracy", "subset_accuracy", RateFamily::kMultilabel},
}};

constexpr std::array<std::string_view, 4> kRankingNames{"roc_auc", "auc", "average_precision",
                                                        "ap"};
constexpr std::array<std::string_view, 7> kMultilabelNames{
    "instance_f1",  "instance_jaccard", "micro_f1",       "macro_f1",
    "hamming_loss", "hamming",          "subset_accuracy"};
constexpr std::array<std::string_view, 3> kMulticlassNames{"accuracy", "error", "macro_f1"};
constexpr std::array<std::string_view, 7> kFunctionNames{"abs", "exp", "log", "max",
                                                         "min", "pow", "sqrt"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Edit distance counting insertions, deletions, substitutions and swaps of adjacent letters
// (optimal string alignment), O(|a| |b|).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      std::size_t best =
          std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        best = std::min(best, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = best;
    }
  }
  return d.back();
}

}  // namespace

bool is_ranking_metric(std::string_view name) noexcept {
  return std::find(kRankingNames.begin(), kRankingNames.end(), name) != kRankingNames.end();
}

std::optional<ResolvedName> resolve_rate_name(std::string_view name) {
  for (const ExtraName& extra : kExtraNames) {
    if (extra.name == name)
      return ResolvedName{std::string(extra.canonical), extra.family, nullptr};
  }
  if (const MetricInfo* info = find_metric(name)) {
    return ResolvedName{std::string(name), RateFamily::kConfusion, info};
  }
  return std::nullopt;
}

std::span<const std::string_view> ranking_rate_names() noexcept {
  return kRankingNames;
}
std::span<const std::string_view> multilabel_rate_names() noexcept {
  return kMultilabelNames;
}
std::span<const std::string_view> multiclass_rate_names() noexcept {
  return kMulticlassNames;
}
std::span<const std::string_view> function_names() noexcept {
  return kFunctionNames;
}

std::string join_names(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::string closest_name(std::string_view name, std::span<const std::string_view> candidates) {
  const std::string needle = lower(name);
  // A typo is at most one edit in short names, about a third of the letters in longer ones.
  const std::size_t budget = std::max<std::size_t>(1, needle.size() / 3);
  std::string_view best;
  std::size_t best_distance = budget + 1;
  for (std::string_view candidate : candidates) {
    const std::size_t d = edit_distance(needle, lower(candidate));
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return std::string(best);
}

}  // namespace rateopt
