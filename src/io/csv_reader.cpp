// CSV/TSV reader: RFC-4180 tokenising (quoted fields, "" escapes, CRLF), column typing,
// standardisation, one-hot encoding, missing-value policies and encoding reuse.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

#include "common/check.hpp"
#include "common/parallel.hpp"
#include "io/io_util.hpp"
#include "io/text_records.hpp"
#include "rateopt/io.hpp"

namespace rateopt::io_detail {

namespace {

// Splits the text into records of fields. Views point into the text or into the arena.
class CsvTokenizer {
 public:
  CsvTokenizer(std::string_view text, char delimiter, std::string_view comment_prefix,
               const std::string& name, TextArena& arena)
      : text_(text), delim_(delimiter), comment_(comment_prefix), name_(name), arena_(arena) {}

  // Numbers the next line `line` (a chunk of a file starts at the file's line).
  void set_line(std::size_t line) { line_ = line; }
  // The position in the text of the next line, and its number.
  [[nodiscard]] std::size_t position() const noexcept { return pos_; }
  [[nodiscard]] std::size_t line() const noexcept { return line_; }

  void skip_lines(std::size_t n) {
    for (std::size_t k = 0; k < n && pos_ < text_.size(); ++k) {
      const std::size_t eol = line_end(text_, pos_);
      if (eol == text_.size()) {
        pos_ = text_.size();
        break;
      }
      new_line(eol + 1);
    }
  }

  // Appends the fields of the next record to `out`; false at the end of the input.
  bool next(std::vector<std::string_view>& out, std::size_t& record_line) {
    skip_blank_and_comment_lines();
    if (pos_ >= text_.size()) return false;
    record_line = line_;
    read_fields(out);
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

  void skip_blank_and_comment_lines() {
    while (pos_ < text_.size()) {
      // Most records start with a character that no blank or comment line starts with: no need
      // to find the line's end.
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n' &&
          (comment_.empty() || c != comment_.front()))
        return;
      const std::size_t eol = line_end(text_, pos_);
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
  }

  // Reads the fields of the record starting at pos_, up to its (unquoted) '\n' or the end.
  void read_fields(std::vector<std::string_view>& out) {
    const std::size_t n = text_.size();
    std::size_t p = pos_;
    while (true) {
      while (p < n && is_blank(text_[p])) ++p;
      if (p < n && text_[p] == '"') {
        p = read_quoted(p, out);
      } else {
        const std::size_t start = p;
        p = field_end(p);
        std::string_view field(text_.data() + start, p - start);  // no bounds check: p <= n
        while (!field.empty() && (is_blank(field.back()) || field.back() == '\r'))
          field.remove_suffix(1);
        out.push_back(field);
      }
      if (p >= n) {
        pos_ = n;
        return;
      }
      if (text_[p] == delim_) {
        ++p;
        continue;
      }
      new_line(p + 1);  // text_[p] == '\n'
      return;
    }
  }

  // The first position from p holding the delimiter or '\n', or the text's end. Eight bytes at a
  // time: the zero-byte test flags a word's bytes equal to either, and its lowest flag is exact
  // (a borrow can only flag bytes above a true one); the last bytes one by one.
  [[nodiscard]] std::size_t field_end(std::size_t p) const noexcept {
    const std::size_t n = text_.size();
    if constexpr (std::endian::native == std::endian::little) {
      constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
      constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
      const std::uint64_t delims = kOnes * static_cast<unsigned char>(delim_);
      constexpr std::uint64_t kNewlines = kOnes * static_cast<unsigned char>('\n');
      for (; p + 8 <= n; p += 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, text_.data() + p, 8);
        const std::uint64_t a = word ^ delims;
        const std::uint64_t b = word ^ kNewlines;
        const std::uint64_t hits = (((a - kOnes) & ~a) | ((b - kOnes) & ~b)) & kHighs;
        if (hits != 0) return p + static_cast<std::size_t>(std::countr_zero(hits)) / 8;
      }
    }
    while (p < n && text_[p] != delim_ && text_[p] != '\n') ++p;
    return p;
  }

  // Reads a quoted field starting at the opening quote; returns the position after the closing
  // quote and any blanks (at the delimiter, '\n' or the end).
  std::size_t read_quoted(std::size_t p, std::vector<std::string_view>& out) {
    const std::size_t open_line = line_;
    const std::size_t open_col = p - line_start_ + 1;
    bool escaped = false;
    const std::size_t close = find_closing_quote(text_, p, QuoteStyle::kDoubled, escaped);
    if (close == std::string_view::npos)
      fail(open_line, open_col,
           "expected a closing '\"' for the quoted field, found the end of the file");
    for (std::size_t i = p + 1; i < close; ++i) {
      if (text_[i] == '\n') {
        ++line_;
        line_start_ = i + 1;
      }
    }
    const std::string_view inner = text_.substr(p + 1, close - p - 1);
    out.push_back(escaped ? unescape(inner, QuoteStyle::kDoubled, arena_) : inner);
    return skip_after_quote(close + 1);
  }

