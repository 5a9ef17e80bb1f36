// MULAN ARFF reader: Weka ARFF header (@relation, @attribute, @data), dense and sparse rows,
// label attributes named by a MULAN XML file (by name) or counted from the end.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "common/check.hpp"
#include "io/io_util.hpp"
#include "rateopt/io.hpp"

namespace rateopt::io_detail {

namespace {

// Nominal/string attributes whose values are all present and pairwise distinct over at least
// this many rows are identifiers: kept as columns, never features.
constexpr std::size_t kMinIdentifierRows = 10;

enum class AttrType { kNumeric, kNominal, kString };

struct Attribute {
  std::string name;
  AttrType type = AttrType::kNumeric;
  std::vector<std::string> levels;                                 // nominal values
  std::unordered_map<std::string_view, std::int32_t> level_index;  // views into levels
  std::size_t line = 0;
};

// One explicit value of a data row.
struct Cell {
  std::uint32_t attr = 0;
  std::int32_t level = -1;  // nominal: index into levels
  bool missing = false;
  double number = 0;      // numeric
  std::string_view text;  // the value as written (unquoted)
};

struct Item {
  std::string_view text;
  std::size_t column = 0;  // 1-based
};

bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// A token pulled from a line: the value with quotes removed and escapes decoded.
struct Token {
  std::string_view value;
  bool quoted = false;
};

class ArffParser {
 public:
  ArffParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  [[noreturn]] void fail(std::size_t line, std::size_t col, const std::string& what) const {
    throw ParseError(name_, line, col, what);
  }

