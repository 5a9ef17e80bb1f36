// The text inputs of `rateopt decide`: independent / multiclass probability rows and GFM JSON
// Lines (rateopt/decide_input.hpp).
#include "rateopt/decide_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>

#include "common/check.hpp"
#include "common/parallel.hpp"
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

using FailFn = std::function<void(const std::string&)>;

// An InvalidArgument's text without its "[rateopt.invalid_argument] " tag.
std::string without_prefix(std::string_view what) {
  constexpr std::string_view kPrefix = "[rateopt.invalid_argument] ";
  if (what.starts_with(kPrefix)) what.remove_prefix(kPrefix.size());
  return std::string(what);
}

// The check gfm_from_samples makes of the weights (its message), made here so that a samples
// record is valid for decide_gfm_samples as read.
void check_weight_total(std::size_t count, const std::vector<double>& weights, const FailFn& fail) {
  double total = 0;
  for (std::size_t j = 0; j < count; ++j) total += weights.empty() ? 1.0 : weights[j];
  if (!(total > 0 && std::isfinite(total)))
    fail(fmt::format("gfm_from_samples: the weights sum to {}, expected a positive finite total",
                     total));
}

// ---- the reference reader (nlohmann::json): every accepted line and every error message -------

GfmRecord read_p_form(const nlohmann::json& j, std::size_t max_labels, const FailFn& fail) {
  if (!j.contains("p0")) fail(R"(an object with "P" also needs "p0" = P(y = 0))");
  const auto& rows = j.at("P");
  if (!rows.is_array()) fail("\"P\" must be an array of rows");
  GfmRecord rec;
  GfmInput& in = rec.matrix;
  in.m = rows.size();
  const std::size_t m = in.m;
  if (m > max_labels) fail(fmt::format("\"P\" has {} rows: at most {} labels", m, max_labels));
  // m x S: every row as long as row 0 (S <= m); the columns s >= S are 0. S = m is the square form.
  std::size_t width = m;
  if (m > 0 && rows[0].is_array() && rows[0].size() <= m) width = rows[0].size();
  in.p.assign(m * m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const auto& row = rows[i];
    if (!row.is_array() || row.size() != width) {
      if (width == m) fail(fmt::format("row {} of \"P\" must have {} entries (m x m)", i, m));
      fail(
          fmt::format("row {} of \"P\" must have {} entries (m x S: every row as long as row 0, "
                      "S <= m = {})",
                      i, width, m));
    }
    for (std::size_t s = 0; s < width; ++s) {
      if (!row[s].is_number())
        fail(fmt::format("P[{}][{}] is {}, expected a probability", i, s, row[s].dump()));
      in.p[i * m + s] = row[s].get<double>();
    }
  }
  if (!j.at("p0").is_number())
    fail(fmt::format("\"p0\" is {}, expected a probability", j.at("p0").dump()));
  in.p_zero = j.at("p0").get<double>();
  if (const std::string why = check_gfm_distribution(in); !why.empty())
    fail(fmt::format("impossible GFM input: {}", why));
  return rec;
}

// {"p0": x, "m": M, "P_sparse": [[i, s, value], ...]}: P[i][s] = value (0-based i and s, as in the
// dense form: |y| = s + 1), every other entry 0.
GfmRecord read_sparse_form(const nlohmann::json& j, std::size_t max_labels, const FailFn& fail) {
  if (!j.contains("p0")) fail(R"(an object with "P_sparse" also needs "p0" = P(y = 0))");
  if (!j.contains("m")) fail(R"(an object with "P_sparse" also needs "m" (the number of labels))");
  const std::size_t m = read_m(j, max_labels, fail);
  const auto& entries = j.at("P_sparse");
  if (!entries.is_array()) fail("\"P_sparse\" must be an array of [i, s, value] entries");
  GfmRecord rec;
  GfmInput& in = rec.matrix;
  in.m = m;
  in.p.assign(m * m, 0.0);
  std::vector<char> seen(m * m, 0);
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const auto& e = entries[k];
    if (!e.is_array() || e.size() != 3 || !e[0].is_number_integer() || !e[1].is_number_integer() ||
        !e[2].is_number())
      fail(
          fmt::format("\"P_sparse\" entry {} is {}, expected [i, s, value] (label i and column s "
                      "integers, value a probability)",
                      k, e.dump()));
    const auto index = [&](const nlohmann::json& v) -> std::size_t {
      if (v.is_number_unsigned() && v.get<std::uint64_t>() < m)
        return static_cast<std::size_t>(v.get<std::uint64_t>());
      fail(fmt::format("\"P_sparse\" entry {} is {}: i and s must be in [0, m) = [0, {})", k,
                       e.dump(), m));
      return 0;
    };
    const std::size_t i = index(e[0]);
    const std::size_t s = index(e[1]);
    if (seen[i * m + s] != 0)
      fail(fmt::format("\"P_sparse\" entry {} gives P[{}][{}] a second time", k, i, s));
    seen[i * m + s] = 1;
    in.p[i * m + s] = e[2].get<double>();
  }
  if (!j.at("p0").is_number())
    fail(fmt::format("\"p0\" is {}, expected a probability", j.at("p0").dump()));
  in.p_zero = j.at("p0").get<double>();
  if (const std::string why = check_gfm_distribution(in); !why.empty())
    fail(fmt::format("impossible GFM input: {}", why));
  return rec;
}

