// MULAN ARFF reader: Weka ARFF header (@relation, @attribute, @data), dense and sparse rows,
// label attributes named by a MULAN XML file (by name) or counted from the end.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "common/check.hpp"
#include "io/io_util.hpp"
#include "io/text_records.hpp"
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

// A token pulled from a line: the value with quotes removed and escapes decoded.
struct Token {
  std::string_view value;
  bool quoted = false;
};

class ArffParser {
 public:
  ArffParser(std::string_view text, const std::string& name) : lines_(text), name_(name) {}

  [[noreturn]] void fail(std::size_t line, std::size_t col, const std::string& what) const {
    throw ParseError(name_, line, col, what);
  }

  // Next physical line (without '\r'); false at the end.
  bool next_line(std::string_view& line) {
    if (!lines_.next(line)) return false;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }

  [[nodiscard]] std::size_t line_no() const { return lines_.line_no(); }

  // Reads a quoted token starting at s[p] (a quote); sets p after the closing quote.
  std::string_view read_quoted(std::string_view s, std::size_t& p, std::size_t base) {
    const char q = s[p];
    const std::size_t open = p;
    bool escaped = false;
    const std::size_t close = find_closing_quote(s, open, QuoteStyle::kBackslash, escaped);
    if (close == std::string_view::npos)
      fail(line_no(), base + open + 1,
           fmt::format("expected a closing {} for the quoted value, found the end of the line",
                       q == '\'' ? "\"'\"" : "'\"'"));
    p = close + 1;
    const std::string_view inner = s.substr(open + 1, close - open - 1);
    return escaped ? unescape(inner, QuoteStyle::kBackslash, arena_) : inner;
  }

  // Parses a whole item (already trimmed) as one value.
  Token value_token(const Item& item) {
    const std::string_view s = item.text;
    if (s.empty() || (s[0] != '\'' && s[0] != '"')) return {s, false};
    std::size_t p = 0;
    const std::string_view v = read_quoted(s, p, item.column - 1);
    while (p < s.size() && is_space(s[p])) ++p;
    if (p < s.size())
      fail(line_no(), item.column + p,
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
          skip_quoted_span(s, p, base);
          token_start = false;
          continue;
        }
        token_start = is_space(c);
        ++p;
      }
      std::string_view raw = s.substr(start, p - start);
      std::size_t lead = 0;
      while (lead < raw.size() && is_space(raw[lead])) ++lead;
      raw = trim(raw);
      out.push_back({raw, base + start + lead + 1});
      if (p >= s.size()) break;
      ++p;  // the comma
    }
  }

 private:
  // Skips a quoted span starting at s[p] without decoding it.
  void skip_quoted_span(std::string_view s, std::size_t& p, std::size_t base) const {
    bool escaped = false;
    const std::size_t close = find_closing_quote(s, p, QuoteStyle::kBackslash, escaped);
    if (close == std::string_view::npos)
      fail(line_no(), base + p + 1,
           "expected a closing quote for the quoted value, found the end of the line");
    p = close + 1;
  }

  LineCursor lines_;
  const std::string& name_;
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

// One read of an ARFF text: the header's attributes, the data rows as cells, then the labels,
// the feature specs (inferred or reused) and from them the features and the slice columns.
class ArffReader {
 public:
  ArffReader(std::string_view text, const ArffOptions& options, const std::string& name,
             const std::vector<std::string>* xml_labels, const Encoding* encoding, ReadStats& stats)
      : ps_(text, name),
        o_(options),
        name_(name),
        xml_labels_(xml_labels),
        encoding_(encoding),
        st_(stats) {}