  // Skips blanks (and a '\r' before '\n') after a closing quote at `p`; anything but the
  // delimiter, '\n' or the end is an error.
  [[nodiscard]] std::size_t skip_after_quote(std::size_t p) const {
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

// The label values a "matches none" warning shows.
constexpr std::size_t kValuesShown = 5;

// Values quoted and joined by ", ", with ", ..." when there are more.
template <class Value>
std::string quoted_values(const std::vector<Value>& values, bool more) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + io_detail::quoted(v);
  return more ? out + ", ..." : out;
}

std::string no_positive_warning(const std::string& name, const std::string& positive,
                                std::size_t rows, const std::string& column,
                                const std::string& values) {
  return fmt::format(
      "{}: the positive label value {} matches none of the {} rows of column '{}' (values "
      "seen: {}; matching is exact and case-sensitive): every label is 0",
      name, io_detail::quoted(positive), rows, column, values);
}

std::string zero_weights_warning(const std::string& name, const std::string& column) {
  return fmt::format("{}: every weight in column '{}' is 0", name, column);
}

enum class Role { kFeature, kLabel, kGroup, kWeight, kIgnored, kOther };

// A feature built from one raw column.
struct CsvFeature {
  std::size_t column = 0;
  FeatureSpec spec;
  LevelIndex level_index;           // views into spec.levels
  std::vector<double> numbers;      // inferred numeric column: value per kept row (NaN: missing)
  std::vector<std::int32_t> codes;  // inferred categorical column: level per kept row (-1: missing)
  NumericMoments moments;           // inferred numeric column: of its non-missing values
};

void index_levels(CsvFeature& f) {
  f.level_index = LevelIndex{};
  for (const std::string& level : f.spec.levels) {
    bool inserted = false;  // levels are distinct: each gets the next code
    (void)f.level_index.find_or_add(level, inserted);
  }
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

// The kind of a field left unparsed: in a column read as numbers, the values after its first
// non-number in a piece (the column is categorical unless every such row is dropped or missing);
// its number is NaN and whoever needs it parses the field (CsvReader::kind_at).
constexpr std::uint8_t kUnparsed = 0xFF;

// The records of one piece of a CSV text, column by column: [c][r] is column c of its record r.
struct RecordBlock {
  std::vector<std::vector<std::string_view>> fields;
  std::vector<std::vector<std::uint8_t>> missing;  // 1: a missing-value token
  // Columns read as numbers (else empty): the value (NaN when missing) and its NumberKind, or
  // kUnparsed.
  std::vector<std::vector<double>> numbers;
  std::vector<std::vector<std::uint8_t>> kinds;
  std::vector<std::size_t> lines;  // each record's first line
  std::exception_ptr error;
};

// Column c of `member` of every block, in order, appended to `to` (the blocks' copies freed).
template <class T>
void append_column(std::vector<T>& to, std::vector<RecordBlock>& blocks,
                   std::vector<std::vector<T>> RecordBlock::*member, std::size_t c,
                   std::size_t total) {
  to.reserve(total);
  for (RecordBlock& b : blocks) {
    std::vector<T>& part = (b.*member)[c];
    to.insert(to.end(), part.begin(), part.end());
    part = {};
  }
}

// One read of a CSV text: the records, the roles of the columns, the rows kept after the
// missing-value policy, and from them the encoding, features, labels, weights and columns.
class CsvReader {
 public:
  // keep: when set, the slice columns to build (the others are dropped unread, as
  // Dataset::keep_columns would drop them).
  CsvReader(const CsvOptions& options, const std::string& name, const Encoding* encoding,
            ReadStats& stats, CsvChunkState* chunk = nullptr,
            const std::vector<std::string>* keep = nullptr)
      : o_(options),
        name_(name),
        encoding_(encoding),
        st_(stats),
        missing_(o_.missing_values),
        chunk_(chunk),
        keep_(keep) {}

  // The text is one part of a file: its records are numbered from this line of the file on.
  void number_records_from(std::size_t line) noexcept { records_line_ = line; }

  Dataset read(std::string_view text) {
    CsvTokenizer tok(text, pick_delimiter(o_, name_), o_.comment_prefix, name_, arena_);
    read_names(tok);
    resolve_roles();
    make_features();
    read_records(text.substr(tok.position()), tok.line());
    select_rows();
    if (encoding_ == nullptr) infer_encoding();
    for (auto& f : features_) index_levels(f);
    Encoding enc = build_encoding();
    FeatureMatrix matrix = feature_rows();
    Labels labels;
    if (label_col_ < ncols_) read_labels(labels, enc);
    Dataset ds(std::move(matrix), std::move(labels));
    if (weight_col_ < ncols_) read_weights(ds);
    const std::vector<std::string> skipped = add_columns(ds);
    if (keep_ != nullptr) ds.keep_columns(*keep_, skipped);
    finish_dataset(ds, std::move(enc), name_);
    return ds;
  }

 private:
  [[nodiscard]] std::string_view field(std::size_t r, std::size_t c) const { return fields_[c][r]; }
  [[nodiscard]] bool missing_at(std::size_t r, std::size_t c) const {
    return missing_flag_[c][r] != 0;
  }

  // ---- records ----------------------------------------------------------------------------------

  // The skipped lines and the header: the column names.
  void read_names(CsvTokenizer& tok) {
    if (chunk_ != nullptr) tok.set_line(chunk_->first_line);
    if (chunk_ != nullptr && !chunk_->first) {
      // A later chunk of a file: records only, with the first chunk's columns.
      names_ = chunk_->names;
      ncols_ = names_.size();
    } else {
      tok.skip_lines(o_.skip_lines);
      ncols_ = o_.column_names.size();
      if (o_.has_header) read_header(tok);
      if (!o_.column_names.empty()) names_ = o_.column_names;
      names_ = unique_names(std::move(names_));
      if (chunk_ != nullptr) chunk_->names = names_;
    }
    if (records_line_ > 0) tok.set_line(records_line_);
  }

  // The records of `text` (after the header), its first line numbered `first_line`: in pieces
  // split at line ends, each on its own thread, when threads are asked for and no quote can
  // carry a record over a line end; joined in order (the same records, flags, numbers and
  // first error as one piece).
  void read_records(std::string_view text, std::size_t first_line) {
    parsed_as_number_.assign(ncols_, false);
    for (const auto& f : features_) {
      parsed_as_number_[f.column] = encoding_ == nullptr
                                        ? !categorical_[f.column]
                                        : f.spec.kind == FeatureSpec::Kind::kNumeric;
    }
    const std::vector<std::string_view> pieces = split_at_lines(text);
    std::vector<std::size_t> piece_line(pieces.size(), first_line);
    std::vector<std::size_t> piece_lines(pieces.size(), 0);
    if (pieces.size() == 1) {
      piece_lines[0] = st_.lines;  // the whole text's: a bound, to reserve
    } else {
      detail::parallel_for(pieces.size(), o_.n_threads,
                           [&](std::size_t k) { piece_lines[k] = count_lines(pieces[k]); });
    }
    for (std::size_t k = 1; k < pieces.size(); ++k)
      piece_line[k] = piece_line[k - 1] + piece_lines[k - 1];
    std::vector<RecordBlock> blocks(pieces.size());
    arenas_.resize(pieces.size());
    detail::parallel_for(pieces.size(), o_.n_threads, [&](std::size_t k) {
      try {
        read_piece(pieces[k], piece_line[k], piece_lines[k], arenas_[k], blocks[k]);
      } catch (...) {
        blocks[k].error = std::current_exception();
      }
    });
    for (const RecordBlock& b : blocks)
      if (b.error) std::rethrow_exception(b.error);
    join_blocks(blocks);
  }

  // One piece unless threads are asked for, the text is over kPieceBytes and holds no quote;
  // then pieces of about kPieceBytes, each ending after a '\n'.
  [[nodiscard]] std::vector<std::string_view> split_at_lines(std::string_view text) const {
    constexpr std::size_t kPieceBytes = std::size_t{1} << 20;
    if (detail::resolve_threads(o_.n_threads) == 1 || text.size() <= kPieceBytes ||
        text.find('"') != std::string_view::npos)
      return {text};
    std::vector<std::string_view> pieces;
    std::size_t begin = 0;
    while (begin < text.size()) {
      std::size_t end = text.size();
      if (text.size() - begin > kPieceBytes) {
        const std::size_t eol = text.find('\n', begin + kPieceBytes);
        if (eol != std::string_view::npos) end = eol + 1;
      }
      pieces.push_back(text.substr(begin, end - begin));
      begin = end;
    }
    return pieces;
  }

  // The records of one piece: each field, whether it is a missing-value token, and in the
  // columns read as numbers its value and kind.
  void read_piece(std::string_view text, std::size_t first_line, std::size_t lines,
                  TextArena& arena, RecordBlock& out) const {
    CsvTokenizer tok(text, pick_delimiter(o_, name_), o_.comment_prefix, name_, arena);
    tok.set_line(first_line);
    // One allocation per column (a line holds at most one record's start): growing by doubling
    // copied and page-faulted the fields about twice over.
    out.fields.resize(ncols_);
    out.missing.resize(ncols_);
    out.numbers.resize(ncols_);
    out.kinds.resize(ncols_);
    for (std::size_t c = 0; c < ncols_; ++c) {
      out.fields[c].reserve(lines);
      out.missing[c].reserve(lines);
      if (parsed_as_number_[c]) {
        out.numbers[c].reserve(lines);
        out.kinds[c].reserve(lines);
      }
    }
    out.lines.reserve(lines);
    // Per column: a non-number was read (parsing its later fields would fail over and over, as
    // in every text column when no encoding is given: a tenth of reading Adult).
    std::vector<std::uint8_t> text_seen(ncols_, 0);
    std::vector<std::string_view> record;
    std::size_t line = 0;
    while (true) {
      record.clear();
      if (!tok.next(record, line)) break;
      if (record.size() != ncols_)
        detail::throw_parse_error(name_, line, 0, "expected {} fields, found {}", ncols_,
                                  record.size());
      for (std::size_t c = 0; c < ncols_; ++c) {
        const std::string_view v = record[c];
        const bool missing = missing_.contains(v);
        out.fields[c].push_back(v);
        out.missing[c].push_back(missing ? 1 : 0);
        if (!parsed_as_number_[c]) continue;
        double x = std::nan("");
        if (missing) {
          out.kinds[c].push_back(static_cast<std::uint8_t>(NumberKind::kNotNumber));
        } else if (text_seen[c] != 0) {
          out.kinds[c].push_back(kUnparsed);
        } else {
          const NumberKind kind = parse_double(v, x);
          if (kind == NumberKind::kNotNumber) text_seen[c] = 1;
          out.kinds[c].push_back(static_cast<std::uint8_t>(kind));
        }
        out.numbers[c].push_back(x);
      }
      out.lines.push_back(line);
    }
  }

  // The pieces' records in order (moved when there is one piece).
  void join_blocks(std::vector<RecordBlock>& blocks) {
    if (blocks.size() == 1) {
      fields_ = std::move(blocks[0].fields);
      missing_flag_ = std::move(blocks[0].missing);
      numbers_ = std::move(blocks[0].numbers);
      kinds_ = std::move(blocks[0].kinds);
      record_lines_ = std::move(blocks[0].lines);
      return;
    }
    std::size_t total = 0;
    for (const RecordBlock& b : blocks) total += b.lines.size();
    fields_.resize(ncols_);
    missing_flag_.resize(ncols_);
    numbers_.resize(ncols_);
    kinds_.resize(ncols_);
    detail::parallel_for(ncols_, o_.n_threads, [&](std::size_t c) {  // a column a task
      append_column(fields_[c], blocks, &RecordBlock::fields, c, total);
      append_column(missing_flag_[c], blocks, &RecordBlock::missing, c, total);
      if (!parsed_as_number_[c]) return;  // no numbers kept
      append_column(numbers_[c], blocks, &RecordBlock::numbers, c, total);
      append_column(kinds_[c], blocks, &RecordBlock::kinds, c, total);
    });
    record_lines_.reserve(total);
    for (const RecordBlock& b : blocks)
      record_lines_.insert(record_lines_.end(), b.lines.begin(), b.lines.end());
  }

  void read_header(CsvTokenizer& tok) {
    std::vector<std::string_view> header;
    std::size_t line = 0;
    if (!tok.next(header, line)) {
      if (o_.column_names.empty())
        throw ParseError(name_, st_.lines, 0, "expected a header row, found the end of the file");
    } else if (std::any_of(header.begin(), header.end(), [](std::string_view h) {
                 return h.find('\r') != std::string_view::npos;
               })) {
      detail::throw_parse_error(name_, line, 0,
                                "expected a header row ending in LF or CRLF, found a carriage "
                                "return inside it: the file's lines end in CR alone (classic Mac "
                                "OS); convert them, e.g. tr '\\r' '\\n' < IN > OUT");
    } else if (ncols_ != 0 && header.size() != ncols_) {
      detail::throw_parse_error(name_, line, 0,
                                "expected {} fields in the header row (column_names has {}), "
                                "found {}",
                                ncols_, ncols_, header.size());
    } else if (ncols_ == 0) {
      ncols_ = header.size();
      for (auto h : header) names_.emplace_back(h);
    }
  }

  // ---- column roles -----------------------------------------------------------------------------

  std::size_t find(const std::string& col, std::string_view what) const {
    const auto it = by_name_.find(col);
    if (it == by_name_.end()) {
      throw NotFound(fmt::format("{} column '{}' is not in {} (available: {})", what, col, name_,
                                 join_limited(names_)));
    }
    return it->second;
  }

  std::size_t assign(const std::string& c, std::string_view what, Role r) {
    const std::size_t j = find(c, what);
    RATEOPT_CHECK(role_[j] != Role::kIgnored, "column '{}' is both ignored and the {} column", c,
                  what);
    role_[j] = r;
    return j;
  }

  void resolve_roles() {
    for (std::size_t j = 0; j < names_.size(); ++j) by_name_.emplace(names_[j], j);
    role_.assign(ncols_, encoding_ != nullptr ? Role::kOther : Role::kFeature);
    categorical_.assign(ncols_, false);
    for (const auto& c : o_.ignore_columns) role_[find(c, "ignored")] = Role::kIgnored;
    for (const auto& c : o_.group_columns) assign(c, "group", Role::kGroup);
    weight_col_ = ncols_;
    if (!o_.weight_column.empty()) weight_col_ = assign(o_.weight_column, "weight", Role::kWeight);
    label_col_ = ncols_;
    if (!o_.label_column.empty()) label_col_ = assign(o_.label_column, "label", Role::kLabel);
    for (const auto& c : o_.categorical_columns) categorical_[find(c, "categorical")] = true;
  }

  // Features: from the reused encoding, or one per remaining column.
  void make_features() {
    if (encoding_ == nullptr) {
      for (std::size_t j = 0; j < ncols_; ++j) {
        if (role_[j] != Role::kFeature) continue;
        CsvFeature f;
        f.column = j;
        f.spec.source = names_[j];
        features_.push_back(std::move(f));
      }
      return;
    }
    for (const auto& s : encoding_->specs) {
      CsvFeature f;
      f.column = find(s.source, "encoding source");
      RATEOPT_CHECK(role_[f.column] == Role::kOther || role_[f.column] == Role::kFeature,
                    "column '{}' is a feature of the encoding and cannot be a label, group, "
                    "weight or ignored column",
                    s.source);
      role_[f.column] = Role::kFeature;
      f.spec = s;
      features_.push_back(std::move(f));
    }
  }

  // ---- missing values and row selection ---------------------------------------------------------

  void select_rows() {
    std::vector<std::size_t> checked;  // columns whose missing values follow the policy
    for (std::size_t j = 0; j < ncols_; ++j)
      if (role_[j] != Role::kIgnored && role_[j] != Role::kOther) checked.push_back(j);
    const std::size_t nrec = record_lines_.size();
    // Whether a checked column of the record is missing, column by column; drops_row (the
    // policy, in column order) only for those.
    std::vector<std::uint8_t> any_missing(nrec, 0);
    for (const std::size_t j : checked) {
      const std::vector<std::uint8_t>& flags = missing_flag_[j];
      for (std::size_t r = 0; r < nrec; ++r) any_missing[r] |= flags[r];
    }
    kept_.reserve(nrec);
    for (std::size_t r = 0; r < nrec; ++r) {
      if (any_missing[r] != 0 && drops_row(r, checked)) {
        ++st_.rows_dropped_missing;
      } else {
        kept_.push_back(r);
      }
    }
    n_ = kept_.size();
  }

  // Whether record r is dropped for a missing value (kDrop); throws where one is not allowed.
  bool drops_row(std::size_t r, const std::vector<std::size_t>& checked) const {
    return std::ranges::any_of(checked, [&](std::size_t j) {
      if (!missing_at(r, j)) return false;
      if (o_.missing == MissingPolicy::kDrop) return true;
      if (o_.missing == MissingPolicy::kError || role_[j] == Role::kLabel ||
          role_[j] == Role::kWeight) {
        detail::throw_parse_error(name_, record_lines_[r], 0,
                                  "missing value {} in column '{}' (expected a {}value)",
                                  io_detail::quoted(field(r, j)), names_[j],
                                  role_[j] == Role::kLabel    ? "label "
                                  : role_[j] == Role::kWeight ? "weight "
                                                              : "");
      }
      return false;
    });
  }

  // ---- typed columns ----------------------------------------------------------------------------

  // The number in record r, column j (parsed while read in the columns read as numbers); an
  // error when it is not a finite number.
  void number_at(std::size_t r, std::size_t j, double& x) const {
    const std::string_view v = field(r, j);
    const NumberKind kind = kinds_[j].empty() ? parse_double(v, x) : kind_at(r, j, x);
    if (kind == NumberKind::kFinite) return;
    detail::throw_parse_error(
        name_, record_lines_[r], 0, "column '{}': expected a {}number, found {}{}", names_[j],
        finite_word(kind), io_detail::quoted(v),
        encoding_ != nullptr ? " (numeric in the encoding this file is read with: the "
                               "model's, or the one shared by every file read together)"
                             : "");
  }

  // The kind and number of record r in column j, a column read as numbers: as parsed while read,
  // or parsed now where that was left (kUnparsed).
  NumberKind kind_at(std::size_t r, std::size_t j, double& x) const {
    if (kinds_[j][r] == kUnparsed) return parse_double(field(r, j), x);
    x = numbers_[j][r];
    return static_cast<NumberKind>(kinds_[j][r]);
  }

  // Up to `limit` distinct values of column j among the kept rows, quoted, in order of appearance.
  [[nodiscard]] std::string distinct_values(std::size_t j, std::size_t limit) const {
    std::vector<std::string_view> seen;
    bool more = false;
    for (std::size_t r : kept_) {
      const std::string_view v = field(r, j);
      if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      if (seen.size() == limit) {
        more = true;
        break;
      }
      seen.push_back(v);
    }
    return quoted_values(seen, more);
  }

  // A column that would be numeric but for a few stray tokens (at most 1% of its values) is read
  // as categorical, as asked; say so, with the count and the first offending line.
  [[nodiscard]] std::optional<std::string> mostly_numeric_warning(std::size_t j) const {
    std::size_t numbers = 0;
    std::size_t others = 0;
    std::size_t first_line = 0;
    std::string_view first;
    for (std::size_t r : kept_) {
      if (missing_at(r, j)) continue;
      double x = 0;
      if (kind_at(r, j, x) == NumberKind::kNotNumber) {
        if (others++ == 0) {
          first = field(r, j);
          first_line = record_lines_[r];
        }
        if (others * 100 > n_) return {};  // more than 1% of the rows: a text column
      } else {
        ++numbers;
      }
    }
    if (numbers == 0 || others * 100 > numbers + others) return {};
    return fmt::format(
        "{}: column '{}' is read as categorical because {} of its {} values {} not a number "
        "(first: {} on line {}); fix or list them as missing values if the column is numeric",
        name_, names_[j], others, numbers + others, others == 1 ? "is" : "are",
        io_detail::quoted(first), first_line);
  }

  // ---- encoding (numeric vs one-hot, scaling, levels) -------------------------------------------

  // Each feature column on its own (one task a column: its numbers, then its moments or levels),
  // then in column order its place among the features, its warning and the first error, as one
  // column after the other would give them.
  void infer_encoding() {
    struct Outcome {
      std::optional<std::string> warning;
      std::exception_ptr error;
    };
    std::vector<Outcome> outcome(features_.size());
    detail::parallel_for(features_.size(), o_.n_threads, [&](std::size_t i) {
      try {
        outcome[i].warning = infer_feature(features_[i]);
      } catch (...) {
        outcome[i].error = std::current_exception();
      }
    });
    std::size_t next_feature = 0;
    for (std::size_t i = 0; i < features_.size(); ++i) {
      if (outcome[i].warning) st_.warnings.push_back(std::move(*outcome[i].warning));
      if (outcome[i].error) std::rethrow_exception(outcome[i].error);
      CsvFeature& f = features_[i];
      f.spec.first_feature = next_feature;
      next_feature += f.spec.kind == FeatureSpec::Kind::kNumeric ? 1 : f.spec.levels.size();
    }
  }

  // One feature column's kind, numbers and moments or levels; the warning of a column read as
  // categorical for a few stray tokens. Reads the shared records only.
  // Moves the column's parsed numbers (numbers_[j]) into f.numbers.
  std::optional<std::string> infer_feature(CsvFeature& f) {
    const std::size_t j = f.column;
    const std::size_t nrec = record_lines_.size();
    bool numeric = !categorical_[j];  // then parsed while read (parsed_as_number_)
    std::size_t first_nonfinite = nrec;
    for (std::size_t k = 0; k < n_ && numeric; ++k) {
      const std::size_t r = kept_[k];
      if (missing_at(r, j)) continue;
      if (kinds_[j][r] == kUnparsed) {  // stored: the column's numbers are moved out below
        kinds_[j][r] = static_cast<std::uint8_t>(parse_double(field(r, j), numbers_[j][r]));
      }
      const auto kind = static_cast<NumberKind>(kinds_[j][r]);
      if (kind == NumberKind::kNotNumber) numeric = false;
      if (kind == NumberKind::kNonFinite && first_nonfinite == nrec) first_nonfinite = r;
    }
    if (numeric) {  // by kept row
      if (n_ == nrec) {
        f.numbers = std::move(numbers_[j]);
      } else {
        f.numbers.resize(n_);
        for (std::size_t k = 0; k < n_; ++k) f.numbers[k] = numbers_[j][kept_[k]];
        numbers_[j] = {};
      }
      kinds_[j] = {};
    }
    std::optional<std::string> warning;
    if (!numeric && !categorical_[j]) warning = mostly_numeric_warning(j);
    if (!numeric) {
      numbers_[j] = {};
      kinds_[j] = {};
    }
    if (numeric) {
      if (first_nonfinite != nrec) {
        double x = 0;
        number_at(first_nonfinite, j, x);
      }
      infer_numeric(f);
    } else {
      infer_levels(f);
    }
    return warning;
  }

  void infer_numeric(CsvFeature& f) const {
    const std::size_t j = f.column;
    f.spec.kind = FeatureSpec::Kind::kNumeric;
    double mean = 0;
    double m2 = 0;
    std::size_t count = 0;
    for (std::size_t k = 0; k < n_; ++k) {  // Welford
      if (missing_at(kept_[k], j)) continue;
      const double x = f.numbers[k];
      ++count;
      const double delta = x - mean;
      mean += delta / static_cast<double>(count);
      m2 += delta * (x - mean);
    }
    const double sd = count > 0 ? std::sqrt(m2 / static_cast<double>(count)) : 0.0;
    f.moments = {count, mean, m2};
    if (o_.standardize) {
      if (!std::isfinite(mean) || !std::isfinite(sd)) {
        detail::throw_parse_error(name_, 0, 0,
                                  "column '{}': values are too large to standardise (their "
                                  "mean or standard deviation overflows a double); rescale "
                                  "the column or keep it unscaled (--no-standardize)",
                                  names_[j]);
      }
      f.spec.offset = mean;
      f.spec.scale = sd > 0 ? sd : 1.0;
    }
    // A missing value stands for the training mean (0 after standardisation).
    f.spec.impute = o_.standardize ? f.spec.offset : (std::isfinite(mean) ? mean : 0.0);
  }

  void infer_levels(CsvFeature& f) const {
    f.spec.kind = FeatureSpec::Kind::kOneHot;
    LevelIndex seen;
    f.codes.assign(n_, -1);
    for (std::size_t k = 0; k < n_; ++k) {
      const std::size_t r = kept_[k];
      if (missing_at(r, f.column)) continue;
      const std::string_view v = field(r, f.column);
      bool inserted = false;
      f.codes[k] = seen.find_or_add(v, inserted);
      if (inserted) f.spec.levels.emplace_back(v);
    }
  }

  [[nodiscard]] Encoding build_encoding() {
    Encoding enc;
    if (encoding_ != nullptr) {
      enc = *encoding_;
    } else {
      enc.format = "csv";
      for (const auto& f : features_) {
        if (f.spec.kind == FeatureSpec::Kind::kNumeric) {
          enc.feature_names.push_back(f.spec.source);
        } else {
          for (const auto& level : f.spec.levels)
            enc.feature_names.push_back(f.spec.source + "=" + level);
        }
        enc.specs.push_back(f.spec);
        st_.moments.push_back(f.moments);
      }
      enc.num_features = enc.feature_names.size();
      for (std::size_t j = 0; j < ncols_; ++j)
        if (role_[j] == Role::kGroup || role_[j] == Role::kWeight)
          enc.excluded_columns.push_back(names_[j]);
    }
    enc.missing_policy = std::string(missing_policy_name(o_.missing));
    enc.label_column = o_.label_column;
    num_features_ = enc.num_features;
    return enc;
  }

  // ---- features ---------------------------------------------------------------------------------

  // The rows in blocks (one task a block, one block on one thread), joined in order; the first
  // error in row order, as one pass over the rows would throw it.
  FeatureMatrix feature_rows() {
    struct Block {
      SparseRows rows;
      std::size_t imputed = 0;
      std::size_t unseen = 0;
      std::exception_ptr error;
    };
    constexpr std::size_t kRowBlock = 16384;
    const std::size_t block =
        detail::resolve_threads(o_.n_threads) == 1 ? std::max<std::size_t>(n_, 1) : kRowBlock;
    std::vector<Block> blocks((n_ + block - 1) / block);
    detail::parallel_for(blocks.size(), o_.n_threads, [&](std::size_t b) {
      Block& part = blocks[b];
      const std::size_t end = std::min(n_, (b + 1) * block);
      part.rows.indices.reserve((end - b * block) * features_.size());
      part.rows.values.reserve((end - b * block) * features_.size());
      try {
        RowEntries entries;
        for (std::size_t k = b * block; k < end; ++k) {
          entries.clear();
          bool imputed = false;
          for (const auto& f : features_) encode_value(f, k, entries, imputed, part.unseen);
          if (imputed) ++part.imputed;
          append_row(part.rows, entries);
        }
      } catch (...) {
        part.error = std::current_exception();
      }
    });
    SparseRows rows;
    if (blocks.size() == 1 && !blocks[0].error) rows = std::move(blocks[0].rows);
    std::size_t entries = 0;
    for (const Block& part : blocks) entries += part.rows.indices.size();
    if (blocks.size() > 1) {
      rows.indices.reserve(entries);
      rows.values.reserve(entries);
      rows.indptr.reserve(n_ + 1);
    }
    for (Block& part : blocks) {
      if (part.error) std::rethrow_exception(part.error);
      st_.rows_imputed_missing += part.imputed;
      st_.unseen_levels += part.unseen;
      if (blocks.size() == 1) break;
      const auto offset = static_cast<std::int64_t>(rows.indices.size());
      for (std::size_t k = 1; k < part.rows.indptr.size(); ++k)
        rows.indptr.push_back(part.rows.indptr[k] + offset);
      rows.indices.insert(rows.indices.end(), part.rows.indices.begin(), part.rows.indices.end());
      rows.values.insert(rows.values.end(), part.rows.values.begin(), part.rows.values.end());
      part.rows = SparseRows{};  // its memory back before the next block's copy
    }
    // A chunk is CSR; read_csv_chunked picks the file's storage once every chunk is read.
    return make_matrix(std::move(rows), num_features_,
                       chunk_ != nullptr ? Storage::kSparse : Storage::kAuto);
  }

  // Adds the feature entries of feature f in kept row k.
  // `unseen` counts the categorical values the encoding does not know.
  void encode_value(const CsvFeature& f, std::size_t k, RowEntries& entries, bool& imputed,
                    std::size_t& unseen) const {
    const std::size_t r = kept_[k];
    const auto first = static_cast<std::int32_t>(f.spec.first_feature);
    if (missing_at(r, f.column)) {  // kZero: the training mean, or an all-zero one-hot
      imputed = true;
      if (f.spec.kind == FeatureSpec::Kind::kNumeric) {
        const double z = (f.spec.impute - f.spec.offset) / f.spec.scale;
        if (z != 0.0 && std::isfinite(z)) entries.emplace_back(first, z);
      }
      return;
    }
    if (f.spec.kind == FeatureSpec::Kind::kNumeric) {
      double x = 0;
      if (f.numbers.empty()) {
        number_at(r, f.column, x);
      } else {
        x = f.numbers[k];
      }
      const double z = (x - f.spec.offset) / f.spec.scale;
      if (!std::isfinite(z)) {
        detail::throw_parse_error(name_, record_lines_[r], 0,
                                  "column '{}': value {} is out of range after scaling",
                                  names_[f.column], io_detail::quoted(field(r, f.column)));
      }
      if (z != 0.0) entries.emplace_back(first, z);
      return;
    }
    // The code found while the levels were inferred, or the reused encoding's.
    const std::int32_t code = f.codes.empty() ? f.level_index.find(field(r, f.column)) : f.codes[k];
    if (code < 0) {
      const std::string_view v = field(r, f.column);
      if (o_.unseen_error)
        detail::throw_parse_error(name_, record_lines_[r], 0,
                                  "column '{}': value {} was not seen in training (the encoding "
                                  "has {} levels); --unseen zero encodes it as all-zero",
                                  names_[f.column], io_detail::quoted(v), f.spec.levels.size());
      ++unseen;
      return;
    }
    entries.emplace_back(
        static_cast<std::int32_t>(f.spec.first_feature + static_cast<std::size_t>(code)), 1.0);
  }

  // ---- labels -----------------------------------------------------------------------------------

  void read_labels(Labels& labels, Encoding& enc) {
    labels.values.reserve(n_);
    if (!o_.positive_values.empty()) {
      enc.positive_value = read_positive_labels(labels);
      return;
    }
    std::vector<double> y(n_);
    for (std::size_t k = 0; k < n_; ++k) {
      if (parse_double(field(kept_[k], label_col_), y[k]) != NumberKind::kFinite)
        y[k] = std::nan("");  // fits neither binary coding
    }
    const BinaryCoding coding = binary_coding(y);
    if (coding != BinaryCoding::kNone) {
      enc.positive_value = set_binary_labels(y, coding, labels);
      return;
    }
    std::vector<std::string_view> classes(n_);
    for (std::size_t k = 0; k < n_; ++k) classes[k] = field(kept_[k], label_col_);
    set_multiclass_labels(
        classes, [](std::string_view c) { return std::string(c); }, labels);
    enc.positive_value.clear();
  }

  // Binary labels: 1 where the value is one of positive_values; returns them joined by '|'.
  std::string read_positive_labels(Labels& labels) {
    labels.kind = LabelKind::kBinary;
    // Over a chunked file the negatives and the values seen are the file's so far.
    std::vector<std::string> local_negatives;
    std::vector<std::string>& negatives = chunk_ != nullptr ? chunk_->negatives : local_negatives;
    for (std::size_t r : kept_) {
      const std::string_view v = field(r, label_col_);
      const bool pos = std::ranges::any_of(o_.positive_values,
                                           [v](const std::string& p) { return same_text(p, v); });
      labels.values.push_back(pos ? 1 : 0);
      if (!pos && negatives.size() < 2 &&
          std::ranges::none_of(negatives, [v](const std::string& n) { return same_text(n, v); }))
        negatives.emplace_back(v);
      if (chunk_ != nullptr) {
        chunk_->any_positive = chunk_->any_positive || pos;
        std::vector<std::string>& seen = chunk_->label_values;
        if (seen.size() <= kValuesShown && std::find(seen.begin(), seen.end(), v) == seen.end())
          seen.emplace_back(v);
      }
    }
    std::string positive = join(o_.positive_values, "|");
    labels.names = {negatives.size() == 1 ? negatives[0] : "not " + positive, positive};
    // A chunk leaves the warning to read_csv_chunked, which knows the whole file.
    if (chunk_ == nullptr && n_ > 0 &&
        std::find(labels.values.begin(), labels.values.end(), 1) == labels.values.end())
      st_.warnings.push_back(no_positive_warning(name_, positive, n_, names_[label_col_],
                                                 distinct_values(label_col_, kValuesShown)));
    return positive;
  }

  // ---- weights and columns ----------------------------------------------------------------------

  void read_weights(Dataset& ds) {
    std::vector<double> w;
    w.reserve(n_);
    for (std::size_t r : kept_) {
      const std::string_view v = field(r, weight_col_);
      double x = 0;
      if (parse_double(v, x) != NumberKind::kFinite || x < 0) {
        detail::throw_parse_error(name_, record_lines_[r], 0,
                                  "column '{}': expected a finite weight >= 0, found {}",
                                  names_[weight_col_], io_detail::quoted(v));
      }
      w.push_back(x);
    }
    if (chunk_ == nullptr && n_ > 0 &&
        std::all_of(w.begin(), w.end(), [](double x) { return x == 0.0; }))
      st_.warnings.push_back(zero_weights_warning(name_, names_[weight_col_]));
    ds.set_weights(std::move(w));
  }

  // Whether every present value of column j in the kept rows is a finite number once trimmed
  // (ColumnBuilder's test for a numeric slice column); stops at the first that is not.
  [[nodiscard]] bool numbers_when_trimmed(std::size_t j) const {
    return std::ranges::all_of(kept_, [&](std::size_t r) {
      double x = 0;
      return missing_at(r, j) || parse_double(trim(field(r, j)), x) == NumberKind::kFinite;
    });
  }

  // The slice columns; returns the names of those left out (keep_), in column order.
  std::vector<std::string> add_columns(Dataset& ds) const {
    std::vector<const std::vector<double>*> numbers_of(ncols_, nullptr);
    std::vector<const CsvFeature*> levels_of(ncols_, nullptr);  // inferred categorical features
    for (const auto& f : features_) {
      if (!f.numbers.empty()) numbers_of[f.column] = &f.numbers;
      if (!f.codes.empty()) levels_of[f.column] = &f;
    }
    std::vector<std::string> skipped;
    std::vector<std::size_t> built;  // the columns to build, in order
    for (std::size_t j = 0; j < ncols_; ++j) {
      if (role_[j] == Role::kIgnored) continue;
      if (keep_ != nullptr && std::ranges::find(*keep_, names_[j]) == keep_->end()) {
        skipped.push_back(names_[j]);
        continue;
      }
      built.push_back(j);
    }
    // Each column on its own (one task a column), added in column order.
    std::vector<Column> columns(built.size());
    detail::parallel_for(built.size(), o_.n_threads, [&](std::size_t b) {
      const std::size_t j = built[b];
      if (levels_of[j] != nullptr && !numbers_when_trimmed(j)) {
        // ColumnBuilder would read the column as text: its levels and codes are the feature's.
        columns[b].name = names_[j];
        columns[b].levels = levels_of[j]->spec.levels;
        columns[b].codes = levels_of[j]->codes;
        return;
      }
      ColumnBuilder builder(names_[j], n_);
      for (std::size_t k = 0; k < n_; ++k) {
        const std::size_t r = kept_[k];
        if (numbers_of[j] != nullptr && !missing_at(r, j)) {
          builder.push_number(field(r, j), (*numbers_of[j])[k]);
        } else {
          builder.push(field(r, j), missing_at(r, j));
        }
      }
      columns[b] = std::move(builder).finish();
    });
    for (Column& c : columns) ds.add_column(std::move(c));
    return skipped;
  }

  const CsvOptions& o_;
  const std::string& name_;
  const Encoding* encoding_;
  ReadStats& st_;
  MissingTokens missing_;
  CsvChunkState* chunk_ = nullptr;  // set when the text is one chunk of a file
  std::size_t records_line_ = 0;    // number_records_from (0: the text's own numbering)
  const std::vector<std::string>* keep_ = nullptr;
  TextArena arena_;                // unescaped fields of the header
  std::vector<TextArena> arenas_;  // of each piece's records
  std::vector<std::string> names_;
  std::size_t ncols_ = 0;
  // Column by column (each column's passes read it alone): record r, column c at [c][r].
  std::vector<std::vector<std::string_view>> fields_;
  std::vector<std::size_t> record_lines_;
  std::unordered_map<std::string_view, std::size_t> by_name_;
  std::vector<Role> role_;
  std::vector<bool> categorical_;
  std::size_t weight_col_ = 0;
  std::size_t label_col_ = 0;
  std::vector<CsvFeature> features_;
  std::vector<std::vector<std::uint8_t>> missing_flag_;  // at [c][r], as fields_
  std::vector<bool> parsed_as_number_;        // per column: its fields are parsed while read
  std::vector<std::vector<double>> numbers_;  // at [c][r] in those columns (RecordBlock)
  std::vector<std::vector<std::uint8_t>> kinds_;
  std::vector<std::size_t> kept_;
  std::size_t n_ = 0;
  std::size_t num_features_ = 0;
};

}  // namespace

namespace {

// Follows a CSV line's quotes as CsvTokenizer reads them: `in_quotes` tells whether a quoted
// field is still open at the line's end (the record goes on), and `records` counts the records
// that start on the line (not blank, not a comment).
void scan_csv_line(std::string_view line, char delim, std::string_view comment, bool& in_quotes,
                   std::size_t& records) {
  if (!in_quotes) {
    if (trim(line).empty() || (!comment.empty() && line.starts_with(comment))) return;
    ++records;
  }
  const auto blank = [delim](char c) { return (c == ' ' || c == '\t') && c != delim; };
  bool field_start = !in_quotes;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c != '"') continue;
      if (i + 1 < line.size() && line[i + 1] == '"') {
        ++i;  // a doubled quote inside the field
      } else {
        in_quotes = false;  // the closing quote
      }
      continue;
    }
    if (field_start) {
      if (blank(c)) continue;
      field_start = false;
      if (c == '"') {
        in_quotes = true;
        continue;
      }
    }
    if (c == delim) field_start = true;
  }
}

}  // namespace

