// CSV/TSV reader: RFC-4180 tokenising (quoted fields, "" escapes, CRLF), column typing,
// standardisation, one-hot encoding, missing-value policies and encoding reuse.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "common/check.hpp"
#include "io/io_util.hpp"
#include "rateopt/io.hpp"

namespace rateopt::io_detail {

namespace {

// Splits the text into records of fields. Views point into the text or into the arena.
class CsvTokenizer {
 public:
  CsvTokenizer(std::string_view text, char delimiter, std::string_view comment_prefix,
               const std::string& name, TextArena& arena)
      : text_(text), delim_(delimiter), comment_(comment_prefix), name_(name), arena_(arena) {}

  void skip_lines(std::size_t n) {
    for (std::size_t k = 0; k < n && pos_ < text_.size(); ++k) {
      const std::size_t eol = text_.find('\n', pos_);
      if (eol == std::string_view::npos) {
        pos_ = text_.size();
        break;
      }
      new_line(eol + 1);
    }
  }

  // Appends the fields of the next record to `out`; false at the end of the input.
  bool next(std::vector<std::string_view>& out, std::size_t& record_line) {
    while (pos_ < text_.size()) {
      std::size_t eol = text_.find('\n', pos_);
      if (eol == std::string_view::npos) eol = text_.size();
      const std::string_view line = text_.substr(pos_, eol - pos_);
      const bool blank = trim(line).empty();
      const bool comment = !comment_.empty() && line.starts_with(comment_);
      if (!blank && !comment) break;
      if (eol == text_.size()) {
        pos_ = eol;
      } else {
        new_line(eol + 1);
      }
    }
    if (pos_ >= text_.size()) return false;
    record_line = line_;
    const std::size_t n = text_.size();
    std::size_t p = pos_;
    while (true) {
      while (p < n && is_blank(text_[p])) ++p;
      if (p < n && text_[p] == '"') {
        p = read_quoted(p, out);
      } else {
        const std::size_t start = p;
        while (p < n && text_[p] != delim_ && text_[p] != '\n') ++p;
        std::string_view field = text_.substr(start, p - start);
        while (!field.empty() && (is_blank(field.back()) || field.back() == '\r'))
          field.remove_suffix(1);
        out.push_back(field);
      }
      if (p >= n) {
        pos_ = n;
        break;
      }
      if (text_[p] == delim_) {
        ++p;
        continue;
      }
      new_line(p + 1);  // text_[p] == '\n'
      break;
    }
    return true;
  }

 private:
  [[nodiscard]] bool is_blank(char c) const { return (c == ' ' || c == '\t') && c != delim_; }

  void new_line(std::size_t next_pos) {
    pos_ = next_pos;
    line_start_ = next_pos;
    ++line_;
  }

  [[noreturn]] void fail(std::size_t line, std::size_t col, const std::string& what) const {
    throw ParseError(name_, line, col, what);
  }

  // Reads a quoted field starting at the opening quote; returns the position after the closing
  // quote and any blanks (at the delimiter, '\n' or the end).
  std::size_t read_quoted(std::size_t p, std::vector<std::string_view>& out) {
    const std::size_t open_line = line_;
    const std::size_t open_col = p - line_start_ + 1;
    const std::size_t start = p + 1;
    std::size_t q = start;
    bool escaped = false;
    std::size_t close = 0;
    while (true) {
      const std::size_t e = text_.find('"', q);
      if (e == std::string_view::npos)
        fail(open_line, open_col,
             "expected a closing '\"' for the quoted field, found the end of the file");
      for (std::size_t i = q; i < e; ++i) {
        if (text_[i] == '\n') {
          ++line_;
          line_start_ = i + 1;
        }
      }
      if (e + 1 < text_.size() && text_[e + 1] == '"') {
        escaped = true;
        q = e + 2;
        continue;
      }
      close = e;
      break;
    }
    std::string_view field = text_.substr(start, close - start);
    if (escaped) {
      std::string unescaped;
      unescaped.reserve(field.size());
      for (std::size_t i = 0; i < field.size(); ++i) {
        unescaped += field[i];
        if (field[i] == '"') ++i;  // "" -> "
      }
      arena_.push_back(std::move(unescaped));
      field = arena_.back();
    }
    out.push_back(field);
    p = close + 1;
    while (p < text_.size() && is_blank(text_[p])) ++p;
    if (p < text_.size() && text_[p] == '\r' && (p + 1 == text_.size() || text_[p + 1] == '\n'))
      ++p;
    if (p < text_.size() && text_[p] != delim_ && text_[p] != '\n') {
      fail(line_, p - line_start_ + 1,
           fmt::format("expected a delimiter or the end of the line after a closing quote, "
                       "found {}",
                       io_detail::quoted(text_.substr(p, 1))));
    }
    return p;
  }