  Dataset read() {
    read_header();
    read_rows();
    resolve_labels();
    Labels labels;
    if (!label_attrs_.empty()) read_labels(labels);
    if (encoding_ == nullptr && n_ >= kMinIdentifierRows) find_identifiers();
    Encoding enc = encoding_ != nullptr ? reuse_encoding() : infer_encoding();
    bind_levels();
    FeatureMatrix matrix = feature_rows(enc.num_features);
    Dataset ds(std::move(matrix), std::move(labels));
    add_columns(ds);
    finish_dataset(ds, std::move(enc), name_);
    return ds;
  }

 private:
  // ---- header -----------------------------------------------------------------------------------

  void read_header() {
    bool data_found = false;
    std::string_view line;
    while (ps_.next_line(line)) {
      const std::string_view t = trim(line);
      if (t.empty() || t[0] == '%') continue;
      const auto tcol = static_cast<std::size_t>(t.data() - line.data());  // 0-based
      std::size_t kw_end = 0;
      while (kw_end < t.size() && !is_space(t[kw_end]) && t[kw_end] != '{') ++kw_end;
      const std::string kw = to_lower(t.substr(0, kw_end));
      if (kw == "@relation") continue;
      if (kw == "@data") {
        data_found = true;
        if (!trim(t.substr(kw_end)).empty())
          ps_.fail(ps_.line_no(), tcol + kw_end + 1, "expected nothing after '@data' on its line");
        break;
      }
      if (kw != "@attribute") {
        ps_.fail(ps_.line_no(), tcol + 1,
                 fmt::format("expected '@relation', '@attribute' or '@data', found {}",
                             io_detail::quoted(t.substr(0, kw_end))));
      }
      Attribute a = read_attribute(t, tcol, kw_end);
      if (!attr_by_name_.emplace(a.name, attrs_.size()).second) {
        ps_.fail(ps_.line_no(), 0,
                 fmt::format("attribute {} is declared twice", io_detail::quoted(a.name)));
      }
      attrs_.push_back(std::move(a));
    }
    if (!data_found) ps_.fail(ps_.line_no(), 0, "expected '@data' before the end of the file");
    if (attrs_.empty())
      ps_.fail(ps_.line_no(), 0, "expected at least one @attribute before '@data'");
    RATEOPT_CHECK(attrs_.size() < (std::size_t{1} << 31), "too many attributes");
    for (auto& a : attrs_) {
      for (std::size_t k = 0; k < a.levels.size(); ++k)
        a.level_index.emplace(a.levels[k], static_cast<std::int32_t>(k));
    }
    na_ = attrs_.size();
  }

  // `@attribute <name> <type>`: t is the trimmed line (at 0-based column tcol of the line), p the
  // end of the keyword.
  Attribute read_attribute(std::string_view t, std::size_t tcol, std::size_t p) {
    while (p < t.size() && is_space(t[p])) ++p;
    if (p >= t.size())
      ps_.fail(ps_.line_no(), tcol + p + 1, "expected an attribute name after '@attribute'");
    Attribute a;
    a.line = ps_.line_no();
    if (t[p] == '\'' || t[p] == '"') {
      a.name = std::string(ps_.read_quoted(t, p, tcol));
    } else {
      const std::size_t s = p;
      while (p < t.size() && !is_space(t[p]) && t[p] != '{') ++p;
      a.name = std::string(t.substr(s, p - s));
    }
    if (a.name.empty())
      ps_.fail(ps_.line_no(), tcol + p + 1, "expected a non-empty attribute name");
    while (p < t.size() && is_space(t[p])) ++p;
    if (p >= t.size()) {
      ps_.fail(ps_.line_no(), tcol + p + 1,
               fmt::format("expected a type for attribute {}, found the end of the line",
                           io_detail::quoted(a.name)));
    }
    std::string_view rest =
        t[p] == '{' ? read_nominal_type(a, t, tcol, p) : read_named_type(a, t, tcol, p);
    rest = trim(rest);
    if (!rest.empty() && rest[0] != '%') {
      ps_.fail(ps_.line_no(), tcol + static_cast<std::size_t>(rest.data() - t.data()) + 1,
               fmt::format("unexpected {} after the type of attribute {}", io_detail::quoted(rest),
                           io_detail::quoted(a.name)));
    }
    return a;
  }

