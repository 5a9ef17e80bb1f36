// File: rateopt/io.hpp
// Readers that turn files into `Dataset`s. Every reader also reads gzip-compressed input
// (detected from the magic bytes, not the name). Malformed input throws ParseError naming the
// file, the 1-based line (and column where it helps) and what was expected.
//
// Formats:
//   CSV/TSV with a header row (or `column_names` for headerless files such as UCI Adult).
//   LIBSVM/SVMlight: `label idx:val ...`, 1-based increasing indices; binary labels -1/+1 or 0/1,
//     multiclass integers, multilabel `l1,l2 idx:val` (0-based label ids). Feature j (1-based in
//     the file) becomes column j-1 and is named `f<j>`, so the slice `f73=1` means index 73.
//   MULAN ARFF (dense `v1,v2,...` and sparse `{i v, ...}` rows) with label attributes named by
//     the MULAN XML file (matched by name, in XML order) or counted from the end by `num_labels`.
//
// Example:
//   rateopt::ReadOptions o;
//   o.csv.label_column = "income"; o.csv.positive_values = {">50K", ">50K."};
//   o.csv.group_columns = {"sex", "race"};
//   rateopt::Dataset train = rateopt::read_dataset("adult-train.csv.gz", o);
//   o.encoding = &train.encoding();             // apply the same encoding to the test file
//   rateopt::Dataset test = rateopt::read_dataset("adult-test.csv.gz", o);
//
// Memory: a CSV file read with an encoding and positive_values (or no label column), as the test
// file above, is read a few MB of records at a time (the dataset plus one chunk's reading; the
// result is the whole text's, bit for bit); other reads hold the decompressed text and its parsed
// fields while the dataset is built (docs/data-formats.md, "Limits").
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/dataset.hpp"

