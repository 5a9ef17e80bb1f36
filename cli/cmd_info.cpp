// rateopt info: describe a data file as rateopt reads it (counts, labels, slice columns), and
// optionally write its labels in the format `rateopt eval --pred` reads.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"

namespace rateopt::cli {
namespace {

std::string labels_text(const Dataset& ds) {
  const Labels& y = ds.labels();
  std::string text;
  for (std::size_t i = 0; i < ds.num_rows(); ++i) {
    if (y.kind == LabelKind::kMultilabel) {
      const auto set = y.label_set(i);
      for (std::size_t k = 0; k < set.size(); ++k)
        text += fmt::format("{}{}", k ? " " : "", set[k]);
      text += '\n';
    } else {
      text += fmt::format("{}\n", y.values[i]);
    }
  }
  return text;
}

}  // namespace

int run_info(int argc, const char* const* argv) {
  CLI::App app{
      "Describe a data file as rateopt reads it.\n"
      "Example: rateopt info --data data/adult/adult-train.csv.gz --label income "
      "--positive '>50K'",
      "rateopt info"};
  std::string data_path, labels_out;
  bool as_json = false;
  ReaderFlags reader;
  app.add_option("--data", data_path, "Data file (CSV, LIBSVM, ARFF; .gz accepted)")->required();
  app.add_option("--labels", labels_out,
                 "Write the labels here, one row per line, in the --pred format of eval");
  app.add_flag("--json", as_json, "Print JSON");
  add_reader_flags(app, reader);
  if (const int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (reader.label.empty() && !labels_out.empty() && reader.format != "libsvm" &&
      reader.format != "arff" && data_path.find(".csv") != std::string::npos)
    fmt::print(stderr, "note: no --label given: the CSV is read as unlabelled\n");

  const Dataset ds = load_dataset(data_path, reader);
  const Labels& y = ds.labels();
  nlohmann::json out;
  out["data"] = data_path;
  out["rows"] = ds.num_rows();
  out["features"] = ds.num_features();
  out["storage"] = ds.features().is_sparse() ? "csr" : "dense";
  out["nnz"] = ds.features().nnz();
  out["label_kind"] = std::string(to_string(y.kind));
  out["label_names"] = y.names;
  std::vector<double> counts(y.num_outputs(), 0.0);
  if (y.kind == LabelKind::kMultilabel) {
    for (auto idx : y.set_indices) counts[static_cast<std::size_t>(idx)] += 1;
  } else if (y.kind != LabelKind::kNone) {
    for (auto v : y.values) counts[static_cast<std::size_t>(v)] += 1;
  }
  out["label_counts"] = counts;
  out["weighted"] = !ds.weights().empty();
  auto& cols = out["columns"] = nlohmann::json::array();
  for (const auto& c : ds.columns()) {
    std::vector<std::size_t> level_counts(c.levels.size(), 0);
    std::size_t missing = 0;
    for (auto code : c.codes) code < 0 ? ++missing : ++level_counts[static_cast<std::size_t>(code)];
    nlohmann::json col{{"name", c.name},
                       {"numeric", c.is_numeric()},
                       {"levels", c.levels.size()},
                       {"missing", missing}};
    if (!c.is_numeric() && c.levels.size() <= 50) {
      nlohmann::json lv;
      for (std::size_t k = 0; k < c.levels.size(); ++k) lv[c.levels[k]] = level_counts[k];
      col["counts"] = lv;
    }
    cols.push_back(std::move(col));
  }
  if (!labels_out.empty()) write_text(labels_out, labels_text(ds));

  if (as_json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{}: {} rows, {} features ({}, {} nonzeros), {} labels{}\n", data_path, ds.num_rows(),
             ds.num_features(), out["storage"].get<std::string>(), ds.features().nnz(),
             to_string(y.kind), ds.weights().empty() ? "" : ", weighted");
  if (y.kind != LabelKind::kNone) {
    const std::size_t shown = std::min<std::size_t>(y.num_outputs(), 30);
    for (std::size_t k = 0; k < shown; ++k)
      fmt::print("  label {:<24} {:>10}\n", y.names[k], counts[k]);
    if (shown < y.num_outputs()) fmt::print("  ... {} more labels\n", y.num_outputs() - shown);
  }
  for (const auto& c : cols) {
    fmt::print("  column {:<22} {} levels{}{}\n", c["name"].get<std::string>(),
               c["levels"].get<std::size_t>(), c["numeric"].get<bool>() ? " (numeric)" : "",
               c["missing"].get<std::size_t>()
                   ? fmt::format(", {} missing", c["missing"].get<std::size_t>())
                   : "");
  }
  return 0;
}

}  // namespace rateopt::cli
