// rateopt train: fit a model on a data file and save it as versioned JSON.
// Without an objective or constraint: L2-regularised logistic regression (the baseline). With
// --minimize / --maximize / --constraint / --problem: rate-constrained training (train.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "cmd_train_postprocess.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "multilabel_cli.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/gbdt.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/logistic.hpp"
#include "rateopt/metrics.hpp"
#include "rateopt/model.hpp"
#include "rateopt/problem_file.hpp"
#include "rateopt/ramp.hpp"
#include "rateopt/train.hpp"
#include "rateopt/train_options.hpp"
#include "train_report.hpp"

namespace rateopt::cli {
namespace {

// Rate-constrained problem flags (and the keys of a --problem file).
struct ProblemFlags {
  std::string minimize, maximize, problem_file;
  // A TrainSolver name (train_options.hpp) or a solver of the CLI's own: "ramp".
  std::string solver = std::string(to_string(TrainOptions{}.solver));
  std::vector<std::string> constraints, datasets;
  double lambda = 1e-4;  // --solver ramp: L2 regularisation of the linear scorer
  int mm_steps = 10;     // --solver ramp: majorisation-minimisation steps
  std::string report;
  bool quiet = false;
  bool output_infeasible = false;  // --output-infeasible
  // --confidence (the guaranteed mode; 0 = off), --safety-fraction, --guarantee-for.
  double confidence = 0;
  GuaranteeOptions guarantee;
  std::string guarantee_for = "deterministic";
  // --two-dataset F: Cotter et al.'s scheme with this share of the rows on the constraint side
  // (0 = off; train_two_dataset).
  double two_dataset = 0;
  // --ci: intervals in the report's sections (level 0 = none), --ci-resamples, --ci-seed.
  IntervalOptions ci{.level = 0};
  // The option table's flags (train_options.hpp, one per TrainOptions key): their text as given
  // (a bool switch: the value it sets), and the keys given on the command line ("lambda" and
  // "mm_steps" too), which win over the problem file's.
  std::map<std::string, std::string, std::less<>> raw;
  std::set<std::string, std::less<>> given;
  // TrainOptions{}, then the problem file's keys, then the flags given (resolve_train_options).
  TrainOptions train;
  PostprocessFlags postprocess;  // --solver postprocess (cmd_train_postprocess.cpp)
  [[nodiscard]] bool active() const {
    return !minimize.empty() || !maximize.empty() || !constraints.empty() ||
           !problem_file.empty() || solver == "postprocess";
  }
};

// +1 when minimising, -1 when maximising (bounds are reported as the objective is written).
double p_sign(const ProblemSpec& spec) {
  return spec.maximize ? -1.0 : 1.0;
}

// Reads a TOML or JSON problem file (problem_file.hpp) into the flags; keys given on the command
// line keep the command line's value. Its constraints are added to --constraint.
void read_problem_file(ProblemFlags& f) {
  const ProblemFile p = rateopt::read_problem_file(f.problem_file);
  const bool cli_objective = !f.minimize.empty() || !f.maximize.empty();
  if (!cli_objective) {
    if (!p.minimize.empty()) f.minimize = p.minimize;
    if (!p.maximize.empty()) f.maximize = p.maximize;
  }
  f.constraints.insert(f.constraints.end(), p.constraints.begin(), p.constraints.end());
  if (p.lambda && !f.given.contains("lambda")) f.lambda = *p.lambda;
  if (p.mm_steps && !f.given.contains("mm_steps")) f.mm_steps = *p.mm_steps;
  if (p.solver && !f.given.contains("solver")) f.solver = *p.solver;
  apply_problem_options(p, f.train, f.given);
}

// f.train from TrainOptions{}, the problem file (when given) and the flags given, which win.
// Throws InvalidArgument naming the flag and the accepted values for a bad value.
void resolve_train_options(ProblemFlags& f) {
  if (!f.problem_file.empty()) read_problem_file(f);
  for (const auto& [key, value] : f.raw)
    if (key != "solver" && f.given.contains(key)) set_train_option(f.train, key, value);
}

// Registers one flag per training option (train_options.hpp) with the table's help and default.
// c, n_threads and fit_intercept (--C, --threads, --no-intercept) also set logistic regression's
// options, so they stay in the general group; the others go to `group`.
void add_train_option_flags(CLI::App& app, ProblemFlags& f, const std::string& group) {
  // What the shared flags mean for logistic regression.
  static const std::map<std::string_view, std::string_view> logistic_help{
      {"c", "Inverse regularisation strength of logistic regression."},
      {"n_threads", ""},  // the same meaning for both
      {"fit_intercept", "Fit without an intercept."}};
  for (const TrainOptionInfo& i : train_option_table()) {
    const std::string key(i.key), flag(i.flag);
    const auto shared = logistic_help.find(i.key);
    std::string help(i.help);
    if (key == "solver")
      help +=
          " CLI only: ramp (Goh et al. 2016: problems linear in rates, deterministic linear "
          "classifier, ramp-randomised stochastic one; --lambda, --mm-steps).";
    if (shared != logistic_help.end() && !shared->second.empty())
      help = fmt::format("{} Rate-constrained training: {}", shared->second, help);
    const bool choice = i.type == TrainOptionType::kSolver ||
                        i.type == TrainOptionType::kStepRule || i.type == TrainOptionType::kLearner;
    if (!i.check_text().empty() && !choice) help += fmt::format(" ({})", i.check_text());
    CLI::Option* opt = nullptr;
    if (i.type == TrainOptionType::kBool) {
      opt = app.add_flag(flag)->description(help);
    } else if (key == "solver") {
      opt = app.add_option(flag, f.solver, help)->default_str(i.default_text);
    } else {
      std::string type = i.type == TrainOptionType::kDouble ? "FLOAT"
                         : i.type == TrainOptionType::kUint ? "UINT"
                                                            : "INT";
      if (choice) {
        type = "{" + i.check_text() + "}";
        type.erase(std::remove(type.begin(), type.end(), ' '), type.end());
      }
      opt = app.add_option(flag, f.raw[key], help)->default_str(i.default_text)->type_name(type);
    }
    if (shared == logistic_help.end()) opt->group(group);
  }
}

// After parsing: which table flags were given (f.given) and the value of the bool switches.
void collect_given_flags(const CLI::App& app, ProblemFlags& f) {
  for (const TrainOptionInfo& i : train_option_table()) {
    if (app.count(std::string(i.flag)) == 0) continue;
    const std::string key(i.key);
    f.given.insert(key);
    if (i.type == TrainOptionType::kBool)
      f.raw[key] = std::get<bool>(i.default_value) ? "false" : "true";
  }
  if (app.count("--lambda") > 0) f.given.insert("lambda");
  if (app.count("--mm-steps") > 0) f.given.insert("mm_steps");
}

// ---- --solver ramp (Goh et al. 2016; ramp.hpp) ------------------------------------------------
// The problem goes to fit_ramp in per-row form through ramp_problem (ramp.hpp).

void print_mm_step(const MmIteration& h) {
  std::string v;
  for (double x : h.multipliers) v += fmt::format("{}{:.4g}", v.empty() ? "" : ", ", x);
  fmt::print(stderr,
             "  {} {:>3}: ramp objective + regulariser {:.6f} (was {:.6f})  max violation {:+.6f}  "
             "{}{}{}  "
             "bounds [{:.6f}, {:.6f}] {}  multipliers [{}]  {} SVM solves, {} epochs\n",
             h.phase1 ? "phase 1 step" : "MM step     ", h.iteration, h.objective,
             h.previous_objective, h.max_violation, h.feasible ? "feasible" : "INFEASIBLE",
             h.monotone ? "" : ", OBJECTIVE INCREASED", h.accepted ? "" : ", rejected",
             h.lower_bound, h.upper_bound, to_string(h.outer_status), v, h.svm_solves, h.epochs);
}

// `guarantee`: the guaranteed mode (--confidence; null: off), around one ramp fit per call on the
// candidate part (train_guaranteed); the kept fit's ramp details go in the report.
int train_ramp_cli(const RateProblem& problem, const ProblemSpec& spec, NamedDatasets named,
                   const std::string& data_path, const std::string& validation_path,
                   const ReaderFlags& reader, const ProblemFlags& f, int threads,
                   const std::string& output, const GuaranteeOptions* guarantee) {
  RampOptions o;
  o.lambda = f.lambda;
  o.max_mm_iterations = f.mm_steps;
  o.feasibility_tol = f.train.tolerance;
  o.seed = f.train.seed;
  o.n_threads = threads;
  const Dataset& ds = *named[0].second;
  if (!f.quiet) {
    fmt::print(stderr, "training on {} ({} rows, {} features) with the ramp solver\n{}", data_path,
               ds.num_rows(), ds.num_features(), problem.describe());
    o.progress = print_mm_step;
  }
  const auto start = std::chrono::steady_clock::now();
  RampResult result;
  std::optional<GuaranteedTrainResult> g;
  if (guarantee != nullptr) {
    std::vector<RampResult> answers;  // one per fit, to report the kept one
    const GuaranteedFit fit = [&](const ProblemSpec& tight, const Dataset& candidate) {
      const std::vector<TrainingData> td = {{"train", &candidate}};
      const RateProblem p = RateProblem::build(pairwise_parity(tight), td);
      answers.push_back(fit_ramp(ramp_problem(p), ramp_datasets(p), o));
      const RampResult& r = answers.back();
      TrainResult t;  // the training values: computed by train_guaranteed
      t.classifier = r.classifier;
      // An MM budget that ran out on a model meeting the (tightened) constraints: a feasible fit.
      t.status = r.status == Termination::kMaxIterations && r.max_violation <= o.feasibility_tol
                     ? Termination::kFeasible
                     : r.status;
      return t;
    };
    g = train_guaranteed(spec, ds, 0, fit, f.train.tolerance, threads, *guarantee);
    result = std::move(answers.at(g->kept_fit));
    result.classifier = g->result.classifier;
    named[0].second = &g->candidate;  // the report's training sections: the candidate part
  } else {
    result = fit_ramp(ramp_problem(problem), ramp_datasets(problem), o);
  }
  const double train_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!f.quiet) {
    fmt::print(stderr, "  start: {}{}\n", result.start,
               result.start.find("phase1") != std::string::npos
                   ? " (w = 0 violates a constraint: phase 1 minimised the violated constraints)"
                   : "");
  }
  nlohmann::json history = nlohmann::json::array();
  for (const MmIteration& h : result.history)
    history.push_back({{"iteration", h.iteration},
                       {"phase1", h.phase1},
                       {"objective", h.objective},
                       {"previous_objective", h.previous_objective},
                       {"max_violation", h.max_violation},
                       {"lower_bound", h.lower_bound},
                       {"upper_bound", h.upper_bound},
                       {"multipliers", h.multipliers},
                       {"svm_solves", h.svm_solves},
                       {"epochs", h.epochs},
                       {"monotone", h.monotone},
                       {"feasible", h.feasible},
                       {"accepted", h.accepted},
                       {"outer_status", std::string(to_string(h.outer_status))}});
  nlohmann::json report{{"status", std::string(to_string(g ? g->result.status : result.status))},
                        {"solver", "ramp"},
                        {"start", result.start},
                        {"mm_iterations", result.history.size()},
                        {"svm_solves", result.svm_solves},
                        {"epochs", result.epochs},
                        {"lambda", o.lambda},
                        {"multipliers", result.multipliers},
                        {"objective_ramp", result.objective},
                        {"max_violation_ramp", result.max_violation},
                        {"history", history},
                        {"train_seconds", train_seconds},
                        {"train_rows", ds.num_rows()}};
  const bool certified = !g || g->passed;
  if (g) report["guarantee"] = guarantee_section(*g, spec.constraints, *guarantee, f.guarantee_for);
  const bool saved =
      finish_report(report, spec, result.classifier, named, validation_path, reader, threads, start,
                    output, f.report, result.status == Termination::kInfeasible || !certified,
                    f.output_infeasible, f.ci.level > 0 ? &f.ci : nullptr);
  // Guaranteed: the kept fit met its tightened constraints (an MM budget that ran out included).
  const bool ok =
      g ? g->solver_status == Termination::kConverged || g->solver_status == Termination::kFeasible
        : result.status == Termination::kConverged;
  fmt::print("{}: {} (ramp solver, start {}, {} MM steps, {} SVM solves, {:.3f} s)\n",
             ok ? "done" : "warning", to_string(result.status), result.start, result.history.size(),
             result.svm_solves, train_seconds);
  print_spec_sections(spec, report);
  if (result.status == Termination::kInfeasible)
    fmt::print(
        "infeasible: no feasible start found; the smallest largest ramp violation reached on "
        "training data is {:.6f} (tolerance {})\n",
        result.max_violation, f.train.tolerance);
  else if (!ok)
    fmt::print(
        "the MM step budget ({}) ran out while the objective still decreased "
        "(--mm-steps)\n",
        f.mm_steps);
  if (g) print_guarantee(report["guarantee"]);
  print_model_saved(saved, output);
  if (!certified) return kExitNoSolution;
  return ok ? 0 : kExitRuntime;
}

int train_rate_constrained_cli(const DataShard& shard, const std::string& data_path,
                               const std::string& validation_path, const ReaderFlags& reader,
                               ProblemFlags f, int threads, const std::string& output) {
  const Dataset& ds = shard.data;
  const bool distributed = is_distributed();
  const bool lead = process_group().rank() == 0;  // prints and writes for the group
  if (distributed && f.train.learner == Learner::kGbdt)
    throw InvalidArgument(
        "over several ranks (mpirun) training fits linear models so far: --learner gbdt runs in "
        "one process (XGBoost's distributed training is not driven from rateopt's ranks; "
        "docs/scale.md)");
  if (distributed && (!f.datasets.empty() || f.solver == "ramp"))
    throw InvalidArgument(
        "over several ranks (mpirun) rate-constrained training runs the cutting-plane solver or "
        "post-processing on the --data rows: leave out --dataset and --solver ramp "
        "(docs/scale.md)");
  if (!f.minimize.empty() && !f.maximize.empty())
    throw InvalidArgument("give either --minimize or --maximize, not both");
  ProblemSpec spec;
  spec.maximize = !f.maximize.empty();
  spec.objective = spec.maximize ? f.maximize : (f.minimize.empty() ? "error" : f.minimize);
  spec.constraints = f.constraints;
  if (ds.labels().kind != LabelKind::kBinary)
    throw InvalidArgument(fmt::format(
        "rate-constrained training needs binary labels; {} has {} labels{}", data_path,
        label_kind_words(ds.labels().kind),
        ds.labels().kind == LabelKind::kNone ? " (name the label column with --label)" : ""));
  warn_if_one_class(ds, data_path);
  // Extra named datasets (NAME=FILE), read with the training encoding.
  std::vector<Dataset> extra;
  extra.reserve(f.datasets.size());
  std::vector<std::pair<std::string, const Dataset*>> named{{"train", &ds}};
  for (const std::string& d : f.datasets) {
    const auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InvalidArgument(fmt::format("--dataset expects NAME=FILE, got '{}'", d));
    ReaderFlags r = reader;
    r.baseline_file.clear();
    extra.push_back(load_dataset(d.substr(eq + 1), r, &ds.encoding()));
    named.emplace_back(d.substr(0, eq), &extra.back());
  }
  // The guaranteed mode (--confidence): the library splits the rows, trains on the candidate
  // part and certifies on the safety part (train_guaranteed).
  const bool guaranteed = f.confidence > 0;
  GuaranteeOptions guarantee = f.guarantee;
  guarantee.confidence = f.confidence;
  guarantee.seed = f.train.seed;
  guarantee.stochastic_output = f.guarantee_for == "stochastic";
  const std::vector<std::string> constraints = spec.constraints;  // as given
  if (guaranteed && !f.datasets.empty() && (f.solver == "ramp" || f.solver == "postprocess"))
    throw InvalidArgument(fmt::format(
        "--confidence with --dataset runs the prediction solvers (cutting-plane, oracle, "
        "three-player, ratio, proxy-lagrangian) so far; --solver {} certifies the --data rows "
        "alone: leave out --dataset, or pick another solver",
        f.solver));
  const bool two_dataset = f.two_dataset > 0;
  if (two_dataset && (guaranteed || distributed || !f.datasets.empty() ||
                      (f.solver != "auto" && f.solver != "cutting-plane" && f.solver != "oracle")))
    throw InvalidArgument(
        "--two-dataset runs the cutting-plane (or oracle) solver with the logistic oracle on the "
        "--data rows of one process: leave out --confidence, --dataset, other solvers and "
        "mpirun");
  if (two_dataset && spec.constraints.empty())
    throw InvalidArgument(
        "--two-dataset moves constraints to held-out rows: give at least one "
        "--constraint");
  if (guaranteed && spec.constraints.empty())
    throw InvalidArgument("--confidence certifies constraints: give at least one --constraint");
  std::vector<TrainingData> td;
  td.reserve(named.size());
  for (const auto& [n, p] : named) td.push_back({n, p});
  if (f.ci.level > 0) f.postprocess.ci = f.ci;
  if (guaranteed && f.solver == "postprocess") {
    f.postprocess.guarantee = guarantee;
    f.postprocess.guarantee_for = f.guarantee_for;
    f.postprocess.tolerance = f.train.tolerance;
    f.postprocess.base_options.c = f.train.c;
    f.postprocess.base_options.fit_intercept = f.train.fit_intercept;
    f.postprocess.base_options.n_threads = threads;
  }
  if (f.solver == "postprocess" && f.train.learner == Learner::kGbdt) {
    // The base score: boosted trees on the rows given (the candidate part with --confidence).
    f.postprocess.base_learner = "gbdt";
    f.postprocess.fit_base = [train = f.train, threads](const Dataset& rows) {
      require_two_classes(rows, "the base score's rows");
      GbdtOptions g = gbdt_options(train);
      g.n_threads = threads;
      // The margins of the rows from XGBoost's training cache: the bits scoring them gives.
      GbdtFit fit = fit_gbdt_with_margins(rows.features(), rows.labels().values, rows.weights(), g);
      Classifier c = Classifier::single(std::move(fit.model), Link::kLogistic, rows.encoding());
      c.kind = "gbdt";
      c.options_json = train_options_json(train, TrainOptionsJson::kModel);
      return std::pair<Classifier, std::vector<double>>(std::move(c), std::move(fit.margins));
    };
  }
  if (f.solver == "postprocess")
    return train_postprocess_cli(spec, named, f.datasets, shard, data_path, validation_path, reader,
                                 f.postprocess, f.quiet, f.output_infeasible, f.report, threads,
                                 output);
  // The ramp solver takes parity pairwise; the others, over many values, as one spread.
  const RateProblem problem =
      RateProblem::build(f.solver == "ramp" ? pairwise_parity(spec) : spec, td);
  if (distributed) {
    const TrainSolver solver = parse_train_solver(f.solver);
    if (resolve_train_solver(problem, solver) != TrainSolver::kCuttingPlane)
      throw InvalidArgument(fmt::format(
          "over several ranks (mpirun) rate-constrained training runs the cutting-plane solver, "
          "for objectives and constraints linear in rates (error, ppr, tpr, fpr, ... and their "
          "sums); {} needs the {} solver, which runs in one process so far",
          solver == TrainSolver::kAuto ? "this problem" : "--solver " + f.solver,
          to_string(resolve_train_solver(problem, solver))));
  }
  if (f.solver == "ramp")
    return train_ramp_cli(problem, spec, named, data_path, validation_path, reader, f, threads,
                          output, guaranteed ? &guarantee : nullptr);
  TrainOptions o = f.train;
  set_train_option(o, "solver", f.solver);
  if (o.solver == TrainSolver::kOracle) o.oracle = weighted_logistic_oracle(o.c, threads);
  o.n_threads = threads;
  o.progress_every = std::max(1, o.iterations / 10);
  const auto start = std::chrono::steady_clock::now();
  if (!f.quiet && lead) {
    fmt::print(stderr, "training on {} ({} rows, {} features{})\n{}", data_path, shard.total_rows,
               ds.num_features(),
               distributed ? fmt::format(", {} ranks", process_group().size()) : "",
               problem.describe());
    o.progress = [&](const IterationRecord& r) {
      if (!std::isnan(r.gap)) {
        fmt::print(stderr,
                   "  round {:>4}: objective {:.5f}  max violation {:.5f}  lower bound {:.5f}  "
                   "gap {:.5f}  ({:.2f} s)\n",
                   r.iteration + 1, r.objective, r.max_violation, r.lagrangian, r.gap, r.seconds);
        return;
      }
      fmt::print(stderr,
                 "  iteration {:>6}/{}: objective {:.5f}  max violation {:.5f}  ({:.2f} s)\n",
                 r.iteration + 1, o.iterations, r.objective, r.max_violation, r.seconds);
    };
  }
  std::optional<GuaranteedTrainResult> g;
  std::optional<TwoDatasetResult> two;
  TrainResult result;
  if (guaranteed && named.size() > 1) {
    // Each dataset split alike; the report's training sections: each one's candidate part.
    g = train_guaranteed(spec, td, o, guarantee);
    for (std::size_t k = 0; k < named.size(); ++k) named[k].second = &g->candidate_parts[k];
    result = std::move(g->result);
  } else if (guaranteed) {
    g = train_guaranteed(spec, ds, shard.rows_before, o, guarantee);
    named[0].second = &g->candidate;  // the report's training sections: the candidate part
    result = std::move(g->result);
  } else if (two_dataset) {
    two = train_two_dataset(spec, ds, o, {.constraint_fraction = f.two_dataset, .seed = o.seed});
    named[0].second = &two->model_rows;  // the report's training sections: the model part
    result = std::move(two->result);
  } else {
    result = rateopt::train(problem, o);
  }
  nlohmann::json report{{"status", std::string(to_string(result.status))},
                        {"solver", std::string(to_string(result.solver))},
                        {"iterations", result.iterations},
                        {"candidates", result.num_candidates},
                        {"components", result.classifier.components.size()},
                        {"train_seconds", result.seconds},
                        {"train_rows", shard.total_rows}};
  if (!std::isnan(result.gap)) {
    report["lower_bound"] = p_sign(spec) * result.lower_bound;
    report["gap"] = result.gap;
    if (result.oracle_calls > 0) {
      report["oracle_calls"] = result.oracle_calls;
      report["oracle_iterations"] = result.oracle_iterations;
    }
  }
  if (two_dataset) {
    NamedDatasets held = named;
    held[0].second = &two->constraint_rows;
    report["two_dataset"] = {
        {"constraint_fraction", f.two_dataset},
        {"model_rows", two->model_rows.num_rows()},
        {"constraint_rows", two->constraint_rows.num_rows()},
        {"constraint_side", spec_sections(spec, result.classifier, held, threads)}};
  }
  const Termination solver_status = guaranteed ? g->solver_status : result.status;
  // A guaranteed fit moved toward a constant classifier (GuaranteeOptions::shrink) is judged by
  // its safety test alone.
  const bool ok = solver_status == Termination::kConverged ||
                  solver_status == Termination::kFeasible || (guaranteed && !g->anchor.empty());
  bool certified = true;
  if (guaranteed) {
    certified = g->passed;
    report["guarantee"] = guarantee_section(*g, constraints, guarantee, f.guarantee_for);
  }
  ProblemSpec as_given = spec;
  as_given.constraints = constraints;
  // The solver's own scores of the training rows spare the report scoring them again; only where
  // the report's training sections are the problem's rows and the classifier is as trained.
  const bool as_trained = !guaranteed && !two_dataset;
  const bool saved = finish_report(
      report, as_given, result.classifier, named, validation_path, reader, threads, start, output,
      f.report, !ok || !certified, f.output_infeasible, f.ci.level > 0 ? &f.ci : nullptr,
      as_trained ? std::span<const std::vector<double>>(result.training_scores)
                 : std::span<const std::vector<double>>());
  const int failed_code = guaranteed ? kExitNoSolution : kExitRuntime;
  if (!lead) return ok && certified ? 0 : failed_code;
  fmt::print(
      "{}: {} ({} solver, {} iterations, {:.3f} s); {} of {} candidates in the stochastic "
      "model\n",
      ok ? "done" : "warning", to_string(solver_status), to_string(result.solver),
      result.iterations, result.seconds, result.classifier.components.size(),
      result.num_candidates);
  print_spec_sections(as_given, report);
  if (guaranteed) print_guarantee(report["guarantee"]);
  if (two_dataset) {
    const nlohmann::json& t = report["two_dataset"];
    fmt::print(
        "two-dataset: models fitted on {} rows (the train sections above), constraints "
        "judged on {} held-out rows:\n",
        t["model_rows"].get<std::size_t>(), t["constraint_rows"].get<std::size_t>());
    for (const char* mode : {"stochastic", "deterministic"})
      for (const auto& c : t["constraint_side"][mode]["constraints"])
        fmt::print("  held-out, {:<14} {:<44} {:.6f} vs {:.6f}  violation {:.6f}\n", mode,
                   c["constraint"].get<std::string>(), c["lhs"].get<double>(),
                   c["rhs"].get<double>(), c["violation"].get<double>());
  }
  if (!std::isnan(result.gap))
    fmt::print(
        "certificate: no classifier the oracle can find does better than {:.6f} (Lagrangian "
        "bound); the stochastic model is within {:.6f} of it ({})\n",
        p_sign(spec) * result.lower_bound, std::max(0.0, result.gap),
        solver_status == Termination::kConverged ? "converged: gap <= --tolerance"
                                                 : "not converged: raise --iterations");
  else if (result.status == Termination::kFeasible)
    fmt::print("feasible; this solver gives no optimality certificate\n");
  if (result.deterministic.max_violation() > o.tolerance)
    fmt::print(
        "deterministic model: no single model found meets the constraints on the training data "
        "(largest violation {:.6f} > tolerance {}); predict with --mode probability or "
        "stochastic\n",
        result.deterministic.max_violation(), o.tolerance);
  if (!ok)
    fmt::print(
        "infeasible: the smallest violation reached on training data is {:.6f} "
        "(tolerance {})\n",
        result.stochastic.max_violation(), o.tolerance);
  print_model_saved(saved, output);
  return ok && certified ? 0 : failed_code;
}

// Over several ranks, the accuracy on every rank's rows (evaluate_text sums the counts).
// known: the model's scores of ds's rows where the caller has them (KnownScores).
double accuracy_of(const Classifier& model, const Dataset& ds, int threads,
                   const KnownScores* known = nullptr) {
  Predictions pred;
  pred.positive.resize(ds.num_rows());
  model.predict_positive(ds, PredictMode::kDeterministic, pred.positive, 0, threads, known);
  const NamedData named[] = {{"", &ds, &pred}};
  return evaluate_text("accuracy", named).value;
}

// 0/1 labels of output j of multi-label or multiclass labels (label j present / class j).
std::vector<std::int32_t> one_vs_rest_labels(const Labels& labels, std::size_t j) {
  std::vector<std::int32_t> y(labels.size(), 0);
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (labels.kind == LabelKind::kMulticlass) {
      y[i] = labels.values[i] == static_cast<std::int32_t>(j) ? 1 : 0;
    } else {
      for (std::int32_t l : labels.label_set(i))
        if (l == static_cast<std::int32_t>(j)) y[i] = 1;
    }
  }
  return y;
}