GfmRecord read_samples_form(const nlohmann::json& j, std::size_t max_labels, const FailFn& fail) {
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
  GfmRecord rec;
  rec.is_samples = true;
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
    rec.indices.insert(rec.indices.end(), set.begin(), set.end());
    rec.indptr.push_back(static_cast<std::int64_t>(rec.indices.size()));
  }
  rec.m = static_cast<std::size_t>(max_label + 1);
  if (m_given) {
    rec.m = read_m(j, max_labels, fail);
    if (static_cast<std::int64_t>(rec.m) <= max_label)
      fail(fmt::format("\"m\" = {} but a sample has label index {}", rec.m, max_label));
  }
  if (samples.empty()) fail("\"samples\" is empty: give at least one sample");
  rec.weights = read_weights(j, samples.size(), fail);
  check_weight_total(samples.size(), rec.weights, fail);
  return rec;
}

// 0/1 rows under `key`: "indicators", or "samples" with "format": "indicator".
GfmRecord read_indicator_form(const nlohmann::json& j, std::size_t max_labels, const FailFn& fail,
                              const char* key = "indicators") {
  const auto& rows = j.at(key);
  if (!rows.is_array() || rows.empty())
    fail(fmt::format("\"{}\" must be a non-empty array of 0/1 rows, one entry per label", key));
  if (!rows[0].is_array()) fail("indicator row 0 must be an array of 0/1 entries");
  const std::size_t m = rows[0].size();
  if (m > max_labels) fail(fmt::format("indicator rows have {} labels: at most {}", m, max_labels));
  if (j.contains("m") && read_m(j, max_labels, fail) != m)
    fail(fmt::format("\"m\" = {} but the indicator rows have {} entries", j.at("m").dump(), m));
  GfmRecord rec;
  rec.is_samples = true;
  rec.m = m;
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
      if (one) rec.indices.push_back(static_cast<std::int32_t>(i));
    }
    rec.indptr.push_back(static_cast<std::int64_t>(rec.indices.size()));
  }
  rec.weights = read_weights(j, rows.size(), fail);
  check_weight_total(rows.size(), rec.weights, fail);
  return rec;
}

GfmRecord read_gfm_reference(std::string_view line, const GfmLimits& limits, const FailFn& fail) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("expected a JSON object: {}", e.what()));
  }
  if (!j.is_object())
    fail(R"(expected a JSON object with "P" and "p0", "samples" or "indicators")");
  const int forms = static_cast<int>(j.contains("P")) + static_cast<int>(j.contains("samples")) +
                    static_cast<int>(j.contains("indicators")) +
                    static_cast<int>(j.contains("P_sparse"));
  if (forms > 1) fail(R"(give one of "P", "P_sparse", "samples" and "indicators", not several)");
  bool indicator_format = false;
  if (j.contains("format")) {
    const auto& f = j.at("format");
    indicator_format = f.is_string() && f.get<std::string>() == "indicator";
    if (!indicator_format && !(f.is_string() && f.get<std::string>() == "indices"))
      fail(
          fmt::format("\"format\" is {}, expected \"indicator\" (0/1 rows) or \"indices\" "
                      "(label-index lists)",
                      f.dump()));
    if (!j.contains("samples")) fail(R"("format" describes "samples" and needs them)");
  }
  try {
    if (j.contains("P")) return read_p_form(j, limits.max_labels, fail);
    if (j.contains("P_sparse")) return read_sparse_form(j, limits.max_labels, fail);
    if (j.contains("samples") && indicator_format)
      return read_indicator_form(j, limits.max_sample_labels, fail, "samples");
    if (j.contains("samples")) return read_samples_form(j, limits.max_sample_labels, fail);
    if (j.contains("indicators")) return read_indicator_form(j, limits.max_sample_labels, fail);
  } catch (const nlohmann::json::exception& e) {
    fail(fmt::format("malformed GFM input: {}", e.what()));
  } catch (const std::invalid_argument& e) {
    std::string_view what = e.what();
    constexpr std::string_view kPrefix = "[rateopt.invalid_argument] ";
    if (what.starts_with(kPrefix)) what.remove_prefix(kPrefix.size());
    fail(std::string(what));
  }
  fail(
      "expected {\"P\": [[...]], \"p0\": x}, {\"P_sparse\": [[i, s, x], ...], \"m\": M, \"p0\": "
      "x}, {\"samples\": [[...]], \"weights\": [...]} or {\"indicators\": [[0/1, ...]]}");
  return {};
}

