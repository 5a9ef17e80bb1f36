#include "train_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rateopt::cli {
namespace {

nlohmann::json section(const ProblemSpec& spec, const Classifier& classifier,
                       const std::vector<TrainingData>& data, PredictMode mode, int threads) {
  const SpecValues v = evaluate_spec(spec, classifier, data, mode, 0, threads);
  nlohmann::json constraints = nlohmann::json::array();
  for (const ExpressionValue& c : v.constraints)
    constraints.push_back({{"constraint", c.text},
                           {"lhs", c.value},
                           {"rhs", c.rhs},
                           {"violation", std::max(0.0, c.violation)}});
  return {{"objective", v.objective.value}, {"constraints", constraints}};
}

void print_section(const std::string& title, const nlohmann::json& r) {
  fmt::print("  {:<28} objective {:.6f}", title, r["objective"].get<double>());
  double worst = 0;
  for (const auto& c : r["constraints"]) worst = std::max(worst, c["violation"].get<double>());
  if (!r["constraints"].empty()) fmt::print("  max violation {:.6f}", worst);
  fmt::print("\n");
  for (const auto& c : r["constraints"])
    fmt::print("      {:<48} {:.6f} vs {:.6f}  violation {:.6f}\n",
               c["constraint"].get<std::string>(), c["lhs"].get<double>(), c["rhs"].get<double>(),
               c["violation"].get<double>());
}

}  // namespace

nlohmann::json spec_sections(const ProblemSpec& spec, const Classifier& classifier,
                             const NamedDatasets& data, int threads) {
  std::vector<TrainingData> td;
  td.reserve(data.size());
  for (const auto& [name, ds] : data) td.push_back({name, ds});
  return {{"stochastic", section(spec, classifier, td, PredictMode::kProbability, threads)},
          {"deterministic", section(spec, classifier, td, PredictMode::kDeterministic, threads)}};
}

void print_spec_sections(const ProblemSpec& spec, const nlohmann::json& report) {
  fmt::print("{} {}\n", spec.maximize ? "maximize" : "minimize", spec.objective);
  for (const char* part : {"train", "validation"}) {
    if (!report.contains(part)) continue;
    for (const char* mode : {"stochastic", "deterministic"})
      print_section(fmt::format("{}, {}", part, mode), report[part][mode]);
  }
}

}  // namespace rateopt::cli