  // `{v1, v2, ...}` opening at t[open]; returns what follows the closing brace.
  std::string_view read_nominal_type(Attribute& a, std::string_view t, std::size_t tcol,
                                     std::size_t open) {
    a.type = AttrType::kNominal;
    const std::size_t close = nominal_close(t, open);
    if (close == std::string_view::npos)
      ps_.fail(ps_.line_no(), tcol + open + 1,
               fmt::format("expected '}}' closing the nominal values of attribute {}",
                           io_detail::quoted(a.name)));
    ps_.split_items(t.substr(open + 1, close - open - 1), tcol + open + 1, items_);
    std::unordered_map<std::string, int> seen;
    for (const auto& it : items_) {
      if (it.text.empty())
        ps_.fail(ps_.line_no(), it.column,
                 fmt::format("expected a nominal value of attribute {}, found an empty one",
                             io_detail::quoted(a.name)));
      const Token tok = ps_.value_token(it);
      std::string v(tok.value);
      if (!seen.emplace(v, 1).second)
        ps_.fail(ps_.line_no(), it.column,
                 fmt::format("nominal value {} of attribute {} is declared twice",
                             io_detail::quoted(v), io_detail::quoted(a.name)));
      a.levels.push_back(std::move(v));
    }
    return t.substr(close + 1);
  }

  // The closing brace of the nominal set opening at t[open], outside quotes; npos if none.
  static std::size_t nominal_close(std::string_view t, std::size_t open) {
    char q = 0;
    for (std::size_t i = open + 1; i < t.size(); ++i) {
      if (q != 0) {
        if (t[i] == '\\')
          ++i;
        else if (t[i] == q)
          q = 0;
      } else if ((t[i] == '\'' || t[i] == '"') &&
                 (is_space(t[i - 1]) || t[i - 1] == ',' || t[i - 1] == '{')) {
        q = t[i];
      } else if (t[i] == '}') {
        return i;
      }
    }
    return std::string_view::npos;
  }

  // numeric, real, integer, string or date at t[p]; returns what follows the type.
  std::string_view read_named_type(Attribute& a, std::string_view t, std::size_t tcol,
                                   std::size_t p) {
    const std::size_t s = p;
    while (p < t.size() && !is_space(t[p])) ++p;
    const std::string type = to_lower(t.substr(s, p - s));
    if (type == "numeric" || type == "real" || type == "integer") {
      a.type = AttrType::kNumeric;
    } else if (type == "string") {
      a.type = AttrType::kString;
    } else if (type == "date") {
      a.type = AttrType::kString;  // kept as text; the optional format is ignored
      return {};
    } else {
      ps_.fail(ps_.line_no(), tcol + s + 1,
               fmt::format("unknown type {} of attribute {} (expected numeric, real, integer, "
                           "string, date or {{nominal values}})",
                           io_detail::quoted(t.substr(s, p - s)), io_detail::quoted(a.name)));
    }
    return t.substr(p);
  }

  // ---- data rows --------------------------------------------------------------------------------

  void read_rows() {
    std::string_view line;
    while (ps_.next_line(line)) {
      const std::string_view t = trim(line);
      if (t.empty() || t[0] == '%') continue;
      const auto tcol = static_cast<std::size_t>(t.data() - line.data());
      row_begin_.push_back(cells_.size());
      row_line_.push_back(ps_.line_no());
      if (t[0] == '{') {
        any_sparse_ = true;
        row_sparse_.push_back(true);
        read_sparse_row(t, tcol);
      } else {
        row_sparse_.push_back(false);
        read_dense_row(t, tcol);
      }
    }
    n_ = row_begin_.size();
    row_begin_.push_back(cells_.size());
  }