// check_gfm_distribution's checks, made on P's non-zero entries (a zero is in range and adds
// nothing), which for_each(visit) gives in row-major order, calling visit(i, s, P[i][s]) until it
// returns false. The fast reader knows where a dense line's non-zeros are and checks only those,
// with the same arithmetic in the same order, so the outcome and the message are the same.
template <typename ForEach>
std::string check_gfm_entries(double p_zero, ForEach&& for_each) {
  if (!std::isfinite(p_zero) || p_zero < 0 || p_zero > 1)
    return fmt::format("p0 = P(y = 0) is {}, expected a probability in [0, 1]", p_zero);
  double total = p_zero;  // p0 + sum_s P(|y| = s)
  double total_slack = 1e-6;
  constexpr auto kNone = static_cast<std::size_t>(-1);
  std::size_t row_index = kNone;
  double row = 0;
  std::size_t nonzero = 0;
  std::string why;
  const auto row_fits = [&] {
    if (row_index == kNone) return true;
    const double row_slack = 1e-9 + 5e-7 * static_cast<double>(nonzero + 1);
    if (row <= 1 - p_zero + row_slack) return true;
    why = fmt::format(
        "row {} of P sums to {:.9g} = P(y_{} = 1), more than 1 - p0 = {:.9g} (P[i][s] = "
        "P(y_i = 1, |y| = s + 1))",
        row_index, row, row_index, 1 - p_zero);
    return false;
  };
  for_each([&](std::size_t i, std::size_t s, double x) {
    if (i != row_index) {
      if (!row_fits()) return false;
      row_index = i;
      row = 0;
      nonzero = 0;
    }
    if (!std::isfinite(x) || x < 0 || x > 1) {
      why = fmt::format("P[{}][{}] is {}, expected a probability in [0, 1]", i, s, x);
      return false;
    }
    row += x;
    ++nonzero;
    total += x / static_cast<double>(s + 1);
    total_slack += 5e-7 / static_cast<double>(s + 1);
    return true;
  });
  if (!why.empty() || !row_fits()) return why;
  if (std::abs(total - 1) > total_slack) {
    return fmt::format(
        "the probabilities sum to {:.9g}, expected 1: p0 + sum over s of P(|y| = s + 1) = "
        "sum_i P[i][s] / (s + 1)",
        total);
  }
  return {};
}

// ---- the fast reader ----------------------------------------------------------------------------
// One pass over the JSON subset GFM lines are written in: one object whose keys are "p0", "m",
// "P", "P_sparse", "samples", "indicators", "weights" and "format", each at most once, with
// numbers, label indices written as plain integers and a "format" string without escapes. At
// anything else (another key or value type, a duplicate key, an escape, a number from_chars does
// not read exactly, a line the reference reader would reject) it gives up and the reference
// reader runs, so the fast reader changes neither what is accepted nor any error message: where it
// accepts a line, the record is the reference reader's, bit for bit (numbers as nlohmann::json
// reads them: integers exactly, others correctly rounded).

struct FastFields {
  bool p0 = false, m = false, p = false, sparse = false, samples = false, indicators = false,
       weights = false, format = false;
  double p0_value = 0;
  std::uint64_t m_value = 0;
  std::vector<double> values;         // P rows, or the values of P_sparse
  std::vector<std::size_t> nonzero;   // P rows: where in `values` the non-zero numbers are
  std::vector<std::size_t> row_end;   // P rows / samples / indicator rows: end of each in
                                      // `values` / `labels`
  std::vector<std::uint64_t> labels;  // samples / indicators, or (i, s) pairs of P_sparse
  std::vector<double> weight_values;
  std::string_view format_value;

  // Empty again, keeping the vectors' memory (one FastFields per thread is reused).
  void reset() {
    p0 = m = p = sparse = samples = indicators = weights = format = false;
    p0_value = 0;
    m_value = 0;
    values.clear();
    nonzero.clear();
    row_end.clear();
    labels.clear();
    weight_values.clear();
    format_value = {};
  }
};

