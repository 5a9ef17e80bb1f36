// DecideMetric: the utilities decide maximises, with the conventions of the metric catalogue.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "common/check.hpp"
#include "common/enum_names.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {
namespace {

constexpr double kMaxBeta = 1e100;  // fbeta:B with B above this is taken as B = 1e100

// The decide family of a catalogue metric (MetricInfo::decide).
DecideMetric::Family family_of(DecideKernel kernel) {
  switch (kernel) {
    case DecideKernel::kFBeta:
      return DecideMetric::Family::kFBeta;
    case DecideKernel::kJaccard:
      return DecideMetric::Family::kJaccard;
    case DecideKernel::kBalancedAccuracy:
      return DecideMetric::Family::kBalancedAccuracy;
    case DecideKernel::kGMean:
      return DecideMetric::Family::kGMean;
    case DecideKernel::kHMean:
      return DecideMetric::Family::kHMean;
    case DecideKernel::kGtppr:
      return DecideMetric::Family::kGtppr;
    case DecideKernel::kAccuracy:
      return DecideMetric::Family::kAccuracy;
    case DecideKernel::kNone:
    case DecideKernel::kGeneric:
      break;
  }
  return DecideMetric::Family::kOther;
}

bool is_decide_utility(const MetricInfo& info) {
  return info.decide != DecideKernel::kNone;
}

// Why a catalogue metric is not a decide metric, with what to use instead.
std::string refusal(const MetricInfo& info) {
  if (info.needs_baseline)
    return fmt::format("'{}' compares against a baseline model, which decide does not have",
                       info.name);
  if (!info.needs_labels)
    return fmt::format("'{}' does not depend on the truth, so no set is better in expectation",
                       info.name);
  const std::string_view name = info.name;
  const std::string_view complement = info.complement;
  if (!complement.empty())
    return fmt::format("'{}' is a loss and decide maximises a utility: use {} (1 - {})", name,
                       complement, name);
  return fmt::format("'{}' is a loss and decide maximises a utility; it has no complement here",
                     name);
}

}  // namespace

std::string decide_metric_names() {
  std::string names;
  for (const auto& info : metric_catalogue())
    if (is_decide_utility(info))
      names +=
          fmt::format("{}{}{}", names.empty() ? "" : ", ", info.name, info.has_param ? ":B" : "");
  return names;
}

DecideMetric DecideMetric::from_name(std::string_view spec) {
  std::string_view name = spec;
  std::string_view param;
  if (const auto colon = spec.find(':'); colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    param = spec.substr(colon + 1);
  }
  const MetricInfo* info = find_metric(name);
  if (info == nullptr)
    throw NotFound(
        fmt::format("unknown decide metric '{}' (known: {})", spec, decide_metric_names()));
  if (!is_decide_utility(*info))
    throw InvalidArgument(
        fmt::format("metric {} (decide metrics: {})", refusal(*info), decide_metric_names()));
  double beta = 1.0;
  if (info->has_param) {
    RATEOPT_CHECK(!param.empty(), "metric '{}' needs a parameter, e.g. {}:2", name, name);
    try {
      std::size_t used = 0;
      beta = std::stod(std::string(param), &used);
      RATEOPT_CHECK(used == param.size(), "{} parameter '{}' is not a number", name, param);
    } catch (const std::logic_error&) {
      throw InvalidArgument(fmt::format("{} parameter '{}' is not a number", name, param));
    }
    RATEOPT_CHECK(beta > 0 && std::isfinite(beta), "{} needs beta > 0, got {}", name, param);
    // Beyond 1e100, F_beta is recall to double precision (FP weighs 1 / (1 + beta^2) < 1e-200)
    // while beta^2 would overflow (beta > 1.3e154) into NaN expectations: cap it.
    beta = std::min(beta, kMaxBeta);
  } else {
    RATEOPT_CHECK(param.empty(), "metric '{}' takes no parameter (got '{}')", name, param);
  }
  DecideMetric m;
  m.name_ = std::string(spec);
  m.family_ = family_of(info->decide);
  m.beta_ = beta;
  m.fn_ = [info, beta](double tp, double fp, double fn, double tn) {
    SliceCounts c;
    c.confusion = Confusion{tp, fp, fn, tn};
    c.total = tp + fp + fn + tn;
    return info->compute(c, beta);
  };
  return m;
}

DecideMetric DecideMetric::custom(std::string name,
                                  std::function<double(double, double, double, double)> fn) {
  RATEOPT_CHECK(static_cast<bool>(fn), "custom decide metric '{}' has no function", name);
  DecideMetric m;
  m.name_ = std::move(name);
  m.family_ = Family::kCustom;
  m.fn_ = std::move(fn);
  return m;
}

double DecideMetric::utility(double tp, double fp, double fn, double tn) const {
  return fn_(tp, fp, fn, tn);
}

namespace {
constexpr detail::EnumNames<DecideMethod, 5> kDecideMethodNames{
    {{{DecideMethod::kAuto, "auto"},
      {DecideMethod::kBrute, "brute"},
      {DecideMethod::kExact, "exact"},
      {DecideMethod::kQuadratic, "quadratic"},
      {DecideMethod::kFast, "fast"}}},
    "auto"};
}  // namespace

std::string_view to_string(DecideMethod method) noexcept {
  return detail::name_of(kDecideMethodNames, method);
}

DecideMethod parse_decide_method(std::string_view name) {
  if (const auto m = detail::parse(kDecideMethodNames, name)) return *m;
  throw InvalidArgument(fmt::format(
      "unknown decide method '{}' (expected auto, brute, exact, quadratic or fast)", name));
}

}  // namespace rateopt
