// Private helpers shared by the file readers (CSV, LIBSVM, ARFF): number parsing, trimming,
// message formatting, a fast builder for slice `Column`s and the internal reader entry points
// that also fill `ReadStats` and accept a reused `Encoding`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/io.hpp"

namespace rateopt::io_detail {

// Result of parsing a token as a floating-point number.
enum class NumberKind {
  kFinite,     // a finite double
  kNonFinite,  // nan, inf or a value that overflows a double
  kNotNumber,  // anything else
};

// Parses the whole of `s` (no surrounding spaces) as a decimal double; a leading '+' is accepted.
// Values that underflow become 0 or a subnormal number.
[[nodiscard]] NumberKind parse_double(std::string_view s, double& out) noexcept;

// Parses the whole of `s` as a decimal integer (optional leading '+' or '-').
[[nodiscard]] bool parse_int64(std::string_view s, std::int64_t& out) noexcept;

// a == b, comparing short texts (most fields: labels, levels, missing-value tokens) inline, where
// a call to memcmp for each of ~10^7 fields was a tenth of a CSV read.
[[nodiscard]] inline bool same_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  if (a.size() > 16) return a == b;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k] != b[k]) return false;
  return true;
}

// `s` without leading and trailing spaces, tabs and carriage returns.
[[nodiscard]] std::string_view trim(std::string_view s) noexcept;

// ASCII lower-case copy.
[[nodiscard]] std::string to_lower(std::string_view s);

// True when `s` ends with `suffix`, ignoring ASCII case.
[[nodiscard]] bool ends_with_ci(std::string_view s, std::string_view suffix) noexcept;

// A value quoted for an error message, shortened to at most `max_chars` characters, with
// control characters shown as '?'. Call it qualified (io_detail::quoted): with a std::string
// argument, argument-dependent lookup also finds std::quoted wherever <iomanip> is visible (as
// through a precompiled header), and that one wins.
[[nodiscard]] std::string quoted(std::string_view s, std::size_t max_chars = 60);

// Items joined by `sep`.
[[nodiscard]] std::string join(const std::vector<std::string>& items, std::string_view sep);

// Items joined by ", ", shortened after `max_items` with ", ..." (for "available: ..." lists).
[[nodiscard]] std::string join_limited(const std::vector<std::string>& items,
                                       std::size_t max_items = 40);

// "drop", "zero" or "error".
[[nodiscard]] std::string_view missing_policy_name(MissingPolicy policy) noexcept;

// Number of physical lines in `text` (a final line without '\n' counts).
[[nodiscard]] std::size_t count_lines(std::string_view text) noexcept;

// Builds a slice `Column` value by value with the semantics of `Column::push_back` (levels in
// order of first appearance, code -1 for missing, numbers kept while every present value is a
// finite number) in O(1) per value. The views passed to `push` must outlive the builder.
// The codes of distinct strings in order of first appearance, by open addressing over one flat
// table (no allocation per distinct value: a numeric column of 10^6 distinct values spent half
// of a CSV read in std::unordered_map's nodes, rehashes and frees). Keys are views: the text
// they point into outlives the index.
class LevelIndex {
 public:
  // The code of `value`; a new value gets the next code and sets `inserted`.
  std::int32_t find_or_add(std::string_view value, bool& inserted);
  // The code of `value`, -1 when it has none.
  [[nodiscard]] std::int32_t find(std::string_view value) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return keys_.size(); }

 private:
  struct Slot {
    std::uint32_t hash = 0;  // the low bits of the key's hash (most misses end here)
    std::int32_t code = -1;  // -1: empty
  };
  void rehash(std::size_t slots);
  std::vector<std::string_view> keys_;  // per code
  std::vector<std::size_t> hashes_;     // per code, for rehashing
  std::vector<Slot> slots_;             // a power of 2 long, at most half full
};