class FastScanner {
 public:
  explicit FastScanner(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}

  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool eat(char c) {
    skip_ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_ws();
    return p_ == end_;
  }
  // A string without escapes or control characters.
  bool string(std::string_view& out) {
    if (!eat('"')) return false;
    const char* begin = p_;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\\' || static_cast<unsigned char>(*p_) < 0x20) return false;
      ++p_;
    }
    if (p_ == end_) return false;
    out = std::string_view(begin, static_cast<std::size_t>(p_ - begin));
    ++p_;
    return true;
  }
  // A number as nlohmann::json's get<double>() gives it: an integer token that fits (u)int64 is
  // converted from the integer ("-0" is +0.0), any other token is read as a double. One pass: the
  // grammar is checked while the digits are gathered; Clinger's fast path (below) gives most
  // values, from_chars the rest.
  bool number(double& out) {
    skip_ws();
    const char* const begin = p_;
    // "0.0" (how json.dumps prints a zero) before a separator: most entries of a dense P.
    if (end_ - p_ >= 4 && p_[0] == '0' && p_[1] == '.' && p_[2] == '0' &&
        (p_[3] == ',' || p_[3] == ']' || p_[3] == ' ')) {
      p_ += 3;
      out = 0.0;
      return true;
    }
    const bool negative = p_ < end_ && *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    std::uint64_t mantissa = 0;
    int digits = 0;
    if (*p_ == '0') {
      ++p_;
      ++digits;
    } else {
      for (; p_ < end_ && *p_ >= '0' && *p_ <= '9'; ++p_, ++digits)
        mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p_ - '0');
    }
    int exponent = 0;
    bool integral = true;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      integral = false;
      const char* const start = p_;
      for (; p_ < end_ && *p_ >= '0' && *p_ <= '9'; ++p_, ++digits, --exponent)
        mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p_ - '0');
      if (p_ == start) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      integral = false;
      const bool minus = p_ < end_ && *p_ == '-';
      if (p_ < end_ && (*p_ == '-' || *p_ == '+')) ++p_;
      const char* const start = p_;
      int e = 0;
      for (; p_ < end_ && *p_ >= '0' && *p_ <= '9'; ++p_)
        if (p_ - start < 6) e = e * 10 + (*p_ - '0');
      if (p_ == start) return false;
      if (p_ - start >= 6) digits = 99;  // a long exponent: from_chars decides
      exponent += minus ? -e : e;
    }
    if (digits <= 19) {  // the mantissa is exact (< 10^19 < 2^64)
      if (integral) {    // nlohmann::json holds an integer; get<double>() converts it
        if (!negative) {
          out = static_cast<double>(mantissa);
          return true;
        }
        if (mantissa <= (std::uint64_t{1} << 63)) {
          out = mantissa == 0 ? 0.0 : -static_cast<double>(mantissa);
          return true;
        }
      } else if (clinger(mantissa, exponent, negative, out)) {
        return true;
      }
    }
    const std::string_view t(begin, static_cast<std::size_t>(p_ - begin));
    if (integral) {  // more than 19 digits: an integer if it fits, else a double (nlohmann)
      if (negative) {
        std::int64_t v = 0;
        const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
        if (r.ec == std::errc() && r.ptr == t.data() + t.size()) {
          out = static_cast<double>(v);
          return true;
        }
      } else {
        std::uint64_t v = 0;
        const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
        if (r.ec == std::errc() && r.ptr == t.data() + t.size()) {
          out = static_cast<double>(v);
          return true;
        }
      }
    }
    const auto r = std::from_chars(t.data(), t.data() + t.size(), out);
    return r.ec == std::errc() && r.ptr == t.data() + t.size() && std::isfinite(out);
  }
  // Clinger's fast path: the value M * 10^e of an exact integer M <= 2^53 and |e| <= 22 is one
  // multiplication or division of two exact doubles, so it rounds correctly: the double from_chars
  // (and strtod) give. False outside that range.
  static bool clinger(std::uint64_t mantissa, int exponent, bool negative, double& out) {
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    double value = 0;
    if (mantissa != 0) {
      if (mantissa > (std::uint64_t{1} << 53) || exponent < -22 || exponent > 22) return false;
      const auto m = static_cast<double>(mantissa);
      value = exponent < 0 ? m / kPow10[-exponent] : m * kPow10[exponent];
    }
    out = negative ? -value : value;
    return true;
  }
  // A label index or count: a non-negative integer token.
  // One pass: "0" or a non-zero digit and digits, at most 18 of them (no overflow), not followed
  // by a fraction or an exponent.
  bool index(std::uint64_t& out) {
    skip_ws();
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    const char* const start = p_;
    std::uint64_t v = 0;
    if (*p_ == '0') {
      ++p_;
    } else {
      for (; p_ < end_ && *p_ >= '0' && *p_ <= '9'; ++p_)
        v = v * 10 + static_cast<std::uint64_t>(*p_ - '0');
      if (p_ - start > 18) return false;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E' || (*p_ >= '0' && *p_ <= '9')))
      return false;
    out = v;
    return true;
  }
  // The numbers of an array up to its ']' (the '[' already eaten), appended to `out`. json.dumps
  // writes a zero as "0.0" and separates with ", ": runs of ", 0.0" ending the token (before ','
  // or ']'), most of a dense P, are counted 5 bytes a step and appended at once.
  // The positions of the non-zero numbers (-0.0 is zero) go to `nonzero`.
  bool number_list(std::vector<double>& out, std::vector<std::size_t>& nonzero) {
    if (eat(']')) return true;
    for (;;) {
      double v = 0;
      if (!number(v)) return false;
      if (v != 0) nonzero.push_back(out.size());
      out.push_back(v);
      std::size_t zeros = 0;
      // Eight at a time while a ninth follows (five 8-byte words, then the next ','), then three
      // at a time while a fourth follows, then one at a time.
      while (end_ - p_ >= 41 && eight_zeros(p_) && p_[40] == ',') {
        zeros += 8;
        p_ += 40;
      }
      while (end_ - p_ >= 16 && std::memcmp(p_, ", 0.0, 0.0, 0.0,", 16) == 0) {
        zeros += 3;
        p_ += 15;
      }
      while (end_ - p_ >= 6 && std::memcmp(p_, ", 0.0", 5) == 0 && (p_[5] == ',' || p_[5] == ']')) {
        ++zeros;
        p_ += 5;
      }
      if (zeros != 0) out.insert(out.end(), zeros, 0.0);
      if (!eat(',')) return eat(']');
    }
  }
  // Whether the 40 bytes at p are ", 0.0" eight times: five 8-byte words compared at once.
  static bool eight_zeros(const char* p) {
    static constexpr char kRun[] = ", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0";
    std::uint64_t diff = 0;
    for (std::ptrdiff_t w = 0; w < 5; ++w) {
      std::uint64_t a = 0, b = 0;
      std::memcpy(&a, p + 8 * w, 8);
      std::memcpy(&b, kRun + 8 * w, 8);
      diff |= a ^ b;
    }
    return diff == 0;
  }
  // [x, ...] calling item() for each element.
  template <typename Item>
  bool array(Item&& item) {
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
      if (!item()) return false;
    } while (eat(','));
    return eat(']');
  }

 private:
  const char* p_;
  const char* end_;
};