  // Next physical line (without '\r'); false at the end.
  bool next_line(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    std::size_t eol = text_.find('\n', pos_);
    if (eol == std::string_view::npos) eol = text_.size();
    line = text_.substr(pos_, eol - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = eol + 1;
    ++line_no_;
    return true;
  }

  [[nodiscard]] std::size_t line_no() const { return line_no_; }

  // Reads a quoted token starting at s[p] (a quote); sets p after the closing quote.
  std::string_view read_quoted(std::string_view s, std::size_t& p, std::size_t base) {
    const char q = s[p];
    const std::size_t open = p;
    bool escaped = false;
    std::size_t i = p + 1;
    for (; i < s.size(); ++i) {
      if (s[i] == '\\') {
        escaped = true;
        ++i;
        continue;
      }
      if (s[i] == q) break;
    }
    if (i >= s.size())
      fail(line_no_, base + open + 1,
           fmt::format("expected a closing {} for the quoted value, found the end of the line",
                       q == '\'' ? "\"'\"" : "'\"'"));
    p = i + 1;
    const std::string_view inner = s.substr(open + 1, i - open - 1);
    if (!escaped) return inner;
    std::string out;
    out.reserve(inner.size());
    for (std::size_t k = 0; k < inner.size(); ++k) {
      char c = inner[k];
      if (c == '\\' && k + 1 < inner.size()) {
        c = inner[++k];
        if (c == 'n')
          c = '\n';
        else if (c == 't')
          c = '\t';
        else if (c == 'r')
          c = '\r';
      }
      out += c;
    }
    arena_.push_back(std::move(out));
    return arena_.back();
  }

  // Parses a whole item (already trimmed) as one value.
  Token value_token(const Item& item) {
    const std::string_view s = item.text;
    if (s.empty() || (s[0] != '\'' && s[0] != '"')) return {s, false};
    std::size_t p = 0;
    const std::string_view v = read_quoted(s, p, item.column - 1);
    while (p < s.size() && is_ws(s[p])) ++p;
    if (p < s.size())
      fail(line_no_, item.column + p,
           fmt::format("expected ',' after the quoted value, found {}",
                       io_detail::quoted(s.substr(p))));
    return {v, true};
  }

  // Splits `s` (starting at 1-based column base + 1) at commas outside quoted tokens.
  void split_items(std::string_view s, std::size_t base, std::vector<Item>& out) {
    out.clear();
    std::size_t p = 0;
    while (true) {
      const std::size_t start = p;
      bool token_start = true;
      while (p < s.size() && s[p] != ',') {
        const char c = s[p];
        if (token_start && (c == '\'' || c == '"')) {
          (void)read_quoted_span(s, p, base);
          token_start = false;
          continue;
        }
        token_start = is_ws(c);
        ++p;
      }
      std::string_view raw = s.substr(start, p - start);
      std::size_t lead = 0;
      while (lead < raw.size() && is_ws(raw[lead])) ++lead;
      raw = trim(raw);
      out.push_back({raw, base + start + lead + 1});
      if (p >= s.size()) break;
      ++p;  // the comma
    }
  }

  TextArena& arena() { return arena_; }

 private:
  // Skips a quoted span starting at s[p] without decoding it.
  std::size_t read_quoted_span(std::string_view s, std::size_t& p, std::size_t base) const {
    const char q = s[p];
    const std::size_t open = p;
    for (std::size_t i = p + 1; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
        continue;
      }
      if (s[i] == q) {
        p = i + 1;
        return p;
      }
    }
    fail(line_no_, base + open + 1,
         "expected a closing quote for the quoted value, found the end of the line");
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
  std::size_t line_no_ = 0;
  TextArena arena_;
};

std::string nominal_set(const Attribute& a) {
  std::string out = "{";
  for (std::size_t k = 0; k < a.levels.size(); ++k) {
    if (k == 10) {
      out += ",...";
      break;
    }
    if (k > 0) out += ',';
    out += a.levels[k];
  }
  return out + "}";
}

// For a two-valued nominal attribute: the index of the level that encodes as 1, and whether the
// pair reads as a boolean (then the feature is named after the attribute alone).
std::pair<std::size_t, bool> binary_on_level(const Attribute& a) {
  auto truthy = [](const std::string& v) {
    const std::string l = to_lower(v);
    return l == "1" || l == "yes" || l == "true" || l == "y" || l == "t";
  };
  auto falsy = [](const std::string& v) {
    const std::string l = to_lower(v);
    return l == "0" || l == "no" || l == "false" || l == "n" || l == "f";
  };
  if (truthy(a.levels[0]) && falsy(a.levels[1])) return {0, true};
  if (falsy(a.levels[0]) && truthy(a.levels[1])) return {1, true};
  return {1, false};
}

// A feature spec bound to the attribute it reads.
struct BoundSpec {
  std::size_t attr = 0;
  FeatureSpec spec;
  std::vector<std::int32_t> level_feature;  // nominal attr: level -> feature offset or -1
  std::unordered_map<std::string_view, std::int32_t> text_feature;  // string attr
};

}  // namespace

Dataset parse_arff_impl(std::string_view text, const ArffOptions& options, const std::string& name,
                        const std::vector<std::string>* xml_labels, const Encoding* encoding,
                        ReadStats* stats) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark
  ReadStats local_stats;
  ReadStats& st = stats != nullptr ? *stats : local_stats;
  st = ReadStats{};
  st.lines = count_lines(text);
  if (encoding != nullptr) check_encoding(*encoding, "arff");
  ArffParser ps(text, name);

