#include "common.hpp"

#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>

#include "rateopt/distributed.hpp"
#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"

namespace rateopt::cli {

void add_reader_flags(CLI::App& app, ReaderFlags& f) {
  const std::string group = "Reading data";
  app.add_option("--format", f.format, "File format: auto (from the extension), csv, libsvm, arff")
      ->check(CLI::IsMember({"auto", "csv", "libsvm", "arff"}))
      ->group(group);
  app.add_option("--label", f.label, "CSV: name of the label column")->group(group);
  app.add_option("--positive", f.positive,
                 "CSV: label value(s) meaning positive (comma-separated or repeated)")
      ->delimiter(',')
      ->group(group);
  app.add_option("--groups", f.groups,
                 "CSV: columns kept out of the features but available for slicing")
      ->delimiter(',')
      ->group(group);
  app.add_option("--ignore", f.ignore, "CSV: columns to drop entirely")
      ->delimiter(',')
      ->group(group);
  app.add_option("--categorical", f.categorical, "CSV: columns to one-hot encode even if numeric")
      ->delimiter(',')
      ->group(group);
  app.add_option("--weight-column", f.weight_column, "CSV: column of per-example weights")
      ->group(group);
  app.add_option("--columns", f.columns, "CSV: column names for a file without a header")
      ->delimiter(',')
      ->group(group);
  app.add_flag("--no-header", f.no_header, "CSV: the file has no header row (needs --columns)")
      ->group(group);
  app.add_option("--skip-lines", f.skip_lines, "CSV: leading lines to skip")->group(group);
  app.add_option("--comment", f.comment, "CSV: skip lines starting with this prefix")->group(group);
  app.add_option("--missing", f.missing,
                 "Missing values ('?', empty, NA): drop (the row), impute (numeric: the training "
                 "mean, categorical: no level; 'zero' is a synonym) or error")
      ->check(CLI::IsMember({"drop", "impute", "zero", "error"}))
      ->capture_default_str()
      ->group(group);
  app.add_option("--unseen", f.unseen,
                 "CSV with a model's encoding (predict, eval --model, convert --model): a "
                 "categorical value training never saw encodes as all-zero (zero, with a note) or "
                 "is an error naming the file and line (error)")
      ->check(CLI::IsMember({"zero", "error"}))
      ->capture_default_str()
      ->group(group);
  app.add_flag("--no-standardize", f.no_standardize, "CSV: keep numeric features unscaled")
      ->group(group);
  app.add_option("--n-features", f.n_features,
                 "LIBSVM: number of features (when the file lacks the last index)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{2147483647})
                  .description("a count from 0 to 2147483647"))
      ->group(group);
  app.add_flag("--multilabel", f.multilabel, "LIBSVM: parse labels as comma-separated label sets")
      ->group(group);
  app.add_option("--xml", f.xml, "ARFF: MULAN XML file naming the label attributes")->group(group);
  app.add_option("--num-labels", f.num_labels, "ARFF: the last N attributes are the labels")
      ->group(group);
  app.add_option("--baseline", f.baseline_file,
                 "File of a deployed model's 0/1 predictions, one per row (for churn slices)")
      ->group(group);
  app.add_option("--baseline-column", f.baseline_column,
                 "CSV: column holding a deployed model's 0/1 predictions")
      ->group(group);
}

void add_part_bytes_flag(CLI::App& app, ReaderFlags& flags) {
  app.add_option("--part-bytes", flags.part_bytes,
                 "CSV and LIBSVM: read each --data file in parts of this many bytes (a record "
                 "belongs to the part it starts in): how MPI ranks share fewer files than there "
                 "are ranks (then 16 MiB by default; otherwise 0: whole files). One process "
                 "given the same value gives the same model and values, bit for bit, as any "
                 "number of ranks (docs/scale.md)")
      ->group("Reading data");
}

void add_scores_flag(CLI::App& app, ReaderFlags& flags, const std::string& group) {
  app.add_option("--scores", flags.scores_file,
                 "File of one score (or probability) per row of --data, from any model: the "
                 "score train --solver postprocess post-processes, and predict / eval of the "
                 "model it writes read (rows dropped for missing values have no score: use "
                 "--missing impute)")
      ->group(group);
}

Encoding scores_encoding(const Encoding& data) {
  Encoding e;
  e.format = "scores";
  e.num_features = 1;
  e.feature_names = {"score"};
  e.label_column = data.label_column;
  e.positive_value = data.positive_value;
  e.missing_policy = data.missing_policy;
  return e;
}

void attach_scores(Dataset& ds, const std::string& scores_file, const std::string& data_path,
                   const Encoding& encoding) {
  std::vector<double> values = read_number_column(scores_file);
  if (values.size() != ds.num_rows())
    throw InvalidArgument(fmt::format(
        "--scores {} has {} values, expected one per row of {} ({}; rows dropped for missing "
        "values do not count: --missing impute keeps them)",
        scores_file, values.size(), data_path, ds.num_rows()));
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw ParseError(scores_file, i + 1, 0,
                       fmt::format("expected a finite score, found {}", values[i]));
  const std::size_t n = values.size();
  ds.features() = FeatureMatrix::dense(std::move(values), n, 1);
  ds.encoding() = encoding;
}

void keep_slice_columns(ReaderFlags& flags, const std::vector<std::string>& texts,
                        const std::vector<std::string>& extra) {
  std::vector<std::string> keep = extra;
  keep.emplace_back("baseline");
  if (!flags.baseline_column.empty()) keep.push_back(flags.baseline_column);
  for (const std::string& text : texts) {
    try {
      for (std::string& c : slice_columns(text)) keep.push_back(std::move(c));
    } catch (const Error&) {
      flags.keep_columns.reset();
      return;
    }
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  flags.keep_columns = std::move(keep);
}

ReadOptions to_read_options(const ReaderFlags& f) {
  if (f.no_header && f.columns.empty())
    throw InvalidArgument(
        "--no-header needs --columns (the names of the file's columns, in order)");
  ReadOptions o;
  if (f.format == "csv") o.format = FileFormat::kCsv;
  if (f.format == "libsvm") o.format = FileFormat::kLibsvm;
  if (f.format == "arff") o.format = FileFormat::kArff;
  o.keep_columns = f.keep_columns;
  o.part_range = f.read_part;
  o.csv.n_threads = f.threads;
  o.csv.label_column = f.label;
  o.csv.positive_values = f.positive;
  o.csv.group_columns = f.groups;
  if (!f.baseline_column.empty()) o.csv.group_columns.push_back(f.baseline_column);
  o.csv.ignore_columns = f.ignore;
  o.csv.categorical_columns = f.categorical;
  o.csv.weight_column = f.weight_column;
  o.csv.column_names = f.columns;
  o.csv.has_header = !f.no_header;
  o.csv.skip_lines = f.skip_lines;
  o.csv.comment_prefix = f.comment;
  o.csv.missing = f.missing == "zero" || f.missing == "impute" ? MissingPolicy::kZero
                  : f.missing == "error"                       ? MissingPolicy::kError
                                                               : MissingPolicy::kDrop;
  o.csv.standardize = !f.no_standardize;
  o.csv.unseen_error = f.unseen == "error";
  o.libsvm.num_features = f.n_features;
  o.libsvm.multilabel = f.multilabel;
  o.arff.xml_path = f.xml;
  o.arff.num_labels = f.num_labels;
  return o;
}

std::string label_kind_words(LabelKind kind) {
  return kind == LabelKind::kNone ? std::string("no") : std::string(to_string(kind));
}

namespace {
// Why `ds` cannot train a classifier (no rows, zero total weight, one class), or nullopt.
std::optional<std::string> one_class_problem(const Dataset& ds, const std::string& path) {
  const auto& y = ds.labels().values;
  const auto w = ds.weights();
  // Over several ranks: the rows and weights of every rank (a collective, as training is).
  std::array<double, 3> weight{0, 0, static_cast<double>(y.size())};
  for (std::size_t i = 0; i < y.size(); ++i) weight[y[i] == 1 ? 1 : 0] += w.empty() ? 1.0 : w[i];
  sum_over_ranks(weight);
  if (weight[2] == 0) return fmt::format("{}: the file has no data rows", path);
  if (weight[0] + weight[1] <= 0)
    return fmt::format(
        "{}: the training rows have a total weight of 0: there is nothing to train on", path);
  for (int c = 0; c < 2; ++c) {
    if (weight[c] > 0) continue;
    return fmt::format(
        "{}: every training example with a positive weight has label {} ('{}'): a classifier "
        "needs both classes (check --label and --positive; matching is exact and case-sensitive)",
        path, 1 - c, ds.labels().names.size() == 2 ? ds.labels().names[1 - c] : "");
  }
  return std::nullopt;
}
}  // namespace

void require_two_classes(const Dataset& ds, const std::string& path) {
  if (auto problem = one_class_problem(ds, path)) throw InvalidArgument(*problem);
}

void warn_if_one_class(const Dataset& ds, const std::string& path) {
  if (auto problem = one_class_problem(ds, path))
    fmt::print(stderr, "warning: {}; rates that need labels are 0 or undefined\n", *problem);
}

void print_read_notes(const std::string& path, const ReadStats& stats) {
  if (stats.rows_dropped_missing > 0)
    fmt::print(stderr, "note: {}: dropped {} rows with missing values (--missing drop)\n", path,
               stats.rows_dropped_missing);
  if (stats.rows_imputed_missing > 0)
    fmt::print(stderr,
               "note: {}: imputed missing values in {} rows (numeric: the training mean, "
               "categorical: no level)\n",
               path, stats.rows_imputed_missing);
  for (const auto& w : stats.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (stats.unseen_levels > 0)
    fmt::print(stderr, "note: {}: {} categorical values unseen in training encode as zero\n", path,
               stats.unseen_levels);
}

Dataset load_dataset(const std::string& path, const ReaderFlags& flags, const Encoding* encoding,
                     ReadStats* stats) {
  // A pattern where one file is read: say so, rather than that no file has that name.
  std::error_code ec;
  if (path.find_first_of("*?[") != std::string::npos && !std::filesystem::exists(path, ec)) {
    const std::vector<std::string> files = expand_data_pattern(path);  // NotFound when none
    throw InvalidArgument(fmt::format(
        "--data '{}' is a pattern matching {} file{} ({}{}); this command reads one file here: "
        "name one (`rateopt convert -o 'OUT-{{}}.rods'` converts each file of a pattern; "
        "train, eval and predict read a pattern's files as shards)",
        path, files.size(), files.size() == 1 ? "" : "s", files.front(),
        files.size() > 1 ? ", ..." : ""));
  }
  // A model post-processed from outside scores: the data give the labels and group columns, the
  // scores file the one feature.
  if (encoding != nullptr && encoding->format == "scores") {
    if (flags.scores_file.empty())
      throw InvalidArgument(fmt::format(
          "the model post-processes outside scores (rateopt train --solver postprocess "
          "--scores): give the scores of the rows of {} with --scores FILE, one per row",
          path));
    ReaderFlags plain = flags;
    plain.scores_file.clear();
    Dataset ds;
    if (plain.label.empty() && !encoding->label_column.empty()) {
      // The model's label column when the file has it (eval); else unlabelled rows (predict),
      // as a model's own encoding reads them.
      ReaderFlags labelled = plain;
      labelled.label = encoding->label_column;
      if (labelled.positive.empty() && !encoding->positive_value.empty())
        labelled.positive = {encoding->positive_value};
      try {
        ds = load_dataset(path, labelled, nullptr);
      } catch (const NotFound&) {
        ds = load_dataset(path, plain, nullptr);
      }
    } else {
      ds = load_dataset(path, plain, nullptr);
    }
    attach_scores(ds, flags.scores_file, path, *encoding);
    return ds;
  }
  if (encoding != nullptr && !flags.scores_file.empty())
    throw InvalidArgument(
        "--scores is the score of a model post-processed from outside scores (rateopt train "
        "--solver postprocess --scores); this model computes its own score from the features");
  ReadOptions options = to_read_options(flags);
  options.encoding = encoding;
  if (encoding != nullptr && encoding->format == "libsvm" && options.libsvm.num_features == 0)
    options.libsvm.num_features = encoding->num_features;
  ReadStats read;
  Dataset ds = read_dataset(path, options, &read);
  if (stats == nullptr) {
    print_read_notes(path, read);
  } else {
    stats->rows_dropped_missing += read.rows_dropped_missing;
    stats->rows_imputed_missing += read.rows_imputed_missing;
    stats->unseen_levels += read.unseen_levels;
    for (std::string& w : read.warnings) stats->warnings.push_back(std::move(w));
  }
  if (!flags.baseline_column.empty()) {
    Column c = ds.column(flags.baseline_column);
    c.name = "baseline";
    ds.add_column(std::move(c));
  }
  if (!flags.baseline_file.empty()) {
    const auto values = read_number_column(flags.baseline_file);
    if (values.size() != ds.num_rows())
      throw InvalidArgument(
          fmt::format("--baseline {} has {} values, expected one per row of {} ({})",
                      flags.baseline_file, values.size(), path, ds.num_rows()));
    Column c;
    c.name = "baseline";
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] != 0.0 && values[i] != 1.0)
        throw ParseError(flags.baseline_file, i + 1, 0,
                         fmt::format("expected a 0/1 baseline prediction, found {}", values[i]));
      c.push_back(values[i] == 1.0 ? "1" : "0");
    }
    ds.add_column(std::move(c));
  }
  return ds;
}