// The codes of distinct numeric texts in order of first appearance, as LevelIndex gives them over
// the texts, keyed instead by the parsed value's bits (a multiply, no string hash) with the text's
// length and first 8 bytes, so that a lookup of a text of at most 8 bytes (most numbers) reads no
// text: the slice columns of numeric columns, ~10^6 distinct values each in a large file, spent a
// third of a CSV read hashing and comparing strings. Texts with the same value but different
// spellings ("1", "1.0") keep distinct codes.
class NumberIndex {
 public:
  // The code of `text`, whose value is `value`; a new text gets the next code and sets `inserted`.
  std::int32_t find_or_add(double value, std::string_view text, bool& inserted);
  // The texts, by code.
  [[nodiscard]] const std::vector<std::string_view>& keys() const noexcept { return keys_; }
  // Asks the cache for the slot where a lookup of `value` starts (a hint: nothing changes). A
  // column of 10^6 distinct values has a table of ~50 MB, and each lookup missed the cache.
  void prefetch(double value) const noexcept;

 private:
  struct Slot {
    std::uint64_t bits = 0;  // the value's
    std::uint64_t head = 0;  // the text's first min(8, size) bytes
    std::uint32_t size = 0;  // the text's, at most 2^32 - 1
    std::int32_t code = -1;  // -1: empty
  };
  [[nodiscard]] static Slot slot_of(std::uint64_t bits, std::string_view text) noexcept;
  [[nodiscard]] static std::size_t hash_of(std::uint64_t bits) noexcept;
  void rehash(std::size_t slots);
  std::vector<std::string_view> keys_;  // per code
  std::vector<std::uint64_t> bits_;     // per code
  std::vector<Slot> slots_;             // a power of 2 long, at most half full
};

// While a column is numeric, ColumnBuilder keeps only its numbers and the texts of its present
// values, and finish() leaves the levels to Column::build_deferred (a numeric column's levels are
// built when something asks for them); the first value that is not a number builds them there
// and then, and the column goes on as text.
class ColumnBuilder {
 public:
  explicit ColumnBuilder(std::string name, std::size_t expected_rows = 0);
  void push(std::string_view value, bool missing);
  // A present value already known to parse as the finite number `number`.
  void push_number(std::string_view value, double number);
  // The column; a numeric one with its levels deferred (Column::deferred).
  [[nodiscard]] Column finish() &&;

 private:
  void push_text(std::string_view value);
  // Leaves the numeric state: the codes of the rows so far, by their texts.
  void to_text();

  Column column_;
  LevelIndex index_;
  bool numeric_ = true;
  std::shared_ptr<DeferredLevels> texts_;  // while numeric_
  std::size_t expected_rows_ = 0;
};

}  // namespace rateopt::io_detail

namespace rateopt {
// The texts of a numeric column's present values, in row order (its NaN numbers are the missing
// rows), from which Column::build_deferred builds its levels and codes.
struct DeferredLevels {
  std::string text;                 // the texts one after another
  std::vector<std::uint64_t> ends;  // per present value, where its text ends in `text`
  [[nodiscard]] std::string_view at(std::size_t k) const noexcept {
    const std::uint64_t begin = k == 0 ? 0 : ends[k - 1];
    return std::string_view(text).substr(begin, ends[k] - begin);
  }
};
}  // namespace rateopt