  std::string_view text_;
  char delim_;
  std::string_view comment_;
  const std::string& name_;
  TextArena& arena_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
};

enum class Role { kFeature, kLabel, kGroup, kWeight, kIgnored, kOther };

// A feature built from one raw column.
struct CsvFeature {
  std::size_t column = 0;
  FeatureSpec spec;
  std::unordered_map<std::string_view, std::int32_t> level_index;  // views into spec.levels
  std::vector<double> numbers;  // inferred numeric column: value per kept row (NaN: missing)
};

void index_levels(CsvFeature& f) {
  f.level_index.clear();
  for (std::size_t k = 0; k < f.spec.levels.size(); ++k)
    f.level_index.emplace(f.spec.levels[k], static_cast<std::int32_t>(k));
}

std::vector<std::string> unique_names(std::vector<std::string> names) {
  for (std::size_t j = 0; j < names.size(); ++j) {
    if (names[j].empty()) names[j] = fmt::format("col{}", j + 1);
  }
  std::unordered_map<std::string, int> seen;
  for (const auto& n : names) seen[n] = 1;
  std::unordered_map<std::string, int> used;
  for (auto& n : names) {
    if (used[n]++ == 0) continue;
    for (int k = 1;; ++k) {
      std::string candidate = fmt::format("{}.{}", n, k);
      if (seen.find(candidate) == seen.end()) {
        seen[candidate] = 1;
        used[candidate] = 1;
        n = std::move(candidate);
        break;
      }
    }
  }
  return names;
}

char pick_delimiter(const CsvOptions& o, const std::string& name) {
  if (o.delimiter != 0) {
    RATEOPT_CHECK(o.delimiter != '"' && o.delimiter != '\n' && o.delimiter != '\r',
                  "CsvOptions::delimiter cannot be a quote or a line break");
    return o.delimiter;
  }
  return ends_with_ci(name, ".tsv") || ends_with_ci(name, ".tsv.gz") ? '\t' : ',';
}

}  // namespace

Dataset parse_csv_impl(std::string_view text, const CsvOptions& options, const std::string& name,
                       const Encoding* encoding, ReadStats* stats) {
  ReadStats local_stats;
  ReadStats& st = stats != nullptr ? *stats : local_stats;
  st = ReadStats{};
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark
  st.lines = count_lines(text);
  if (encoding != nullptr) check_encoding(*encoding, "csv");
  RATEOPT_CHECK(options.has_header || !options.column_names.empty(),
                "CsvOptions: a file without a header row needs column_names");

  // ---- tokenise -------------------------------------------------------------------------------
  TextArena arena;
  CsvTokenizer tok(text, pick_delimiter(options, name), options.comment_prefix, name, arena);
  tok.skip_lines(options.skip_lines);
  std::vector<std::string_view> fields;
  std::vector<std::size_t> record_lines;
  std::vector<std::string> names;
  std::size_t ncols = options.column_names.size();
  std::size_t line = 0;
  if (options.has_header) {
    std::vector<std::string_view> header;
    if (!tok.next(header, line)) {
      if (options.column_names.empty())
        throw ParseError(name, st.lines, 0, "expected a header row, found the end of the file");
    } else if (ncols != 0 && header.size() != ncols) {
      detail::throw_parse_error(name, line, 0,
                                "expected {} fields in the header row (column_names has {}), "
                                "found {}",
                                ncols, ncols, header.size());
    } else if (ncols == 0) {
      ncols = header.size();
      for (auto h : header) names.emplace_back(h);
    }
  }
  if (!options.column_names.empty()) names = options.column_names;
  names = unique_names(std::move(names));
  while (true) {
    const std::size_t before = fields.size();
    if (!tok.next(fields, line)) break;
    const std::size_t found = fields.size() - before;
    if (found != ncols)
      detail::throw_parse_error(name, line, 0, "expected {} fields, found {}", ncols, found);
    record_lines.push_back(line);
  }
  const std::size_t nrec = record_lines.size();
  auto field = [&](std::size_t r, std::size_t c) { return fields[r * ncols + c]; };

  // ---- resolve column roles -------------------------------------------------------------------
  std::unordered_map<std::string_view, std::size_t> by_name;
  for (std::size_t j = 0; j < names.size(); ++j) by_name.emplace(names[j], j);
  auto find = [&](const std::string& col, std::string_view what) {
    const auto it = by_name.find(col);
    if (it == by_name.end()) {
      throw NotFound(fmt::format("{} column '{}' is not in {} (available: {})", what, col, name,
                                 join_limited(names)));
    }
    return it->second;
  };
  std::vector<Role> role(ncols, encoding != nullptr ? Role::kOther : Role::kFeature);
  std::vector<bool> categorical(ncols, false);
  for (const auto& c : options.ignore_columns) role[find(c, "ignored")] = Role::kIgnored;
  auto assign = [&](const std::string& c, std::string_view what, Role r) {
    const std::size_t j = find(c, what);
    RATEOPT_CHECK(role[j] != Role::kIgnored, "column '{}' is both ignored and the {} column", c,
                  what);
    role[j] = r;
    return j;
  };
  for (const auto& c : options.group_columns) assign(c, "group", Role::kGroup);
  std::size_t weight_col = ncols;
  if (!options.weight_column.empty())
    weight_col = assign(options.weight_column, "weight", Role::kWeight);
  std::size_t label_col = ncols;
  if (!options.label_column.empty())
    label_col = assign(options.label_column, "label", Role::kLabel);
  for (const auto& c : options.categorical_columns) categorical[find(c, "categorical")] = true;

  // Features: from the reused encoding, or one per remaining column.
  std::vector<CsvFeature> features;
  if (encoding != nullptr) {
    for (const auto& s : encoding->specs) {
      CsvFeature f;
      f.column = find(s.source, "encoding source");
      RATEOPT_CHECK(role[f.column] == Role::kOther || role[f.column] == Role::kFeature,
                    "column '{}' is a feature of the encoding and cannot be a label, group, "
                    "weight or ignored column",
                    s.source);
      role[f.column] = Role::kFeature;
      f.spec = s;
      features.push_back(std::move(f));
    }
  } else {
    for (std::size_t j = 0; j < ncols; ++j) {
      if (role[j] != Role::kFeature) continue;
      CsvFeature f;
      f.column = j;
      f.spec.source = names[j];
      features.push_back(std::move(f));
    }
  }

  // ---- missing values and row selection -------------------------------------------------------
  std::vector<std::string_view> missing_tokens(options.missing_values.begin(),
                                               options.missing_values.end());
  auto is_missing = [&](std::string_view v) {
    return std::find(missing_tokens.begin(), missing_tokens.end(), v) != missing_tokens.end();
  };
  std::vector<std::size_t> checked;  // columns whose missing values follow the policy
  for (std::size_t j = 0; j < ncols; ++j)
    if (role[j] != Role::kIgnored && role[j] != Role::kOther) checked.push_back(j);
  std::vector<std::uint8_t> missing_flag(fields.size(), 0);
  for (std::size_t k = 0; k < fields.size(); ++k) missing_flag[k] = is_missing(fields[k]) ? 1 : 0;
  auto missing_at = [&](std::size_t r, std::size_t c) { return missing_flag[r * ncols + c] != 0; };
  std::vector<std::size_t> kept;
  kept.reserve(nrec);
  for (std::size_t r = 0; r < nrec; ++r) {
    bool drop = false;
    for (std::size_t j : checked) {
      if (!missing_at(r, j)) continue;
      const std::string_view v = field(r, j);
      if (options.missing == MissingPolicy::kDrop) {
        drop = true;
        break;
      }
      if (options.missing == MissingPolicy::kError || role[j] == Role::kLabel ||
          role[j] == Role::kWeight) {
        detail::throw_parse_error(name, record_lines[r], 0,
                                  "missing value {} in column '{}' (expected a {}value)",
                                  io_detail::quoted(v), names[j],
                                  role[j] == Role::kLabel    ? "label "
                                  : role[j] == Role::kWeight ? "weight "
                                                             : "");
      }
    }
    if (drop) {
      ++st.rows_dropped_missing;
    } else {
      kept.push_back(r);
    }
  }
  const std::size_t n = kept.size();

  auto number_at = [&](std::size_t r, std::size_t j, double& x) {
    const std::string_view v = field(r, j);
    const NumberKind kind = parse_double(v, x);
    if (kind == NumberKind::kFinite) return;
    detail::throw_parse_error(
        name, record_lines[r], 0, "column '{}': expected a {}number, found {}", names[j],
        kind == NumberKind::kNonFinite ? "finite " : "", io_detail::quoted(v));
  };

  // Up to `limit` distinct values of column j among the kept rows, quoted, in order of appearance.
  auto distinct_values = [&](std::size_t j, std::size_t limit) {
    std::vector<std::string_view> seen;
    bool more = false;
    for (std::size_t r : kept) {
      const std::string_view v = field(r, j);
      if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      if (seen.size() == limit) {
        more = true;
        break;
      }
      seen.push_back(v);
    }
    std::string out;
    for (const auto v : seen) out += (out.empty() ? "" : ", ") + io_detail::quoted(v);
    return more ? out + ", ..." : out;
  };
  // A column that would be numeric but for a few stray tokens (at most 1% of its values) is read
  // as categorical, as asked; say so, with the count and the first offending line.
  auto warn_if_mostly_numeric = [&](std::size_t j) {
    std::size_t numbers = 0;
    std::size_t others = 0;
    std::size_t first_line = 0;
    std::string_view first;
    for (std::size_t r : kept) {
      if (missing_at(r, j)) continue;
      double x = 0;
      if (parse_double(field(r, j), x) == NumberKind::kNotNumber) {
        if (others++ == 0) {
          first = field(r, j);
          first_line = record_lines[r];
        }
        if (others * 100 > n) return;  // more than 1% of the rows: a text column, not strays
      } else {
        ++numbers;
      }
    }
    if (numbers == 0 || others * 100 > numbers + others) return;
    st.warnings.push_back(fmt::format(
        "{}: column '{}' is read as categorical because {} of its {} values {} not a number "
        "(first: {} on line {}); fix or list them as missing values if the column is numeric",
        name, names[j], others, numbers + others, others == 1 ? "is" : "are",
        io_detail::quoted(first), first_line));
  };

  // ---- infer the encoding (numeric vs one-hot, scaling, levels) -------------------------------
  if (encoding == nullptr) {
    std::size_t next_feature = 0;
    for (auto& f : features) {
      const std::size_t j = f.column;
      bool numeric = !categorical[j];
      std::size_t first_nonfinite = nrec;
      if (numeric) f.numbers.assign(n, std::nan(""));
      for (std::size_t k = 0; k < n && numeric; ++k) {
        const std::size_t r = kept[k];
        if (missing_at(r, j)) continue;
        const NumberKind kind = parse_double(field(r, j), f.numbers[k]);
        if (kind == NumberKind::kNotNumber) numeric = false;
        if (kind == NumberKind::kNonFinite && first_nonfinite == nrec) first_nonfinite = r;
      }
      f.spec.first_feature = next_feature;
      if (!numeric && !categorical[j]) warn_if_mostly_numeric(j);
      if (!numeric) f.numbers.clear();
      if (numeric) {
        if (first_nonfinite != nrec) {
          double x = 0;
          number_at(first_nonfinite, j, x);
        }
        f.spec.kind = FeatureSpec::Kind::kNumeric;
        double mean = 0;
        double m2 = 0;
        std::size_t count = 0;
        for (std::size_t k = 0; k < n; ++k) {  // Welford
          if (missing_at(kept[k], j)) continue;
          const double x = f.numbers[k];
          ++count;
          const double delta = x - mean;
          mean += delta / static_cast<double>(count);
          m2 += delta * (x - mean);
        }
        const double sd = count > 0 ? std::sqrt(m2 / static_cast<double>(count)) : 0.0;
        if (options.standardize) {
          if (!std::isfinite(mean) || !std::isfinite(sd)) {
            detail::throw_parse_error(name, 0, 0,
                                      "column '{}': values are too large to standardise (their "
                                      "mean or standard deviation overflows a double); rescale "
                                      "the column or keep it unscaled (--no-standardize)",
                                      names[j]);
          }
          f.spec.offset = mean;
          f.spec.scale = sd > 0 ? sd : 1.0;
        }
        // A missing value stands for the training mean (0 after standardisation).
        f.spec.impute = options.standardize ? f.spec.offset : (std::isfinite(mean) ? mean : 0.0);
        next_feature += 1;
      } else {
        f.spec.kind = FeatureSpec::Kind::kOneHot;
        std::unordered_map<std::string_view, std::int32_t> seen;
        for (std::size_t r : kept) {
          if (missing_at(r, j)) continue;
          const std::string_view v = field(r, j);
          if (seen.emplace(v, static_cast<std::int32_t>(seen.size())).second)
            f.spec.levels.emplace_back(v);
        }
        next_feature += f.spec.levels.size();
      }
    }
  }
  for (auto& f : features) index_levels(f);

  // ---- features ---------------------------------------------------------------------------------
  Encoding enc;
  if (encoding != nullptr) {
    enc = *encoding;
  } else {
    enc.format = "csv";
    for (const auto& f : features) {
      if (f.spec.kind == FeatureSpec::Kind::kNumeric) {
        enc.feature_names.push_back(f.spec.source);
      } else {
        for (const auto& level : f.spec.levels)
          enc.feature_names.push_back(f.spec.source + "=" + level);
      }
      enc.specs.push_back(f.spec);
    }
    enc.num_features = enc.feature_names.size();
    for (std::size_t j = 0; j < ncols; ++j)
      if (role[j] == Role::kGroup || role[j] == Role::kWeight)
        enc.excluded_columns.push_back(names[j]);
  }
  enc.missing_policy = std::string(missing_policy_name(options.missing));
  enc.label_column = options.label_column;

  SparseRows rows;
  rows.indices.reserve(n * features.size());
  rows.values.reserve(n * features.size());
  std::vector<std::pair<std::int32_t, double>> entries;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t r = kept[k];
    entries.clear();
    bool imputed = false;
    for (const auto& f : features) {
      if (missing_at(r, f.column)) {  // kZero: the training mean, or an all-zero one-hot
        imputed = true;
        if (f.spec.kind == FeatureSpec::Kind::kNumeric) {
          const double z = (f.spec.impute - f.spec.offset) / f.spec.scale;
          if (z != 0.0 && std::isfinite(z))
            entries.emplace_back(static_cast<std::int32_t>(f.spec.first_feature), z);
        }
        continue;
      }
      const std::string_view v = field(r, f.column);
      if (f.spec.kind == FeatureSpec::Kind::kNumeric) {
        double x = 0;
        if (f.numbers.empty()) {
          number_at(r, f.column, x);
        } else {
          x = f.numbers[k];
        }
        const double z = (x - f.spec.offset) / f.spec.scale;
        if (!std::isfinite(z)) {
          detail::throw_parse_error(name, record_lines[r], 0,
                                    "column '{}': value {} is out of range after scaling",
                                    names[f.column], io_detail::quoted(v));
        }
        if (z != 0.0) entries.emplace_back(static_cast<std::int32_t>(f.spec.first_feature), z);
      } else {
        const auto it = f.level_index.find(v);
        if (it == f.level_index.end()) {
          ++st.unseen_levels;
          continue;
        }
        entries.emplace_back(
            static_cast<std::int32_t>(f.spec.first_feature + static_cast<std::size_t>(it->second)),
            1.0);
      }
    }
    if (imputed) ++st.rows_imputed_missing;
    std::sort(entries.begin(), entries.end());
    for (const auto& [idx, val] : entries) {
      rows.indices.push_back(idx);
      rows.values.push_back(val);
    }
    rows.end_row();
  }
  FeatureMatrix matrix = make_matrix(std::move(rows), enc.num_features, Storage::kAuto);