std::vector<std::string> expand_data_pattern(const std::string& pattern) {
  // A path that exists is itself, even with glob characters in its name.
  std::error_code ec;
  if (pattern.find_first_of("*?[") == std::string::npos || std::filesystem::exists(pattern, ec))
    return {pattern};
  glob_t g{};
  // NOLINTNEXTLINE(concurrency-mt-unsafe): called from the main thread before any work starts.
  const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
  std::vector<std::string> files;
  if (rc == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (rc == GLOB_NOMATCH || (rc == 0 && files.empty()))
    throw NotFound(fmt::format("--data '{}' matches no file", pattern));
  if (rc != 0) throw IoError(fmt::format("--data '{}': cannot list the matching files", pattern));
  std::sort(files.begin(), files.end());
  return files;
}

std::pair<std::size_t, std::size_t> rank_file_range(std::size_t count, const std::string& pattern) {
  const auto ranks = static_cast<std::size_t>(process_group().size());
  const auto rank = static_cast<std::size_t>(process_group().rank());
  if (count < ranks)
    throw InvalidArgument(fmt::format(
        "--data '{}' names {} file{} for {} ranks: each rank reads whole files, so give at least "
        "one file per rank (e.g. split one CSV into N parts with a header each: see "
        "docs/scale.md)",
        pattern, count, count == 1 ? "" : "s", ranks));
  return {rank * count / ranks, (rank + 1) * count / ranks};
}

std::string file_stem(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  for (const std::string_view ext :
       {".gz", ".csv", ".tsv", ".arff", ".txt", ".svm", ".libsvm", ".rods"})
    if (stem.size() > ext.size() && stem.ends_with(ext)) stem.resize(stem.size() - ext.size());
  return stem;
}

std::string per_file_output(const std::string& output, const std::string& data_file) {
  const std::string stem = file_stem(data_file);
  std::string path = output;
  for (std::size_t at = path.find("{}"); at != std::string::npos;
       at = path.find("{}", at + stem.size()))
    path.replace(at, 2, stem);
  return path;
}

void check_distinct_stems(const std::vector<std::string>& files) {
  std::set<std::string, std::less<>> stems;
  for (const std::string& f : files) {
    const std::string stem = file_stem(f);
    if (!stems.insert(stem).second)
      throw InvalidArgument(fmt::format(
          "two data files are named '{}': --output with {{}} needs distinct file names", stem));
  }
}

Encoding shared_encoding(const std::vector<std::string>& files, const ReaderFlags& flags) {
  std::vector<DataUnit> units;
  units.reserve(files.size());
  for (const std::string& f : files) units.push_back({f, std::nullopt});
  return shared_encoding(units, flags);
}

namespace {

// `flags` reading only `unit`.
ReaderFlags unit_flags(const ReaderFlags& flags, const DataUnit& unit) {
  ReaderFlags f = flags;
  f.read_part = unit.part;
  return f;
}

}  // namespace

Encoding shared_encoding(const std::vector<DataUnit>& units, const ReaderFlags& flags) {
  std::vector<std::string> files;
  files.reserve(units.size());
  for (const DataUnit& u : units) files.push_back(u.file);
  // Binary datasets (rateopt convert) carry their encoding: read it without the arrays, on every
  // rank, and require one encoding for all of them. Whether the files are binary is agreed first,
  // so that every rank takes the same path (the paths' collectives differ).
  // (Parts of one file are one file here: it is looked at once.)
  std::size_t binary = 0;
  std::size_t distinct = 0;
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (k > 0 && files[k] == files[k - 1]) continue;
    ++distinct;
    binary += is_dataset_binary(files[k]) ? 1 : 0;
  }
  std::array<double, 2> counts{static_cast<double>(binary), static_cast<double>(distinct)};
  sum_over_ranks(counts);
  if (counts[0] > 0 && counts[0] < counts[1])
    throw InvalidArgument(
        "--data mixes binary datasets (rateopt convert) and text files: convert every file, or "
        "none");
  if (counts[0] > 0) {
    // Entries "file\njson": this rank's files against its first, then the ranks' firsts.
    const auto file_of = [](const std::string& e) { return e.substr(0, e.find('\n')); };
    const auto json_of = [](const std::string& e) { return e.substr(e.find('\n') + 1); };
    const auto check_same = [&](const std::string& first, const std::string& other) {
      if (other.empty() || json_of(other) == json_of(first)) return;
      throw InvalidArgument(fmt::format(
          "{} and {} are binary datasets with different encodings: convert the text files "
          "together, with one encoding (rateopt convert --data 'PATTERN' --output "
          "'DIR/{{}}.rods')",
          file_of(first), file_of(other)));
    };
    std::string first;
    for (const std::string& f : files) {
      std::string entry = f;
      entry.append("\n").append(read_dataset_binary_encoding(f).to_json());
      if (first.empty()) first = entry;
      check_same(first, entry);
    }
    const std::vector<std::string> all = gather_over_ranks(first);
    for (const std::string& other : all) check_same(all[0], other);
    return Encoding::from_json(json_of(all[0]));
  }
  // Text files: the encoding a single reading of all the files in order would infer (each file
  // read once to infer its own, then merged over files and ranks).
  // CSV files with --positive are inferred chunk by chunk (infer_encoding_parts), so that this
  // pass holds one chunk, not a whole file.
  std::vector<InferredEncoding> mine;
  for (const DataUnit& u : units) {
    const ReadOptions options = to_read_options(unit_flags(flags, u));
    for (InferredEncoding& e : infer_encoding_parts(u.file, options)) mine.push_back(std::move(e));
  }
  return agree_encoding_over_ranks(mine, !flags.no_standardize);
}

