// Slice parsing, printing and row selection (rateopt/metrics.hpp).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "common/check.hpp"
#include "metrics/metrics_impl.hpp"
#include "rateopt/distributed.hpp"
#include "rateopt/metrics.hpp"

namespace rateopt {

namespace {

using metrics_impl::join_truncated;
using metrics_impl::parse_number;

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool is_separator(char c) noexcept {
  return c == ',' || c == '&';
}
bool is_quote(char c) noexcept {
  return c == '"' || c == '\'';
}
// Characters that end an unquoted token.
bool is_special(char c) noexcept {
  return is_separator(c) || c == '=' || is_quote(c);
}

// A token as written by to_string: bare when the parser reads it back unchanged, else "...".
std::string quote_if_needed(std::string_view token) {
  const bool needs_quotes =
      token.empty() || is_space(token.front()) || is_space(token.back()) ||
      std::any_of(token.begin(), token.end(), [](char c) { return is_special(c) || c == '\\'; });
  if (!needs_quotes) return std::string(token);
  std::string out = "\"";
  for (char c : token) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string condition_to_string(const Condition& c) {
  return quote_if_needed(c.column) + "=" + quote_if_needed(c.value);
}

// Recursive-descent reader of `cond (sep cond)*`, cond = token '=' token. Errors carry the
// 1-based column of the offending character (text length + 1 for an unexpected end).
class SliceParser {
 public:
  explicit SliceParser(std::string_view text) : text_(text) {}

  Slice parse() {
    Slice slice;
    skip_spaces();
    if (at_end()) return slice;  // "" selects all rows
    while (true) {
      Condition cond;
      cond.column = token("column name");
      skip_spaces();
      if (at_end() || text_[pos_] != '=')
        fail(pos_, fmt::format("expected '=' after the column name '{}'", cond.column));
      ++pos_;
      cond.value = token("value");
      slice.conditions.push_back(std::move(cond));
      skip_spaces();
      if (at_end()) break;
      const char c = text_[pos_];
      if (c == '=')
        fail(pos_, "unexpected '=' after a value; quote values that contain '=' (x=\"a=b\")");
      if (!is_separator(c))
        fail(pos_, fmt::format("unexpected '{}', expected ',' or '&' between conditions", c));
      ++pos_;
    }
    return slice;
  }

 private:
  [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }

  void skip_spaces() noexcept {
    while (!at_end() && is_space(text_[pos_])) ++pos_;
  }

  [[noreturn]] void fail(std::size_t pos, const std::string& message) const {
    detail::throw_parse_error("", 1, pos + 1, "slice '{}': {}", text_, message);
  }

  std::string token(std::string_view role) {
    skip_spaces();
    if (at_end()) fail(pos_, fmt::format("expected a {} at the end of the text", role));
    if (is_quote(text_[pos_])) return quoted(role);
    const std::size_t start = pos_;
    while (!at_end() && !is_special(text_[pos_])) ++pos_;
    if (!at_end() && is_quote(text_[pos_]))
      fail(pos_, fmt::format("a quote inside an unquoted {}; quote the whole {}", role, role));
    std::string_view bare = text_.substr(start, pos_ - start);
    while (!bare.empty() && is_space(bare.back())) bare.remove_suffix(1);
    if (bare.empty()) fail(start, fmt::format("expected a {} before '{}'", role, text_[start]));
    return std::string(bare);
  }

  // "..." or '...' with backslash escapes; only whitespace may follow before a delimiter.
  std::string quoted(std::string_view role) {
    const std::size_t open = pos_;
    const char quote = text_[pos_++];
    std::string out;
    while (true) {
      if (at_end())
        fail(open, fmt::format("unbalanced quote: no closing {} for this {}", quote, role));
      const char c = text_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (at_end())
          fail(open, fmt::format("unbalanced quote: no closing {} for this {}", quote, role));
        out += text_[pos_++];
      } else {
        out += c;
      }
    }
    if (out.empty() && role == "column name") fail(open, "empty column name");
    skip_spaces();
    if (!at_end() && !is_special(text_[pos_]))
      fail(pos_, fmt::format("unexpected '{}' after a quoted {}", text_[pos_], role));
    if (!at_end() && is_quote(text_[pos_]))
      fail(pos_, fmt::format("unexpected quote after a quoted {}", role));
    return out;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::string dataset_name(const Dataset& data) {
  return data.source().empty() ? std::string("the dataset") : data.source();
}

// ---- condition masks ----------------------------------------------------------------------------

void label_mask(const Dataset& data, const Condition& cond, const std::string& what,
                std::vector<std::uint8_t>& out) {
  const Labels& y = data.labels();
  const std::size_t n = data.num_rows();
  double x = 0;
  switch (y.kind) {
    case LabelKind::kNone:
      throw NotFound(fmt::format("{}: {} has no labels", what, dataset_name(data)));
    case LabelKind::kBinary: {
      // label=1 / label=0 always mean y; other values are matched against the label names.
      std::int32_t target = -1;
      if (parse_number(cond.value, x) && (x == 0 || x == 1)) {
        target = static_cast<std::int32_t>(x);
      } else {
        for (std::size_t k = 0; k < y.names.size() && k < 2; ++k)
          if (y.names[k] == cond.value) target = static_cast<std::int32_t>(k);
      }
      if (target < 0) {
        std::vector<std::string> names;
        for (const auto& s : y.names) names.push_back(quote_if_needed(s));
        throw NotFound(fmt::format(
            "{}: binary labels take the values 0 and 1 (or the label names {}), not '{}'", what,
            join_truncated(names), cond.value));
      }
      for (std::size_t i = 0; i < n; ++i) out[i] = y.values[i] == target ? 1 : 0;
      return;
    }
    case LabelKind::kMulticlass:
    case LabelKind::kMultilabel: {
      // A class (label) name first, then a 0-based index.
      const std::size_t k_max = y.num_outputs();
      std::int64_t target = -1;
      for (std::size_t k = 0; k < k_max && target < 0; ++k)
        if (y.names[k] == cond.value) target = static_cast<std::int64_t>(k);
      if (target < 0 && parse_number(cond.value, x) && x >= 0 && x < static_cast<double>(k_max) &&
          std::floor(x) == x)
        target = static_cast<std::int64_t>(x);
      if (target < 0) {
        std::vector<std::string> names;
        for (const auto& s : y.names) names.push_back(quote_if_needed(s));
        throw NotFound(fmt::format("{}: no {} '{}' (names: {}; or an index in [0, {}))", what,
                                   y.kind == LabelKind::kMulticlass ? "class" : "label", cond.value,
                                   join_truncated(names), k_max));
      }
      const auto t = static_cast<std::int32_t>(target);
      if (y.kind == LabelKind::kMulticlass) {
        for (std::size_t i = 0; i < n; ++i) out[i] = y.values[i] == t ? 1 : 0;
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          const auto set = y.label_set(i);
          out[i] = std::binary_search(set.begin(), set.end(), t) ? 1 : 0;
        }
      }
      return;
    }
  }
}

// Whether `local` holds on some rank (rateopt/distributed.hpp; `local` itself in one process): a
// slice value absent from one rank's rows is no error while another rank has it.
bool any_over_ranks(bool local) {
  if (!is_distributed()) return local;
  std::array<double, 1> flag{local ? 1.0 : 0.0};
  sum_over_ranks(flag);
  return flag[0] > 0;
}

void column_mask(const Column& col, const Condition& cond, const std::string& what,
                 std::vector<std::uint8_t>& out) {
  // Which levels match: numerically for numeric columns ("1" matches "1.0"), else exactly.
  std::vector<std::uint8_t> level_matches(col.levels.size(), 0);
  double x = 0;
  const bool numeric = col.is_numeric() && parse_number(cond.value, x);
  bool any = false;
  for (std::size_t k = 0; k < col.levels.size(); ++k) {
    double y = 0;
    const bool m =
        numeric ? (parse_number(col.levels[k], y) && y == x) : col.levels[k] == cond.value;
    level_matches[k] = m ? 1 : 0;
    any = any || m;
  }
  if (!any_over_ranks(any)) {
    std::vector<std::string> levels;
    for (const auto& s : col.levels) levels.push_back(quote_if_needed(s));
    throw NotFound(fmt::format("{}: column '{}' never takes the value '{}' (values: {})", what,
                               col.name, cond.value, join_truncated(levels)));
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int32_t code = col.codes[i];
    out[i] = (code >= 0 && level_matches[static_cast<std::size_t>(code)] != 0) ? 1 : 0;
  }
}

// Up to `limit` distinct values feature j takes, for messages.
std::vector<std::string> some_feature_values(const FeatureMatrix& x, std::size_t j,
                                             std::size_t limit) {
  std::vector<double> seen;
  for (std::size_t i = 0; i < x.rows() && seen.size() < limit; ++i) {
    const double v = x.at(i, j);
    if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  }
  std::sort(seen.begin(), seen.end());
  std::vector<std::string> out;
  out.reserve(seen.size() + 1);
  for (double v : seen) out.push_back(fmt::format("{}", v));
  if (seen.size() == limit) out.emplace_back("...");
  return out;
}

void feature_mask(const Dataset& data, std::size_t j, const std::string& feature,
                  const Condition& cond, const std::string& what, std::vector<std::uint8_t>& out) {
  double x = 0;
  if (!parse_number(cond.value, x))
    throw NotFound(fmt::format("{}: feature '{}' is numeric and never takes the value '{}'", what,
                               feature, cond.value));
  const FeatureMatrix& m = data.features();
  const std::size_t n = m.rows();
  if (m.is_sparse()) {
    // One pass over the nonzeros; absent entries are 0.
    const CsrView v = m.csr_view();
    const auto col = static_cast<std::int32_t>(j);
    const std::uint8_t absent = x == 0 ? 1 : 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint8_t hit = absent;
      for (auto k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
        if (v.indices[static_cast<std::size_t>(k)] == col) {
          hit = v.values[static_cast<std::size_t>(k)] == x ? 1 : 0;
          break;
        }
      }
      out[i] = hit;
    }
  } else {
    const DenseView v = m.dense_view();
    for (std::size_t i = 0; i < n; ++i) out[i] = v(i, j) == x ? 1 : 0;
  }
  if (!any_over_ranks(std::find(out.begin(), out.end(), std::uint8_t{1}) != out.end()))
    throw NotFound(fmt::format("{}: feature '{}' never equals {} in {} (values include: {})", what,
                               feature, cond.value, dataset_name(data),
                               join_truncated(some_feature_values(m, j, 10))));
}

// Index of a feature by name; LIBSVM-style "f<k>" (1-based) when the encoding names none.
bool find_feature(const Dataset& data, std::string_view name, std::size_t& index) {
  const auto& names = data.encoding().feature_names;
  if (!names.empty()) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) return false;
    index = static_cast<std::size_t>(it - names.begin());
    return index < data.num_features();
  }
  if (name.size() < 2 || name.front() != 'f') return false;
  std::size_t k = 0;
  const auto* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data() + 1, end, k);
  if (ec != std::errc() || ptr != end || k < 1 || k > data.num_features() || name[1] == '0')
    return false;
  index = k - 1;
  return true;
}