  // ---- header -----------------------------------------------------------------------------------
  std::vector<Attribute> attrs;
  std::unordered_map<std::string, std::size_t> attr_by_name;
  bool data_found = false;
  std::string_view line;
  std::vector<Item> items;
  while (ps.next_line(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t[0] == '%') continue;
    const std::size_t tcol = static_cast<std::size_t>(t.data() - line.data());  // 0-based
    std::size_t kw_end = 0;
    while (kw_end < t.size() && !is_ws(t[kw_end]) && t[kw_end] != '{') ++kw_end;
    const std::string kw = to_lower(t.substr(0, kw_end));
    if (kw == "@relation") continue;
    if (kw == "@data") {
      data_found = true;
      if (!trim(t.substr(kw_end)).empty())
        ps.fail(ps.line_no(), tcol + kw_end + 1, "expected nothing after '@data' on its line");
      break;
    }
    if (kw != "@attribute") {
      ps.fail(ps.line_no(), tcol + 1,
              fmt::format("expected '@relation', '@attribute' or '@data', found {}",
                          io_detail::quoted(t.substr(0, kw_end))));
    }
    // @attribute <name> <type>
    std::size_t p = kw_end;
    while (p < t.size() && is_ws(t[p])) ++p;
    if (p >= t.size())
      ps.fail(ps.line_no(), tcol + p + 1, "expected an attribute name after '@attribute'");
    Attribute a;
    a.line = ps.line_no();
    if (t[p] == '\'' || t[p] == '"') {
      a.name = std::string(ps.read_quoted(t, p, tcol));
    } else {
      const std::size_t s = p;
      while (p < t.size() && !is_ws(t[p]) && t[p] != '{') ++p;
      a.name = std::string(t.substr(s, p - s));
    }
    if (a.name.empty()) ps.fail(ps.line_no(), tcol + p + 1, "expected a non-empty attribute name");
    while (p < t.size() && is_ws(t[p])) ++p;
    if (p >= t.size()) {
      ps.fail(ps.line_no(), tcol + p + 1,
              fmt::format("expected a type for attribute {}, found the end of the line",
                          io_detail::quoted(a.name)));
    }
    std::string_view rest;
    if (t[p] == '{') {
      a.type = AttrType::kNominal;
      const std::size_t open = p;
      // find the closing brace outside quotes
      std::size_t close = std::string_view::npos;
      char q = 0;
      for (std::size_t i = p + 1; i < t.size(); ++i) {
        if (q != 0) {
          if (t[i] == '\\')
            ++i;
          else if (t[i] == q)
            q = 0;
        } else if ((t[i] == '\'' || t[i] == '"') &&
                   (is_ws(t[i - 1]) || t[i - 1] == ',' || t[i - 1] == '{')) {
          q = t[i];
        } else if (t[i] == '}') {
          close = i;
          break;
        }
      }
      if (close == std::string_view::npos)
        ps.fail(ps.line_no(), tcol + open + 1,
                fmt::format("expected '}}' closing the nominal values of attribute {}",
                            io_detail::quoted(a.name)));
      ps.split_items(t.substr(open + 1, close - open - 1), tcol + open + 1, items);
      std::unordered_map<std::string, int> seen;
      for (const auto& it : items) {
        if (it.text.empty())
          ps.fail(ps.line_no(), it.column,
                  fmt::format("expected a nominal value of attribute {}, found an empty one",
                              io_detail::quoted(a.name)));
        const Token tok = ps.value_token(it);
        std::string v(tok.value);
        if (!seen.emplace(v, 1).second)
          ps.fail(ps.line_no(), it.column,
                  fmt::format("nominal value {} of attribute {} is declared twice",
                              io_detail::quoted(v), io_detail::quoted(a.name)));
        a.levels.push_back(std::move(v));
      }
      rest = t.substr(close + 1);
    } else {
      const std::size_t s = p;
      while (p < t.size() && !is_ws(t[p])) ++p;
      const std::string type = to_lower(t.substr(s, p - s));
      rest = t.substr(p);
      if (type == "numeric" || type == "real" || type == "integer") {
        a.type = AttrType::kNumeric;
      } else if (type == "string") {
        a.type = AttrType::kString;
      } else if (type == "date") {
        a.type = AttrType::kString;  // kept as text; the optional format is ignored
        rest = {};
      } else {
        ps.fail(ps.line_no(), tcol + s + 1,
                fmt::format("unknown type {} of attribute {} (expected numeric, real, integer, "
                            "string, date or {{nominal values}})",
                            io_detail::quoted(t.substr(s, p - s)), io_detail::quoted(a.name)));
      }
    }
    rest = trim(rest);
    if (!rest.empty() && rest[0] != '%') {
      ps.fail(ps.line_no(), tcol + static_cast<std::size_t>(rest.data() - t.data()) + 1,
              fmt::format("unexpected {} after the type of attribute {}", io_detail::quoted(rest),
                          io_detail::quoted(a.name)));
    }
    if (!attr_by_name.emplace(a.name, attrs.size()).second) {
      ps.fail(ps.line_no(), 0,
              fmt::format("attribute {} is declared twice", io_detail::quoted(a.name)));
    }
    attrs.push_back(std::move(a));
  }
  if (!data_found) {
    ps.fail(ps.line_no(), 0, "expected '@data' before the end of the file");
  }
  if (attrs.empty()) ps.fail(ps.line_no(), 0, "expected at least one @attribute before '@data'");
  RATEOPT_CHECK(attrs.size() < (std::size_t{1} << 31), "too many attributes");
  for (auto& a : attrs) {
    for (std::size_t k = 0; k < a.levels.size(); ++k)
      a.level_index.emplace(a.levels[k], static_cast<std::int32_t>(k));
  }
  const std::size_t na = attrs.size();