namespace {

// The units `files` are read in: whole files, or parts of part_bytes bytes of each text file
// (binary datasets stay whole). part_bytes: --part-bytes, else kAutoPartBytes when the files are
// fewer than the ranks, else 0 (whole files).
std::vector<DataUnit> data_units(const std::vector<std::string>& files, const ReaderFlags& flags,
                                 const std::string& pattern) {
  const auto ranks = static_cast<std::size_t>(process_group().size());
  const std::size_t part_bytes =
      flags.part_bytes > 0 ? flags.part_bytes : (files.size() < ranks ? kAutoPartBytes : 0);
  std::vector<DataUnit> units;
  std::uintmax_t split_bytes = 0;  // bytes of the files read in parts
  for (const std::string& f : files) {
    if (part_bytes == 0 || is_dataset_binary(f)) {
      units.push_back({f, std::nullopt});
      continue;
    }
    // One scan of the file finds where each part starts; each part is then read from its bytes.
    ReadOptions options = to_read_options(flags);
    options.part_bytes = part_bytes;
    std::error_code ec;
    split_bytes += std::filesystem::file_size(f, ec);
    for (const FilePart& p : file_parts(f, options)) units.push_back({f, p});
  }
  if (units.size() < ranks && part_bytes > 0)
    throw InvalidArgument(fmt::format(
        "--data '{}' is read in {} part{} of {} bytes (--part-bytes{}) for {} ranks: give at "
        "least one part per rank, e.g. --part-bytes {} (any size gives the same model over any "
        "number of ranks, and in one process given the same --part-bytes)",
        pattern, units.size(), units.size() == 1 ? "" : "s", part_bytes,
        flags.part_bytes > 0 ? "" : ", by default when the files are fewer than the ranks", ranks,
        std::max<std::uintmax_t>(1, split_bytes / ranks)));
  return units;
}

}  // namespace