  void read_dense_row(std::string_view t, std::size_t tcol) {
    ps_.split_items(t, tcol, items_);
    if (items_.size() != na_) {
      ps_.fail(ps_.line_no(), 0, fmt::format("expected {} values, found {}", na_, items_.size()));
    }
    for (std::size_t a = 0; a < na_; ++a) {
      Cell cell;
      cell.attr = static_cast<std::uint32_t>(a);
      check_value(attrs_[a], items_[a], cell);
      cells_.push_back(cell);
    }
  }

  void read_sparse_row(std::string_view t, std::size_t tcol) {
    if (t.back() != '}')
      ps_.fail(ps_.line_no(), tcol + t.size(),
               fmt::format("expected '}}' at the end of a sparse row, found {}",
                           io_detail::quoted(t.substr(t.size() - 1))));
    const std::string_view inner = t.substr(1, t.size() - 2);
    if (trim(inner).empty()) return;
    ps_.split_items(inner, tcol + 1, items_);
    std::int64_t prev = -1;
    for (const auto& it : items_) prev = read_sparse_item(it, prev);
  }

  // One `index value` of a sparse row; returns the index.
  std::int64_t read_sparse_item(const Item& it, std::int64_t prev) {
    std::size_t sp = 0;
    while (sp < it.text.size() && !is_space(it.text[sp])) ++sp;
    const std::string_view idx_text = it.text.substr(0, sp);
    std::int64_t idx = 0;
    if (sp == it.text.size() || !parse_int64(idx_text, idx)) {
      ps_.fail(ps_.line_no(), it.column,
               fmt::format("expected 'index value' in a sparse row, found {}",
                           io_detail::quoted(it.text)));
    }
    if (idx < 0 || static_cast<std::uint64_t>(idx) >= na_) {
      ps_.fail(ps_.line_no(), it.column,
               fmt::format("sparse index {} is out of range [0, {}) (the file has {} "
                           "attributes)",
                           idx, na_, na_));
    }
    if (idx <= prev) {
      ps_.fail(ps_.line_no(), it.column,
               fmt::format("expected a sparse index greater than {} (indices must be "
                           "increasing), found {}",
                           prev, idx));
    }
    std::size_t vs = sp;
    while (vs < it.text.size() && is_space(it.text[vs])) ++vs;
    const Item value{it.text.substr(vs), it.column + vs};
    Cell cell;
    cell.attr = static_cast<std::uint32_t>(idx);
    check_value(attrs_[static_cast<std::size_t>(idx)], value, cell);
    cells_.push_back(cell);
    return idx;
  }

  // Reads `item` as a value of attribute a into `cell`: '?' (unquoted) is missing.
  void check_value(const Attribute& a, const Item& item, Cell& cell) {
    const Token tok = ps_.value_token(item);
    cell.text = tok.value;
    if (!tok.quoted && kMissing.contains(tok.value)) {
      cell.missing = true;
      return;
    }
    if (a.type == AttrType::kNumeric) {
      const NumberKind kind = parse_double(tok.value, cell.number);
      if (kind != NumberKind::kFinite) {
        ps_.fail(ps_.line_no(), item.column,
                 fmt::format("expected a {}number for attribute {}, found {}", finite_word(kind),
                             io_detail::quoted(a.name), io_detail::quoted(tok.value)));
      }
    } else if (a.type == AttrType::kNominal) {
      const auto it = a.level_index.find(tok.value);
      if (it == a.level_index.end()) {
        ps_.fail(
            ps_.line_no(), item.column,
            fmt::format("value {} is not in the nominal set {} of attribute {}",
                        io_detail::quoted(tok.value), nominal_set(a), io_detail::quoted(a.name)));
      }
      cell.level = it->second;
    }
  }