namespace rateopt {

enum class FileFormat { kAuto, kCsv, kLibsvm, kArff };

// What to do with a missing value (a field equal to one of `missing_values`).
enum class MissingPolicy {
  kDrop,   // drop the row (default; the number dropped is in ReadStats)
  kZero,   // impute: numeric -> the training mean (FeatureSpec::impute; 0 after standardisation),
           // categorical -> all-zero one-hot; labels and weights cannot be imputed (ParseError)
  kError,  // ParseError
};

struct CsvOptions {
  char delimiter = 0;                     // 0: ',' unless the file name ends in .tsv/.tsv.gz
  bool has_header = true;                 // false requires column_names
  std::vector<std::string> column_names;  // names for headerless files (overrides the header)
  std::size_t skip_lines = 0;             // leading lines to skip (e.g. adult.test's banner)
  std::string comment_prefix;             // lines starting with it are skipped ("" = none)
  std::string label_column;               // "" = unlabelled
  // Values of the label column meaning y = 1 (binary). Empty: 0/1 or -1/+1 labels are binary,
  // anything else is multiclass with classes sorted by name.
  std::vector<std::string> positive_values;
  std::vector<std::string> group_columns;        // kept out of the features, available for slicing
  std::vector<std::string> ignore_columns;       // dropped entirely
  std::vector<std::string> categorical_columns;  // forced one-hot even if numeric-looking
  std::string weight_column;                     // "" = unit weights
  std::vector<std::string> missing_values = {"?", "", "NA", "NaN"};
  MissingPolicy missing = MissingPolicy::kDrop;
  bool standardize = true;  // numeric features -> (x - mean) / std, saved in the encoding
  // With a reused encoding (ReadOptions::encoding): a categorical value it does not know is a
  // ParseError naming the file, line and column, instead of an all-zero one-hot (counted in
  // ReadStats::unseen_levels).
  bool unseen_error = false;
  // Threads for the per-column work of a read (each feature column's numbers, moments and levels,
  // each slice column's values); 0: all cores. The dataset is the same, bit for bit, for any
  // count.
  int n_threads = 1;
};

struct LibsvmOptions {
  std::size_t num_features = 0;  // 0: the largest index seen; larger values widen the matrix
  bool multilabel = false;       // force multilabel parsing even without commas
};

struct ArffOptions {
  std::string xml_path;        // MULAN label XML; empty: use num_labels
  std::size_t num_labels = 0;  // labels are the last num_labels attributes (when no XML)
};

// Where one part of a CSV or LIBSVM file lies (file_parts; ReadOptions::part_bytes): the bytes
// [begin, end) hold its records, `first_line` is the file's number of the line at `begin`, and
// [0, header_end) are a CSV's skipped lines and header (the same for every part of a file).
struct FilePart {
  std::uint64_t header_end = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::size_t first_line = 1;
};

struct ReadOptions {
  FileFormat format =
      FileFormat::kAuto;  // kAuto: from the extension (.csv .tsv .arff, else LIBSVM)
  CsvOptions csv;
  LibsvmOptions libsvm;
  ArffOptions arff;
  // When set, features are built with this encoding (columns, one-hot levels, scaling) instead
  // of one inferred from the file: the way to read a test file for a trained model. Unseen
  // categorical levels encode as all-zero.
  const Encoding* encoding = nullptr;
  // When set, only these slice columns are kept (Dataset::keep_columns; the others are read and
  // checked, but CSV readers build no slice column for them, and binary datasets drop them one
  // at a time): the columns a command's expressions name (slice_columns in rateopt/expr.hpp).
  // Not set: every column.
  std::optional<std::vector<std::string>> keep_columns;
  // When part_bytes > 0, only part `part` of a CSV or LIBSVM file is read: the records that
  // start at a byte offset in [part * part_bytes, (part + 1) * part_bytes) of its text (a CSV's
  // skipped lines and header as well; a quoted line break does not end a record, as for the
  // chunked reader). Errors name the file's own line numbers. Read in order, the parts of a file
  // (file_part_count) hold each of its records once: how MPI ranks share one file
  // (docs/scale.md). ARFF files and binary datasets are read whole (InvalidArgument).
  std::size_t part_bytes = 0;
  std::size_t part = 0;
  // file_parts(path, options)[part], when the caller has it: the part is then read from those
  // bytes alone, without scanning the file for where it starts.
  std::optional<FilePart> part_range;
};

// The number of parts of `part_bytes` bytes (> 0) a file is read in (ReadOptions::part_bytes):
// ceil(size / part_bytes), at least 1. InvalidArgument for a gzip-compressed file (its size is
// not its text's: decompress it, or split or convert it), IoError when it cannot be read.
[[nodiscard]] std::size_t file_part_count(const std::string& path, std::size_t part_bytes);
// Where each of the file_part_count(path, options.part_bytes) parts of a CSV or LIBSVM file lies,
// found by one scan of the file (a CSV's quotes followed as the chunked reader follows them):
// reading a part from its FilePart (ReadOptions::part_range) then reads only its bytes and the
// header's. InvalidArgument for binary datasets, ARFF and gzip-compressed files.
[[nodiscard]] std::vector<FilePart> file_parts(const std::string& path, const ReadOptions& options);

// Count, mean and sum of squared deviations (Welford's M2) of one numeric feature's raw values,
// as a reader inferring an encoding computed them: what merge_encodings needs to standardise
// several files as one.
struct NumericMoments {
  std::size_t count = 0;
  double mean = 0;
  double m2 = 0;
};

// Counts a reader reports besides the data.
struct ReadStats {
  std::size_t lines = 0;  // physical lines read
  std::size_t rows_dropped_missing = 0;
  std::size_t rows_imputed_missing = 0;  // kZero: rows with a missing feature value imputed
  std::size_t unseen_levels = 0;         // categorical values not in a reused encoding
  // Degenerate but readable input, one sentence each (callers print them): a --positive value
  // that matches no label, a numeric-looking column made categorical by a few stray tokens, an
  // all-zero weight column.
  std::vector<std::string> warnings;
  // CSV inferring its encoding: one entry per FeatureSpec (zeros for one-hot specs), in order.
  std::vector<NumericMoments> moments;
};

// ---- one encoding for several files (docs/scale.md) ------------------------------------------
// What one reading of a file inferred: its encoding and, for CSV, ReadStats::moments.
struct InferredEncoding {
  Encoding encoding;
  std::vector<NumericMoments> moments;
  std::string source;  // the file, for messages
};
// The encoding one reader would infer from the rows of `parts` read in order as one file: CSV
// numeric columns standardised with the moments combined (Chan et al.'s pairwise update, so the
// mean and scale agree with one pass to rounding), one-hot levels merged in order of first
// appearance, LIBSVM's feature count the largest; anything else must be equal in every part.
// `standardize`: whether the parts were read with standardisation (CsvOptions::standardize).
// Throws InvalidArgument naming the first part that cannot be merged (a column numeric in one
// part and categorical in another, a different header, label column or positive value).
[[nodiscard]] Encoding merge_encodings(std::span<const InferredEncoding> parts, bool standardize);
// merge_encodings over every rank's `mine` in rank order (rateopt/distributed.hpp; a collective):
// on every rank the encoding one process would merge from all those files in that order, to the
// bit, whatever the rank count.
[[nodiscard]] Encoding agree_encoding_over_ranks(std::span<const InferredEncoding> mine,
                                                 bool standardize);
// What reading `path` infers, as parts for merge_encodings, in order. A CSV file read with
// positive_values (or without a label column) is inferred a few MB of text at a time, its chunks'
// moments and levels then merged as files are (equal to one pass over the whole text to
// rounding); memory is one chunk's reading. When its chunks disagree on a column's type or one
// warns (a mostly numeric column), and for other formats, the file is read whole: one part.
[[nodiscard]] std::vector<InferredEncoding> infer_encoding_parts(const std::string& path,
                                                                 const ReadOptions& options);

[[nodiscard]] Dataset read_dataset(const std::string& path, const ReadOptions& options = {},
                                   ReadStats* stats = nullptr);
[[nodiscard]] Dataset read_csv(const std::string& path, const CsvOptions& options = {},
                               const Encoding* encoding = nullptr, ReadStats* stats = nullptr);
[[nodiscard]] Dataset read_libsvm(const std::string& path, const LibsvmOptions& options = {},
                                  ReadStats* stats = nullptr);
[[nodiscard]] Dataset read_arff(const std::string& path, const ArffOptions& options = {},
                                ReadStats* stats = nullptr);

// In-memory variants (used by the fuzz targets and tests); `name` appears in error messages.
[[nodiscard]] Dataset parse_csv(std::string_view text, const CsvOptions& options,
                                const std::string& name = "<string>",
                                const Encoding* encoding = nullptr, ReadStats* stats = nullptr);
[[nodiscard]] Dataset parse_libsvm(std::string_view text, const LibsvmOptions& options,
                                   const std::string& name = "<string>");
[[nodiscard]] Dataset parse_arff(std::string_view text, const ArffOptions& options,
                                 const std::string& name = "<string>",
                                 const std::vector<std::string>* xml_labels = nullptr);

// ---- binary dataset cache (docs/data-formats.md, "Binary dataset cache") ----------------------
// A parsed Dataset written as its arrays (features, labels, weights, slice columns, encoding)
// with a CRC-32, so that a large text file is parsed once (`rateopt convert`). read_dataset
// recognises the file by its magic bytes whatever its name; the reader options it was converted
// with are baked in. Little-endian hosts only.
// Writes atomically (write_file_atomic's guarantees; WriteError on failure).
void write_dataset_binary(const Dataset& data, const std::string& path);
// Throws IoError (cannot open) or ParseError naming the file and byte offset (not a binary
// dataset, another format version, truncated, a count larger than the file, a checksum
// mismatch, inconsistent labels or columns). With `encoding` (a model's), InvalidArgument when
// the stored features were encoded otherwise (format, features, one-hot levels, scaling and imputed
// values; the label column and the missing-value policy may differ). Memory: the dataset itself.
// With `keep_columns`, only those slice columns are kept, the others dropped as they are read.
[[nodiscard]] Dataset read_dataset_binary(const std::string& path,
                                          const Encoding* encoding = nullptr,
                                          const std::vector<std::string>* keep_columns = nullptr);
// The encoding stored in a binary dataset, without reading its arrays (they are skipped by their
// counts; the checksum is not verified: read_dataset_binary does). Throws as read_dataset_binary.
[[nodiscard]] Encoding read_dataset_binary_encoding(const std::string& path);
// Whether `path` starts with the binary dataset's magic bytes (false when it cannot be opened or
// is not a regular file: a pipe or FIFO is never read here, so no byte of it is lost).
[[nodiscard]] bool is_dataset_binary(const std::string& path);

// Label names from a MULAN XML file, in file order.
[[nodiscard]] std::vector<std::string> read_mulan_labels(const std::string& xml_path);
// The same from XML text in memory; `name` appears in error messages.
[[nodiscard]] std::vector<std::string> parse_mulan_labels(std::string_view xml,
                                                          const std::string& name = "<string>");

// Whole file as text, gunzipped when it starts with the gzip magic bytes. Throws IoError.
[[nodiscard]] std::string read_text_file(const std::string& path);
// `bytes` gunzipped (every concatenated member; trailing zero padding allowed) when they start
// with the gzip magic bytes, else returned as they are: what read_text_file does after reading.
// Throws IoError naming `name` for a corrupt or truncated stream.
[[nodiscard]] std::string decompress_gzip(std::string_view bytes,
                                          const std::string& name = "<bytes>");

// Writes `text` to `path` so that it cannot be half-written: into a temporary file in the same
// folder (`.NAME.tmp-XXXXXX`), every write checked, flushed to disk (fsync), closed, then renamed
// over `path`. On any failure the temporary file is removed, `path` keeps its old content (or
// stays absent) and WriteError says why. An existing target that is not a regular file (a device
// such as /dev/null or /dev/stdout, a FIFO) cannot be replaced and is written in place, checked.
// "-" writes to standard output (checked and flushed).
void write_file_atomic(const std::string& path, std::string_view text);

// Streams `path` line by line in 1 MiB reads, gunzipping as it goes when the file starts with
// the gzip magic bytes (every member, trailing zero padding allowed, as read_text_file); "-" reads
// standard input as it is. Lines split at '\n'; one trailing '\r' is removed; a final newline
// ends the last line (it does not start an empty one). Memory: the longest line plus the buffers.
// Errors (IoError) carry read_text_file's texts; a corrupt gzip stream is noticed where it is
// reached, after the lines before it were returned. Not thread-safe (one reader per thread).
class LineReader {
 public:
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  // The next line (valid until the next call), false at the end of the input.
  bool next(std::string_view& line);
  // The same with a '\r' before the '\n' kept (the line exactly as in the file).
  bool next_raw(std::string_view& line);
  // The 1-based number of the line `next` returned last.
  [[nodiscard]] std::size_t line_number() const noexcept;