DataShard load_data_shard(const std::string& pattern, const ReaderFlags& flags,
                          const Encoding* encoding) {
  DataShard shard;
  const std::vector<std::string> all = expand_data_pattern(pattern);
  const auto ranks = static_cast<std::size_t>(process_group().size());
  const auto rank = static_cast<std::size_t>(process_group().rank());
  const std::vector<DataUnit> units = data_units(all, flags, pattern);
  shard.total_files = units.size();
  const auto [first, last] = rank_file_range(units.size(), pattern);
  if (units.size() == 1 && !units[0].part && ranks == 1) {
    shard.files = all;
    shard.data = load_dataset(all[0], flags, encoding);
    shard.total_rows = shard.data.num_rows();
    shard.file_rows = {shard.total_rows};
    return shard;
  }
  if (!flags.baseline_file.empty())
    throw InvalidArgument(
        "--baseline FILE needs --data to be one file read by one process; with several files, "
        "parts or ranks, put the baseline in a column (--baseline-column)");
  if (!flags.scores_file.empty() || (encoding != nullptr && encoding->format == "scores"))
    throw InvalidArgument(
        "--scores FILE needs --data to be one file read whole by one process (one score per row "
        "of that file)");
  shard.first_file = first;
  const std::vector<DataUnit> mine(units.begin() + static_cast<std::ptrdiff_t>(first),
                                   units.begin() + static_cast<std::ptrdiff_t>(last));
  for (const DataUnit& u : mine) shard.files.push_back(u.file);
  Encoding shared;
  if (encoding == nullptr) {
    shared = shared_encoding(mine, flags);
    encoding = &shared;
  }
  std::vector<Dataset> parts;
  ReadStats file_stats;  // the notes of a file's parts, printed once
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const DataUnit& u = mine[k];
    parts.push_back(load_dataset(u.file, unit_flags(flags, u), encoding, &file_stats));
    shard.file_rows.push_back(parts.back().num_rows());
    if (k + 1 == mine.size() || mine[k + 1].file != u.file) {
      print_read_notes(u.file, file_stats);
      file_stats = ReadStats{};
    }
  }
  shard.data = concat_rows(std::move(parts));
  // One storage kind on every rank, as one process holding every file would have (concat_rows:
  // CSR when any file is): sums over rows then run alike whatever the rank count.
  if (is_distributed()) {
    std::array<double, 1> sparse{shard.data.features().is_sparse() ? 1.0 : 0.0};
    sum_over_ranks(sparse);
    if (sparse[0] > 0 && !shard.data.features().is_sparse())
      shard.data.features() = shard.data.features().to_csr();
  }
  shard.data.set_source(pattern);
  // This rank's place among all the rows.
  const std::vector<std::string> counts = gather_over_ranks(std::to_string(shard.data.num_rows()));
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const std::size_t n = std::stoull(counts[r]);
    if (r < rank) shard.rows_before += n;
    shard.total_rows += n;
  }
  return shard;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t start = line.find_first_not_of(" \t,", pos);
    if (start == std::string_view::npos) break;
    std::size_t end = line.find_first_of(" \t,", start);
    if (end == std::string_view::npos) end = line.size();
    out.push_back(line.substr(start, end - start));
    pos = end;
  }
  return out;
}