  // ---- labels -----------------------------------------------------------------------------------
  Labels labels;
  if (label_col < ncols) {
    labels.values.reserve(n);
    if (!options.positive_values.empty()) {
      labels.kind = LabelKind::kBinary;
      std::vector<std::string> negatives;
      for (std::size_t r : kept) {
        const std::string_view v = field(r, label_col);
        const bool pos = std::find(options.positive_values.begin(), options.positive_values.end(),
                                   v) != options.positive_values.end();
        labels.values.push_back(pos ? 1 : 0);
        if (!pos && negatives.size() < 2 &&
            std::find(negatives.begin(), negatives.end(), v) == negatives.end())
          negatives.emplace_back(v);
      }
      const std::string positive = join(options.positive_values, "|");
      labels.names = {negatives.size() == 1 ? negatives[0] : "not " + positive, positive};
      if (n > 0 && std::find(labels.values.begin(), labels.values.end(), 1) == labels.values.end())
        st.warnings.push_back(fmt::format(
            "{}: the positive label value {} matches none of the {} rows of column '{}' (values "
            "seen: {}; matching is exact and case-sensitive): every label is 0",
            name, io_detail::quoted(positive), n, names[label_col], distinct_values(label_col, 5)));
      enc.positive_value = positive;
    } else {
      bool all01 = true;
      bool allpm = true;
      for (std::size_t r : kept) {
        double x = 0;
        const bool num = parse_double(field(r, label_col), x) == NumberKind::kFinite;
        all01 = all01 && num && (x == 0.0 || x == 1.0);
        allpm = allpm && num && (x == -1.0 || x == 1.0);
        if (!all01 && !allpm) break;
      }
      if (all01 || allpm) {
        labels.kind = LabelKind::kBinary;
        for (std::size_t r : kept) {
          double x = 0;
          (void)parse_double(field(r, label_col), x);
          labels.values.push_back(x == 1.0 ? 1 : 0);
        }
        labels.names =
            all01 ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{"-1", "+1"};
        enc.positive_value = all01 ? "1" : "+1";
      } else {
        labels.kind = LabelKind::kMulticlass;
        std::map<std::string_view, std::int32_t> classes;
        for (std::size_t r : kept) classes.emplace(field(r, label_col), 0);
        std::int32_t k = 0;
        for (auto& [cls, idx] : classes) {
          idx = k++;
          labels.names.emplace_back(cls);
        }
        for (std::size_t r : kept) labels.values.push_back(classes[field(r, label_col)]);
        enc.positive_value.clear();
      }
    }
  }

