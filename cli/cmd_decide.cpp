// rateopt decide: Bayes-optimal set predictions for an expected non-decomposable metric.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"

namespace rateopt::cli {
namespace {

double parse_probability(std::string_view field, const std::string& file, std::size_t line) {
  const std::string s(field);
  char* stop = nullptr;
  const double v = std::strtod(s.c_str(), &stop);
  if (stop != s.c_str() + s.size() || !std::isfinite(v))
    throw ParseError(file, line, 0, fmt::format("expected a probability, found '{}'", field));
  if (v < 0.0 || v > 1.0)
    throw ParseError(file, line, 0, fmt::format("expected a probability in [0, 1], found {}", v));
  return v;
}

// Independent / multiclass: one instance per non-empty line (spaces or commas), or with
// `column` one probability per line forming a single instance.
std::vector<std::vector<double>> read_instances(std::string_view text, const std::string& file,
                                                bool column, std::vector<std::size_t>& line_of) {
  std::vector<std::vector<double>> out;
  const auto lines = split_lines(text);
  if (column) out.emplace_back();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::vector<double> row;
    for (const auto field : split_fields(lines[i]))
      row.push_back(parse_probability(field, file, i + 1));
    if (column) {
      if (row.size() > 1)
        throw ParseError(
            file, i + 1, 0,
            fmt::format("--column expects one probability per line, found {}", row.size()));
      if (!row.empty()) out[0].push_back(row[0]);
      continue;
    }
    if (row.empty()) continue;  // blank lines separate nothing; skip them
    out.push_back(std::move(row));
    line_of.push_back(i + 1);
  }
  if (column) line_of.push_back(1);
  return out;
}

GfmInput parse_gfm_line(std::string_view line, const std::string& file, std::size_t line_no) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw ParseError(file, line_no, 0, fmt::format("expected a JSON object: {}", e.what()));
  }
  auto fail = [&](const std::string& what) { throw ParseError(file, line_no, 0, what); };
  if (!j.is_object()) fail("expected a JSON object with \"P\" and \"p0\", or \"samples\"");
  try {
    if (j.contains("P")) {
      if (!j.contains("p0")) fail("an object with \"P\" also needs \"p0\" = P(y = 0)");
      const auto& rows = j.at("P");
      if (!rows.is_array()) fail("\"P\" must be an array of rows");
      GfmInput in;
      in.m = rows.size();
      in.p.reserve(in.m * in.m);
      for (std::size_t i = 0; i < in.m; ++i) {
        const auto& row = rows[i];
        if (!row.is_array() || row.size() != in.m)
          fail(fmt::format("row {} of \"P\" must have {} entries (m x m)", i, in.m));
        for (const auto& v : row) in.p.push_back(v.get<double>());
      }
      in.p_zero = j.at("p0").get<double>();
      return in;
    }
    if (j.contains("samples")) {
      const auto& samples = j.at("samples");
      if (!samples.is_array()) fail("\"samples\" must be an array of label-index arrays");
      std::vector<std::int64_t> indptr{0};
      std::vector<std::int32_t> indices;
      std::int64_t max_label = -1;
      for (const auto& s : samples) {
        if (!s.is_array()) fail("each sample must be an array of label indices");
        std::vector<std::int32_t> set;
        for (const auto& v : s) {
          const auto idx = v.get<std::int64_t>();
          if (idx < 0 || idx > 1'000'000) fail(fmt::format("label index {} out of range", idx));
          set.push_back(static_cast<std::int32_t>(idx));
          max_label = std::max(max_label, idx);
        }
        std::sort(set.begin(), set.end());
        if (std::adjacent_find(set.begin(), set.end()) != set.end())
          fail("a sample lists a label index twice");
        indices.insert(indices.end(), set.begin(), set.end());
        indptr.push_back(static_cast<std::int64_t>(indices.size()));
      }
      std::size_t m = static_cast<std::size_t>(max_label + 1);
      if (j.contains("m")) {
        m = j.at("m").get<std::size_t>();
        if (static_cast<std::int64_t>(m) <= max_label)
          fail(fmt::format("\"m\" = {} but a sample has label index {}", m, max_label));
      }
      std::vector<double> weights;
      if (j.contains("weights")) weights = j.at("weights").get<std::vector<double>>();
      return gfm_from_samples(LabelSetsView{indptr, indices, m}, weights, m);
    }
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("malformed GFM input: {}", e.what()));
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  fail("expected {\"P\": [[...]], \"p0\": x} or {\"samples\": [[...]], \"weights\": [...]}");
  return {};
}

