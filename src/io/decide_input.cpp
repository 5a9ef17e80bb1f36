// The text inputs of `rateopt decide`: independent / multiclass probability rows and GFM JSON
// Lines (rateopt/decide_input.hpp).
#include "rateopt/decide_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>

#include "io/io_util.hpp"
#include "rateopt/error.hpp"

namespace rateopt {
namespace {

constexpr std::string_view kBlankLine =
    "blank line: every line is one instance (so that output rows line up with input rows); "
    "remove it, or give the instance's probabilities";

// Lines of `text` split at '\n' (a trailing '\r' removed), without the trailing blank lines. A
// final newline ends the last line (it does not start an empty one).
std::vector<std::string_view> lines_of(std::string_view text) {
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
  while (!lines.empty() && io_detail::trim(lines.back()).empty()) lines.pop_back();
  return lines;
}

bool is_separator(char c) {
  return c == ' ' || c == '\t' || c == ',' || c == '\r';
}

// Appends the probabilities of one line to `out`; returns how many.
std::size_t parse_row(std::string_view line, const std::string& name, std::size_t line_no,
                      std::vector<double>& out) {
  std::size_t count = 0;
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && is_separator(line[pos])) ++pos;
    if (pos == line.size()) break;
    std::size_t end = pos;
    while (end < line.size() && !is_separator(line[end])) ++end;
    const std::string_view field = line.substr(pos, end - pos);
    double v = 0;
    const auto kind = io_detail::parse_double(field, v);
    if (kind != io_detail::NumberKind::kFinite) {
      throw ParseError(name, line_no, pos + 1,
                       fmt::format("expected a probability, found {}", io_detail::quoted(field)));
    }
    if (!(v >= 0.0 && v <= 1.0)) {
      throw ParseError(name, line_no, pos + 1,
                       fmt::format("expected a probability in [0, 1], found {}", field));
    }
    out.push_back(v);
    ++count;
    pos = end;
  }
  return count;
}

// A JSON number as a label index (an integer, or a float with an integral value).
std::int64_t label_index(const nlohmann::json& v, std::size_t max_labels,
                         const std::function<void(const std::string&)>& fail) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u >= max_labels)
        fail(fmt::format("label index {} out of range (at most {} labels)", u, max_labels));
      return static_cast<std::int64_t>(u);
    }
    const auto i = v.get<std::int64_t>();
    if (i < 0 || static_cast<std::uint64_t>(i) >= max_labels)
      fail(fmt::format("label index {} out of range [0, {})", i, max_labels));
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && d >= 0 && d < static_cast<double>(max_labels))
      return static_cast<std::int64_t>(d);
    if (std::isfinite(d) && d != std::floor(d))
      fail(fmt::format("label index {} is not an integer (samples are label-index lists)", d));
    fail(fmt::format("label index {} out of range [0, {})", d, max_labels));
  }
  fail(fmt::format("expected a label index (an integer), found {}", v.dump()));
  return 0;
}

std::vector<double> read_weights(const nlohmann::json& j, std::size_t count,
                                 const std::function<void(const std::string&)>& fail) {
  std::vector<double> weights;
  if (!j.contains("weights")) return weights;
  const auto& w = j.at("weights");
  if (!w.is_array()) fail("\"weights\" must be an array of numbers, one per sample");
  if (w.size() != count)
    fail(fmt::format("\"weights\" has {} entries for {} samples", w.size(), count));
  weights.reserve(count);
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (!w[k].is_number()) fail(fmt::format("weight {} is {}, expected a number", k, w[k].dump()));
    const double x = w[k].get<double>();
    if (!std::isfinite(x) || x < 0)
      fail(fmt::format("weight {} is {}, expected a finite number >= 0", k, x));
    weights.push_back(x);
  }
  return weights;
}

std::size_t read_m(const nlohmann::json& j, std::size_t max_labels,
                   const std::function<void(const std::string&)>& fail) {
  const auto& v = j.at("m");
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
    fail(fmt::format("\"m\" is {}, expected the number of labels (an integer >= 0)", v.dump()));
  const auto m = v.get<std::uint64_t>();
  if (m > max_labels) fail(fmt::format("\"m\" = {}: at most {} labels", m, max_labels));
  return static_cast<std::size_t>(m);
}

GfmInput parse_p_form(const nlohmann::json& j, std::size_t max_labels,
                      const std::function<void(const std::string&)>& fail) {
  if (!j.contains("p0")) fail("an object with \"P\" also needs \"p0\" = P(y = 0)");
  const auto& rows = j.at("P");
  if (!rows.is_array()) fail("\"P\" must be an array of rows");
  GfmInput in;
  in.m = rows.size();
  if (in.m > max_labels)
    fail(fmt::format("\"P\" has {} rows: at most {} labels", in.m, max_labels));
  in.p.reserve(in.m * in.m);
  for (std::size_t i = 0; i < in.m; ++i) {
    const auto& row = rows[i];
    if (!row.is_array() || row.size() != in.m)
      fail(fmt::format("row {} of \"P\" must have {} entries (m x m)", i, in.m));
    for (std::size_t s = 0; s < in.m; ++s) {
      if (!row[s].is_number())
        fail(fmt::format("P[{}][{}] is {}, expected a probability", i, s, row[s].dump()));
      in.p.push_back(row[s].get<double>());
    }
  }
  if (!j.at("p0").is_number())
    fail(fmt::format("\"p0\" is {}, expected a probability", j.at("p0").dump()));
  in.p_zero = j.at("p0").get<double>();
  if (const std::string why = check_gfm_distribution(in); !why.empty())
    fail(fmt::format("impossible GFM input: {}", why));
  return in;
}