  // Per-row access to the value of an attribute: load_row(i), then cell_at(i, a).
  void load_row(std::size_t i) {
    if (!row_sparse_[i]) return;
    for (std::size_t c = row_begin_[i]; c < row_begin_[i + 1]; ++c) {
      stamp_[cells_[c].attr] = i + 1;
      cell_of_[cells_[c].attr] = c;
    }
  }
  // The cell of attribute a in row i, or nullptr when omitted from a sparse row.
  [[nodiscard]] const Cell* cell_at(std::size_t i, std::size_t a) const {
    if (!row_sparse_[i]) return &cells_[row_begin_[i] + a];
    return stamp_[a] == i + 1 ? &cells_[cell_of_[a]] : nullptr;
  }

  [[nodiscard]] std::string attribute_names() const {
    std::vector<std::string> names;
    for (const auto& a : attrs_) names.push_back(a.name);
    return join_limited(names);
  }

  // ---- labels -----------------------------------------------------------------------------------

  void resolve_labels() {
    label_of_.assign(na_, -1);
    stamp_.assign(na_, 0);
    cell_of_.assign(na_, 0);
    if (xml_labels_ != nullptr) {
      for (const auto& l : *xml_labels_) {
        const auto it = attr_by_name_.find(l);
        if (it == attr_by_name_.end()) {
          throw NotFound(
              fmt::format("label '{}' of the MULAN XML is not an attribute of {} "
                          "(attributes: {})",
                          l, name_, attribute_names()));
        }
        if (label_of_[it->second] >= 0)
          throw InvalidArgument(fmt::format("label '{}' is listed twice in the MULAN XML", l));
        add_label(it->second);
      }
    } else if (o_.num_labels > 0) {
      if (o_.num_labels > na_) {
        detail::throw_parse_error(name_, 0, 0,
                                  "expected at least {} attributes (num_labels), found {}",
                                  o_.num_labels, na_);
      }
      for (std::size_t a = na_ - o_.num_labels; a < na_; ++a) add_label(a);
    }
    for (std::size_t a : label_attrs_) {
      if (attrs_[a].type == AttrType::kString) {
        detail::throw_parse_error(name_, attrs_[a].line, 0,
                                  "label attribute '{}' is a string attribute, expected nominal "
                                  "or numeric",
                                  attrs_[a].name);
      }
    }
  }

  void add_label(std::size_t a) {
    label_of_[a] = static_cast<std::int32_t>(label_attrs_.size());
    label_attrs_.push_back(a);
  }

  void read_labels(Labels& labels) {
    labels.kind = LabelKind::kMultilabel;
    for (std::size_t a : label_attrs_) labels.names.push_back(attrs_[a].name);
    labels.set_indptr.reserve(n_ + 1);
    labels.set_indptr.push_back(0);
    std::vector<std::int32_t> on_level(label_attrs_.size(), -1);
    for (std::size_t k = 0; k < label_attrs_.size(); ++k) {
      const auto& a = attrs_[label_attrs_[k]];
      const auto it = a.level_index.find("1");
      if (it != a.level_index.end()) on_level[k] = it->second;
    }
    for (std::size_t i = 0; i < n_; ++i) {
      load_row(i);
      for (std::size_t k = 0; k < label_attrs_.size(); ++k) {
        if (label_is_on(i, label_attrs_[k], on_level[k]))
          labels.set_indices.push_back(static_cast<std::int32_t>(k));
      }
      labels.set_indptr.push_back(static_cast<std::int64_t>(labels.set_indices.size()));
    }
  }

  // Whether label attribute a is on in row i (nominal: its value is the level `on_level`).
  bool label_is_on(std::size_t i, std::size_t a, std::int32_t on_level) const {
    const Cell* c = cell_at(i, a);
    if (attrs_[a].type == AttrType::kNominal)
      return c == nullptr ? on_level == 0 : (!c->missing && c->level == on_level);
    if (c == nullptr || c->missing) return false;
    if (c->number != 0.0 && c->number != 1.0) {
      detail::throw_parse_error(name_, row_line_[i], 0,
                                "expected 0 or 1 for label attribute '{}', found {}",
                                attrs_[a].name, io_detail::quoted(c->text));
    }
    return c->number == 1.0;
  }

