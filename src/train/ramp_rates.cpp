// Rate combinations and Goh's Table 2 vocabulary (include/rateopt/ramp.hpp).
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "rateopt/ramp.hpp"

namespace rateopt {

RateCombination& RateCombination::operator+=(const RateCombination& other) {
  terms.insert(terms.end(), other.terms.begin(), other.terms.end());
  constant += other.constant;
  return *this;
}

RateCombination& RateCombination::operator*=(double factor) {
  RATEOPT_CHECK(std::isfinite(factor), "factor is {}, expected a finite number", factor);
  for (RateTerm& t : terms) t.coefficient *= factor;
  constant *= factor;
  return *this;
}

RateCombination& RateCombination::operator-=(const RateCombination& other) {
  RateCombination negated = other;
  negated *= -1.0;
  return *this += negated;
}

RateCombination operator+(RateCombination a, const RateCombination& b) {
  return a += b;
}
RateCombination operator-(RateCombination a, const RateCombination& b) {
  return a -= b;
}
RateCombination operator*(double factor, RateCombination a) {
  return a *= factor;
}
RateCombination operator+(RateCombination a, double constant) {
  a.constant += constant;
  return a;
}

namespace {

Slice with(const Slice& slice, const std::string& column, const std::string& value) {
  Slice s = slice;
  s.conditions.push_back(Condition{column, value});
  return s;
}

RateCombination term(const std::string& dataset, RatePrediction prediction, Slice slice,
                     std::optional<Slice> per, bool count) {
  RateCombination c;
  c.terms.push_back(RateTerm{1.0, prediction, dataset, std::move(slice), std::move(per), count});
  return c;
}

constexpr auto kPos = RatePrediction::kPositive;
constexpr auto kNeg = RatePrediction::kNegative;

}  // namespace

RateCombination positive_rate(const std::string& dataset, const Slice& slice) {
  return term(dataset, kPos, slice, std::nullopt, false);
}
RateCombination negative_rate(const std::string& dataset, const Slice& slice) {
  return term(dataset, kNeg, slice, std::nullopt, false);
}
RateCombination coverage(const std::string& dataset, const Slice& slice) {
  return positive_rate(dataset, slice);
}
RateCombination true_positives(const std::string& dataset, const Slice& slice) {
  return term(dataset, kPos, with(slice, "label", "1"), std::nullopt, true);
}
RateCombination true_negatives(const std::string& dataset, const Slice& slice) {
  return term(dataset, kNeg, with(slice, "label", "0"), std::nullopt, true);
}
RateCombination false_positives(const std::string& dataset, const Slice& slice) {
  return term(dataset, kPos, with(slice, "label", "0"), std::nullopt, true);
}
RateCombination false_negatives(const std::string& dataset, const Slice& slice) {
  return term(dataset, kNeg, with(slice, "label", "1"), std::nullopt, true);
}
RateCombination error_count(const std::string& dataset, const Slice& slice) {
  return false_positives(dataset, slice) + false_negatives(dataset, slice);
}
RateCombination error_rate(const std::string& dataset, const Slice& slice) {
  return term(dataset, kPos, with(slice, "label", "0"), slice, false) +
         term(dataset, kNeg, with(slice, "label", "1"), slice, false);
}
RateCombination recall(const std::string& dataset, const Slice& slice) {
  return positive_rate(dataset, with(slice, "label", "1"));
}
RateCombination false_positive_rate(const std::string& dataset, const Slice& slice) {
  return positive_rate(dataset, with(slice, "label", "0"));
}
RateCombination false_negative_rate(const std::string& dataset, const Slice& slice) {
  return negative_rate(dataset, with(slice, "label", "1"));
}
RateCombination true_negative_rate(const std::string& dataset, const Slice& slice) {
  return negative_rate(dataset, with(slice, "label", "0"));
}
RateCombination churn_count(const std::string& dataset, const Slice& slice) {
  return term(dataset, kNeg, with(slice, "baseline", "1"), std::nullopt, true) +
         term(dataset, kPos, with(slice, "baseline", "0"), std::nullopt, true);
}
RateCombination churn_rate(const std::string& dataset, const Slice& slice) {
  return term(dataset, kNeg, with(slice, "baseline", "1"), slice, false) +
         term(dataset, kPos, with(slice, "baseline", "0"), slice, false);
}

RateConstraint at_most(RateCombination lhs, double bound, std::string name) {
  RATEOPT_CHECK(std::isfinite(bound), "bound is {}, expected a finite number", bound);
  return RateConstraint{std::move(name), std::move(lhs), bound};
}

RateConstraint at_least(const RateCombination& lhs, double bound, std::string name) {
  RATEOPT_CHECK(std::isfinite(bound), "bound is {}, expected a finite number", bound);
  return RateConstraint{std::move(name), -1.0 * lhs, -bound};
}

RateConstraint fairness_ratio_constraint(const std::string& dataset, const Slice& group_a,
                                         const Slice& group_b, double kappa) {
  RATEOPT_CHECK(std::isfinite(kappa) && kappa > 0, "kappa is {}, expected > 0", kappa);
  // sp(A) >= kappa sp(B)  <=>  kappa sp(B) - sp(A) <= 0.
  return RateConstraint{
      "fairness_ratio(" + group_a.to_string() + " vs " + group_b.to_string() + ")",
      kappa * positive_rate(dataset, group_b) - positive_rate(dataset, group_a), 0.0};
}

RateConstraint equal_opportunity_constraint(const std::string& dataset, const Slice& group_a,
                                            const Slice& group_b, double kappa) {
  RATEOPT_CHECK(std::isfinite(kappa) && kappa > 0, "kappa is {}, expected > 0", kappa);
  return RateConstraint{
      "equal_opportunity(" + group_a.to_string() + " vs " + group_b.to_string() + ")",
      kappa * recall(dataset, group_b) - recall(dataset, group_a), 0.0};
}

std::vector<RateConstraint> egregious_constraints(const std::string& dataset, double kappa,
                                                  const Slice& slice) {
  RATEOPT_CHECK(std::isfinite(kappa) && kappa >= 0 && kappa <= 1, "kappa is {}, expected in [0, 1]",
                kappa);
  return {at_least(recall(dataset, slice), kappa, "egregious_positives"),
          at_least(true_negative_rate(dataset, slice), kappa, "egregious_negatives")};
}

RampProblem neyman_pearson(const std::string& dataset, double max_fpr) {
  RATEOPT_CHECK(std::isfinite(max_fpr) && max_fpr >= 0 && max_fpr <= 1,
                "max_fpr is {}, expected in [0, 1]", max_fpr);
  RampProblem p;
  p.objective = false_negative_rate(dataset);
  p.constraints.push_back(at_most(false_positive_rate(dataset), max_fpr, "fpr"));
  return p;
}

}  // namespace rateopt