bool fast_fields(std::string_view line, FastFields& f) {
  FastScanner sc(line);
  if (!sc.eat('{')) return false;
  const auto rows_of = [&](auto&& item) {
    return sc.array([&] {
      if (!sc.array(item)) return false;
      f.row_end.push_back(item.size());
      return true;
    });
  };
  struct Labels {  // appends label indices to f.labels
    FastScanner& sc;
    FastFields& f;
    bool operator()() {
      std::uint64_t v = 0;
      if (!sc.index(v)) return false;
      f.labels.push_back(v);
      return true;
    }
    [[nodiscard]] std::size_t size() const { return f.labels.size(); }
  };
  if (sc.eat('}')) return sc.at_end();
  do {
    std::string_view key;
    if (!sc.string(key) || !sc.eat(':')) return false;
    const auto once = [](bool& seen) { return !std::exchange(seen, true); };
    bool ok = false;
    if (key == "p0") {
      ok = once(f.p0) && sc.number(f.p0_value);
    } else if (key == "m") {
      ok = once(f.m) && sc.index(f.m_value);
    } else if (key == "P") {
      // One of P / P_sparse / samples / indicators fills values, labels and row_end.
      ok = !f.p && !f.sparse && !f.samples && !f.indicators && once(f.p) && sc.array([&] {
        if (!sc.eat('[') || !sc.number_list(f.values, f.nonzero)) return false;
        f.row_end.push_back(f.values.size());
        return true;
      });
    } else if (key == "samples" || key == "indicators") {
      ok = !f.p && !f.sparse && !f.samples && !f.indicators &&
           once(key == "samples" ? f.samples : f.indicators) && rows_of(Labels{sc, f});
    } else if (key == "P_sparse") {
      ok = !f.p && !f.sparse && !f.samples && !f.indicators && once(f.sparse) && sc.array([&] {
        std::uint64_t i = 0, s = 0;
        double v = 0;
        if (!sc.eat('[') || !sc.index(i) || !sc.eat(',') || !sc.index(s) || !sc.eat(',') ||
            !sc.number(v) || !sc.eat(']'))
          return false;
        f.labels.push_back(i);
        f.labels.push_back(s);
        f.values.push_back(v);
        return true;
      });
    } else if (key == "weights") {
      ok = once(f.weights) && sc.array([&] {
        double v = 0;
        if (!sc.number(v)) return false;
        f.weight_values.push_back(v);
        return true;
      });
    } else if (key == "format") {
      ok = once(f.format) && sc.string(f.format_value);
    }
    if (!ok) return false;
  } while (sc.eat(','));
  return sc.eat('}') && sc.at_end();
}