  // ---- data rows --------------------------------------------------------------------------------
  std::vector<Cell> cells;
  std::vector<std::size_t> row_begin;
  std::vector<std::size_t> row_line;
  std::vector<bool> row_sparse;
  bool any_sparse = false;
  auto check_value = [&](const Attribute& a, const Item& item, Cell& cell) {
    const Token tok = ps.value_token(item);
    cell.text = tok.value;
    if (!tok.quoted && tok.value == "?") {
      cell.missing = true;
      return;
    }
    switch (a.type) {
      case AttrType::kNumeric: {
        const NumberKind kind = parse_double(tok.value, cell.number);
        if (kind != NumberKind::kFinite) {
          ps.fail(ps.line_no(), item.column,
                  fmt::format("expected a {}number for attribute {}, found {}",
                              kind == NumberKind::kNonFinite ? "finite " : "",
                              io_detail::quoted(a.name), io_detail::quoted(tok.value)));
        }
        break;
      }
      case AttrType::kNominal: {
        const auto it = a.level_index.find(tok.value);
        if (it == a.level_index.end()) {
          ps.fail(
              ps.line_no(), item.column,
              fmt::format("value {} is not in the nominal set {} of attribute {}",
                          io_detail::quoted(tok.value), nominal_set(a), io_detail::quoted(a.name)));
        }
        cell.level = it->second;
        break;
      }
      case AttrType::kString:
        break;
    }
  };
  while (ps.next_line(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t[0] == '%') continue;
    const std::size_t tcol = static_cast<std::size_t>(t.data() - line.data());
    row_begin.push_back(cells.size());
    row_line.push_back(ps.line_no());
    if (t[0] == '{') {
      any_sparse = true;
      row_sparse.push_back(true);
      if (t.back() != '}')
        ps.fail(ps.line_no(), tcol + t.size(),
                fmt::format("expected '}}' at the end of a sparse row, found {}",
                            io_detail::quoted(t.substr(t.size() - 1))));
      const std::string_view inner = t.substr(1, t.size() - 2);
      if (trim(inner).empty()) continue;
      ps.split_items(inner, tcol + 1, items);
      std::int64_t prev = -1;
      for (const auto& it : items) {
        std::size_t sp = 0;
        while (sp < it.text.size() && !is_ws(it.text[sp])) ++sp;
        const std::string_view idx_text = it.text.substr(0, sp);
        std::int64_t idx = 0;
        if (sp == it.text.size() || !parse_int64(idx_text, idx)) {
          ps.fail(ps.line_no(), it.column,
                  fmt::format("expected 'index value' in a sparse row, found {}",
                              io_detail::quoted(it.text)));
        }
        if (idx < 0 || static_cast<std::uint64_t>(idx) >= na) {
          ps.fail(ps.line_no(), it.column,
                  fmt::format("sparse index {} is out of range [0, {}) (the file has {} "
                              "attributes)",
                              idx, na, na));
        }
        if (idx <= prev) {
          ps.fail(ps.line_no(), it.column,
                  fmt::format("expected a sparse index greater than {} (indices must be "
                              "increasing), found {}",
                              prev, idx));
        }
        prev = idx;
        std::size_t vs = sp;
        while (vs < it.text.size() && is_ws(it.text[vs])) ++vs;
        const Item value{it.text.substr(vs), it.column + vs};
        Cell cell;
        cell.attr = static_cast<std::uint32_t>(idx);
        check_value(attrs[static_cast<std::size_t>(idx)], value, cell);
        cells.push_back(cell);
      }
    } else {
      row_sparse.push_back(false);
      ps.split_items(t, tcol, items);
      if (items.size() != na) {
        ps.fail(ps.line_no(), 0, fmt::format("expected {} values, found {}", na, items.size()));
      }
      for (std::size_t a = 0; a < na; ++a) {
        Cell cell;
        cell.attr = static_cast<std::uint32_t>(a);
        check_value(attrs[a], items[a], cell);
        cells.push_back(cell);
      }
    }
  }
  const std::size_t n = row_begin.size();
  row_begin.push_back(cells.size());