std::vector<double> read_number_column(const std::string& path) {
  const std::string text = read_text_file(path);
  std::vector<double> out;
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t line_no = i + 1;
    std::string line(lines[i]);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos)
      throw ParseError(path, line_no, 0, "expected a number, found an empty line");
    line = line.substr(first, line.find_last_not_of(" \t") - first + 1);
    char* stop = nullptr;
    const double v = std::strtod(line.c_str(), &stop);
    if (stop != line.c_str() + line.size() || !std::isfinite(v))
      throw ParseError(path, line_no, 0, fmt::format("expected a finite number, found '{}'", line));
    out.push_back(v);
  }
  return out;
}

void check_outputs_are_own_files(std::span<const std::string> args) {
  static constexpr std::array<std::string_view, 11> kInputs = {
      "--data",  "--model", "--validation", "--pred", "--problem",         "--base-model",
      "--input", "--xml",   "--names",      "--ids",  "--multilabel-model"};
  static constexpr std::array<std::string_view, 4> kOutputs = {"-o", "--output", "--report",
                                                               "--labels"};
  struct Named {
    std::string flag;
    std::string path;
  };
  std::vector<Named> inputs;
  std::vector<Named> outputs;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    if (const std::size_t eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    } else if (i + 1 < args.size()) {
      value = args[i + 1];
    }
    const auto in = [&](const auto& set) {
      return std::find(set.begin(), set.end(), flag) != set.end();
    };
    if (value.empty() || value == "-" || value.find("{}") != std::string::npos) continue;
    if (in(kInputs)) inputs.push_back({flag, value});
    if (in(kOutputs)) outputs.push_back({flag, value});
  }
  namespace fs = std::filesystem;
  // Whether a and b name one regular file (or would: the same path, resolved).
  const auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    const fs::file_status sa = fs::status(a, ec);
    const fs::file_status sb = fs::status(b, ec);
    if ((fs::exists(sa) && !fs::is_regular_file(sa)) ||
        (fs::exists(sb) && !fs::is_regular_file(sb)))
      return false;
    if (fs::exists(sa) && fs::exists(sb)) return fs::equivalent(a, b, ec) && !ec;
    const fs::path ca = fs::weakly_canonical(a, ec);
    if (ec) return false;
    const fs::path cb = fs::weakly_canonical(b, ec);
    return !ec && ca == cb;
  };
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    for (const Named& i : inputs)
      if (same(outputs[o].path, i.path))
        throw std::invalid_argument(fmt::format(
            "{} '{}' is the same file as {} '{}': an output would overwrite an input; name "
            "another file",
            outputs[o].flag, outputs[o].path, i.flag, i.path));
    for (std::size_t p = 0; p < o; ++p)
      if (same(outputs[o].path, outputs[p].path))
        throw std::invalid_argument(
            fmt::format("{} '{}' is the same file as {} '{}': each output needs a file of its own",
                        outputs[o].flag, outputs[o].path, outputs[p].flag, outputs[p].path));
  }
}

