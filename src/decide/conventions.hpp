// The user-chosen conventions of decide (DecideOptions::empty_score, none_item): which metrics
// they apply to and their validation, shared by the independent, multiclass and GFM settings.
#pragma once

#include <string_view>

#include "common/check.hpp"
#include "rateopt/decide.hpp"

namespace rateopt::detail {

// F-beta and Jaccard: the metrics whose value for an empty prediction against an empty truth is a
// convention (empty_score) and that the None pseudo-item is defined for.
inline bool has_empty_convention(const DecideMetric& metric) {
  return metric.family() == DecideMetric::Family::kFBeta ||
         metric.family() == DecideMetric::Family::kJaccard;
}

// InvalidArgument naming `who` for an empty_score outside [0, 1] or given to another metric, and
// for none_item where `none_allowed` is false or the metric is not F-beta / Jaccard.
inline void check_conventions(const DecideMetric& metric, const DecideOptions& options,
                              std::string_view who, bool none_allowed) {
  RATEOPT_CHECK(options.empty_score >= 0 && options.empty_score <= 1,
                "{}: empty_score must be in [0, 1], got {}", who, options.empty_score);
  RATEOPT_CHECK(options.empty_score == 1 || has_empty_convention(metric),
                "{}: empty_score applies to F-beta and Jaccard only (their value for an empty "
                "prediction against an empty truth), got metric '{}'",
                who, metric.name());
  if (!options.none_item) return;
  RATEOPT_CHECK(none_allowed, "{}: the None pseudo-item (none_item) is for the independent model",
                who);
  RATEOPT_CHECK(has_empty_convention(metric),
                "{}: the None pseudo-item (none_item) is defined for F-beta and Jaccard, got "
                "metric '{}'",
                who, metric.name());
  RATEOPT_CHECK(!options.early_stop, "{}: none_item cannot be combined with early_stop", who);
}

}  // namespace rateopt::detail