nlohmann::json finite_or_string(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

}  // namespace

int run_decide(int argc, const char* const* argv) {
  CLI::App app{
      "Bayes-optimal set predictions: the set that maximises the expected metric.\n"
      "Example: echo '0.9 0.6 0.3 0.1' | rateopt decide --metric f1",
      "rateopt decide"};
  std::string metric_name, model = "independent", method = "auto", input = "-", output = "-",
                           format = "jsonl";
  bool column = false, all_k = false, early_stop = false;
  double truncation = 0.0;
  double tolerance = DecideOptions{}.fast_tolerance;
  int threads = 0;
  app.add_option("--metric", metric_name,
                 "f1, fbeta:B, jaccard, balanced_accuracy, gmean, hmean, gtppr, accuracy")
      ->required();
  app.add_option("--model", model,
                 "independent (marginals per line), gfm (JSON Lines with a P matrix or samples), "
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
  app.add_option("--output,-o", output, "Output file ('-' = stdout)")->capture_default_str();
  app.add_option("--format", format,
                 "jsonl (selected, expected, ...), sets (the selected indices of each instance "
                 "on one line, ascending: the multi-label --pred format of rateopt eval) or "
                 "indicator (0/1 per item; with --column one per line: the binary --pred format)")
      ->check(CLI::IsMember({"jsonl", "sets", "indicator"}))
      ->capture_default_str();
  app.add_option("--threads", threads, "Threads over instances (0 = all cores)");
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;

  const DecideMetric metric = DecideMetric::from_name(metric_name);
  DecideOptions options;
  options.method = parse_decide_method(method);
  options.all_k = all_k;
  options.early_stop = early_stop;
  options.truncation = truncation;
  options.fast_tolerance = tolerance;

  std::string text;
  const std::string file = input == "-" ? std::string("<stdin>") : input;
  if (input == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    text = read_text_file(input);
  }

  std::vector<Decision> decisions;
  std::vector<std::size_t> sizes;  // items per instance
  if (model == "gfm") {
    if (column) throw InvalidArgument("--column applies to the independent and multiclass models");
    std::vector<GfmInput> instances;
    const auto lines = split_lines(text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find_first_not_of(" \t") == std::string_view::npos) continue;
      instances.push_back(parse_gfm_line(lines[i], file, i + 1));
    }
    for (const auto& g : instances) sizes.push_back(g.m);
    decisions = decide_gfm_batch(instances, metric, options, threads);
  } else {
    std::vector<std::size_t> line_of;
    const auto instances = read_instances(text, file, column, line_of);
    for (const auto& v : instances) sizes.push_back(v.size());
    decisions =
        decide_batch(model == "multiclass" ? DecideModel::kMulticlass : DecideModel::kIndependent,
                     instances, metric, options, threads);
  }

  std::string out;
  if (format != "jsonl") {
    if (all_k) throw InvalidArgument("--all-k needs --format jsonl");
    for (std::size_t i = 0; i < decisions.size(); ++i) {
      std::vector<std::size_t> chosen = decisions[i].selected;
      std::sort(chosen.begin(), chosen.end());
      if (format == "sets") {
        for (std::size_t k = 0; k < chosen.size(); ++k) {
          if (k > 0) out += ' ';
          out += std::to_string(chosen[k]);
        }
        out += '\n';
        continue;
      }
      std::vector<char> on(sizes[i], '0');
      for (std::size_t idx : chosen) on[idx] = '1';
      for (std::size_t k = 0; k < on.size(); ++k) {
        if (k > 0) out += column ? '\n' : ' ';
        out += on[k];
      }
      out += '\n';
    }
    write_text(output, out);
    return 0;
  }
  for (const auto& d : decisions) {
    nlohmann::json j;
    j["selected"] = d.selected;
    j["expected"] = finite_or_string(d.expected);
    if (all_k) {
      auto& arr = j["expected_by_k"] = nlohmann::json::array();
      for (double v : d.expected_by_k) arr.push_back(finite_or_string(v));
    }
    if (d.error_bound > 0) j["error_bound"] = d.error_bound;
    j["method"] = std::string(to_string(d.method));  // the path taken (auto resolves by n)
    out += j.dump();
    out += '\n';
  }
  write_text(output, out);
  return 0;
}

}  // namespace rateopt::cli