void write_text(const std::string& path, const std::string& text) {
  write_file_atomic(path, text);
}

namespace {
void drop_timings(nlohmann::json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      const std::string& key = it.key();
      if (key.size() >= 7 && key.compare(key.size() - 7, 7, "seconds") == 0) {
        it = j.erase(it);
      } else {
        drop_timings(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& v : j) drop_timings(v);
  }
}
}  // namespace

std::string report_without_timings(const std::string& report_json) {
  nlohmann::json j = nlohmann::json::parse(report_json);
  drop_timings(j);
  return j.dump();
}

bool save_trained_model(const Classifier& model, const std::string& output, bool infeasible,
                        bool output_infeasible) {
  if (infeasible && !output_infeasible) return false;
  Classifier copy = model;
  copy.report_json = report_without_timings(model.report_json);
  copy.save(output);
  return true;
}

void print_model_saved(bool saved, const std::string& output) {
  if (saved)
    fmt::print("model written to {}\n", output);
  else
    fmt::print(
        "model NOT written: training ended infeasible ({} left as it was; --output-infeasible "
        "writes the model anyway)\n",
        output);
}

int parse_args(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << "\n"
              << "Run with --help for usage.\n";
    return kExitUsage;
  }
  return -1;
}

void warn_if_deterministic_infeasible(const Classifier& model, PredictMode mode,
                                      const std::string& model_path) {
  if (mode != PredictMode::kDeterministic || model.kind != "rate_constrained" ||
      model.report_json.empty())
    return;
  const nlohmann::json report = nlohmann::json::parse(model.report_json, nullptr, false);
  if (report.is_discarded()) return;
  double tolerance = 1e-3;
  if (!model.options_json.empty()) {
    const nlohmann::json opts = nlohmann::json::parse(model.options_json, nullptr, false);
    if (!opts.is_discarded() && opts.contains("tolerance") && opts["tolerance"].is_number())
      tolerance = opts["tolerance"].get<double>();
  }
  const nlohmann::json* det = nullptr;
  if (report.contains("train") && report["train"].contains("deterministic"))
    det = &report["train"]["deterministic"];
  if (det == nullptr || !det->contains("constraints")) return;
  double worst = 0;
  for (const auto& c : (*det)["constraints"])
    if (c.contains("violation") && c["violation"].is_number())
      worst = std::max(worst, c["violation"].get<double>());
  if (worst > tolerance)
    fmt::print(stderr,
               "warning: {}: the deterministic model violated the constraints it was trained "
               "under on the training data (largest violation {:.6f} > tolerance {}); "
               "--mode probability or stochastic meets them in expectation\n",
               model_path, worst, tolerance);
}

}  // namespace rateopt::cli
