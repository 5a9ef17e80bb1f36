// rateopt train --solver postprocess (rateopt/postprocess.hpp): the LP over randomised group
// thresholds of a saved scoring model; prints and saves like the other solvers.
#include "cmd_train_postprocess.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/model.hpp"
#include "rateopt/postprocess.hpp"
#include "train_report.hpp"

namespace rateopt::cli {

namespace {

// The deterministic search's summary: the rule's objective against the randomised optimum
// (`sign`: -1 for a maximised objective, as the LP minimises its negation).
void print_deterministic_search(const nlohmann::json& det, const PostprocessResult& r,
                                double sign) {
  fmt::print("deterministic thresholds: objective {:.6f}", sign * r.lp_objective);
  if (det.contains("price_of_determinism"))
    fmt::print(" against {:.6f} for randomised ones (price of determinism {:.6f})",
               det["randomized_objective"].get<double>(),
               det["price_of_determinism"].get<double>());
  else if (r.randomized.status == Termination::kConverged)
    fmt::print(" (randomised thresholds meet the constraints, at objective {:.6f})",
               det["randomized_objective"].get<double>());
  const bool proved = r.status == Termination::kConverged || r.status == Termination::kInfeasible;
  if (r.search.sweep)
    fmt::print(
        "; exact without LP solves (a per-group choice or the two-group sweep), "
        "optimality proved\n");
  else
    fmt::print("; {} LP solves, {}\n", r.search.nodes,
               proved ? std::string("optimality proved")
                      : fmt::format("node budget spent: not proved (bound {:.6f})",
                                    det["search_bound"].get<double>()));
}

}  // namespace

void add_postprocess_flags(CLI::App& app, PostprocessFlags& flags, const std::string& group) {
  app.add_option("--base-model", flags.base_model,
                 "--solver postprocess: the scoring model to post-process (a single linear "
                 "model saved by rateopt train, e.g. logistic regression)")
      ->group(group);
  app.add_option("--postprocess-groups", flags.groups,
                 "--solver postprocess: columns whose value combinations are the groups (read "
                 "them with --groups); default: the columns the problem's slices name")
      ->delimiter(',')
      ->group(group);
  app.add_option("--postprocess-columns", flags.columns,
                 "--solver postprocess: the LP's threshold columns per group: hull (the vertices "
                 "of the group's convex hull, the same optimum; every cut where rows differ in "
                 "more than two ways) or all (every distinct score)")
      ->check(CLI::IsMember({"hull", "all"}))
      ->capture_default_str()
      ->group(group);
  app.add_option("--postprocess-rule", flags.rule,
                 "--solver postprocess: randomized (the LP's optimum: a group may mix two "
                 "thresholds) or deterministic (one threshold per group, the best meeting the "
                 "constraints, found exactly by branch and bound; the report gives the price of "
                 "determinism against the randomised optimum)")
      ->check(CLI::IsMember({"randomized", "deterministic"}))
      ->capture_default_str()
      ->group(group);
  app.add_option("--postprocess-max-nodes", flags.max_nodes,
                 "--postprocess-rule deterministic: the search's budget of LP solves; when spent, "
                 "the best rule found, its objective not proved optimal (status feasible)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group(group);
  app.add_option("--base-folds", flags.base_folds,
                 "--solver postprocess --learner gbdt --confidence: fit the thresholds on "
                 "cross-fitted scores of this many folds (each candidate row scored by trees "
                 "fitted without it; the model keeps the trees fitted on the whole candidate "
                 "part); 0 or 1: on the trees' scores of the rows they were fitted on")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000}).description("a count from 0 to 1000"))
      ->capture_default_str()
      ->group(group);
  if (CLI::Option* solver = app.get_option_no_throw("--solver"))
    solver->description(solver->get_description() +
                        " CLI only: postprocess (Hardt et al. 2016: exact randomised per-group "
                        "thresholds of --base-model's score by one LP; problems linear in rates).");
}

