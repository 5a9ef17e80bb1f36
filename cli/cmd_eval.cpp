// rateopt eval: exact rates, metrics and constraints of predictions (or a model) on a data file.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"
#include "rateopt/intervals.hpp"
#include "rateopt/model.hpp"

namespace rateopt::cli {
namespace {

void check_count(const std::string& path, std::size_t found, const Dataset& ds) {
  if (found != ds.num_rows())
    throw InvalidArgument(fmt::format(
        "prediction file {} has {} lines, expected one per row of {} ({} rows after reading; "
        "rows dropped for missing values do not count)",
        path, found, ds.source(), ds.num_rows()));
}

// Binary / unlabelled: one probability of predicting positive (0/1 for hard predictions).
Predictions read_binary_predictions(const std::string& path, const Dataset& ds) {
  Predictions p;
  p.prob_positive = read_number_column(path);
  check_count(path, p.prob_positive.size(), ds);
  for (std::size_t i = 0; i < p.prob_positive.size(); ++i) {
    const double v = p.prob_positive[i];
    if (v < 0.0 || v > 1.0)
      throw ParseError(path, i + 1, 0,
                       fmt::format("expected 0/1 or a probability in [0, 1], found {}", v));
  }
  return p;
}

// Multilabel: label indices per line (0-based, separated by spaces or commas; empty = no label).
Predictions read_label_sets(const std::string& path, const Dataset& ds) {
  const std::string text = read_text_file(path);
  auto lines = split_lines(text);
  Predictions p;
  p.set_indptr.push_back(0);
  const auto num_labels = static_cast<std::int64_t>(ds.labels().num_outputs());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::vector<std::int32_t> set;
    for (auto field : split_fields(lines[i])) {
      std::int64_t v = -1;
      auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
      if (ec != std::errc() || ptr != field.data() + field.size() || v < 0 || v >= num_labels)
        throw ParseError(
            path, i + 1, 0,
            fmt::format("expected a label index in [0, {}), found '{}'", num_labels, field));
      set.push_back(static_cast<std::int32_t>(v));
    }
    std::sort(set.begin(), set.end());
    if (std::adjacent_find(set.begin(), set.end()) != set.end())
      throw ParseError(path, i + 1, 0, "a label index appears twice");
    p.set_indices.insert(p.set_indices.end(), set.begin(), set.end());
    p.set_indptr.push_back(static_cast<std::int64_t>(p.set_indices.size()));
  }
  check_count(path, lines.size(), ds);
  return p;
}

// Multiclass: a class index or a class name per line.
Predictions read_classes(const std::string& path, const Dataset& ds) {
  const std::string text = read_text_file(path);
  auto lines = split_lines(text);
  const auto& names = ds.labels().names;
  Predictions p;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto fields = split_fields(lines[i]);
    if (fields.size() != 1)
      throw ParseError(path, i + 1, 0,
                       fmt::format("expected one class per line, found {} fields", fields.size()));
    const auto name_it = std::find(names.begin(), names.end(), fields[0]);
    if (name_it != names.end()) {
      p.classes.push_back(static_cast<std::int32_t>(name_it - names.begin()));
      continue;
    }
    std::int64_t v = -1;
    auto [ptr, ec] = std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), v);
    if (ec != std::errc() || ptr != fields[0].data() + fields[0].size() || v < 0 ||
        v >= static_cast<std::int64_t>(names.size()))
      throw ParseError(path, i + 1, 0,
                       fmt::format("expected a class name or an index in [0, {}), found '{}'",
                                   names.size(), fields[0]));
    p.classes.push_back(static_cast<std::int32_t>(v));
  }
  check_count(path, lines.size(), ds);
  return p;
}