  // ---- which attributes are features ------------------------------------------------------------

  void find_identifiers() {
    identifier_.assign(na_, false);
    for (std::size_t a = 0; a < na_; ++a) {
      if (label_of_[a] >= 0 || attrs_[a].type != AttrType::kNominal || attrs_[a].levels.size() <= 2)
        continue;
      if (attrs_[a].levels.size() < n_) continue;  // cannot be all distinct
      identifier_[a] = all_distinct(a);
    }
  }

  // Whether every row has a present value of nominal attribute a, each a different one.
  bool all_distinct(std::size_t a) {
    std::vector<bool> used(attrs_[a].levels.size(), false);
    for (std::size_t i = 0; i < n_; ++i) {
      load_row(i);
      const Cell* c = cell_at(i, a);
      const std::int32_t level = c == nullptr ? 0 : (c->missing ? -1 : c->level);
      if (level < 0 || used[static_cast<std::size_t>(level)]) return false;
      used[static_cast<std::size_t>(level)] = true;
    }
    return true;
  }

  [[nodiscard]] bool is_identifier(std::size_t a) const {
    return !identifier_.empty() && identifier_[a];
  }

  Encoding reuse_encoding() {
    Encoding enc = *encoding_;
    for (const auto& s : encoding_->specs) {
      const auto it = attr_by_name_.find(s.source);
      if (it == attr_by_name_.end()) {
        throw NotFound(fmt::format("attribute '{}' of the encoding is not in {} (attributes: {})",
                                   s.source, name_, attribute_names()));
      }
      const Attribute& a = attrs_[it->second];
      RATEOPT_CHECK(label_of_[it->second] < 0,
                    "attribute '{}' is a feature of the encoding and a label of {}", a.name, name_);
      const bool numeric_spec = s.kind == FeatureSpec::Kind::kNumeric;
      RATEOPT_CHECK(numeric_spec == (a.type == AttrType::kNumeric),
                    "the encoding treats attribute '{}' as {}, but it is {} in {}", a.name,
                    numeric_spec ? "numeric" : "categorical",
                    a.type == AttrType::kNumeric ? "numeric" : "nominal or string", name_);
      specs_.push_back({it->second, s, {}, {}});
    }
    return enc;
  }