  Dataset ds(std::move(matrix), std::move(labels));

  // ---- weights and columns ----------------------------------------------------------------------
  if (weight_col < ncols) {
    std::vector<double> w;
    w.reserve(n);
    for (std::size_t r : kept) {
      const std::string_view v = field(r, weight_col);
      double x = 0;
      if (parse_double(v, x) != NumberKind::kFinite || x < 0) {
        detail::throw_parse_error(name, record_lines[r], 0,
                                  "column '{}': expected a finite weight >= 0, found {}",
                                  names[weight_col], io_detail::quoted(v));
      }
      w.push_back(x);
    }
    if (n > 0 && std::all_of(w.begin(), w.end(), [](double x) { return x == 0.0; }))
      st.warnings.push_back(
          fmt::format("{}: every weight in column '{}' is 0", name, names[weight_col]));
    ds.set_weights(std::move(w));
  }
  std::vector<const std::vector<double>*> numbers_of(ncols, nullptr);
  for (const auto& f : features)
    if (!f.numbers.empty()) numbers_of[f.column] = &f.numbers;
  for (std::size_t j = 0; j < ncols; ++j) {
    if (role[j] == Role::kIgnored) continue;
    ColumnBuilder b(names[j], n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t r = kept[k];
      if (numbers_of[j] != nullptr && !missing_at(r, j)) {
        b.push_number(field(r, j), (*numbers_of[j])[k]);
      } else {
        b.push(field(r, j), missing_at(r, j));
      }
    }
    ds.add_column(std::move(b).finish());
  }
  ds.encoding() = std::move(enc);
  ds.set_source(name);
  return ds;
}

}  // namespace rateopt::io_detail