GfmInput parse_samples_form(const nlohmann::json& j, std::size_t max_labels,
                            const std::function<void(const std::string&)>& fail) {
  const auto& samples = j.at("samples");
  if (!samples.is_array()) fail("\"samples\" must be an array of label-index arrays");
  const bool m_given = j.contains("m");
  // Indicator rows given as "samples" ([[1, 0], [0, 1]]) would be read as label indices; "format":
  // "indices" (or "m") says they are indices, "format": "indicator" reads them as 0/1 rows.
  const bool indices_declared = j.contains("format");
  if (!m_given && !indices_declared && !samples.empty()) {
    bool all_01 = true;
    const std::size_t len = samples[0].is_array() ? samples[0].size() : 0;
    for (const auto& s : samples) {
      if (!s.is_array() || s.size() != len) {
        all_01 = false;
        break;
      }
      for (const auto& v : s)
        if (!v.is_number() || (v.get<double>() != 0 && v.get<double>() != 1)) all_01 = false;
      if (!all_01) break;
    }
    if (all_01 && len >= 2) {
      fail(fmt::format(
          "ambiguous \"samples\": every sample is a 0/1 list of length {}, but samples are "
          "label-index lists ([0, 2] = labels 0 and 2); for 0/1 rows add \"format\": \"indicator\" "
          "(or write them as \"indicators\"); for label indices add \"format\": \"indices\" or "
          "\"m\" (the number of labels)",
          len));
    }
  }
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::int64_t max_label = -1;
  std::vector<std::int32_t> set;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const auto& s = samples[k];
    if (!s.is_array()) fail(fmt::format("sample {} must be an array of label indices", k));
    set.clear();
    for (const auto& v : s) {
      const std::int64_t idx = label_index(v, max_labels, fail);
      set.push_back(static_cast<std::int32_t>(idx));
      max_label = std::max(max_label, idx);
    }
    std::sort(set.begin(), set.end());
    if (std::adjacent_find(set.begin(), set.end()) != set.end())
      fail(fmt::format("sample {} lists a label index twice", k));
    indices.insert(indices.end(), set.begin(), set.end());
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  std::size_t m = static_cast<std::size_t>(max_label + 1);
  if (m_given) {
    m = read_m(j, max_labels, fail);
    if (static_cast<std::int64_t>(m) <= max_label)
      fail(fmt::format("\"m\" = {} but a sample has label index {}", m, max_label));
  }
  if (samples.empty()) fail("\"samples\" is empty: give at least one sample");
  const std::vector<double> weights = read_weights(j, samples.size(), fail);
  return gfm_from_samples(LabelSetsView{indptr, indices, m}, weights, m);
}

// 0/1 rows under `key`: "indicators", or "samples" with "format": "indicator".
GfmInput parse_indicator_form(const nlohmann::json& j, std::size_t max_labels,
                              const std::function<void(const std::string&)>& fail,
                              const char* key = "indicators") {
  const auto& rows = j.at(key);
  if (!rows.is_array() || rows.empty())
    fail(fmt::format("\"{}\" must be a non-empty array of 0/1 rows, one entry per label", key));
  if (!rows[0].is_array()) fail("indicator row 0 must be an array of 0/1 entries");
  const std::size_t m = rows[0].size();
  if (m > max_labels) fail(fmt::format("indicator rows have {} labels: at most {}", m, max_labels));
  if (j.contains("m") && read_m(j, max_labels, fail) != m)
    fail(fmt::format("\"m\" = {} but the indicator rows have {} entries", j.at("m").dump(), m));
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[k];
    if (!r.is_array() || r.size() != m)
      fail(fmt::format("indicator row {} must have {} entries (one per label)", k, m));
    for (std::size_t i = 0; i < m; ++i) {
      const auto& v = r[i];
      const bool one = v.is_boolean() ? v.get<bool>() : v.is_number() && v.get<double>() == 1;
      const bool zero = v.is_boolean() ? !v.get<bool>() : v.is_number() && v.get<double>() == 0;
      if (!one && !zero)
        fail(fmt::format("indicator row {} entry {} is {}, expected 0 or 1", k, i, v.dump()));
      if (one) indices.push_back(static_cast<std::int32_t>(i));
    }
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  const std::vector<double> weights = read_weights(j, rows.size(), fail);
  return gfm_from_samples(LabelSetsView{indptr, indices, m}, weights, m);
}

}  // namespace