  // ---- labels -----------------------------------------------------------------------------------
  std::vector<std::int32_t> label_of(na, -1);
  std::vector<std::size_t> label_attrs;
  if (xml_labels != nullptr) {
    for (const auto& l : *xml_labels) {
      const auto it = attr_by_name.find(l);
      if (it == attr_by_name.end()) {
        std::vector<std::string> names;
        for (const auto& a : attrs) names.push_back(a.name);
        throw NotFound(
            fmt::format("label '{}' of the MULAN XML is not an attribute of {} "
                        "(attributes: {})",
                        l, name, join_limited(names)));
      }
      if (label_of[it->second] >= 0)
        throw InvalidArgument(fmt::format("label '{}' is listed twice in the MULAN XML", l));
      label_of[it->second] = static_cast<std::int32_t>(label_attrs.size());
      label_attrs.push_back(it->second);
    }
  } else if (options.num_labels > 0) {
    if (options.num_labels > na) {
      detail::throw_parse_error(name, 0, 0,
                                "expected at least {} attributes (num_labels), found {}",
                                options.num_labels, na);
    }
    for (std::size_t a = na - options.num_labels; a < na; ++a) {
      label_of[a] = static_cast<std::int32_t>(label_attrs.size());
      label_attrs.push_back(a);
    }
  }
  for (std::size_t a : label_attrs) {
    if (attrs[a].type == AttrType::kString) {
      detail::throw_parse_error(name, attrs[a].line, 0,
                                "label attribute '{}' is a string attribute, expected nominal "
                                "or numeric",
                                attrs[a].name);
    }
  }

  // Per-row access to the value of an attribute.
  std::vector<std::size_t> stamp(na, 0);
  std::vector<std::size_t> cell_of(na, 0);
  auto load_row = [&](std::size_t i) {
    if (!row_sparse[i]) return;
    for (std::size_t c = row_begin[i]; c < row_begin[i + 1]; ++c) {
      stamp[cells[c].attr] = i + 1;
      cell_of[cells[c].attr] = c;
    }
  };
  // The cell of attribute a in row i, or nullptr when omitted from a sparse row.
  auto cell_at = [&](std::size_t i, std::size_t a) -> const Cell* {
    if (!row_sparse[i]) return &cells[row_begin[i] + a];
    return stamp[a] == i + 1 ? &cells[cell_of[a]] : nullptr;
  };

  Labels labels;
  if (!label_attrs.empty()) {
    labels.kind = LabelKind::kMultilabel;
    for (std::size_t a : label_attrs) labels.names.push_back(attrs[a].name);
    labels.set_indptr.reserve(n + 1);
    labels.set_indptr.push_back(0);
    std::vector<std::int32_t> on_level(label_attrs.size(), -1);
    for (std::size_t k = 0; k < label_attrs.size(); ++k) {
      const auto& a = attrs[label_attrs[k]];
      const auto it = a.level_index.find("1");
      if (it != a.level_index.end()) on_level[k] = it->second;
    }
    for (std::size_t i = 0; i < n; ++i) {
      load_row(i);
      for (std::size_t k = 0; k < label_attrs.size(); ++k) {
        const std::size_t a = label_attrs[k];
        const Cell* c = cell_at(i, a);
        bool in = false;
        if (attrs[a].type == AttrType::kNominal) {
          in = c == nullptr ? on_level[k] == 0 : (!c->missing && c->level == on_level[k]);
        } else if (c != nullptr && !c->missing) {
          if (c->number != 0.0 && c->number != 1.0) {
            detail::throw_parse_error(name, row_line[i], 0,
                                      "expected 0 or 1 for label attribute '{}', found {}",
                                      attrs[a].name, io_detail::quoted(c->text));
          }
          in = c->number == 1.0;
        }
        if (in) labels.set_indices.push_back(static_cast<std::int32_t>(k));
      }
      labels.set_indptr.push_back(static_cast<std::int64_t>(labels.set_indices.size()));
    }
  }

