// DecideMetric: the utilities decide maximises, with the conventions of the metric catalogue.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "common/check.hpp"
#include "rateopt/decide.hpp"

namespace rateopt {
namespace {

constexpr double kMaxBeta = 1e100;  // fbeta:B with B above this is taken as B = 1e100

struct Named {
  std::string_view name;
  DecideMetric::Family family;
};

constexpr Named kNames[] = {
    {"f1", DecideMetric::Family::kFBeta},
    {"fbeta", DecideMetric::Family::kFBeta},
    {"jaccard", DecideMetric::Family::kJaccard},
    {"balanced_accuracy", DecideMetric::Family::kBalancedAccuracy},
    {"gmean", DecideMetric::Family::kGMean},
    {"hmean", DecideMetric::Family::kHMean},
    {"gtppr", DecideMetric::Family::kGtppr},
    {"accuracy", DecideMetric::Family::kAccuracy},
};

}  // namespace

DecideMetric DecideMetric::from_name(std::string_view spec) {
  std::string_view name = spec;
  std::string_view param;
  if (const auto colon = spec.find(':'); colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    param = spec.substr(colon + 1);
  }
  const Named* found = nullptr;
  for (const auto& n : kNames)
    if (n.name == name) found = &n;
  if (found == nullptr) {
    std::string names;
    for (const auto& n : kNames) names += fmt::format("{}{}", names.empty() ? "" : ", ", n.name);
    throw NotFound(fmt::format("unknown decide metric '{}' (known: {}, fbeta:B)", spec, names));
  }
  const MetricInfo* info = find_metric(name);
  RATEOPT_CHECK(info != nullptr, "metric '{}' is missing from the catalogue", name);
  double beta = 1.0;
  if (name == "fbeta") {
    RATEOPT_CHECK(!param.empty(), "metric 'fbeta' needs a parameter, e.g. fbeta:2");
    try {
      std::size_t used = 0;
      beta = std::stod(std::string(param), &used);
      RATEOPT_CHECK(used == param.size(), "fbeta parameter '{}' is not a number", param);
    } catch (const std::logic_error&) {
      throw InvalidArgument(fmt::format("fbeta parameter '{}' is not a number", param));
    }
    RATEOPT_CHECK(beta > 0 && std::isfinite(beta), "fbeta needs beta > 0, got {}", param);
    // Beyond 1e100, F_beta is recall to double precision (FP weighs 1 / (1 + beta^2) < 1e-200)
    // while beta^2 would overflow (beta > 1.3e154) into NaN expectations: cap it.
    beta = std::min(beta, kMaxBeta);
  } else {
    RATEOPT_CHECK(param.empty(), "metric '{}' takes no parameter (got '{}')", name, param);
  }
  DecideMetric m;
  m.name_ = std::string(spec);
  m.family_ = found->family;
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

std::string_view to_string(DecideMethod method) noexcept {
  switch (method) {
    case DecideMethod::kAuto:
      return "auto";
    case DecideMethod::kBrute:
      return "brute";
    case DecideMethod::kExact:
      return "exact";
    case DecideMethod::kQuadratic:
      return "quadratic";
    case DecideMethod::kFast:
      return "fast";
  }
  return "auto";
}

DecideMethod parse_decide_method(std::string_view name) {
  for (auto m : {DecideMethod::kAuto, DecideMethod::kBrute, DecideMethod::kExact,
                 DecideMethod::kQuadratic, DecideMethod::kFast})
    if (to_string(m) == name) return m;
  throw InvalidArgument(fmt::format(
      "unknown decide method '{}' (expected auto, brute, exact, quadratic or fast)", name));
}

}  // namespace rateopt