[[noreturn]] void unknown_column(const Dataset& data, const Condition& cond,
                                 const std::string& what) {
  std::vector<std::string> names;
  if (data.labels().kind != LabelKind::kNone) names.emplace_back("label");
  for (const auto& c : data.columns()) names.push_back(quote_if_needed(c.name));
  std::string features;
  const auto& fnames = data.encoding().feature_names;
  if (!fnames.empty()) {
    std::vector<std::string> quoted;
    quoted.reserve(fnames.size());
    for (const auto& f : fnames) quoted.push_back(quote_if_needed(f));
    features = join_truncated(quoted, 10);
  } else if (data.num_features() > 0) {
    features = fmt::format("f1 .. f{}", data.num_features());
  } else {
    features = "none";
  }
  std::string dropped;  // columns the command did not keep (Dataset::keep_columns)
  if (!data.dropped_columns().empty()) {
    std::vector<std::string> quoted;
    for (const auto& c : data.dropped_columns()) quoted.push_back(quote_if_needed(c));
    dropped = "; not kept, as no expression names them: " + join_truncated(quoted);
  }
  throw NotFound(fmt::format("{}: no column or feature '{}' in {} (columns: {}; features: {}{})",
                             what, cond.column, dataset_name(data), join_truncated(names), features,
                             dropped));
}