// Binary predictions of this rank's rows when --data names several files or runs over several
// ranks: one prediction file per data file (the same count, paired in name order) or one file
// for all the rows (this rank takes its lines).
Predictions read_sharded_predictions(const std::string& pattern,
                                     const std::vector<std::string>& files, const DataShard& shard,
                                     const Dataset& ds) {
  Predictions p;
  auto checked = [&](const std::string& path, std::vector<double> values) {
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!(values[i] >= 0.0 && values[i] <= 1.0))
        throw ParseError(
            path, i + 1, 0,
            fmt::format("expected 0/1 or a probability in [0, 1], found {}", values[i]));
    return values;
  };
  if (files.size() == 1) {
    const std::vector<double> all = checked(files[0], read_number_column(files[0]));
    if (all.size() != shard.total_rows)
      throw InvalidArgument(fmt::format(
          "prediction file {} has {} lines, expected one per row of --data '{}' ({} rows in {} "
          "files)",
          files[0], all.size(), ds.source(), shard.total_rows, shard.total_files));
    p.prob_positive.assign(
        all.begin() + static_cast<std::ptrdiff_t>(shard.rows_before),
        all.begin() + static_cast<std::ptrdiff_t>(shard.rows_before + ds.num_rows()));
    return p;
  }
  if (files.size() != shard.total_files)
    throw InvalidArgument(fmt::format(
        "--pred '{}' names {} files but --data '{}' names {}: give one prediction file per data "
        "file (paired in name order) or one file for all the rows",
        pattern, files.size(), ds.source(), shard.total_files));
  const std::size_t first = shard.first_file;  // this rank's run of data files
  for (std::size_t k = 0; k < shard.files.size(); ++k) {
    const std::string& path = files[first + k];
    std::vector<double> values = checked(path, read_number_column(path));
    if (values.size() != shard.file_rows[k])
      throw InvalidArgument(fmt::format(
          "prediction file {} has {} lines, expected one per row of its data file {} ({} rows "
          "after reading)",
          path, values.size(), shard.files[k], shard.file_rows[k]));
    p.prob_positive.insert(p.prob_positive.end(), values.begin(), values.end());
  }
  return p;
}