namespace rateopt::io_detail {

// Column::build_deferred's work: the codes of `column.numeric` and its deferred texts, by value
// and text (NumberIndex), levels in order of first appearance.
void build_deferred_levels(Column& column);

// Feature rows being assembled in CSR form (indices sorted within each row).
struct SparseRows {
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<double> values;
  void end_row() { indptr.push_back(static_cast<std::int64_t>(indices.size())); }
};

enum class Storage {
  kDense,   // always dense
  kSparse,  // always CSR
  kAuto,    // CSR when rows * cols > 2^22 and at most 30% of the entries are nonzero
};

// kAuto's rule: dense up to 2^22 cells, or above kSparseCopyDensity non-zero; else CSR.
[[nodiscard]] bool keep_dense(std::size_t rows, std::size_t cols, std::size_t nnz) noexcept;

// The feature matrix of `rows` with `cols` columns in the requested storage.
[[nodiscard]] FeatureMatrix make_matrix(SparseRows&& rows, std::size_t cols, Storage storage);

// Checks that a reused encoding is of `format` and that its specs lie inside num_features
// without overlapping; throws InvalidArgument otherwise.
void check_encoding(const Encoding& encoding, std::string_view format);

// Stable storage for unescaped field text; views into it stay valid while it lives.
using TextArena = std::deque<std::string>;

// Internal entry points (the public ones forward here with stats = nullptr). keep: when set, only
// these slice columns are built (ReadOptions::keep_columns).
// records_line > 0: the text is one part of a file (file_parts), its records numbered from that
// line of the file on (a CSV's skipped lines and header before them keep their own numbers).
[[nodiscard]] Dataset parse_csv_impl(std::string_view text, const CsvOptions& options,
                                     const std::string& name, const Encoding* encoding,
                                     ReadStats* stats,
                                     const std::vector<std::string>* keep = nullptr,
                                     std::size_t records_line = 0);
[[nodiscard]] Dataset parse_libsvm_impl(std::string_view text, const LibsvmOptions& options,
                                        const std::string& name, const Encoding* encoding,
                                        ReadStats* stats, std::size_t records_line = 0);
[[nodiscard]] Dataset parse_arff_impl(std::string_view text, const ArffOptions& options,
                                      const std::string& name,
                                      const std::vector<std::string>* xml_labels,
                                      const Encoding* encoding, ReadStats* stats);

// What the chunks of one CSV file share while read_csv_chunked reads them (csv_reader.cpp).
struct CsvChunkState {
  std::size_t first_line = 1;      // the file's number of the chunk's first line
  bool first = true;               // the file's first chunk (skipped lines and header in it)
  std::vector<std::string> names;  // the file's columns (from the first chunk)
  // Binary labels from positive_values, over the chunks so far: the first two distinct negative
  // values (the negative class's name), the first distinct values (a warning's), any positive.
  std::vector<std::string> negatives;
  std::vector<std::string> label_values;
  bool any_positive = false;
};

// Whether a CSV file can be read in chunks with these options: its labels need no look at the
// whole file (positive_values given, or no label column).
[[nodiscard]] bool csv_reads_in_chunks(const CsvOptions& options) noexcept;

// The dataset parse_csv_impl gives for the whole text of `path` with `encoding`, read in chunks of
// about `chunk_bytes` of text (whole records; gzip inflated as it is read) so that neither the
// text nor a reader's working set for all of it is ever held: memory is the dataset plus one
// chunk's. Storage: the rule make_matrix applies to the whole file (keep_dense). `keep` (optional)
// drops the other slice columns chunk by chunk. Requires csv_reads_in_chunks.
[[nodiscard]] Dataset read_csv_chunked(const std::string& path, const CsvOptions& options,
                                       const Encoding& encoding, ReadStats* stats,
                                       const std::vector<std::string>* keep,
                                       std::size_t chunk_bytes);
inline constexpr std::size_t kCsvChunkBytes = std::size_t{4} << 20;

// Where the `count` parts of `part_bytes` bytes of a file of `size` bytes start (file_parts):
// one scan, part k beginning at the first record that starts at or after k * part_bytes (the end
// of the file when none does), each part ending where the next begins.
[[nodiscard]] std::vector<FilePart> csv_file_parts(const std::string& path,
                                                   const CsvOptions& options,
                                                   std::size_t part_bytes, std::size_t count,
                                                   std::uint64_t size);
[[nodiscard]] std::vector<FilePart> libsvm_file_parts(const std::string& path,
                                                      std::size_t part_bytes, std::size_t count,
                                                      std::uint64_t size);
// Completes the scanners' parts once the begins of parts [0, begun) are known: the others begin
// (empty) at the end of the file, at line next_line; every part ends where the next begins.
void finish_file_parts(std::vector<FilePart>& parts, std::size_t begun, std::uint64_t header_end,
                       std::size_t next_line, std::uint64_t size);

// The encodings each chunk of `path` infers (no encoding given), in order, for merge_encodings;
// memory: one chunk's reading. Nothing when the chunks cannot stand for one reading of the whole
// text: a chunk warned (a mostly numeric column), or a column is numeric in one chunk and
// categorical in another. Requires csv_reads_in_chunks.
[[nodiscard]] std::optional<std::vector<InferredEncoding>> infer_csv_chunked(
    const std::string& path, const CsvOptions& options, std::size_t chunk_bytes);

// The MULAN XML next to an ARFF file (`name-train.arff` -> `name.xml`), or "" when none exists.
[[nodiscard]] std::string find_sibling_mulan_xml(const std::string& arff_path);

// Whether `bytes` start with the binary dataset's magic (binary_dataset.cpp).
[[nodiscard]] bool has_dataset_binary_magic(std::string_view bytes) noexcept;

}  // namespace rateopt::io_detail