// A plain fit's report gains train_accuracy, and validation_accuracy when --validation has
// binary labels.
void add_accuracies(nlohmann::json& report, const Classifier& model, const Dataset& ds,
                    const std::string& validation_path, const ReaderFlags& reader, int threads,
                    const KnownScores* known = nullptr) {
  report["train_accuracy"] = accuracy_of(model, ds, threads, known);
  if (validation_path.empty()) return;
  const Dataset valid = load_data_shard(validation_path, reader, &ds.encoding()).data;
  if (valid.labels().kind == LabelKind::kBinary)
    report["validation_accuracy"] = accuracy_of(model, valid, threads);
}

// --learner gbdt without a problem: one booster on the rows (XGBoost's probabilities: the
// logistic link of its margin); returns the exit code.
int train_gbdt_cli(const DataShard& shard, const std::string& data_path,
                   const std::string& validation_path, const ReaderFlags& reader,
                   const TrainOptions& train, const std::string& output) {
  const Dataset& ds = shard.data;
  if (is_distributed())
    throw InvalidArgument(
        "over several ranks (mpirun) training fits linear models so far: --learner gbdt runs in "
        "one process (docs/scale.md)");
  if (ds.labels().kind != LabelKind::kBinary)
    throw InvalidArgument(fmt::format("--learner gbdt needs binary labels; {} has {} labels",
                                      data_path, label_kind_words(ds.labels().kind)));
  require_two_classes(ds, data_path);
  const GbdtOptions g = gbdt_options(train);
  fmt::print(stderr, "training boosted trees on {} ({} rows, {} features, {} rounds of depth {})\n",
             data_path, shard.total_rows, ds.num_features(), g.rounds, g.max_depth);
  const auto start = std::chrono::steady_clock::now();
  GbdtFit fit = fit_gbdt_with_margins(ds.features(), ds.labels().values, ds.weights(), g);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The training accuracy from the fit's own margins (XGBoost's training cache, the bits
  // TreeEnsemble::scores gives): no scoring pass over the rows.
  const KnownScores known{&ds.features(), {fit.margins}};
  Classifier model = Classifier::single(std::move(fit.model), Link::kLogistic, ds.encoding());
  model.kind = "gbdt";
  nlohmann::json opts = nlohmann::json::parse(train_options_json(train, TrainOptionsJson::kModel));
  model.options_json = opts.dump();
  nlohmann::json report{{"status", "converged"},
                        {"rounds", g.rounds},
                        {"train_seconds", seconds},
                        {"train_rows", shard.total_rows}};
  add_accuracies(report, model, ds, validation_path, reader, train.n_threads, &known);
  model.report_json = report.dump();
  model.save(output);
  fmt::print("done: {} boosting rounds in {:.3f} s; train accuracy {:.4f}", g.rounds, seconds,
             report["train_accuracy"].get<double>());
  if (report.contains("validation_accuracy"))
    fmt::print("; validation accuracy {:.4f}", report["validation_accuracy"].get<double>());
  fmt::print("\nmodel written to {}\n", output);
  return 0;
}