int train_postprocess_cli(const ProblemSpec& spec, const NamedDatasets& named,
                          const std::vector<std::string>& dataset_args, const DataShard& shard,
                          const std::string& data_path, const std::string& validation_path,
                          const ReaderFlags& reader, const PostprocessFlags& flags, bool quiet,
                          bool output_infeasible, const std::string& report_path, int threads,
                          const std::string& output) {
  const auto start = std::chrono::steady_clock::now();
  const bool lead = process_group().rank() == 0;  // prints for the group
  const bool guaranteed = flags.guarantee.has_value();
  const std::string& scores = reader.scores_file;
  const bool fit_here = static_cast<bool>(flags.fit_base);  // --learner gbdt
  if (flags.base_model.empty() && scores.empty() && !guaranteed && !fit_here)
    throw InvalidArgument(
        "--solver postprocess needs the score to post-process: --base-model FILE (a model saved "
        "by rateopt train, e.g. logistic regression or boosted trees), --scores FILE (one score "
        "per row from any model) or --learner gbdt (boosted trees fitted on the --data rows "
        "first); with --confidence it may be left out: a logistic regression is then fitted on "
        "the candidate part");
  if (!scores.empty() && !flags.base_model.empty())
    throw InvalidArgument("give the score once: --base-model or --scores, not both");
  if (fit_here && (!scores.empty() || !flags.base_model.empty()))
    throw InvalidArgument(fmt::format(
        "--learner {} fits the base score here: leave out {} (the score is given), or --learner",
        flags.base_learner, scores.empty() ? "--base-model" : "--scores"));
  if (!scores.empty() && (!dataset_args.empty() || !validation_path.empty()))
    throw InvalidArgument(
        "--scores post-processes the --data rows' scores: leave out --dataset and --validation "
        "(evaluate on other rows with rateopt eval --model MODEL --data FILE --scores "
        "THEIR_SCORES)");
  std::optional<Classifier> given;
  if (!flags.base_model.empty()) given = Classifier::load(flags.base_model);
  // The base score fitted here, for messages and the report.
  const std::string fitted_name =
      fit_here ? fmt::format("boosted trees (--learner {})", flags.base_learner)
               : std::string("logistic regression");
  // What the score is, for messages and the report.
  const std::string score_name = !scores.empty()             ? "the scores in " + scores
                                 : !flags.base_model.empty() ? flags.base_model
                                                             : std::string();
  // The score is defined on the base model's features: read the data again with its encoding
  // unless the data's own encoding is the same.
  NamedDatasets data = named;
  std::deque<Dataset> reread;
  if (!scores.empty()) {
    // Outside scores: the data's one feature is the score, the base model its identity.
    reread.push_back(*named.front().second);
    attach_scores(reread.back(), scores, data_path, scores_encoding(reread.back().encoding()));
    data.front().second = &reread.back();
    LinearModel identity;
    identity.weights = {1.0};
    given = Classifier::single(std::move(identity), Link::kThreshold, reread.back().encoding());
    given->kind = "outside_scores";
  }
  if (given && scores.empty() &&
      named.front().second->encoding().to_json() != given->encoding.to_json()) {
    reread.push_back(load_data_shard(data_path, reader, &given->encoding).data);
    data.front().second = &reread.back();
    for (std::size_t k = 0; k < dataset_args.size() && k + 1 < data.size(); ++k) {
      ReaderFlags r = reader;
      r.baseline_file.clear();
      reread.push_back(
          load_dataset(dataset_args[k].substr(dataset_args[k].find('=') + 1), r, &given->encoding));
      data[k + 1].second = &reread.back();
    }
  }
  PostprocessOptions options;
  options.group_columns = flags.groups;
  options.hull = flags.columns == "hull";
  options.deterministic = flags.rule == "deterministic";
  options.max_nodes = flags.max_nodes;
  if (options.deterministic && !quiet && lead)
    options.progress = [sign = spec.maximize ? -1.0 : 1.0](std::size_t nodes, double best,
                                                           double bound) {
      fmt::print(stderr, "deterministic search: {} LP solves, best rule {}, bound {:.6f}\n", nodes,
                 std::isfinite(best) ? fmt::format("{:.6f}", sign * best) : std::string("none yet"),
                 sign * bound);
    };
  options.n_threads = threads;
  PostprocessResult result;
  Classifier base;
  std::optional<GuaranteedPostprocessResult> g;
  std::vector<std::string> constraints = spec.constraints;  // as given
  if (guaranteed) {
    if (!quiet && lead)
      fmt::print(stderr, "post-processing {} with a guarantee on {} ({} rows)\n",
                 given ? score_name : fmt::format("{} of the candidate part", fitted_name),
                 data_path, shard.total_rows);
    if (fit_here)
      g = postprocess_guaranteed(
          spec, *data.front().second, shard.rows_before,
          [&](const Dataset& rows) { return flags.fit_base(rows).first; }, options, flags.tolerance,
          *flags.guarantee, flags.base_folds);
    else
      g = postprocess_guaranteed(spec, *data.front().second, shard.rows_before,
                                 given ? &*given : nullptr, flags.base_options, options,
                                 flags.tolerance, *flags.guarantee);
    result = std::move(g->postprocess);
    result.classifier = g->guarantee.result.classifier;
    base = std::move(g->base);
    data.front().second = &g->guarantee.candidate;  // the report's training sections
  } else {
    std::vector<double> base_scores;  // the fit's scores of the --data rows, when it gives them
    if (fit_here) {
      const Dataset& rows = *data.front().second;
      if (!quiet && lead)
        fmt::print(stderr, "fitting the base score ({}) on {} ({} rows)\n", fitted_name, data_path,
                   rows.num_rows());
      std::tie(base, base_scores) = flags.fit_base(rows);
      if (data.size() > 1) base_scores.clear();  // the --dataset rows are scored anew
    } else {
      base = std::move(*given);
    }
    std::vector<TrainingData> td;
    for (const auto& [n, p] : data) td.push_back({n, p});
    const RateProblem problem = RateProblem::build(pairwise_parity(spec), td);
    if (!quiet && lead)
      fmt::print(stderr, "post-processing {} ({}) on {} ({} rows)\n{}",
                 given ? score_name : std::string("the base score"), base.kind, data_path,
                 shard.total_rows, problem.describe());
    result = postprocess(problem, base, options, base_scores);
  }

  // A model moved toward a constant keeps one rule per group of the LP.
  if (result.classifier.group_rules.size() != result.groups.size())
    throw std::logic_error(fmt::format("post-processing gave {} group rules for {} groups",
                                       result.classifier.group_rules.size(), result.groups.size()));
  nlohmann::json groups = nlohmann::json::array();
  std::size_t cuts = 0;
  for (const PostprocessGroup& group : result.groups) cuts += group.cuts;
  for (std::size_t k = 0; k < result.groups.size(); ++k)
    groups.push_back({{"key", result.groups[k].key},
                      {"rows", result.groups[k].rows},
                      {"cuts", result.groups[k].cuts},
                      {"columns", result.groups[k].columns},
                      {"thresholds", result.classifier.group_rules[k].thresholds},
                      {"weights", result.classifier.group_rules[k].weights}});
  const std::string base_name = given        ? score_name
                                : guaranteed ? fmt::format("{} of the candidate part", fitted_name)
                                             : fmt::format("{} of the --data rows", fitted_name);
  nlohmann::json report{
      {"status", std::string(to_string(guaranteed ? g->guarantee.result.status : result.status))},
      {"solver", "postprocess"},
      {"base_model", base_name},
      {"group_columns", result.group_columns},
      {"groups", groups},
      {"lp_columns", result.lp_columns},
      {"lp_cuts", cuts},
      {"lp_objective", spec.maximize ? -result.lp_objective : result.lp_objective},
      {"train_seconds", result.seconds},
      {"train_rows", shard.total_rows}};
  if (result.status == Termination::kInfeasible)
    report["violation_budget"] = result.violation_budget;
  const double sign = spec.maximize ? -1.0 : 1.0;  // the objective as given
  if (options.deterministic) {
    const PostprocessResult::Randomized& rnd = result.randomized;
    nlohmann::json det{{"rule", "deterministic"},
                       {"search_method", result.search.sweep ? "sweep" : "branch_and_bound"},
                       {"search_nodes", result.search.nodes},
                       {"search_bound", sign * result.search.bound},
                       {"randomized_status", std::string(to_string(rnd.status))},
                       {"randomized_objective", sign * rnd.objective}};
    if (rnd.status == Termination::kInfeasible)
      det["randomized_violation_budget"] = rnd.violation_budget;
    // Objective lost to determinism (as minimised: >= 0), when both meet the constraints.
    if (result.status == Termination::kConverged && rnd.status == Termination::kConverged)
      det["price_of_determinism"] = result.lp_objective - rnd.objective;
    report["deterministic_search"] = det;
  }
  if (guaranteed) {
    report["guarantee"] =
        guarantee_section(g->guarantee, constraints, *flags.guarantee, flags.guarantee_for);
    if (g->base_fitted) report["base_model_fit"] = nlohmann::json::parse(base.options_json);
    // The thresholds' scores: cross-fitted over this many folds (0: the fit's own rows').
    if (fit_here) report["base_folds"] = flags.base_folds >= 2 ? flags.base_folds : 0;
  } else if (fit_here) {
    report["base_model_fit"] = nlohmann::json::parse(base.options_json);
  }
  Classifier& clf = result.classifier;
  // A deterministic search out of nodes still meets the constraints (kFeasible). A guaranteed
  // fit moved toward a constant is judged by its safety test alone (as train's other solvers
  // are): its tightened constraints on the candidate part no longer describe it.
  const bool fit_ok =
      result.status == Termination::kConverged || result.status == Termination::kFeasible;
  const bool ok = fit_ok || (guaranteed && !g->guarantee.anchor.empty());
  const bool certified = !guaranteed || g->guarantee.passed;
  // The report's training sections score nothing anew where the LP's scores are those rows' (not
  // with --confidence: the sections are the candidate part's, the model moved toward a constant).
  std::vector<std::vector<double>> known;
  if (!guaranteed) known.push_back(std::move(result.training_scores));
  const bool saved = finish_report(report, spec, clf, data, validation_path, reader, threads, start,
                                   output, report_path, !ok || !certified, output_infeasible,
                                   flags.ci ? &*flags.ci : nullptr, known);
  const int code = guaranteed && !certified ? kExitNoSolution : ok ? 0 : kExitRuntime;
  if (!lead) return code;

  fmt::print("{}: {} (postprocess solver: LP over {} of {} thresholds of {} groups, {:.3f} s)\n",
             ok ? "done" : "warning", to_string(result.status), result.lp_columns, cuts,
             result.groups.size(), result.seconds);
  if (options.deterministic)
    print_deterministic_search(report["deterministic_search"], result, sign);
  if (ok && !fit_ok)
    fmt::print(
        "note: on the candidate part no thresholds met the tightened constraints ({}, largest "
        "violation {:.6f}); the model is the move toward a constant that the safety test "
        "certifies (below)\n",
        to_string(result.status), result.violation_budget);
  print_spec_sections(spec, report);
  fmt::print("group thresholds on the base score ({}):\n",
             result.group_columns.empty()
                 ? std::string("one group")
                 : fmt::format("{}", fmt::join(result.group_columns, ", ")));
  for (std::size_t k = 0; k < result.groups.size(); ++k) {
    const GroupRule& r = clf.group_rules[k];
    std::string rule;
    for (std::size_t j = 0; j < r.thresholds.size(); ++j) {
      // The never / always thresholds of a move toward a constant (--confidence).
      const double t = r.thresholds[j];
      const std::string when = t == std::numeric_limits<double>::max() ? "never positive"
                               : t == std::numeric_limits<double>::lowest()
                                   ? "always positive"
                                   : fmt::format("score > {:.6g}", t);
      rule += fmt::format("{}{} w.p. {:.6f}", j == 0 ? "" : "; ", when, r.weights[j]);
    }
    const std::vector<std::string>& key = result.groups[k].key;
    fmt::print("  {} ({} rows): {}\n",
               key.empty() ? std::string("all rows") : fmt::format("[{}]", fmt::join(key, ", ")),
               result.groups[k].rows, rule);
  }
  if (guaranteed) {
    print_guarantee(report["guarantee"]);
    if (given)
      fmt::print(
          "note: the guarantee holds only if {} was fitted without the rows of {} (the safety "
          "rows must be new to the whole model)\n",
          scores.empty() ? flags.base_model : "the model behind " + scores, data_path);
  }
  if (result.status == Termination::kMaxIterations)
    fmt::print(
        "no deterministic thresholds meeting the constraints found within "
        "--postprocess-max-nodes {}; the model has the smallest largest violation seen, "
        "{:.6f}\n",
        options.max_nodes, result.violation_budget);
  else if (!ok)
    fmt::print(
        "infeasible: no {} group thresholds of this score meet the constraints on the training "
        "data; the model minimises the objective at the smallest largest violation {:.6f}\n",
        options.deterministic ? "deterministic" : "randomised", result.violation_budget);
  print_model_saved(saved, output);
  return code;
}

}  // namespace rateopt::cli