bool csv_reads_in_chunks(const CsvOptions& options) noexcept {
  return !options.positive_values.empty() || options.label_column.empty();
}

namespace {

// Calls on_chunk(text, lines) with the text of `path` in chunks of whole records of about
// `chunk_bytes` (the first holds the skipped lines, the header and a record at least), updating
// `state`'s first line and first flag after each; one call with "" for an empty file.
void for_each_csv_chunk(const std::string& path, const CsvOptions& options, std::size_t chunk_bytes,
                        CsvChunkState& state,
                        const std::function<void(const std::string&, std::size_t)>& on_chunk) {
  std::string text;
  std::size_t text_lines = 0;
  std::size_t records = 0;  // records started in `text`
  bool in_quotes = false;
  bool any = false;
  const auto flush = [&] {
    on_chunk(text, text_lines);
    any = true;
    state.first = false;
    state.first_line += text_lines;
    text.clear();
    text_lines = 0;
    records = 0;
  };
  const char delim = pick_delimiter(options, path);
  std::size_t to_skip = options.skip_lines;
  LineReader reader(path);
  std::string_view line;
  while (reader.next_raw(line)) {
    if (reader.line_number() == 1) line = skip_bom(line);
    text.append(line).push_back('\n');
    ++text_lines;
    if (to_skip > 0) {
      --to_skip;
      continue;
    }
    scan_csv_line(line, delim, options.comment_prefix, in_quotes, records);
    const std::size_t wanted = state.first && options.has_header ? 2 : 1;
    if (!in_quotes && records >= wanted && text.size() >= chunk_bytes) flush();
  }
  if (!text.empty() || !any) flush();
}

}  // namespace

