#include "train_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "rateopt/distributed.hpp"

namespace rateopt::cli {
namespace {

nlohmann::json section(const ProblemSpec& spec, const Classifier& classifier,
                       const std::vector<TrainingData>& data, PredictMode mode, int threads,
                       const IntervalOptions* ci, bool in_sample,
                       std::span<const std::vector<double>> stacked_scores) {
  const SpecValues v = evaluate_spec(spec, classifier, data, mode, 0, threads, ci, stacked_scores);
  nlohmann::json constraints = nlohmann::json::array();
  for (std::size_t k = 0; k < v.constraints.size(); ++k) {
    const ExpressionValue& c = v.constraints[k];
    nlohmann::json row{{"constraint", c.text},
                       {"lhs", c.value},
                       {"rhs", c.rhs},
                       {"violation", std::max(0.0, c.violation)}};
    if (ci != nullptr) {
      const ValueInterval& iv = v.intervals[k + 1];
      row["ci_low"] = iv.range.low;
      row["ci_high"] = iv.range.high;
      row["ci_method"] = std::string(to_string(iv.method));
    }
    constraints.push_back(std::move(row));
  }
  nlohmann::json out{{"objective", v.objective.value}, {"constraints", constraints}};
  if (ci != nullptr) {
    out["objective_ci"] = {v.intervals[0].range.low, v.intervals[0].range.high};
    out["ci_method"] = std::string(to_string(v.intervals[0].method));
    out["ci_level"] = ci->level;
    out["in_sample"] = in_sample;
  }
  return out;
}

// " [low, high]" for a JSON number pair or two fields (NaN / infinity as JSON strings or nulls).
std::string ci_text(const nlohmann::json& low, const nlohmann::json& high) {
  const auto num = [](const nlohmann::json& x) {
    return x.is_number() ? fmt::format("{:.6f}", x.get<double>()) : std::string("nan");
  };
  return fmt::format(" [{}, {}]", num(low), num(high));
}

void print_section(const std::string& title, const nlohmann::json& r) {
  const bool ci = r.contains("objective_ci");
  const std::string name = ci && r["in_sample"].get<bool>() ? title + " (in-sample)" : title;
  fmt::print("  {:<28} objective {:.6f}", name, r["objective"].get<double>());
  if (ci)
    fmt::print(" {:.0f}%{}", 100 * r["ci_level"].get<double>(),
               ci_text(r["objective_ci"][0], r["objective_ci"][1]));
  double worst = 0;
  for (const auto& c : r["constraints"]) worst = std::max(worst, c["violation"].get<double>());
  if (!r["constraints"].empty()) fmt::print("  max violation {:.6f}", worst);
  fmt::print("\n");
  for (const auto& c : r["constraints"]) {
    fmt::print("      {:<48} {:.6f} vs {:.6f}  violation {:.6f}",
               c["constraint"].get<std::string>(), c["lhs"].get<double>(), c["rhs"].get<double>(),
               c["violation"].get<double>());
    if (ci)
      fmt::print("  violation {:.0f}%{} {}", 100 * r["ci_level"].get<double>(),
                 ci_text(c["ci_low"], c["ci_high"]), c["ci_method"].get<std::string>());
    fmt::print("\n");
  }
}

}  // namespace

nlohmann::json spec_sections(const ProblemSpec& spec, const Classifier& classifier,
                             const NamedDatasets& data, int threads, const IntervalOptions* ci,
                             bool in_sample, std::span<const std::vector<double>> stacked_scores) {
  std::vector<TrainingData> td;
  td.reserve(data.size());
  for (const auto& [name, ds] : data) td.push_back({name, ds});
  return {{"stochastic", section(spec, classifier, td, PredictMode::kProbability, threads, ci,
                                 in_sample, stacked_scores)},
          {"deterministic", section(spec, classifier, td, PredictMode::kDeterministic, threads, ci,
                                    in_sample, stacked_scores)}};
}

void print_spec_sections(const ProblemSpec& spec, const nlohmann::json& report) {
  fmt::print("{} {}\n", spec.maximize ? "maximize" : "minimize", spec.objective);
  for (const char* part : {"train", "validation"}) {
    if (!report.contains(part)) continue;
    for (const char* mode : {"stochastic", "deterministic"})
      print_section(fmt::format("{}, {}", part, mode), report[part][mode]);
  }
}

nlohmann::json guarantee_section(const GuaranteedTrainResult& g,
                                 const std::vector<std::string>& constraints,
                                 const GuaranteeOptions& options, const std::string& output) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t k = 0; k < g.safety.size(); ++k)
    rows.push_back({{"constraint", constraints[k]},
                    {"trained_as", g.trained_constraints[k]},
                    {"margin", g.margins[k]},
                    {"safety_violation", g.safety[k].value},
                    {"upper_bound", g.safety[k].range.high},
                    {"certified", g.safety[k].range.high <= 0}});
  return {{"confidence", options.confidence},
          {"delta", 1 - options.confidence},
          {"output", output},
          {"safety_fraction", options.safety_fraction},
          {"width_factor", options.width_factor},
          {"candidate_rows", g.candidate_total},
          {"safety_rows", g.safety_total},
          {"constraints", rows},
          {"moved_toward", g.anchor},
          {"kept_share", g.kept_share},
          {"components_drawn", g.drawn},
          {"passed", g.passed}};
}