// P given as a matrix (m x m or m x S, "P") or as entries ("P_sparse"), with p0: the record, or
// false as fast_record.
bool fast_matrix_record(FastFields& f, const GfmLimits& limits, GfmRecord& rec) {
  if (!f.p0) return false;
  GfmInput& in = rec.matrix;
  if (f.p) {
    const std::size_t m = f.row_end.size();
    if (m > limits.max_labels) return false;
    const std::size_t width = m == 0 ? 0 : f.row_end[0];
    if (width > m) return false;
    in.m = m;
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t begin = i == 0 ? 0 : f.row_end[i - 1];
      if (f.row_end[i] - begin != width) return false;
    }
    if (width == m) {
      in.p.swap(f.values);  // already m x m, row-major (both buffers stay with their thread)
    } else {
      in.p.assign(m * m, 0.0);
      for (std::size_t i = 0; i < m; ++i) {
        const std::size_t begin = i == 0 ? 0 : f.row_end[i - 1];
        std::copy(f.values.begin() + static_cast<std::ptrdiff_t>(begin),
                  f.values.begin() + static_cast<std::ptrdiff_t>(f.row_end[i]),
                  in.p.begin() + static_cast<std::ptrdiff_t>(i * m));
      }
    }
  } else {
    if (!f.m || f.m_value > limits.max_labels) return false;
    const auto m = static_cast<std::size_t>(f.m_value);
    in.m = m;
    in.p.assign(m * m, 0.0);
    std::vector<char> seen(m * m, 0);
    for (std::size_t k = 0; k < f.values.size(); ++k) {
      const std::uint64_t i = f.labels[2 * k];
      const std::uint64_t s = f.labels[2 * k + 1];
      if (i >= m || s >= m) return false;
      const std::size_t at = static_cast<std::size_t>(i) * m + static_cast<std::size_t>(s);
      if (seen[at] != 0) return false;
      seen[at] = 1;
      in.p[at] = f.values[k];
    }
  }
  in.p_zero = f.p0_value;
  if (f.sparse) {
    // Entries in row-major order (as P_sparse is usually written): check those; else all of P.
    bool ordered = true;
    for (std::size_t k = 1; k < f.values.size() && ordered; ++k)
      ordered =
          f.labels[2 * k - 2] < f.labels[2 * k] ||
          (f.labels[2 * k - 2] == f.labels[2 * k] && f.labels[2 * k - 1] < f.labels[2 * k + 1]);
    if (!ordered) return check_gfm_distribution(in).empty();
    return check_gfm_entries(
               in.p_zero,
               [&](const auto& visit) {
                 for (std::size_t k = 0; k < f.values.size(); ++k)
                   if (f.values[k] != 0 &&
                       !visit(static_cast<std::size_t>(f.labels[2 * k]),
                              static_cast<std::size_t>(f.labels[2 * k + 1]), f.values[k]))
                     return;
               })
        .empty();
  }
  // P's non-zeros as read (P[i][s] at k = i * width + s of the line), in row-major order.
  const std::size_t m = in.m;
  const std::size_t width = m == 0 ? 0 : f.row_end[0];
  return check_gfm_entries(in.p_zero,
                           [&](const auto& visit) {
                             for (const std::size_t k : f.nonzero) {
                               const std::size_t i = k / width;
                               const std::size_t s = k % width;
                               if (!visit(i, s, in.p[i * m + s])) return;
                             }
                           })
      .empty();
}