std::vector<FilePart> csv_file_parts(const std::string& path, const CsvOptions& options,
                                     std::size_t part_bytes, std::size_t count,
                                     std::uint64_t size) {
  RATEOPT_CHECK(part_bytes > 0, "part_bytes is 0, expected a positive size");
  const char delim = pick_delimiter(options, path);
  std::vector<FilePart> parts(count);
  std::size_t next = 0;          // the first part whose begin is not known yet
  std::uint64_t offset = 0;      // of the next line's first byte in the file
  std::uint64_t header_end = 0;  // past the skipped lines and the header
  std::size_t to_skip = options.skip_lines;
  bool header = options.has_header;  // the header record is still to come or open
  std::size_t records = 0;
  bool in_quotes = false;
  LineReader reader(path);
  std::string_view line;
  while (reader.next_raw(line)) {
    const std::uint64_t start = offset;
    offset += line.size() + 1;
    if (reader.line_number() == 1) line = skip_bom(line);
    if (to_skip > 0 || header) {
      if (to_skip > 0) {
        --to_skip;
      } else {
        scan_csv_line(line, delim, options.comment_prefix, in_quotes, records);
        header = records == 0 || in_quotes;
      }
      header_end = offset;
      continue;
    }
    if (!in_quotes) {  // a record may start here: it begins every part not yet begun up to its own
      for (const std::uint64_t own = start / part_bytes; next < count && next <= own; ++next) {
        parts[next].begin = start;
        parts[next].first_line = reader.line_number();
      }
    }
    scan_csv_line(line, delim, options.comment_prefix, in_quotes, records);
  }
  finish_file_parts(parts, next, header_end, reader.line_number() + 1, size);
  return parts;
}