  Encoding infer_encoding() {
    Encoding enc;
    enc.format = "arff";
    for (std::size_t a = 0; a < na_; ++a) {
      const Attribute& at = attrs_[a];
      if (label_of_[a] >= 0) continue;
      if (at.type == AttrType::kString || is_identifier(a)) {
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
      specs_.push_back(std::move(b));
    }
    enc.num_features = enc.feature_names.size();
    enc.missing_policy = "zero";
    return enc;
  }

  // Maps the levels of each one-hot spec to its features (nominal: by level; string: by text).
  void bind_levels() {
    for (auto& b : specs_) {
      const Attribute& a = attrs_[b.attr];
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
  }

  // ---- feature rows -----------------------------------------------------------------------------

  FeatureMatrix feature_rows(std::size_t num_features) {
    SparseRows rows;
    RowEntries entries;
    for (std::size_t i = 0; i < n_; ++i) {
      load_row(i);
      entries.clear();
      for (const auto& b : specs_) encode_value(b, i, entries);
      append_row(rows, entries);
    }
    return make_matrix(std::move(rows), num_features,
                       any_sparse_ ? Storage::kSparse : Storage::kDense);
  }

  // Adds the feature entries of spec b in row i ('?' encodes as 0 / all-zero).
  void encode_value(const BoundSpec& b, std::size_t i, RowEntries& entries) {
    const Cell* c = cell_at(i, b.attr);
    if (c != nullptr && c->missing) return;
    const auto first = static_cast<std::int32_t>(b.spec.first_feature);
    if (b.spec.kind == FeatureSpec::Kind::kNumeric) {
      const double x = c == nullptr ? 0.0 : c->number;
      const double z = (x - b.spec.offset) / b.spec.scale;
      if (!std::isfinite(z)) {
        detail::throw_parse_error(name_, row_line_[i], 0,
                                  "attribute '{}': value {} is out of range after scaling",
                                  b.spec.source, x);
      }
      if (z != 0.0) entries.emplace_back(first, z);
      return;
    }
    std::int32_t k = -1;
    if (attrs_[b.attr].type == AttrType::kNominal) {
      const std::int32_t level = c == nullptr ? 0 : c->level;
      if (level >= 0 && static_cast<std::size_t>(level) < b.level_feature.size())
        k = b.level_feature[static_cast<std::size_t>(level)];
    } else if (c == nullptr) {
      return;  // a string omitted from a sparse row counts as missing
    } else {
      const auto it = b.text_feature.find(c->text);
      if (it != b.text_feature.end()) k = it->second;
    }
    if (k >= 0) {
      entries.emplace_back(first + k, 1.0);
    } else if (encoding_ != nullptr && b.spec.levels.size() != 1) {
      ++st_.unseen_levels;
    }
  }

  // ---- slice columns: string, identifier and multi-valued nominal attributes -------------------

  void add_columns(Dataset& ds) {
    std::vector<std::size_t> column_attrs;
    std::vector<ColumnBuilder> builders;
    for (std::size_t a = 0; a < na_; ++a) {
      const Attribute& at = attrs_[a];
      const bool keep =
          at.type == AttrType::kString ||
          (at.type == AttrType::kNominal && (is_identifier(a) || at.levels.size() > 2));
      if (label_of_[a] >= 0 || !keep) continue;
      column_attrs.push_back(a);
      builders.emplace_back(at.name, n_);
    }
    for (std::size_t i = 0; i < n_ && !column_attrs.empty(); ++i) {
      load_row(i);
      for (std::size_t k = 0; k < column_attrs.size(); ++k) {
        const Attribute& at = attrs_[column_attrs[k]];
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
  }

  inline static const MissingTokens kMissing{{"?"}};  // unquoted

  ArffParser ps_;
  const ArffOptions& o_;
  const std::string& name_;
  const std::vector<std::string>* xml_labels_;
  const Encoding* encoding_;
  ReadStats& st_;
  std::vector<Attribute> attrs_;
  std::unordered_map<std::string, std::size_t> attr_by_name_;
  std::size_t na_ = 0;
  std::vector<Item> items_;  // the items of the line being read
  std::vector<Cell> cells_;
  std::vector<std::size_t> row_begin_;  // row i's cells: [row_begin_[i], row_begin_[i + 1])
  std::vector<std::size_t> row_line_;
  std::vector<bool> row_sparse_;
  bool any_sparse_ = false;
  std::size_t n_ = 0;
  std::vector<std::int32_t> label_of_;  // attribute -> label index or -1
  std::vector<std::size_t> label_attrs_;
  std::vector<std::size_t> stamp_;  // sparse rows: row + 1 where the attribute was last loaded
  std::vector<std::size_t> cell_of_;
  std::vector<bool> identifier_;  // empty when identifiers are not looked for
  std::vector<BoundSpec> specs_;
};

}  // namespace

Dataset parse_arff_impl(std::string_view text, const ArffOptions& options, const std::string& name,
                        const std::vector<std::string>* xml_labels, const Encoding* encoding,
                        ReadStats* stats) {
  text = skip_bom(text);
  ReadStats local_stats;
  ReadStats& st = begin_stats(stats, local_stats, text);
  if (encoding != nullptr) check_encoding(*encoding, "arff");
  return ArffReader(text, options, name, xml_labels, encoding, st).read();
}

}  // namespace rateopt::io_detail
