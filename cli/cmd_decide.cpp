// rateopt decide: Bayes-optimal set predictions for an expected non-decomposable metric.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "rateopt/decide.hpp"
#include "rateopt/decide_input.hpp"
#include "rateopt/error.hpp"

namespace rateopt::cli {
namespace {

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
  bool column = false, all_k = false, early_stop = false, none_item = false, normalize = false;
  int empty_score = 1;
  double truncation = 0.0;
  double tolerance = DecideOptions{}.fast_tolerance;
  int threads = 0;
  app.add_option("--metric", metric_name,
                 "f1, fbeta:B, jaccard, balanced_accuracy, gmean, hmean, gtppr, accuracy")
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

  std::string text;
  const std::string file = input == "-" ? std::string("<stdin>") : input;
  if (input == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    text = read_text_file(input);
  }

  std::vector<Decision> decisions;
  std::vector<std::size_t> sizes;  // items per instance
  // A batch error names "instance i": name the file and line instead.
  const auto at_line = [&](const std::vector<std::size_t>& lines, auto&& run) {
    try {
      run();
    } catch (const BatchInstanceError& e) {
      if (e.instance() >= lines.size()) throw;
      throw ParseError(file, column ? 0 : lines[e.instance()], 0, e.detail());
    }
  };
  if (model == "gfm") {
    if (column) throw InvalidArgument("--column applies to the independent and multiclass models");
    const GfmInstances parsed = parse_gfm_lines(text, file);
    for (const auto& g : parsed.instances) sizes.push_back(g.m);
    at_line(parsed.lines,
            [&] { decisions = decide_gfm_batch(parsed.instances, metric, options, threads); });
  } else {
    DecideInstances parsed = parse_decide_instances(text, file, column);
    if (model == "multiclass") {
      // Rows must sum to 1 within 1e-6, or within 1e-3 with --normalize (then rescaled): softmax
      // outputs printed with few decimals miss 1 by up to ~5e-5.
      const double limit = normalize ? 1e-3 : 1e-6;
      for (std::size_t i = 0; i < parsed.instances.size(); ++i) {
        auto& row = parsed.instances[i];
        double sum = 0;
        for (const double v : row) sum += v;
        if (!(std::abs(sum - 1) <= limit))
          throw ParseError(
              file, column ? 0 : parsed.lines[i], 0,
              fmt::format("the class probabilities sum to {}, expected 1 within {}{}", sum, limit,
                          normalize ? "" : " (--normalize accepts 1e-3 and rescales)"));
        if (normalize)
          for (double& v : row) v /= sum;
      }
    }
    for (const auto& v : parsed.instances) sizes.push_back(v.size());
    at_line(parsed.lines, [&] {
      decisions =
          decide_batch(model == "multiclass" ? DecideModel::kMulticlass : DecideModel::kIndependent,
                       parsed.instances, metric, options, threads);
    });
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
  }
  write_text(output, out);
  return 0;
}

}  // namespace rateopt::cli