namespace {

void check_csv_options(const CsvOptions& options) {
  RATEOPT_CHECK(options.has_header || !options.column_names.empty(),
                "CsvOptions: a file without a header row needs column_names");
  RATEOPT_CHECK(csv_reads_in_chunks(options),
                "a CSV file is read in chunks with positive_values or without a label column");
}

}  // namespace

Dataset read_csv_chunked(const std::string& path, const CsvOptions& options,
                         const Encoding& encoding, ReadStats* stats,
                         const std::vector<std::string>* keep, std::size_t chunk_bytes) {
  check_encoding(encoding, "csv");
  check_csv_options(options);
  ReadStats local_stats;
  ReadStats& st = stats != nullptr ? *stats : local_stats;
  st = ReadStats{};
  CsvChunkState state;
  std::vector<Dataset> parts;
  std::vector<std::string> label_names;  // the last chunk's: the whole file's so far
  for_each_csv_chunk(
      path, options, chunk_bytes, state, [&](const std::string& text, std::size_t text_lines) {
        ReadStats chunk_stats;
        chunk_stats.lines = text_lines;
        Dataset part = CsvReader(options, path, &encoding, chunk_stats, &state, keep).read(text);
        label_names = part.labels().names;
        st.lines += text_lines;
        st.rows_dropped_missing += chunk_stats.rows_dropped_missing;
        st.rows_imputed_missing += chunk_stats.rows_imputed_missing;
        st.unseen_levels += chunk_stats.unseen_levels;
        for (std::string& w : chunk_stats.warnings) st.warnings.push_back(std::move(w));
        parts.push_back(std::move(part));
      });

  // The whole file's storage, names and warnings.
  std::size_t rows = 0;
  std::size_t nnz = 0;
  for (const Dataset& p : parts) {
    rows += p.num_rows();
    nnz += p.features().nnz();
  }
  const bool dense = keep_dense(rows, encoding.num_features, nnz);
  Dataset ds = concat_rows(std::move(parts), dense ? ConcatStorage::kDense : ConcatStorage::kCsr);
  ds.set_row_parts({});
  if (ds.labels().kind == LabelKind::kBinary) ds.labels().names = std::move(label_names);
  if (!options.label_column.empty() && rows > 0 && !state.any_positive) {
    const bool more = state.label_values.size() > kValuesShown;
    if (more) state.label_values.resize(kValuesShown);
    st.warnings.push_back(no_positive_warning(path, join(options.positive_values, "|"), rows,
                                              options.label_column,
                                              quoted_values(state.label_values, more)));
  }
  if (!options.weight_column.empty() && !ds.weights().empty() &&
      std::ranges::all_of(ds.weights(), [](double w) { return w == 0.0; }))
    st.warnings.push_back(zero_weights_warning(path, options.weight_column));
  return ds;
}

