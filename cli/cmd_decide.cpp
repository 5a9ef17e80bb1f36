// rateopt decide: Bayes-optimal set predictions for an expected non-decomposable metric.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/decide_input.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

namespace rateopt::cli {
namespace {

nlohmann::json finite_or_string(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

// Rows of marginals for --average: every non-blank line one row, all of one length (the first
// row's), each parsed by parse_decide_row (errors name the file and line).
struct MatrixRows {
  std::vector<double> values;  // row-major, rows x labels
  std::size_t rows = 0, labels = 0;
};

MatrixRows read_matrix_rows(const std::string& input, const std::string& file) {
  LineReader reader(input);
  MatrixRows out;
  std::size_t first_line = 0, pending_blank = 0;
  std::string_view line;
  while (reader.next(line)) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      if (pending_blank == 0) pending_blank = reader.line_number();
      continue;
    }
    if (pending_blank != 0) throw decide_blank_line_error(file, pending_blank);
    const std::size_t count = parse_decide_row(line, file, reader.line_number(), out.values);
    if (out.rows == 0) {
      out.labels = count;
      first_line = reader.line_number();
    } else if (count != out.labels) {
      throw ParseError(file, reader.line_number(), 0,
                       fmt::format("{} probabilities, expected {} as on line {} (--average needs "
                                   "every row to have one probability per label)",
                                   count, out.labels, first_line));
    }
    ++out.rows;
  }
  if (out.rows == 0)
    throw ParseError(file, 0, 0, "no rows: --average needs at least one row of marginals");
  return out;
}

// --ids FILE: one id per line (a trailing '\r' dropped), read in step with the input's rows and
// echoed as a JSON string. Blank lines at the very end are ignored; any other blank line is an
// error, and so is a count that differs from the input's rows (naming both files).
class IdReader {
 public:
  IdReader(const std::string& ids_path, std::string input_name)
      : reader_(ids_path), path_(ids_path), input_(std::move(input_name)) {}

  // The id of row `row` (0-based) of the input, at its line `line_no` (0: not known).
  nlohmann::json next(std::size_t row, std::size_t line_no) {
    std::string_view line;
    std::size_t blank = 0;
    while (reader_.next(line)) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
        if (blank == 0) blank = reader_.line_number();
        continue;
      }
      if (blank != 0)
        throw ParseError(path_, blank, 0,
                         "blank line: --ids needs one id per line, one line per input row");
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      // NOLINTNEXTLINE(modernize-return-braced-init-list): {x} would be the JSON array [x]
      return nlohmann::json(std::string(line));
    }
    throw InvalidArgument(fmt::format(
        "{} has {} ids but {} has more rows (row {}{}): --ids needs one id per input row", path_,
        row, input_, row + 1, line_no == 0 ? std::string() : fmt::format(", line {}", line_no)));
  }
  // After the input's last row: no id may be left.
  void finish(std::size_t rows) {
    std::string_view line;
    while (reader_.next(line))
      if (line.find_first_not_of(" \t\r") != std::string_view::npos)
        throw InvalidArgument(fmt::format(
            "{} has more ids than the {} rows of {} (line {} is id {}): --ids needs one id per "
            "input row",
            path_, rows, input_, reader_.line_number(), rows + 1));
  }

 private:
  LineReader reader_;
  std::string path_, input_;
};

// The "id" of a GFM JSON line (null when it has none): a string or an integer, else ParseError.
// Lines without the text "id" are not read again; the others are read by nlohmann::json (the line
// was accepted by the GFM reader, so it is valid JSON).
nlohmann::json gfm_line_id(std::string_view line, const std::string& file, std::size_t line_no) {
  if (line.find("\"id\"") == std::string_view::npos) return nullptr;
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return nullptr;
  const auto it = j.find("id");
  if (it == j.end()) return nullptr;
  if (!it->is_string() && !it->is_number_integer())
    throw ParseError(file, line_no, 0,
                     fmt::format("\"id\" is {} ({}), expected a string or an integer",
                                 it->type_name(), it->dump()));
  return *it;
}