  // ---- which attributes are features ------------------------------------------------------------
  std::vector<bool> identifier(na, false);
  if (encoding == nullptr && n >= kMinIdentifierRows) {
    for (std::size_t a = 0; a < na; ++a) {
      if (label_of[a] >= 0 || attrs[a].type != AttrType::kNominal || attrs[a].levels.size() <= 2)
        continue;
      if (attrs[a].levels.size() < n) continue;  // cannot be all distinct
      std::vector<bool> used(attrs[a].levels.size(), false);
      bool distinct = true;
      for (std::size_t i = 0; i < n && distinct; ++i) {
        load_row(i);
        const Cell* c = cell_at(i, a);
        const std::int32_t level = c == nullptr ? 0 : (c->missing ? -1 : c->level);
        if (level < 0 || used[static_cast<std::size_t>(level)]) {
          distinct = false;
        } else {
          used[static_cast<std::size_t>(level)] = true;
        }
      }
      identifier[a] = distinct;
    }
  }

  std::vector<BoundSpec> specs;
  Encoding enc;
  if (encoding != nullptr) {
    enc = *encoding;
    for (const auto& s : encoding->specs) {
      const auto it = attr_by_name.find(s.source);
      if (it == attr_by_name.end()) {
        std::vector<std::string> names;
        for (const auto& a : attrs) names.push_back(a.name);
        throw NotFound(fmt::format("attribute '{}' of the encoding is not in {} (attributes: {})",
                                   s.source, name, join_limited(names)));
      }
      const Attribute& a = attrs[it->second];
      RATEOPT_CHECK(label_of[it->second] < 0,
                    "attribute '{}' is a feature of the encoding and a label of {}", a.name, name);
      const bool numeric_spec = s.kind == FeatureSpec::Kind::kNumeric;
      RATEOPT_CHECK(numeric_spec == (a.type == AttrType::kNumeric),
                    "the encoding treats attribute '{}' as {}, but it is {} in {}", a.name,
                    numeric_spec ? "numeric" : "categorical",
                    a.type == AttrType::kNumeric ? "numeric" : "nominal or string", name);
      specs.push_back({it->second, s, {}, {}});
    }
  } else {
    enc.format = "arff";
    for (std::size_t a = 0; a < na; ++a) {
      const Attribute& at = attrs[a];
      if (label_of[a] >= 0) continue;
      if (at.type == AttrType::kString || identifier[a]) {
        enc.excluded_columns.push_back(at.name);
        continue;
      }
      BoundSpec b;
      b.attr = a;
      b.spec.source = at.name;
      b.spec.first_feature = enc.feature_names.size();
      if (at.type == AttrType::kNumeric) {
        b.spec.kind = FeatureSpec::Kind::kNumeric;
        enc.feature_names.push_back(at.name);
      } else if (at.levels.size() == 2) {
        b.spec.kind = FeatureSpec::Kind::kOneHot;
        const auto [on, boolean] = binary_on_level(at);
        b.spec.levels = {at.levels[on]};
        enc.feature_names.push_back(boolean ? at.name : at.name + "=" + at.levels[on]);
      } else {
        b.spec.kind = FeatureSpec::Kind::kOneHot;
        b.spec.levels = at.levels;
        for (const auto& l : at.levels) enc.feature_names.push_back(at.name + "=" + l);
      }
      enc.specs.push_back(b.spec);
      specs.push_back(std::move(b));
    }
    enc.num_features = enc.feature_names.size();
    enc.missing_policy = "zero";
  }
  for (auto& b : specs) {
    const Attribute& a = attrs[b.attr];
    if (b.spec.kind != FeatureSpec::Kind::kOneHot) continue;
    std::unordered_map<std::string_view, std::int32_t> spec_levels;
    for (std::size_t k = 0; k < b.spec.levels.size(); ++k)
      spec_levels.emplace(b.spec.levels[k], static_cast<std::int32_t>(k));
    if (a.type == AttrType::kNominal) {
      b.level_feature.assign(a.levels.size(), -1);
      for (std::size_t k = 0; k < a.levels.size(); ++k) {
        const auto it = spec_levels.find(a.levels[k]);
        if (it != spec_levels.end()) b.level_feature[k] = it->second;
      }
    } else {
      b.text_feature = std::move(spec_levels);  // views into b.spec.levels (stable: no realloc)
    }
  }