// --one-vs-rest: one binary model per label or class (logistic regression, or boosted trees with
// --learner gbdt); returns the exit code.
int train_one_vs_rest(const Dataset& ds, const std::string& data_path,
                      const LogisticRegressionOptions& options, const TrainOptions& train,
                      const std::string& output) {
  const Labels& labels = ds.labels();
  if (labels.kind != LabelKind::kMultilabel && labels.kind != LabelKind::kMulticlass)
    throw InvalidArgument(
        fmt::format("--one-vs-rest needs multi-label or multiclass labels; {} has {} labels",
                    data_path, to_string(labels.kind)));
  const bool trees = train.learner == Learner::kGbdt;
  const GbdtOptions g = trees ? gbdt_options(train) : GbdtOptions{};
  const std::size_t n_out = labels.num_outputs();
  if (trees)
    fmt::print(stderr,
               "training {} one-vs-rest boosted tree models on {} ({} rows, {} features, {} "
               "rounds of depth {})\n",
               n_out, data_path, ds.num_rows(), ds.num_features(), g.rounds, g.max_depth);
  else
    fmt::print(stderr,
               "training {} one-vs-rest logistic regressions on {} ({} rows, {} features, C={})\n",
               n_out, data_path, ds.num_rows(), ds.num_features(), options.c);
  OneVsRest model;
  model.label_kind = labels.kind;
  model.names = labels.names;
  model.encoding = ds.encoding();
  bool all_converged = true;
  double seconds = 0;
  for (std::size_t j = 0; j < n_out; ++j) {
    const std::vector<std::int32_t> y = one_vs_rest_labels(labels, j);
    const auto start = std::chrono::steady_clock::now();
    Classifier c;
    nlohmann::json report;
    if (trees) {
      c = Classifier::single(fit_gbdt(ds.features(), y, ds.weights(), g), Link::kLogistic,
                             ds.encoding());
      c.kind = "gbdt";
      c.options_json = train_options_json(train, TrainOptionsJson::kModel);
      report = {{"status", "converged"}, {"rounds", g.rounds}};
    } else {
      const auto fit = fit_logistic_regression(ds.features(), y, ds.weights(), options);
      all_converged = all_converged && fit.status == Termination::kConverged;
      c = logistic_regression_model(fit.model, options, ds.encoding());
      report = {{"status", std::string(to_string(fit.status))},
                {"iterations", fit.iterations},
                {"objective", fit.objective}};
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds += s;
    c.report_json = report.dump();  // no timings: the same data give the same file
    fmt::print(stderr, "  [{}/{}] {}: {}{} ({:.2f} s)\n", j + 1, n_out, labels.names[j],
               report["status"].get<std::string>(),
               trees ? "" : fmt::format(" after {} iterations", report["iterations"].get<int>()),
               s);
    model.outputs.push_back(std::move(c));
  }
  model.save(output);
  fmt::print("{}: {} one-vs-rest models in {:.3f} s; model written to {}\n",
             all_converged ? "done" : "warning", n_out, seconds, output);
  return all_converged ? 0 : kExitRuntime;
}

}  // namespace