// --names FILE: label names, either one per line (a trailing '\r' dropped; blank lines at the end
// ignored, a blank line inside an error) or a model file of rateopt train (a JSON object with
// "names", an array of strings: --one-vs-rest, --multilabel-model). A name may not contain a space
// or a tab (they separate the names of a set).
std::vector<std::string> read_label_names(const std::string& path) {
  const std::string text = read_text_file(path);
  std::vector<std::string> names;
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto check = [&](const std::string& name, std::size_t line) {
    if (name.find_first_of(" \t") != std::string::npos)
      throw ParseError(path, line, 0,
                       fmt::format("label name '{}' contains whitespace: --format sets separates "
                                   "names by spaces",
                                   name));
  };
  if (first != std::string::npos && text[first] == '{') {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    const auto bad = [&] {
      return ParseError(path, 0, 0,
                        "expected one label name per line, or a model file of rateopt train "
                        "(--one-vs-rest, --multilabel-model): a JSON object with \"names\", an "
                        "array of strings");
    };
    if (!j.is_object() || !j.contains("names") || !j["names"].is_array()) throw bad();
    for (const auto& name : j["names"]) {
      if (!name.is_string()) throw bad();
      names.push_back(name.get<std::string>());
      check(names.back(), 0);
    }
    return names;
  }
  std::size_t line_no = 0, blank = 0, start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (blank == 0) blank = line_no;
      continue;
    }
    if (blank != 0)
      throw ParseError(path, blank, 0, "blank line: --names needs one label name per line");
    check(line, line_no);
    names.push_back(std::move(line));
  }
  return names;
}

// The summary fields of one --average decision: "positives", "expected", "method" and, when not
// exact, "error_bound".
nlohmann::json average_summary(const Decision& d) {
  nlohmann::json j;
  j["positives"] = d.selected.size();
  j["expected"] = finite_or_string(d.expected);
  if (d.error_bound > 0) j["error_bound"] = d.error_bound;
  j["method"] = std::string(to_string(d.method));
  return j;
}

}  // namespace