  // ---- feature rows -----------------------------------------------------------------------------
  SparseRows rows;
  std::vector<std::pair<std::int32_t, double>> entries;
  const bool reuse = encoding != nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    load_row(i);
    entries.clear();
    for (const auto& b : specs) {
      const Cell* c = cell_at(i, b.attr);
      if (c != nullptr && c->missing) continue;  // '?' encodes as 0 / all-zero
      const auto first = static_cast<std::int32_t>(b.spec.first_feature);
      if (b.spec.kind == FeatureSpec::Kind::kNumeric) {
        const double x = c == nullptr ? 0.0 : c->number;
        const double z = (x - b.spec.offset) / b.spec.scale;
        if (!std::isfinite(z)) {
          detail::throw_parse_error(name, row_line[i], 0,
                                    "attribute '{}': value {} is out of range after scaling",
                                    b.spec.source, x);
        }
        if (z != 0.0) entries.emplace_back(first, z);
        continue;
      }
      std::int32_t k = -1;
      if (attrs[b.attr].type == AttrType::kNominal) {
        const std::int32_t level = c == nullptr ? 0 : c->level;
        if (level >= 0 && static_cast<std::size_t>(level) < b.level_feature.size())
          k = b.level_feature[static_cast<std::size_t>(level)];
      } else if (c == nullptr) {
        continue;  // a string omitted from a sparse row counts as missing
      } else {
        const auto it = b.text_feature.find(c->text);
        if (it != b.text_feature.end()) k = it->second;
      }
      if (k >= 0) {
        entries.emplace_back(first + k, 1.0);
      } else if (reuse && b.spec.levels.size() != 1) {
        ++st.unseen_levels;
      }
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& [idx, val] : entries) {
      rows.indices.push_back(idx);
      rows.values.push_back(val);
    }
    rows.end_row();
  }
  FeatureMatrix matrix = make_matrix(std::move(rows), enc.num_features,
                                     any_sparse ? Storage::kSparse : Storage::kDense);

  Dataset ds(std::move(matrix), std::move(labels));

  // ---- slice columns: string, identifier and multi-valued nominal attributes -------------------
  std::vector<std::size_t> column_attrs;
  std::vector<ColumnBuilder> builders;
  for (std::size_t a = 0; a < na; ++a) {
    const Attribute& at = attrs[a];
    const bool keep = at.type == AttrType::kString ||
                      (at.type == AttrType::kNominal && (identifier[a] || at.levels.size() > 2));
    if (label_of[a] >= 0 || !keep) continue;
    column_attrs.push_back(a);
    builders.emplace_back(at.name, n);
  }
  for (std::size_t i = 0; i < n && !column_attrs.empty(); ++i) {
    load_row(i);
    for (std::size_t k = 0; k < column_attrs.size(); ++k) {
      const Attribute& at = attrs[column_attrs[k]];
      const Cell* c = cell_at(i, column_attrs[k]);
      if (c != nullptr) {
        builders[k].push(c->text, c->missing);
      } else if (at.type == AttrType::kNominal) {
        builders[k].push(at.levels[0], false);  // omitted from a sparse row: the first value
      } else {
        builders[k].push({}, true);
      }
    }
  }
  for (auto& b : builders) ds.add_column(std::move(b).finish());
  ds.encoding() = std::move(enc);
  ds.set_source(name);
  return ds;
}

}  // namespace rateopt::io_detail