void print_guarantee(const nlohmann::json& g) {
  fmt::print(
      "guarantee ({} output, confidence {}): safety test on {} held-out rows ({} for "
      "training)\n",
      g["output"].get<std::string>(), g["confidence"].get<double>(), g["safety_rows"].get<double>(),
      g["candidate_rows"].get<double>());
  if (const auto anchor = g["moved_toward"].get<std::string>(); !anchor.empty())
    fmt::print(
        "      the fit itself does not pass: moved toward the {} classifier as far as the test "
        "allows, keeping share {:.4f} of it\n",
        anchor, g["kept_share"].get<double>());
  if (g.value("components_drawn", false))
    fmt::print(
        "      the stochastic output is tested through one seeded draw per row (on the candidate "
        "rows, tighter than bounding its components or probabilities apart)\n");
  for (const auto& c : g["constraints"])
    fmt::print("      {:<44} safety {:.6f}  upper bound {:.6f}  {}  (trained with margin {:.6f})\n",
               c["constraint"].get<std::string>(), c["safety_violation"].get<double>(),
               c["upper_bound"].get<double>(),
               c["certified"].get<bool>() ? "certified" : "NOT certified",
               c["margin"].get<double>());
  if (g["passed"].get<bool>())
    fmt::print(
        "passed: every constraint holds on the population with probability >= {} (if rows "
        "are independent draws from it)\n",
        g["confidence"].get<double>());
  else
    fmt::print(
        "no_solution_found: the safety test could not certify the constraints at "
        "confidence {}; no model is written (--output-infeasible writes it anyway); more "
        "rows, a looser bound or a lower --confidence{} may help\n",
        g["confidence"].get<double>(),
        g["output"].get<std::string>() == "stochastic"
            ? ", or --guarantee-for deterministic (one model's bounds, often tighter)"
            : "");
}

// Adds the train (and validation) sections and the total time to `report`, embeds it (without
// timings) in the classifier, saves the model (not when infeasible, unless
// --output-infeasible) and, when asked, the report file. Shared by every solver. Returns whether
// the model was written.
bool finish_report(nlohmann::json& report, const ProblemSpec& spec, Classifier& classifier,
                   const std::vector<std::pair<std::string, const Dataset*>>& named,
                   const std::string& validation_path, const ReaderFlags& reader, int threads,
                   std::chrono::steady_clock::time_point start, const std::string& output,
                   const std::string& report_path, bool infeasible, bool output_infeasible,
                   const IntervalOptions* ci, std::span<const std::vector<double>> stacked_scores) {
  report["train"] = spec_sections(spec, classifier, named, threads, ci, true, stacked_scores);
  if (!validation_path.empty()) {
    // A file or a pattern (over ranks: each rank reads its share of the files).
    const Dataset valid =
        load_data_shard(validation_path, reader, &named[0].second->encoding()).data;
    auto vnamed = named;
    vnamed[0].second = &valid;
    report["validation"] = spec_sections(spec, classifier, vnamed, threads, ci);
  }
  report["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  classifier.report_json = report.dump();
  // Over several ranks rank 0 writes for the group (every rank holds the same model and report).
  if (process_group().rank() != 0) return !infeasible || output_infeasible;
  const bool saved = save_trained_model(classifier, output, infeasible, output_infeasible);
  if (!report_path.empty()) write_text(report_path, report.dump(2) + "\n");
  return saved;
}

}  // namespace rateopt::cli