int run_decide(int argc, const char* const* argv) {
  CLI::App app{
      "Bayes-optimal set predictions: the set that maximises the expected metric.\n"
      "Example: echo '0.9 0.6 0.3 0.1' | rateopt decide --metric f1",
      "rateopt decide"};
  std::string metric_name, model = "independent", method = "auto", input = "-", output = "-",
                           format = "jsonl", average = "none", baseline, ids_file, names_file;
  bool column = false, all_k = false, early_stop = false, none_item = false, normalize = false;
  int empty_score = 1;
  double truncation = 0.0;
  double tolerance = DecideOptions{}.fast_tolerance;
  int threads = 0;
  app.add_option(
         "--metric", metric_name,
         "a utility of the metric catalogue (rateopt eval's names): " + decide_metric_names())
      ->required();
  app.add_option("--model", model,
                 "independent (marginals per line), gfm (JSON Lines with a P matrix, samples or "
                 "indicator rows), "
                 "multiclass (class probabilities per line)")
      ->check(CLI::IsMember({"independent", "gfm", "multiclass"}))
      ->capture_default_str();
  app.add_option("--method", method, "auto, brute, exact, quadratic or fast (independent model)")
      ->check(CLI::IsMember({"auto", "brute", "exact", "quadratic", "fast"}))
      ->capture_default_str();
  app.add_option("--input,-i", input, "Input file ('-' = stdin; .gz accepted)")
      ->capture_default_str();
  app.add_flag("--column", column, "The whole input is one instance, one probability per line");
  app.add_flag("--all-k", all_k, "Also print the expectation of the top-k set for every k");
  app.add_flag("--early-stop", early_stop,
               "Natarajan's early stopping (NOT exact; faster for general metrics)");
  app.add_option("--truncation", truncation,
                 "exact method: ignore Poisson-binomial mass below this bound (0 = none)")
      ->check(CLI::Range(0.0, 1e-3));
  app.add_option("--tolerance", tolerance,
                 "fast method: bound on the error of every expectation (raised to the rounding "
                 "floor above ~1.7 million items; the bound reached is printed as error_bound)")
      ->check(CLI::Range(1e-300, 1e-2))
      ->capture_default_str();
  app.add_option("--empty-score", empty_score,
                 "F-beta / Jaccard of an empty prediction against an empty truth: 1, or 0 as "
                 "scikit-learn's zero_division=0 and Kaggle's Instacart metric")
      ->check(CLI::IsMember({0, 1}))
      ->capture_default_str();
  app.add_flag("--none-item", none_item,
               "independent model, F-beta / Jaccard: the None pseudo-item (true iff no item is) "
               "as one more candidate; jsonl output says \"none\": true when it is predicted");
  app.add_flag("--normalize", normalize,
               "multiclass: accept class rows summing to 1 within 1e-3 and divide them by their "
               "sum (without it: within 1e-6)");
  app.add_option("--output,-o", output, "Output file ('-' = stdout)")->capture_default_str();
  app.add_option("--format", format,
                 "jsonl (selected, expected, ...), sets (the selected indices of each instance "
                 "on one line, ascending: the multi-label --pred format of rateopt eval) or "
                 "indicator (0/1 per item; with --column one per line: the binary --pred format)")
      ->check(CLI::IsMember({"jsonl", "sets", "indicator"}))
      ->capture_default_str();
  app.add_option("--average", average,
                 "independent model, rows of one length m: macro (each label a binary test set "
                 "of the n rows: which rows get it), micro (all n x m (row, label) pairs one test "
                 "set) or none (each row an instance); summary lines follow the rows "
                 "(docs/decide.md section 6)")
      ->check(CLI::IsMember({"none", "macro", "micro"}))
      ->capture_default_str();
  app.add_option("--baseline", baseline,
                 "independent model: a plug-in set per row instead of the optimal one: "
                 "threshold:T (the items with p >= T, select_threshold) or top-k:K (the K most "
                 "probable items, select_top_k; K capped at the row's length) or tuned:FILE "
                 "(threshold:T with T tuned by tune_threshold on FILE's \"probability label\" "
                 "lines); jsonl prints its expected metric")
      ->capture_default_str();
  app.add_option("--ids", ids_file,
                 "independent / multiclass: a file of one id per line, one per input row (with "
                 "--column one), echoed as \"id\" in jsonl output (gfm lines carry their own "
                 "\"id\", a string or an integer)");
  app.add_option("--names", names_file,
                 "--format sets: print label names instead of indices, from a file of one name "
                 "per line or a model file of rateopt train --one-vs-rest / --multilabel-model "
                 "(its \"names\"); every instance must have one item per name");
  app.add_option("--threads", threads, "Threads over instances (0 = all cores)");
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;

  const DecideMetric metric = DecideMetric::from_name(metric_name);
  DecideOptions options;
  options.method = parse_decide_method(method);
  options.all_k = all_k;
  options.early_stop = early_stop;
  options.truncation = truncation;
  options.fast_tolerance = tolerance;
  options.empty_score = empty_score;
  options.none_item = none_item;
  if (none_item && model != "independent")
    throw InvalidArgument("--none-item applies to the independent model");
  if (none_item && format != "jsonl")
    throw InvalidArgument(
        "--none-item needs --format jsonl (sets and indicator rows have no place for None)");
  if (normalize && model != "multiclass")
    throw InvalidArgument("--normalize applies to the multiclass model");

  const std::string file = input == "-" ? std::string("<stdin>") : input;
  // --all-k with sets or indicator rows is refused after the input was read and decided (input
  // errors come first, as they always did).
  const bool refuse_all_k = all_k && format != "jsonl";
  if (!names_file.empty() && format != "sets")
    throw InvalidArgument("--names needs --format sets (the sets are printed by name)");
  const std::vector<std::string> names =
      names_file.empty() ? std::vector<std::string>() : read_label_names(names_file);
  if (!names_file.empty() && names.empty())
    throw ParseError(names_file, 0, 0, "no label names: --names needs one name per label");
  // Why an instance of `items` items cannot be printed by name ("" when it can).
  const auto names_mismatch = [&](std::size_t items) {
    if (names.empty() || items == names.size()) return std::string();
    return fmt::format("{} labels, but {} has {} names: --names needs one name per label", items,
                       names_file, names.size());
  };
  const auto label_text = [&](std::size_t idx) {
    return names.empty() ? std::to_string(idx) : names[idx];
  };
  const auto format_one = [&](const Decision& d, std::size_t items, std::string& out,
                              const nlohmann::json& id = nullptr) {
    if (format != "jsonl") {
      std::vector<std::size_t> chosen = d.selected;
      std::sort(chosen.begin(), chosen.end());
      if (format == "sets") {
        for (std::size_t k = 0; k < chosen.size(); ++k) {
          if (k > 0) out += ' ';
          out += label_text(chosen[k]);
        }
        out += '\n';
        return;
      }
      std::vector<char> on(items, '0');
      for (std::size_t idx : chosen) on[idx] = '1';
      for (std::size_t k = 0; k < on.size(); ++k) {
        if (k > 0) out += column ? '\n' : ' ';
        out += on[k];
      }
      out += '\n';
      return;
    }
    nlohmann::json j;
    if (!id.is_null()) j["id"] = id;
    j["selected"] = d.selected;
    j["expected"] = finite_or_string(d.expected);
    if (all_k) {
      auto& arr = j["expected_by_k"] = nlohmann::json::array();
      for (double v : d.expected_by_k) arr.push_back(finite_or_string(v));
    }
    if (none_item) {
      j["none"] = d.none;
      if (all_k) {
        auto& arr = j["expected_by_k_none"] = nlohmann::json::array();
        for (double v : d.expected_by_k_none) arr.push_back(finite_or_string(v));
      }
    }
    if (d.error_bound > 0) j["error_bound"] = d.error_bound;
    j["method"] = std::string(to_string(d.method));  // the path taken (auto resolves by n)
    out += j.dump();
    out += '\n';
  };

  DecideLinesOptions how;
  how.model = model == "gfm"          ? DecideInputModel::kGfm
              : model == "multiclass" ? DecideInputModel::kMulticlass
                                      : DecideInputModel::kIndependent;
  how.normalize = normalize;
  how.n_threads = threads;
  if (!ids_file.empty() && model == "gfm")
    throw InvalidArgument(
        "--ids applies to the independent and multiclass models (a gfm line "
        "carries its own \"id\")");
  if (!ids_file.empty() && format != "jsonl")
    throw InvalidArgument("--ids needs --format jsonl (sets and indicator rows have no id)");
  std::unique_ptr<IdReader> ids;
  if (!ids_file.empty()) ids = std::make_unique<IdReader>(ids_file, file);
  AtomicFileWriter writer(output);

  if (average != "none") {
    // Per-label (macro) or test-set (micro) decisions over the whole matrix of rows: it is read
    // first (n x m doubles in memory), then decided (macro: one decide_independent per column, in
    // parallel; micro: one over the n * m pairs, row-major), then written.
    if (model != "independent") throw InvalidArgument("--average applies to the independent model");
    if (column) throw InvalidArgument("--average reads rows of marginals: not with --column");
    if (all_k) throw InvalidArgument("--all-k is not available with --average");
    if (none_item) throw InvalidArgument("--none-item is not available with --average");
    if (!baseline.empty()) throw InvalidArgument("--baseline is not available with --average");
    const MatrixRows matrix = read_matrix_rows(input, file);
    const std::size_t n = matrix.rows, m = matrix.labels;
    if (const std::string why = names_mismatch(m); !why.empty())
      throw InvalidArgument(fmt::format("{}: {}", file, why));
    std::vector<nlohmann::json> row_ids;
    if (ids) {
      for (std::size_t i = 0; i < n; ++i) row_ids.push_back(ids->next(i, 0));
      ids->finish(n);
    }
    std::vector<std::vector<std::size_t>> row_labels(n);
    std::vector<nlohmann::json> summaries;
    if (average == "macro") {
      std::vector<std::vector<double>> columns(m, std::vector<double>(n));
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) columns[j][i] = matrix.values[i * m + j];
      std::vector<Decision> decisions;
      try {
        decisions = decide_batch(DecideModel::kIndependent, columns, metric, options, threads);
      } catch (const BatchInstanceError& e) {
        throw InvalidArgument(fmt::format("{}: label {}: {}", file, e.instance(), e.detail()));
      }
      double total = 0;
      for (std::size_t j = 0; j < m; ++j) {
        for (std::size_t i : decisions[j].selected) row_labels[i].push_back(j);
        nlohmann::json line;
        line["label"] = j;
        line.update(average_summary(decisions[j]));
        summaries.push_back(std::move(line));
        total += decisions[j].expected;
      }
      nlohmann::json line;
      line["average"] = "macro";
      line["labels"] = m;
      line["rows"] = n;
      line["expected"] = finite_or_string(m == 0 ? 0.0 : total / static_cast<double>(m));
      summaries.push_back(std::move(line));
    } else {
      Decision d;
      try {
        d = decide_independent(matrix.values, metric, options);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(fmt::format("{}: {}", file, e.what()));
      }
      for (std::size_t k : d.selected) row_labels[k / m].push_back(k % m);
      nlohmann::json line;
      line["average"] = "micro";
      line["labels"] = m;
      line["rows"] = n;
      line.update(average_summary(d));
      summaries.push_back(std::move(line));
    }
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      auto& labels = row_labels[i];
      std::sort(labels.begin(), labels.end());
      if (format == "jsonl") {
        nlohmann::json j;
        if (ids) j["id"] = row_ids[i];
        j["selected"] = labels;
        out += j.dump();
      } else if (format == "sets") {
        for (std::size_t k = 0; k < labels.size(); ++k) {
          if (k > 0) out += ' ';
          out += label_text(labels[k]);
        }
      } else {
        std::vector<char> on(m, '0');
        for (std::size_t j : labels) on[j] = '1';
        for (std::size_t j = 0; j < m; ++j) {
          if (j > 0) out += ' ';
          out += on[j];
        }
      }
      out += '\n';
      if (out.size() >= (std::size_t{1} << 20)) {
        writer.write(out);
        out.clear();
      }
    }
    // The summaries follow the rows in jsonl output; sets and indicator rows stay the --pred
    // format of rateopt eval, their summaries go to standard error.
    std::string summary_text;
    for (const auto& line : summaries) summary_text += line.dump() + '\n';
    if (format == "jsonl") out += summary_text;
    writer.write(out);
    writer.commit();
    if (format != "jsonl") std::cerr << summary_text;
    return 0;
  }

  if (!baseline.empty()) {
    // A plug-in set per row (select_threshold / select_top_k); its expectation is
    // expected_by_k[k] of decide_independent with all_k (the top-k set by probability, ties by
    // lower index, is the set both select), exact up to the method's error_bound. Rows are read
    // and decided in batches (decide_batch, in parallel) and written in input order.
    const auto colon = baseline.find(':');
    std::string kind = baseline.substr(0, colon);
    const std::string value = colon == std::string::npos ? "" : baseline.substr(colon + 1);
    double threshold = 0;
    std::size_t top_k = 0;
    const auto bad_baseline = [&] {
      return InvalidArgument(fmt::format(
          "--baseline {}: expected threshold:T (T a number, not NaN), top-k:K (K an integer >= "
          "0) or tuned:FILE",
          baseline));
    };
    std::size_t used = 0;
    try {
      if (kind == "threshold") {
        threshold = std::stod(value, &used);
        if (std::isnan(threshold)) throw bad_baseline();
      } else if (kind == "top-k") {
        if (value.empty() || value[0] == '-') throw bad_baseline();
        top_k = std::stoull(value, &used);
      } else if (kind == "tuned" && !value.empty()) {
        used = value.size();
      } else {
        throw bad_baseline();
      }
    } catch (const std::logic_error&) {
      throw bad_baseline();
    }
    if (used != value.size()) throw bad_baseline();
    if (model != "independent")
      throw InvalidArgument("--baseline applies to the independent model");
    if (average != "none") throw InvalidArgument("--baseline is not available with --average");
    if (all_k || none_item || early_stop)
      throw InvalidArgument(
          "--baseline is not available with --all-k, --none-item or --early-stop");
    bool tuned = false;
    if (kind == "tuned") {
      // tuned:FILE: the EUM plug-in (tune_threshold): the one threshold on probabilities that
      // maximises the metric on a validation set, FILE = one "probability label" pair per line
      // (label 0 or 1), all pairs pooled; then threshold:T.
      std::vector<double> scores, pair;
      std::vector<std::int32_t> labels;
      LineReader pairs(value);
      std::string_view line;
      std::size_t blank = 0;
      while (pairs.next(line)) {
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
          if (blank == 0) blank = pairs.line_number();
          continue;
        }
        if (blank != 0) throw decide_blank_line_error(value, blank);
        pair.clear();
        const std::size_t count = parse_decide_row(line, value, pairs.line_number(), pair);
        if (count != 2 || (pair[1] != 0 && pair[1] != 1))
          throw ParseError(value, pairs.line_number(), 0,
                           fmt::format("'{}', expected a probability and a label 0 or 1 "
                                       "(--baseline tuned:FILE)",
                                       line));
        scores.push_back(pair[0]);
        labels.push_back(pair[1] == 1 ? 1 : 0);
      }
      if (scores.empty())
        throw ParseError(value, 0, 0, "no pairs: --baseline tuned:FILE needs validation pairs");
      threshold = tune_threshold(scores, labels, metric);
      kind = "threshold";
      tuned = true;
    }
    DecideOptions with_k = options;
    with_k.all_k = true;
    const auto select = [&](const std::vector<double>& row) {
      return kind == "threshold" ? select_threshold(row, threshold)
                                 : select_top_k(row, std::min(top_k, row.size()));
    };
    const auto format_baseline = [&](const std::vector<double>& row, const Decision& d,
                                     std::string& out, const nlohmann::json& id) {
      Decision chosen;
      chosen.selected = select(row);
      if (format != "jsonl") {
        format_one(chosen, row.size(), out);
        return;
      }
      nlohmann::json j;
      if (!id.is_null()) j["id"] = id;
      j["selected"] = chosen.selected;
      j["expected"] = finite_or_string(d.expected_by_k[chosen.selected.size()]);
      if (d.error_bound > 0) j["error_bound"] = d.error_bound;
      j["method"] = std::string(to_string(d.method));
      j["baseline"] = baseline;
      if (tuned) j["threshold"] = finite_or_string(threshold);
      out += j.dump();
      out += '\n';
    };
    std::vector<std::vector<double>> rows;
    std::vector<std::size_t> row_lines;
    std::vector<nlohmann::json> row_ids;
    std::size_t rows_done = 0;
    const auto flush = [&] {
      std::vector<Decision> decisions;
      try {
        decisions = decide_batch(DecideModel::kIndependent, rows, metric, with_k, threads);
      } catch (const BatchInstanceError& e) {
        throw ParseError(file, row_lines[e.instance()], 0, e.detail());
      }
      std::string out;
      for (std::size_t k = 0; k < rows.size(); ++k) {
        if (const std::string why = names_mismatch(rows[k].size()); !why.empty())
          throw ParseError(file, row_lines[k], 0, why);
        format_baseline(rows[k], decisions[k], out, ids ? row_ids[k] : nlohmann::json());
      }
      writer.write(out);
      rows_done += rows.size();
      rows.clear();
      row_lines.clear();
      row_ids.clear();
    };
    if (column) {
      std::string text;
      if (input == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
      } else {
        text = read_text_file(input);
      }
      DecideInstances parsed = parse_decide_instances(text, file, true);
      rows.push_back(std::move(parsed.instances[0]));
      row_lines.push_back(0);
      if (ids) row_ids.push_back(ids->next(0, 0));
      flush();
    } else {
      LineReader reader(input);
      std::string_view line;
      std::size_t pending_blank = 0;
      while (reader.next(line)) {
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
          if (pending_blank == 0) pending_blank = reader.line_number();
          continue;
        }
        if (pending_blank != 0) throw decide_blank_line_error(file, pending_blank);
        rows.emplace_back();
        parse_decide_row(line, file, reader.line_number(), rows.back());
        row_lines.push_back(reader.line_number());
        if (ids) row_ids.push_back(ids->next(rows_done + rows.size() - 1, reader.line_number()));
        if (rows.size() == 4096) flush();
      }
      if (!rows.empty()) flush();
    }
    if (ids) ids->finish(rows_done);
    writer.commit();
    return 0;
  }

  if (column) {
    // One instance: the whole input, one probability per line.
    std::string text;
    if (input == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      text = read_text_file(input);
    }
    if (model == "gfm")
      throw InvalidArgument("--column applies to the independent and multiclass models");
    DecideInstances parsed = parse_decide_instances(text, file, true);
    std::vector<double>& row = parsed.instances[0];
    if (model == "multiclass")
      if (const std::string why = check_class_sum(row, normalize); !why.empty())
        throw ParseError(file, 0, 0, why);
    if (const std::string why = names_mismatch(row.size()); !why.empty())
      throw ParseError(file, 0, 0, why);
    nlohmann::json id;
    if (ids) {
      id = ids->next(0, 0);
      ids->finish(1);
    }
    std::vector<Decision> decisions;
    try {
      decisions =
          decide_batch(model == "multiclass" ? DecideModel::kMulticlass : DecideModel::kIndependent,
                       parsed.instances, metric, options, threads);
    } catch (const BatchInstanceError& e) {
      throw ParseError(file, 0, 0, e.detail());
    }
    if (refuse_all_k) throw InvalidArgument("--all-k needs --format jsonl");
    std::string out;
    format_one(decisions[0], row.size(), out, id);
    writer.write(out);
    writer.commit();
    return 0;
  }

  // Streaming: lines are read in batches of at most kBatchLines lines / kBatchBytes bytes, each
  // batch parsed and decided in parallel (decide_lines) and written in input order, so memory is
  // bounded by a batch, not the file. The errors are those of reading the whole file first: the
  // first parse error of the file wins (a blank line inside counts as one), then the first
  // multiclass sum error, then the first instance decide refuses; once one of the last two is due
  // nothing more is decided or written, but the rest of the input is still parsed.
  LineReader reader(input);
  constexpr std::size_t kBatchLines = 4096;
  // 1 MiB: a batch's text is parsed while its copy is still in the core's cache (16 MiB cost
  // dense P lines of 48 KB about 6% more CPU).
  constexpr std::size_t kBatchBytes = std::size_t{1} << 20;
  std::string arena;
  std::vector<std::size_t> offsets;
  std::vector<std::string_view> lines;
  std::vector<std::size_t> line_numbers;
  std::vector<std::string> outputs;
  // --ids: the ids of the batch's rows (ids_error at row ids_error_at when the file ran out);
  // gfm with jsonl output: each decided line's "id" (gfm_line_id); id_errors[k]: why line k's
  // "id" is refused, or why it cannot be printed by name (--names).
  std::vector<nlohmann::json> line_ids;
  std::vector<std::exception_ptr> id_errors;
  std::exception_ptr ids_error;
  std::size_t ids_error_at = 0, rows_done = 0;
  const bool gfm_ids = model == "gfm" && format == "jsonl";
  std::exception_ptr sum_error, decide_error;
  std::size_t pending_blank = 0;  // first line of blank lines not yet known to end the input
  std::size_t blank_inside = 0;   // a blank line followed by an instance: an error
  bool more = true;
  while (more) {
    arena.clear();
    offsets.assign(1, 0);
    line_numbers.clear();
    std::string_view line;
    while (line_numbers.size() < kBatchLines && arena.size() < kBatchBytes) {
      if (!reader.next(line)) {
        more = false;
        break;
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
        if (pending_blank == 0) pending_blank = reader.line_number();
        continue;
      }
      if (pending_blank != 0) {
        blank_inside = pending_blank;
        more = false;
        break;
      }
      arena.append(line);
      offsets.push_back(arena.size());
      line_numbers.push_back(reader.line_number());
    }
    lines.clear();
    for (std::size_t k = 0; k < line_numbers.size(); ++k)
      lines.emplace_back(arena.data() + offsets[k], offsets[k + 1] - offsets[k]);
    how.check_sums = !sum_error;
    how.decide = !sum_error && !decide_error;
    outputs.assign(lines.size(), std::string());
    line_ids.assign(lines.size(), nullptr);
    id_errors.assign(lines.size(), nullptr);
    ids_error_at = lines.size();
    if (ids) {
      for (std::size_t k = 0; k < lines.size(); ++k) {
        try {
          line_ids[k] = ids->next(rows_done + k, line_numbers[k]);
        } catch (const Error&) {
          ids_error = std::current_exception();
          ids_error_at = k;
          break;
        }
      }
    }
    const auto results = decide_lines(
        lines, line_numbers, file, metric, options, how,
        [&](std::size_t k, const Decision& d, std::size_t items) {
          if (refuse_all_k) return;
          if (gfm_ids) {
            try {
              line_ids[k] = gfm_line_id(lines[k], file, line_numbers[k]);
            } catch (const Error&) {
              id_errors[k] = std::current_exception();
              return;
            }
          }
          if (std::string why = names_mismatch(items); !why.empty()) {
            id_errors[k] = std::make_exception_ptr(ParseError(file, line_numbers[k], 0, why));
            return;
          }
          format_one(d, items, outputs[k], line_ids[k]);
        });
    for (std::size_t k = 0; k < results.size(); ++k) {
      using Status = DecideLineResult::Status;
      if (k == ids_error_at) std::rethrow_exception(ids_error);
      if (results[k].status == Status::kOk && id_errors[k]) std::rethrow_exception(id_errors[k]);
      switch (results[k].status) {
        case Status::kParseError:
          std::rethrow_exception(results[k].error);
        case Status::kSumError:
          if (!sum_error) sum_error = results[k].error;
          break;
        case Status::kDecideError:
          if (!decide_error) decide_error = results[k].error;
          break;
        case Status::kOk:
          break;
      }
      if (!sum_error && !decide_error && !refuse_all_k) writer.write(outputs[k]);
    }
    rows_done += lines.size();
    if (blank_inside != 0) throw decide_blank_line_error(file, blank_inside);
  }
  if (sum_error) std::rethrow_exception(sum_error);
  if (decide_error) std::rethrow_exception(decide_error);
  if (ids) ids->finish(rows_done);
  if (refuse_all_k) throw InvalidArgument("--all-k needs --format jsonl");
  writer.commit();
  return 0;
}

}  // namespace rateopt::cli