void condition_mask(const Dataset& data, const Condition& cond, std::vector<std::uint8_t>& out) {
  const std::string what = fmt::format("slice condition '{}'", condition_to_string(cond));
  if (cond.column == "label") return label_mask(data, cond, what, out);
  if (const Column* col = data.find_column(cond.column)) return column_mask(*col, cond, what, out);
  if (cond.column == "baseline") {
    std::vector<std::string> names;
    for (const auto& c : data.columns()) names.push_back(quote_if_needed(c.name));
    throw NotFound(fmt::format("{}: {} has no 'baseline' column (columns: {})", what,
                               dataset_name(data), join_truncated(names)));
  }
  std::size_t j = 0;
  if (find_feature(data, cond.column, j))
    return feature_mask(data, j, cond.column, cond, what, out);
  unknown_column(data, cond, what);
}

}  // namespace

Slice Slice::parse(std::string_view text) {
  return SliceParser(text).parse();
}

std::string Slice::to_string() const {
  std::string out;
  for (const auto& c : conditions) {
    if (!out.empty()) out += ',';
    out += condition_to_string(c);
  }
  return out;
}

std::vector<std::uint8_t> slice_mask(const Dataset& data, const Slice& slice) {
  const std::size_t n = data.num_rows();
  std::vector<std::uint8_t> mask(n, 1);
  if (slice.empty()) return mask;
  std::vector<std::uint8_t> cond(n, 0);
  for (const auto& c : slice.conditions) {
    condition_mask(data, c, cond);
    for (std::size_t i = 0; i < n; ++i) mask[i] &= cond[i];
  }
  return mask;
}

}  // namespace rateopt