// Label sets ("samples" as indices or indicators, optional weights): the record, or false as
// fast_record.
bool fast_samples_record(FastFields& f, const GfmLimits& limits, GfmRecord& rec) {
  rec.is_samples = true;
  const std::size_t n = f.row_end.size();
  const auto row = [&](std::size_t k) {
    const std::size_t begin = k == 0 ? 0 : f.row_end[k - 1];
    return std::span<const std::uint64_t>(f.labels.data() + begin, f.row_end[k] - begin);
  };
  const std::size_t max_labels = limits.max_sample_labels;
  if (f.indicators || f.format_value == "indicator") {
    if (n == 0) return false;
    const std::size_t m = row(0).size();
    if (m > max_labels || (f.m && f.m_value != m)) return false;
    rec.m = m;
    for (std::size_t k = 0; k < n; ++k) {
      const auto r = row(k);
      if (r.size() != m) return false;
      for (std::size_t i = 0; i < m; ++i) {
        if (r[i] > 1) return false;
        if (r[i] == 1) rec.indices.push_back(static_cast<std::int32_t>(i));
      }
      rec.indptr.push_back(static_cast<std::int64_t>(rec.indices.size()));
    }
  } else {
    if (n == 0) return false;
    if (!f.m && !f.format) {  // the reference reader's ambiguity rule
      const std::size_t len = row(0).size();
      bool all_01 = len >= 2;
      for (std::size_t k = 0; k < n && all_01; ++k) {
        const auto r = row(k);
        all_01 = r.size() == len && std::all_of(r.begin(), r.end(), [](auto v) { return v <= 1; });
      }
      if (all_01) return false;
    }
    std::uint64_t top = 0;  // max label + 1
    for (std::size_t k = 0; k < n; ++k) {
      const auto r = row(k);
      const auto begin = static_cast<std::ptrdiff_t>(rec.indices.size());
      for (const std::uint64_t v : r) {
        if (v >= max_labels) return false;
        rec.indices.push_back(static_cast<std::int32_t>(v));
        top = std::max(top, v + 1);
      }
      if (!std::is_sorted(rec.indices.begin() + begin, rec.indices.end()))
        std::sort(rec.indices.begin() + begin, rec.indices.end());
      if (std::adjacent_find(rec.indices.begin() + begin, rec.indices.end()) != rec.indices.end())
        return false;
      rec.indptr.push_back(static_cast<std::int64_t>(rec.indices.size()));
    }
    if (f.m && (f.m_value > max_labels || f.m_value < top)) return false;
    rec.m = f.m ? static_cast<std::size_t>(f.m_value) : static_cast<std::size_t>(top);
  }
  if (f.weights) {
    if (f.weight_values.size() != n) return false;
    for (const double w : f.weight_values)
      if (!(std::isfinite(w) && w >= 0)) return false;
    rec.weights = f.weight_values;
  }
  double total = 0;
  for (std::size_t j = 0; j < n; ++j) total += rec.weights.empty() ? 1.0 : rec.weights[j];
  return total > 0 && std::isfinite(total);
}

// The record of fast_fields' line, or false wherever the reference reader would reject the line
// (or might read it differently).
bool fast_record(FastFields& f, const GfmLimits& limits, GfmRecord& rec) {
  const int forms = static_cast<int>(f.p) + static_cast<int>(f.sparse) +
                    static_cast<int>(f.samples) + static_cast<int>(f.indicators);
  if (forms != 1) return false;
  if (f.format && (!f.samples || (f.format_value != "indicator" && f.format_value != "indices")))
    return false;
  return f.p || f.sparse ? fast_matrix_record(f, limits, rec) : fast_samples_record(f, limits, rec);
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

namespace {

// parse_gfm_record into `rec`, whose vectors keep their memory when the fast reader takes the line
// (decide_lines reuses one record per thread: no allocation, no page faults per line).
void parse_gfm_record_into(std::string_view line, const std::string& name, std::size_t line_no,
                           const GfmLimits& limits, GfmRecord& rec) {
  if (limits.fast) {
    thread_local FastFields fields;
    fields.reset();
    rec.is_samples = false;
    rec.matrix.m = 0;
    rec.matrix.p.clear();
    rec.matrix.p_zero = 0;
    rec.m = 0;
    rec.indptr.assign(1, 0);
    rec.indices.clear();
    rec.weights.clear();
    if (fast_fields(line, fields) && fast_record(fields, limits, rec)) return;
  }
  const FailFn fail = [&](const std::string& what) { throw ParseError(name, line_no, 0, what); };
  rec = read_gfm_reference(line, limits, fail);
}

}  // namespace

GfmRecord parse_gfm_record(std::string_view line, const std::string& name, std::size_t line_no,
                           const GfmLimits& limits) {
  GfmRecord rec;
  parse_gfm_record_into(line, name, line_no, limits, rec);
  return rec;
}

GfmInput parse_gfm_line(std::string_view line, const std::string& name, std::size_t line_no,
                        std::size_t max_labels) {
  GfmRecord rec = parse_gfm_record(line, name, line_no, GfmLimits{max_labels, max_labels});
  if (!rec.is_samples) return std::move(rec.matrix);
  return gfm_from_samples(rec.samples(), rec.weights, rec.m);
}

Decision decide_gfm_record(const GfmRecord& record, const DecideMetric& metric,
                           const DecideOptions& options) {
  if (!record.is_samples) return decide_gfm(record.matrix, metric, options);
  return decide_gfm_samples(record.samples(), record.weights, record.m, metric, options);
}

ParseError decide_blank_line_error(const std::string& name, std::size_t line_no) {
  return {name, line_no, 0, std::string(kBlankLine)};
}

std::size_t parse_decide_row(std::string_view line, const std::string& name, std::size_t line_no,
                             std::vector<double>& out) {
  const std::size_t count = parse_row(line, name, line_no, out);
  if (count == 0) throw decide_blank_line_error(name, line_no);
  return count;
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
  return check_gfm_entries(input.p_zero, [&](const auto& visit) {
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t s = 0; s < m; ++s) {
        const double x = input.p[i * m + s];
        if (x != 0 && !visit(i, s, x)) return;  // NaN != 0
      }
    }
  });
}