nlohmann::json number(double v) {
  // JSON has no infinities or NaN: they become strings.
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

int run_eval(int argc, const char* const* argv) {
  CLI::App app{
      "Exact rates, metrics and constraints of predictions or a model on a data file.\n"
      "Example: rateopt eval --data test.csv --label income --positive '>50K' "
      "--model m.json --metric error --metric 'tpr[sex=Female] - tpr[sex=Male]'",
      "rateopt eval"};
  std::string data_path, pred_path, model_path, mode = "deterministic";
  std::vector<std::string> metrics;
  bool as_json = false;
  std::uint64_t seed = 0;
  double ci_level = 0;
  IntervalOptions ci;
  int threads = 0;
  ReaderFlags reader;
  app.add_option("--data", data_path, "Data file (CSV, LIBSVM, ARFF; .gz accepted)")->required();
  auto* pred_opt =
      app.add_option("--pred", pred_path,
                     "Predictions, one line per row: 0/1 or a probability (binary), label indices "
                     "(multilabel), or a class (multiclass)");
  auto* model_opt = app.add_option("--model", model_path, "A model saved by rateopt train");
  pred_opt->excludes(model_opt);
  app.add_option("--metric", metrics,
                 "Metric expression, e.g. f1, 'tpr[sex=Female] - tpr[sex=Male]', "
                 "'ppr[sex=Female] >= 0.8 * ppr[sex=Male]' (repeatable)")
      ->required();
  app.add_option("--mode", mode,
                 "With --model: deterministic (best model, 0/1), probability (expected rates of "
                 "the stochastic classifier) or stochastic (seeded 0/1 draws)")
      ->check(CLI::IsMember({"deterministic", "probability", "stochastic"}));
  app.add_option("--seed", seed, "Seed of --mode stochastic");
  app.add_option("--threads", threads, "Threads (0 = all cores)");
  app.add_flag("--json", as_json, "Print JSON instead of a table");
  auto* ci_opt =
      app.add_option("--ci", ci_level,
                     "Confidence intervals at this level (e.g. 0.9) for the population "
                     "value of each metric and constraint: exact Clopper-Pearson for a "
                     "single proportion of hard predictions, else a stratified bootstrap "
                     "band simultaneous over those values (docs/guarantees.md)")
          ->check(CLI::Range(0.0, 1.0).description("a level in (0, 1)"));
  app.add_option("--ci-resamples", ci.resamples,
                 "Bootstrap resamples of --ci (at least 10 / (1 - level))")
      ->capture_default_str()
      ->needs(ci_opt);
  app.add_option("--ci-seed", ci.seed, "Seed of the --ci bootstrap")
      ->capture_default_str()
      ->needs(ci_opt);
  add_reader_flags(app, reader);
  add_part_bytes_flag(app, reader);
  add_scores_flag(app, reader, "Reading data");
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  const bool with_ci = ci_opt->count() > 0;
  if (with_ci) {
    ci.level = ci_level;
    ci.n_threads = threads;
  }
  if (pred_path.empty() && model_path.empty()) {
    fmt::print(stderr, "error: give --pred FILE or --model FILE\n");
    return kExitUsage;
  }

  // Parse every expression first so that a typo fails before any file is read (group shorthands
  // over two stand-in values: their real values come with the data).
  const ColumnLevels stand_in = [](std::string_view, std::string_view) {
    return std::vector<std::string>{"a", "b"};
  };
  bool ranking = false;  // a ranking metric reads the model's scores (else they are not kept)
  for (const auto& m : metrics) {
    const Expression parsed = Expression::parse(expand_group_shorthands(m, stand_in));
    for (const RateRef& r : parsed.rates()) ranking = ranking || is_ranking_metric(r.metric);
  }

  // --data may name several files (a glob pattern); under mpirun each rank reads its share and
  // the counts behind every metric are summed over ranks (docs/scale.md).
  const bool distributed = is_distributed();
  if (distributed && mode == "stochastic")
    throw InvalidArgument(
        "--mode stochastic draws are keyed by the row's place in this process's data, so they "
        "would change with the rank count; over several ranks use deterministic or probability");
  reader.threads = threads;
  Predictions pred;
  Dataset ds;
  std::size_t total_rows = 0;
  if (!model_path.empty()) {
    const Classifier model = Classifier::load(model_path);
    const PredictMode predict_mode = parse_predict_mode(mode);
    if (process_group().rank() == 0)
      warn_if_deterministic_infeasible(model, predict_mode, model_path);
    keep_slice_columns(reader, metrics, model.group_columns);
    DataShard shard = load_data_shard(data_path, reader, &model.encoding);
    ds = std::move(shard.data);
    total_rows = shard.total_rows;
    if (ds.labels().kind == LabelKind::kMultilabel || ds.labels().kind == LabelKind::kMulticlass)
      throw InvalidArgument(fmt::format("--model needs binary or unlabelled data; {} has {} labels",
                                        data_path, to_string(ds.labels().kind)));
    if (predict_mode != PredictMode::kProbability) {
      // 0/1 predictions at 1 byte a row (the same rates as 0.0 / 1.0 doubles).
      pred.positive.resize(ds.num_rows());
      model.predict_positive(ds, predict_mode, pred.positive, seed, threads);
    } else {
      pred.prob_positive.resize(ds.num_rows());
      model.predict(ds, predict_mode, pred.prob_positive, seed, threads);
    }
    if (ranking) {
      pred.scores.resize(ds.num_rows());
      model.decision_function(ds, pred.scores, threads);
    }
  } else {
    keep_slice_columns(reader, metrics);
    DataShard shard = load_data_shard(data_path, reader);
    ds = std::move(shard.data);
    total_rows = shard.total_rows;
    const std::vector<std::string> pred_files = expand_data_pattern(pred_path);
    const LabelKind kind = ds.labels().kind;
    if (distributed && (kind == LabelKind::kMultilabel || kind == LabelKind::kMulticlass))
      throw InvalidArgument(fmt::format(
          "{} has {} labels: over several ranks (mpirun) eval takes binary or unlabelled data; "
          "run it with one process",
          data_path, to_string(kind)));
    if (pred_files.size() == 1 && !distributed) {
      switch (kind) {
        case LabelKind::kMultilabel:
          pred = read_label_sets(pred_files[0], ds);
          break;
        case LabelKind::kMulticlass:
          pred = read_classes(pred_files[0], ds);
          break;
        default:
          pred = read_binary_predictions(pred_files[0], ds);
          break;
      }
    } else {
      pred = read_sharded_predictions(pred_path, pred_files, shard, ds);
    }
  }

  const NamedData named[] = {{"", &ds, &pred}};
  std::vector<ExpressionValue> values;
  values.reserve(metrics.size());
  for (const std::string& m : metrics) values.push_back(evaluate_text(m, named));
  std::vector<ValueInterval> intervals;
  if (with_ci) intervals = expression_intervals(metrics, named, ci);

  if (process_group().rank() != 0) return 0;  // rank 0 prints for the group
  if (as_json) {
    nlohmann::json out;
    out["data"] = data_path;
    out["rows"] = total_rows;
    if (!model_path.empty()) {
      out["model"] = model_path;
      out["mode"] = mode;
    } else {
      out["pred"] = pred_path;
    }
    if (with_ci) {
      out["ci"] = {{"level", ci.level}, {"resamples", ci.resamples}, {"seed", ci.seed}};
    }
    auto& arr = out["metrics"] = nlohmann::json::array();
    for (std::size_t k = 0; k < values.size(); ++k) {
      const ExpressionValue& v = values[k];
      nlohmann::json row;
      row["expression"] = v.text;
      row["value"] = number(v.value);
      if (v.is_constraint) {
        row["relation"] = std::string(to_string(v.relation));
        row["rhs"] = number(v.rhs);
        row["violation"] = number(v.violation);
        row["satisfied"] = v.satisfied;
      }
      if (with_ci) {
        // Of the value, or of a constraint's violation.
        row["ci_low"] = number(intervals[k].range.low);
        row["ci_high"] = number(intervals[k].range.high);
        row["ci_method"] = std::string(to_string(intervals[k].method));
      }
      arr.push_back(std::move(row));
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  std::size_t width = 6;
  for (const auto& v : values) width = std::max(width, v.text.size());
  fmt::print("{:<{}}  {}\n", "metric", width, "value");
  for (std::size_t k = 0; k < values.size(); ++k) {
    const ExpressionValue& v = values[k];
    std::string line;
    if (!v.is_constraint) {
      line = fmt::format("{:<{}}  {:.6f}", v.text, width, v.value);
    } else {
      line = fmt::format(
          "{:<{}}  {:.6f} {} {:.6f}  {}", v.text, width, v.value, to_string(v.relation), v.rhs,
          v.satisfied ? std::string("satisfied") : fmt::format("violated by {:.6f}", v.violation));
    }
    if (with_ci) {
      const ValueInterval& iv = intervals[k];
      line +=
          iv.method == IntervalMethod::kNone
              ? "  (no interval)"
              : fmt::format("  {}{:.0f}% [{:.6f}, {:.6f}] {}", v.is_constraint ? "violation " : "",
                            100 * ci.level, iv.range.low, iv.range.high, to_string(iv.method));
    }
    fmt::print("{}\n", line);
  }
  if (with_ci)
    fmt::print(
        "intervals: population values at {:g}% (clopper-pearson: exact, each alone; "
        "bootstrap: {} stratified resamples, seed {}, simultaneous over the bootstrap "
        "rows)\n",
        100 * ci.level, ci.resamples, ci.seed);
  return 0;
}

}  // namespace rateopt::cli