std::optional<std::vector<InferredEncoding>> infer_csv_chunked(const std::string& path,
                                                               const CsvOptions& options,
                                                               std::size_t chunk_bytes) {
  check_csv_options(options);
  CsvChunkState state;
  std::vector<InferredEncoding> parts;
  bool warned = false;
  for_each_csv_chunk(
      path, options, chunk_bytes, state, [&](const std::string& text, std::size_t text_lines) {
        ReadStats chunk_stats;
        chunk_stats.lines = text_lines;
        InferredEncoding e;
        e.encoding = CsvReader(options, path, nullptr, chunk_stats, &state).read(text).encoding();
        e.moments = std::move(chunk_stats.moments);
        e.source = path;
        warned = warned || !chunk_stats.warnings.empty();
        parts.push_back(std::move(e));
      });
  if (warned) return std::nullopt;
  // A column numeric in one chunk (with values) and categorical in another: the whole text
  // decides.
  for (std::size_t k = 0; k < parts.front().encoding.specs.size(); ++k) {
    bool one_hot = false;
    bool numeric = false;
    for (const InferredEncoding& p : parts) {
      const FeatureSpec& spec = p.encoding.specs[k];
      one_hot = one_hot || spec.kind == FeatureSpec::Kind::kOneHot;
      numeric = numeric || (spec.kind == FeatureSpec::Kind::kNumeric && p.moments[k].count > 0);
    }
    if (one_hot && numeric) return std::nullopt;
  }
  return parts;
}

Dataset parse_csv_impl(std::string_view text, const CsvOptions& options, const std::string& name,
                       const Encoding* encoding, ReadStats* stats,
                       const std::vector<std::string>* keep, std::size_t records_line) {
  text = skip_bom(text);
  ReadStats local_stats;
  ReadStats& st = begin_stats(stats, local_stats, text);
  if (encoding != nullptr) check_encoding(*encoding, "csv");
  RATEOPT_CHECK(options.has_header || !options.column_names.empty(),
                "CsvOptions: a file without a header row needs column_names");
  CsvReader reader(options, name, encoding, st, nullptr, keep);
  reader.number_records_from(records_line);
  return reader.read(text);
}

}  // namespace rateopt::io_detail