// ---- line batches -------------------------------------------------------------------------------

std::string check_class_sum(std::vector<double>& row, bool normalize) {
  // Rows must sum to 1 within 1e-6, or within 1e-3 with normalize (then rescaled): softmax
  // outputs printed with few decimals miss 1 by up to ~5e-5.
  const double limit = normalize ? 1e-3 : 1e-6;
  double sum = 0;
  for (const double v : row) sum += v;
  if (!(std::abs(sum - 1) <= limit))
    return fmt::format("the class probabilities sum to {}, expected 1 within {}{}", sum, limit,
                       normalize ? "" : " (--normalize accepts 1e-3 and rescales)");
  if (normalize)
    for (double& v : row) v /= sum;
  return {};
}

std::vector<DecideLineResult> decide_lines(
    std::span<const std::string_view> lines, std::span<const std::size_t> line_numbers,
    const std::string& name, const DecideMetric& metric, const DecideOptions& options,
    const DecideLinesOptions& how,
    const std::function<void(std::size_t, const Decision&, std::size_t)>& on_decision) {
  RATEOPT_CHECK(lines.size() == line_numbers.size(), "decide_lines: {} lines but {} line numbers",
                lines.size(), line_numbers.size());
  using Status = DecideLineResult::Status;
  // What decide_gfm says of the metric and options (the same for every instance): reported under
  // decide_gfm's name for samples too, which decide_gfm_samples would name itself.
  std::string gfm_refusal;
  if (how.model == DecideInputModel::kGfm && how.decide) {
    try {
      (void)decide_gfm(GfmInput{}, metric, options);
    } catch (const std::invalid_argument& e) {
      gfm_refusal = without_prefix(e.what());
    }
  }
  std::vector<DecideLineResult> out(lines.size());
  detail::parallel_for(lines.size(), how.n_threads, [&](std::size_t k) {
    DecideLineResult& result = out[k];
    const std::size_t line_no = line_numbers[k];
    const std::size_t error_line = how.column ? 0 : line_no;
    const auto fail = [&](Status status, const std::string& what) {
      result.status = status;
      result.error = std::make_exception_ptr(ParseError(name, error_line, 0, what));
    };
    thread_local GfmRecord record;
    std::vector<double> row;
    std::size_t items = 0;
    try {
      if (how.model == DecideInputModel::kGfm) {
        parse_gfm_record_into(lines[k], name, line_no, how.limits, record);
        items = record.labels();
      } else {
        items = parse_decide_row(lines[k], name, line_no, row);
      }
    } catch (...) {
      result.status = Status::kParseError;
      result.error = std::current_exception();
      return;
    }
    if (how.model == DecideInputModel::kMulticlass && how.check_sums) {
      if (const std::string why = check_class_sum(row, how.normalize); !why.empty())
        return fail(Status::kSumError, why);
    }
    if (!how.decide) return;
    Decision d;
    try {
      switch (how.model) {
        case DecideInputModel::kGfm:
          if (!gfm_refusal.empty()) return fail(Status::kDecideError, gfm_refusal);
          d = decide_gfm_record(record, metric, options);
          break;
        case DecideInputModel::kMulticlass:
          d = decide_multiclass(row, metric, options);
          break;
        case DecideInputModel::kIndependent:
          d = decide_independent(row, metric, options);
          break;
      }
    } catch (const std::invalid_argument& e) {
      return fail(Status::kDecideError, without_prefix(e.what()));
    } catch (...) {
      result.status = Status::kDecideError;
      result.error = std::current_exception();
      return;
    }
    if (on_decision) on_decision(k, d, items);
  });
  return out;
}

}  // namespace rateopt