int run_train(int argc, const char* const* argv) {
  CLI::App app{
      "Fit a classifier and save it as JSON: L2-regularised logistic regression by default, or\n"
      "a rate-constrained (stochastic) classifier with --minimize/--maximize/--constraint.\n"
      "Example: rateopt train --data data/adult/adult-train.csv.gz --label income "
      "--positive '>50K' --groups sex,race --output adult.json\n"
      "         rateopt train ... --minimize error "
      "--constraint 'ppr[sex=Female] >= 0.8 * ppr[sex=Male]' --output fair.json",
      "rateopt train"};
  ProblemFlags problem;
  std::string data_path, validation_path, output;
  LogisticRegressionOptions options;
  bool one_vs_rest = false;
  ReaderFlags reader;
  app.add_option("--data", data_path, "Training data (CSV, LIBSVM, ARFF; .gz accepted)")
      ->required();
  app.add_option("--validation", validation_path,
                 "Optional validation file (or pattern of files, as --data), read with the "
                 "training encoding");
  app.add_option("--output,-o", output, "Where to write the model JSON")->required();
  app.add_option("--tol", options.tol,
                 "Logistic regression: relative gradient tolerance, LIBLINEAR's rule (> 0; "
                 "docs/models.md)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-iter", options.max_iter,
                 "Logistic regression: Newton (trust-region) iteration limit")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--one-vs-rest", one_vs_rest,
               "Multi-label or multiclass data: one logistic regression per label or class, or "
               "boosted trees with --learner gbdt (predict --mode probability then prints one "
               "row of probabilities per example)");
  const char* const pg = "Rate-constrained training";
  app.add_option("--minimize", problem.minimize, "Objective expression to minimise (e.g. error)")
      ->group(pg);
  app.add_option("--maximize", problem.maximize, "Objective expression to maximise (e.g. f1)")
      ->group(pg);
  app.add_option("--constraint", problem.constraints,
                 "Constraint 'EXPR <= EXPR' (also >=, ==; max(...) <= c for worst groups); "
                 "repeatable")
      ->group(pg);
  app.add_option("--problem", problem.problem_file,
                 "Problem file (TOML, or JSON by extension) with minimize/maximize/objective, "
                 "constraints, lambda, mm_steps and any training option by its key (model_step, "
                 "l2, ...; `rateopt options` lists them); flags given on the command line win")
      ->group(pg);
  app.add_option("--dataset", problem.datasets,
                 "Extra named dataset NAME=FILE (read with the training encoding), referenced "
                 "as rate@NAME; the training data is @train")
      ->group(pg);
  add_train_option_flags(app, problem, pg);
  add_postprocess_flags(app, problem.postprocess, pg);
  app.add_option("--lambda", problem.lambda, "--solver ramp: L2 regularisation (> 0)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->group(pg);
  app.add_option("--mm-steps", problem.mm_steps,
                 "--solver ramp: majorisation-minimisation steps at most")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->group(pg);
  app.add_option("--report", problem.report, "Also write the training report as JSON here")
      ->group(pg);
  app.add_flag("--quiet", problem.quiet, "No progress on stderr")->group(pg);
  app.add_option("--confidence", problem.confidence,
                 "Guaranteed mode (docs/guarantees.md): train on a candidate part of the rows "
                 "with tightened constraints, then certify on the held-out safety part that every "
                 "constraint holds on the population with this probability (1 - delta, e.g. "
                 "0.95); when the safety test fails, exit 3 and write no model")
      ->check(CLI::Range(0.0, 1.0).description("1 - delta in (0, 1)"))
      ->group(pg);
  app.add_option("--safety-fraction", problem.guarantee.safety_fraction,
                 "--confidence: share of the rows held out for the safety test")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0).description("a share in (0, 1)"))
      ->group(pg);
  app.add_option("--width-factor", problem.guarantee.width_factor,
                 "--confidence: tighten each constraint on the candidate part by this many "
                 "predicted safety-test widths (docs/guarantees.md); larger: the fit itself "
                 "passes more often, at more error")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0).description("a factor >= 0"))
      ->group(pg);
  app.add_flag("!--no-move", problem.guarantee.shrink,
               "--confidence: keep the fit as trained (certified or not) instead of moving it "
               "toward the all-negative or all-positive classifier as far as the safety test "
               "allows")
      ->group(pg);
  app.add_option("--two-dataset", problem.two_dataset,
                 "Cotter et al.'s two-dataset scheme (docs/guarantees.md): this share of the "
                 "rows (e.g. 0.33) is held out for the constraint side (the LP's constraints and "
                 "the final mixture), the rest fits the models; the constraints are then met on "
                 "rows no model was fitted to")
      ->check(CLI::Range(0.0, 1.0).description("a share in (0, 1)"))
      ->group(pg);
  app.add_option("--guarantee-for", problem.guarantee_for,
                 "--confidence: the output the safety test certifies: deterministic (the best "
                 "single model) or stochastic (the mixture's expected rates: each component's "
                 "exact binomial bounds, weighted)")
      ->capture_default_str()
      ->check(CLI::IsMember({"deterministic", "stochastic"}))
      ->group(pg);
  auto* ci_opt = app.add_option("--ci", problem.ci.level,
                                "Confidence intervals at this level (e.g. 0.9) in the report's "
                                "sections: for --validation data, and for the training rows "
                                "(marked in-sample: the model was fitted on them, so they are "
                                "optimistic); see rateopt eval --ci")
                     ->check(CLI::Range(0.0, 1.0).description("a level in (0, 1)"))
                     ->group(pg);
  app.add_option("--ci-resamples", problem.ci.resamples, "Bootstrap resamples of --ci")
      ->capture_default_str()
      ->needs(ci_opt)
      ->group(pg);
  app.add_option("--ci-seed", problem.ci.seed, "Seed of the --ci bootstrap")
      ->capture_default_str()
      ->needs(ci_opt)
      ->group(pg);
  app.add_flag("--output-infeasible", problem.output_infeasible,
               "Write the model even when training ends infeasible (exit 1); by default an "
               "infeasible run leaves --output as it was")
      ->group(pg);
  MultilabelTrainFlags multilabel;
  add_multilabel_train_flags(app, multilabel);
  add_reader_flags(app, reader);
  add_part_bytes_flag(app, reader);
  add_scores_flag(app, reader, "Reading data");
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  collect_given_flags(app, problem);
  resolve_train_options(problem);
  if (!reader.scores_file.empty() && problem.solver != "postprocess")
    throw InvalidArgument(
        "--scores gives the score to post-process: it goes with --solver postprocess (and a "
        "--minimize/--maximize/--constraint problem)");
  options.c = problem.train.c;
  options.n_threads = problem.train.n_threads;
  options.fit_intercept = problem.train.fit_intercept;

  // --data may be a glob pattern; under mpirun each rank reads its share and the logistic
  // regression's sums run over every rank's rows (docs/scale.md).
  const bool distributed = is_distributed();
  if (distributed && (!multilabel.model.empty() || one_vs_rest))
    throw InvalidArgument(
        "over several ranks (mpirun) train fits logistic regression or a rate-constrained model "
        "by the cutting-plane solver so far: leave out --multilabel-model and --one-vs-rest");
  // Only the slice columns the expressions name are kept (multi-label and one-vs-rest models and
  // the post-processing solver, whose groups may come from its base model, keep every column).
  if (multilabel.model.empty() && !one_vs_rest && problem.solver != "postprocess") {
    std::vector<std::string> texts = problem.constraints;
    if (!problem.minimize.empty()) texts.push_back(problem.minimize);
    if (!problem.maximize.empty()) texts.push_back(problem.maximize);
    keep_slice_columns(reader, texts);
  }
  reader.threads = problem.train.n_threads;
  const DataShard shard = load_data_shard(data_path, reader);
  const Dataset& ds = shard.data;
  const bool lead = process_group().rank() == 0;  // prints and writes for the group
  if (!multilabel.model.empty()) {
    if (one_vs_rest || problem.active())
      throw InvalidArgument(
          "--multilabel-model trains its own base models: leave out --one-vs-rest and the "
          "rate-constrained flags");
    return train_multilabel_cli(ds, data_path, multilabel, options.c, options.tol, options.max_iter,
                                options.n_threads, output);
  }
  if (multilabel.tune_c || !multilabel.c_grid.empty())
    throw InvalidArgument("--tune-c and --c-grid apply to --multilabel-model");
  if (one_vs_rest) return train_one_vs_rest(ds, data_path, options, problem.train, output);
  if (problem.active())
    return train_rate_constrained_cli(shard, data_path, validation_path, reader, problem,
                                      options.n_threads, output);
  if (problem.train.learner == Learner::kGbdt)
    return train_gbdt_cli(shard, data_path, validation_path, reader, problem.train, output);
  if (ds.labels().kind != LabelKind::kBinary)
    throw InvalidArgument(
        fmt::format("train needs binary labels; {} has {} labels{}", data_path,
                    label_kind_words(ds.labels().kind),
                    ds.labels().kind == LabelKind::kNone ? " (name the label column with --label)"
                    : ds.labels().kind == LabelKind::kMulticlass ? " (use --one-vs-rest)"
                    : ds.labels().kind == LabelKind::kMultilabel ? " (use --one-vs-rest)"
                                                                 : ""));
  require_two_classes(ds, data_path);
  if (lead)
    fmt::print(stderr, "training logistic regression on {} ({} rows, {} features, C={}{})\n",
               data_path, shard.total_rows, ds.num_features(), options.c,
               distributed ? fmt::format(", {} ranks", process_group().size()) : "");
  const auto start = std::chrono::steady_clock::now();
  // Sums never cross a file boundary: the same files give the same model over any rank count.
  options.row_parts = shard.file_rows;
  const auto fit =
      fit_logistic_regression(ds.features(), ds.labels().values, ds.weights(), options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  Classifier model = logistic_regression_model(fit.model, options, ds.encoding());
  nlohmann::json report{{"status", std::string(to_string(fit.status))},
                        {"iterations", fit.iterations},
                        {"objective", fit.objective},
                        {"gradient_norm", fit.gradient_norm},
                        {"train_rows", shard.total_rows}};
  add_accuracies(report, model, ds, validation_path, reader, options.n_threads);
  model.report_json = report.dump();
  if (!lead) return fit.status == Termination::kConverged ? 0 : kExitRuntime;
  model.save(output);

  fmt::print("{}: {} after {} iterations in {:.3f} s; objective {:.6g}; train accuracy {:.4f}",
             fit.status == Termination::kConverged ? "done" : "warning", to_string(fit.status),
             fit.iterations, seconds, fit.objective, report["train_accuracy"].get<double>());
  if (report.contains("validation_accuracy"))
    fmt::print("; validation accuracy {:.4f}", report["validation_accuracy"].get<double>());
  fmt::print("\nmodel written to {}\n", output);
  return fit.status == Termination::kConverged ? 0 : kExitRuntime;
}

}  // namespace rateopt::cli