 private:
  struct Impl;
  Impl* impl_ = nullptr;
};

// write_file_atomic for output produced piece by piece: the text goes into the temporary file as
// it is written (created at the first write or at commit), and only commit() renames it over
// `path`; destroyed uncommitted (an error, an exception) the temporary file is removed and `path`
// keeps its old content (or stays absent). "-" writes to standard output, buffered up to 1 MiB
// (an uncommitted writer drops what it still holds; what was flushed stays written); a target that
// is not a regular file is written in place. Every write is checked (WriteError, with
// write_file_atomic's texts). Not thread-safe.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void write(std::string_view text);
  void commit();

 private:
  void flush_buffer();
  void open();
  std::string path_;
  std::string temp_;
  std::string buffer_;
  int fd_ = -1;
  bool to_stdout_ = false, in_place_ = false, opened_ = false, committed_ = false;
  unsigned mode_ = 0666;
  void* pending_ = nullptr;  // the PendingTemp registration of temp_
};

// Removes the temporary files write_file_atomic is writing at this moment (their targets stay as
// they were). Async-signal-safe: the command line calls it from its SIGINT/SIGTERM handler so
// that an interrupted run leaves no `.NAME.tmp-XXXXXX` file behind.
void remove_pending_temp_files() noexcept;

}  // namespace rateopt