DecideInstances parse_decide_instances(std::string_view text, const std::string& name,
                                       bool column) {
  DecideInstances out;
  const auto lines = lines_of(text);
  if (column) {
    out.instances.emplace_back();
    out.instances[0].reserve(lines.size());
    out.lines.push_back(1);
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t line_no = i + 1;
    std::vector<double>& row = column ? out.instances[0] : out.instances.emplace_back();
    const std::size_t count = parse_row(lines[i], name, line_no, row);
    if (count == 0) throw ParseError(name, line_no, 0, std::string(kBlankLine));
    if (column && count > 1) {
      throw ParseError(name, line_no, 0,
                       fmt::format("--column expects one probability per line, found {}", count));
    }
    if (!column) out.lines.push_back(line_no);
  }
  return out;
}

GfmInput parse_gfm_line(std::string_view line, const std::string& name, std::size_t line_no,
                        std::size_t max_labels) {
  const std::function<void(const std::string&)> fail = [&](const std::string& what) {
    throw ParseError(name, line_no, 0, what);
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("expected a JSON object: {}", e.what()));
  }
  if (!j.is_object())
    fail("expected a JSON object with \"P\" and \"p0\", \"samples\" or \"indicators\"");
  const int forms = static_cast<int>(j.contains("P")) + static_cast<int>(j.contains("samples")) +
                    static_cast<int>(j.contains("indicators"));
  if (forms > 1) fail("give one of \"P\", \"samples\" and \"indicators\", not several");
  bool indicator_format = false;
  if (j.contains("format")) {
    const auto& f = j.at("format");
    indicator_format = f.is_string() && f.get<std::string>() == "indicator";
    if (!indicator_format && !(f.is_string() && f.get<std::string>() == "indices"))
      fail(
          fmt::format("\"format\" is {}, expected \"indicator\" (0/1 rows) or \"indices\" "
                      "(label-index lists)",
                      f.dump()));
    if (!j.contains("samples")) fail("\"format\" describes \"samples\" and needs them");
  }
  try {
    if (j.contains("P")) return parse_p_form(j, max_labels, fail);
    if (j.contains("samples") && indicator_format)
      return parse_indicator_form(j, max_labels, fail, "samples");
    if (j.contains("samples")) return parse_samples_form(j, max_labels, fail);
    if (j.contains("indicators")) return parse_indicator_form(j, max_labels, fail);
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("malformed GFM input: {}", e.what()));
  } catch (const std::invalid_argument& e) {
    std::string_view what = e.what();
    constexpr std::string_view kPrefix = "[rateopt.invalid_argument] ";
    if (what.starts_with(kPrefix)) what.remove_prefix(kPrefix.size());
    fail(std::string(what));
  }
  fail(
      "expected {\"P\": [[...]], \"p0\": x}, {\"samples\": [[...]], \"weights\": [...]} or "
      "{\"indicators\": [[0/1, ...]]}");
  return {};
}

GfmInstances parse_gfm_lines(std::string_view text, const std::string& name,
                             std::size_t max_labels) {
  GfmInstances out;
  const auto lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (io_detail::trim(lines[i]).empty())
      throw ParseError(name, i + 1, 0, std::string(kBlankLine));
    out.instances.push_back(parse_gfm_line(lines[i], name, i + 1, max_labels));
    out.lines.push_back(i + 1);
  }
  return out;
}

std::string check_gfm_distribution(const GfmInput& input) {
  const std::size_t m = input.m;
  if (input.p.size() != m * m)
    return fmt::format("P has {} entries, expected m * m = {} * {}", input.p.size(), m, m);
  if (!std::isfinite(input.p_zero) || input.p_zero < 0 || input.p_zero > 1)
    return fmt::format("p0 = P(y = 0) is {}, expected a probability in [0, 1]", input.p_zero);
  double total = input.p_zero;  // p0 + sum_s P(|y| = s)
  double total_slack = 1e-6;
  for (std::size_t i = 0; i < m; ++i) {
    double row = 0;
    std::size_t nonzero = 0;
    for (std::size_t s = 0; s < m; ++s) {
      const double x = input.p[i * m + s];
      if (!std::isfinite(x) || x < 0 || x > 1)
        return fmt::format("P[{}][{}] is {}, expected a probability in [0, 1]", i, s, x);
      if (x == 0) continue;
      row += x;
      ++nonzero;
      total += x / static_cast<double>(s + 1);
      total_slack += 5e-7 / static_cast<double>(s + 1);
    }
    const double row_slack = 1e-9 + 5e-7 * static_cast<double>(nonzero + 1);
    if (row > 1 - input.p_zero + row_slack) {
      return fmt::format(
          "row {} of P sums to {:.9g} = P(y_{} = 1), more than 1 - p0 = {:.9g} (P[i][s] = "
          "P(y_i = 1, |y| = s + 1))",
          i, row, i, 1 - input.p_zero);
    }
  }
  if (std::abs(total - 1) > total_slack) {
    return fmt::format(
        "the probabilities sum to {:.9g}, expected 1: p0 + sum over s of P(|y| = s + 1) = "
        "sum_i P[i][s] / (s + 1)",
        total);
  }
  return {};
}

}  // namespace rateopt
