// The record layer the three text readers (CSV, LIBSVM, ARFF) share, on top of io_util.hpp's
// number parsing, trimming and quoting: the start of a read (byte-order mark, ReadStats), physical
// lines, whitespace-separated words, quoted fields in the two quoting dialects (CSV's doubled
// quotes, ARFF's backslash escapes), missing-value tokens, binary/multiclass label coding and
// the sorted rows of the feature matrix. Errors are reported by the callers through ParseError
// ("file:line:column: what was expected"; detail::throw_parse_error in common/check.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/io_util.hpp"
#include "rateopt/dataset.hpp"
#include "rateopt/io.hpp"

namespace rateopt::io_detail {

// ---- start and end of a read --------------------------------------------------------------------

// `text` without a leading UTF-8 byte-order mark.
[[nodiscard]] std::string_view skip_bom(std::string_view text) noexcept;

// The statistics a reader fills: `*stats`, or `local` when stats is null; reset, with the
// physical lines of `text` counted.
[[nodiscard]] ReadStats& begin_stats(ReadStats* stats, ReadStats& local, std::string_view text);

// Sets the encoding and the source name of a finished dataset.
void finish_dataset(Dataset& ds, Encoding&& encoding, const std::string& name);

// ---- lines and words ----------------------------------------------------------------------------

// A space, a tab or a carriage return (what trim() removes).
[[nodiscard]] constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r';
}

// The position of the '\n' ending the line that starts at `pos`, or text.size() for the last.
[[nodiscard]] std::size_t line_end(std::string_view text, std::size_t pos) noexcept;

// Physical lines of a text, numbered from 1.
class LineCursor {
 public:
  // first_line: the number of the text's first line (a part of a file starts at its own).
  explicit LineCursor(std::string_view text, std::size_t first_line = 1) noexcept
      : text_(text), line_no_(first_line - 1) {}
  // The next line without its '\n' (a '\r' before it is kept); false at the end of the text.
  bool next(std::string_view& line) noexcept {
    if (pos_ >= text_.size()) return false;
    const std::size_t eol = line_end(text_, pos_);
    line = text_.substr(pos_, eol - pos_);
    pos_ = eol + 1;
    ++line_no_;
    return true;
  }
  // The number of the line last returned (0 before the first).
  [[nodiscard]] std::size_t line_no() const noexcept { return line_no_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_no_ = 0;
};

// The next run of non-space characters of `s` at or after `p`, with its 1-based column; moves
// `p` past it. False when only spaces are left.
inline bool next_word(std::string_view s, std::size_t& p, std::string_view& word,
                      std::size_t& column) noexcept {
  while (p < s.size() && is_space(s[p])) ++p;
  if (p >= s.size()) return false;
  const std::size_t start = p;
  while (p < s.size() && !is_space(s[p])) ++p;
  word = s.substr(start, p - start);
  column = start + 1;
  return true;
}

// ---- quoted fields ------------------------------------------------------------------------------

enum class QuoteStyle {
  kDoubled,    // CSV (RFC 4180): a quote inside is written twice
  kBackslash,  // ARFF: a backslash escapes the next character (\n, \t, \r decoded)
};

// The closing quote of the quoted field whose opening quote is s[open], or npos when there is
// none; `escaped` tells whether the text between holds an escape to decode.
[[nodiscard]] std::size_t find_closing_quote(std::string_view s, std::size_t open, QuoteStyle style,
                                             bool& escaped) noexcept;

// The text between the quotes with its escapes decoded, stored in `arena` (views into it stay
// valid while it lives).
[[nodiscard]] std::string_view unescape(std::string_view inner, QuoteStyle style, TextArena& arena);

// ---- values -------------------------------------------------------------------------------------

// "finite " for a value that parsed as nan, inf or an overflow, else "" (the adjective of the
// readers' "expected a {}number" messages).
[[nodiscard]] constexpr std::string_view finite_word(NumberKind kind) noexcept {
  return kind == NumberKind::kNonFinite ? "finite " : "";
}

// The tokens that stand for a missing value, compared exactly.
class MissingTokens {
 public:
  explicit MissingTokens(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
    for (const std::string& t : tokens_) lengths_ |= t.size() < 64 ? bit(t.size()) : kLong;
  }
  [[nodiscard]] bool contains(std::string_view v) const noexcept {
    // Most values have a length no token has: one bit test, no comparison.
    if ((lengths_ & (v.size() < 64 ? bit(v.size()) : kLong)) == 0) return false;
    return std::ranges::any_of(tokens_, [v](const std::string& t) { return same_text(t, v); });
  }

 private:
  static constexpr std::uint64_t bit(std::size_t k) noexcept { return std::uint64_t{1} << k; }
  // Lengths of 63 and more share the top bit.
  static constexpr std::uint64_t kLong = std::uint64_t{1} << 63;
  std::vector<std::string> tokens_;
  std::uint64_t lengths_ = 0;  // bit k: some token is k bytes long
};

// ---- labels -------------------------------------------------------------------------------------

enum class BinaryCoding { kNone, kZeroOne, kPlusMinusOne };

// kZeroOne when every value is 0 or 1, kPlusMinusOne when every value is -1 or 1 (0/1 wins when
// both hold, i.e. every value is 1), else kNone. NaN (not a number) fits neither.
[[nodiscard]] BinaryCoding binary_coding(std::span<const double> y) noexcept;

// Binary labels (1 where y == 1) named {"0", "1"} or {"-1", "+1"}; returns the positive name.
std::string set_binary_labels(std::span<const double> y, BinaryCoding coding, Labels& labels);

// Multiclass labels: the distinct keys sorted, named by `name_of(key)`, value = rank of the key.
template <class Key, class NameOf>
void set_multiclass_labels(const std::vector<Key>& keys, NameOf name_of, Labels& labels) {
  labels.kind = LabelKind::kMulticlass;
  std::map<Key, std::int32_t> classes;
  for (const Key& k : keys) classes.emplace(k, 0);
  std::int32_t rank = 0;
  for (auto& [cls, idx] : classes) {
    idx = rank++;
    labels.names.push_back(name_of(cls));
  }
  for (const Key& k : keys) labels.values.push_back(classes[k]);
}

// ---- feature rows -------------------------------------------------------------------------------

// (feature index, value) pairs of one row, in any order.
using RowEntries = std::vector<std::pair<std::int32_t, double>>;

// Sorts `entries` by feature index and appends them to `rows` as the next row.
void append_row(SparseRows& rows, RowEntries& entries);

}  // namespace rateopt::io_detail
