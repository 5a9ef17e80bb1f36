// Shared pieces of the command-line front end: reader flags, exit codes, small file helpers.
// The CLI does no math of its own (STYLE R10): it parses flags into library options and prints.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/io.hpp"
#include "rateopt/model.hpp"

namespace rateopt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;  // usage errors and bad input
// train --confidence: the safety test could not certify the constraints (no model written).
inline constexpr int kExitNoSolution = 3;

// Flags that describe how to read a data file, shared by eval, train, predict and info.
struct ReaderFlags {
  std::string format = "auto";
  std::string label;
  std::vector<std::string> positive;
  std::vector<std::string> groups;
  std::vector<std::string> ignore;
  std::vector<std::string> categorical;
  std::string weight_column;
  std::vector<std::string> columns;
  bool no_header = false;
  std::size_t skip_lines = 0;
  std::string comment;
  std::string missing = "drop";
  std::string unseen = "zero";  // --unseen: zero or error
  bool no_standardize = false;
  std::size_t n_features = 0;
  bool multilabel = false;
  std::string xml;
  std::size_t num_labels = 0;
  std::string baseline_file;
  std::string baseline_column;
  // --scores FILE (train --solver postprocess, and predict / eval of the model it writes): one
  // score per row of --data from any model; the data's features are then that one score.
  std::string scores_file;
  // Not a flag: the slice columns the command needs (keep_slice_columns); unset keeps every one.
  std::optional<std::vector<std::string>> keep_columns;
  // --part-bytes: read CSV and LIBSVM files of --data in parts of this many bytes (0: whole,
  // or kAutoPartBytes when there are fewer files than MPI ranks); load_data_shard splits.
  std::size_t part_bytes = 0;
  // Not a flag: the one part load_dataset reads (ReadOptions::part_range; unset: the whole file).
  std::optional<FilePart> read_part;
  // Not a flag: the command's --threads (CsvOptions::n_threads: the same data for any count).
  int threads = 1;
};

// The part size of files shared by more ranks than there are files, without --part-bytes.
inline constexpr std::size_t kAutoPartBytes = std::size_t{16} << 20;

void add_reader_flags(CLI::App& app, ReaderFlags& flags);
// Registers --part-bytes (ReaderFlags::part_bytes) for the commands that read --data through
// load_data_shard: train and eval.
void add_part_bytes_flag(CLI::App& app, ReaderFlags& flags);
// Registers --scores (ReaderFlags::scores_file) for train, predict and eval.
void add_scores_flag(CLI::App& app, ReaderFlags& flags, const std::string& group);
// The encoding of a model post-processed from outside scores (train --solver postprocess
// --scores): format "scores", one feature "score", the data's label column and positive value
// (what predict and eval read the data with, besides the group columns).
[[nodiscard]] Encoding scores_encoding(const Encoding& data);
// `ds` with its features replaced by the scores in `scores_file` (one finite number per row of
// `data_path`; ParseError with file and line otherwise, InvalidArgument for the wrong count) and
// its encoding by `encoding`.
void attach_scores(Dataset& ds, const std::string& scores_file, const std::string& data_path,
                   const Encoding& encoding);
// Keeps only the slice columns a command needs when it reads data: those `texts` (expressions)
// name, `extra` ones (a model's group columns) and the baseline ones (--baseline-column, and a
// column named "baseline", which churn reads). A column costs 4 bytes a row (12 when numeric),
// so a large shard keeps only these. A text that does not parse keeps every column (its error
// comes when it is evaluated).
void keep_slice_columns(ReaderFlags& flags, const std::vector<std::string>& texts,
                        const std::vector<std::string>& extra = {});
[[nodiscard]] ReadOptions to_read_options(const ReaderFlags& flags);

// Reads `path` with the flags; `encoding` (optional) re-applies a model's feature encoding.
// Attaches the baseline column (from --baseline FILE or --baseline-column COL) as "baseline".
// Prints a note on stderr when rows were dropped for missing values.
// "no" for LabelKind::kNone, else to_string(kind): "{} has {} labels" reads right.
[[nodiscard]] std::string label_kind_words(LabelKind kind);

// Training needs both classes with positive weight: throws InvalidArgument naming `path`
// otherwise (a --positive value that matches nothing, an all-zero weight column).
void require_two_classes(const Dataset& ds, const std::string& path);
// Rate-constrained training may have one class (constraints on ppr need no labels): a warning.
void warn_if_one_class(const Dataset& ds, const std::string& path);

// Reads one file (or the part of it flags.read_part names) and prints the reader's notes
// and warnings on stderr; with `stats`, they are added to *stats instead (print_read_notes).
[[nodiscard]] Dataset load_dataset(const std::string& path, const ReaderFlags& flags,
                                   const Encoding* encoding = nullptr, ReadStats* stats = nullptr);
// The notes of a read (rows dropped or imputed, unseen levels, warnings) on stderr.
void print_read_notes(const std::string& path, const ReadStats& stats);

// `--data` given as one file or as a glob pattern ('shards/part-*.csv', files in name order),
// and under mpirun this rank's share of it (docs/scale.md): rank r of n reads files
// [r k / n, (r + 1) k / n) of the k files. Several files are read with one encoding: `encoding`
// when given (a model's), else the one a reader would infer from all their rows in order
// (agree_encoding_over_ranks: every file is read twice, once to infer), and their rows are
// concatenated (concat_rows).
struct DataShard {
  Dataset data;                        // this rank's rows
  std::vector<std::string> files;      // this rank's files
  std::vector<std::size_t> file_rows;  // rows read from each of them
  std::size_t first_file = 0;          // index of files[0] among all the files of the pattern
  std::size_t total_files = 0;         // over every rank
  std::size_t rows_before = 0;         // rows of the lower ranks (this rank's first global row)
  std::size_t total_rows = 0;          // over every rank
};
// A data file's name without folder and data extensions: shards/part-03.csv.gz -> part-03.
[[nodiscard]] std::string file_stem(const std::string& path);
// `output` with every {} replaced by data_file's stem (one output per data file).
[[nodiscard]] std::string per_file_output(const std::string& output, const std::string& data_file);
// InvalidArgument when two files share a stem (their per-file outputs would collide).
void check_distinct_stems(const std::vector<std::string>& files);
// The one encoding of several data files (this rank's `files`; a collective over ranks): for text
// files, the encoding one reader would infer from every rank's files in order; for binary
// datasets (rateopt convert), the encoding they carry, which must be the same for all.
[[nodiscard]] Encoding shared_encoding(const std::vector<std::string>& files,
                                       const ReaderFlags& flags);
// What one load reads: a whole file, or one part of it (ReadOptions::part_bytes).
struct DataUnit {
  std::string file;
  std::optional<FilePart> part;  // unset: the whole file
};
// The same over units (parts of files among them).
[[nodiscard]] Encoding shared_encoding(const std::vector<DataUnit>& units,
                                       const ReaderFlags& flags);
[[nodiscard]] DataShard load_data_shard(const std::string& pattern, const ReaderFlags& flags,
                                        const Encoding* encoding = nullptr);
// This rank's contiguous share [first, last) of `count` files: [r count / n, (r + 1) count / n).
// InvalidArgument (naming `pattern`) when there are fewer files than ranks.
[[nodiscard]] std::pair<std::size_t, std::size_t> rank_file_range(std::size_t count,
                                                                  const std::string& pattern);
// The files `pattern` names: itself when it has no glob characters (* ? [) or names an existing
// file, else the matches in name order (NotFound when none).
[[nodiscard]] std::vector<std::string> expand_data_pattern(const std::string& pattern);

// Lines of a text (LF or CRLF endings; a final newline adds no empty line).
[[nodiscard]] std::vector<std::string_view> split_lines(std::string_view text);
// Fields of a line separated by spaces, tabs or commas (empty fields are skipped).
[[nodiscard]] std::vector<std::string_view> split_fields(std::string_view line);

// One value per line; blank lines are errors. Throws ParseError(file, line).
[[nodiscard]] std::vector<double> read_number_column(const std::string& path);
// Every output must be a file of its own: throws std::invalid_argument (exit 2) when an output
// flag (-o/--output, --report, --labels) names the file of an input flag (--data, --model,
// --validation, --pred, --problem, --base-model, --input, --xml, --names, --ids,
// --multilabel-model) or of another output, by path or as the same file (a link); "-" and
// existing files that are not regular (/dev/null) are left alone. `args` is the command's
// arguments (after the command name), in either `--flag value` or `--flag=value` form.
void check_outputs_are_own_files(std::span<const std::string> args);

// Writes text to `path` atomically (write_file_atomic: the old file survives any failure), or
// to stdout when path is "-". Throws WriteError.
void write_text(const std::string& path, const std::string& text);

// A training report as embedded in a model file: `report_json` without its wall-clock fields
// (every key ending in "seconds", at any depth), so that the same data, options and seed give
// byte-identical model files. Timings stay in the --report file and on the terminal.
[[nodiscard]] std::string report_without_timings(const std::string& report_json);

// Saves a trained model unless its training ended infeasible and --output-infeasible was not
// given (the old file at `output` then stays as it was). Returns whether it was written.
bool save_trained_model(const Classifier& model, const std::string& output, bool infeasible,
                        bool output_infeasible);
// "model written to X", or why it was not.
void print_model_saved(bool saved, const std::string& output);

// Warns on stderr when a rate-constrained model's deterministic component violated the
// constraints it was trained under on the training data (its embedded report), and mode is
// deterministic: the stochastic model (--mode probability or stochastic) meets them in
// expectation.
void warn_if_deterministic_infeasible(const Classifier& model, PredictMode mode,
                                      const std::string& model_path);

// Parses argv with CLI11; returns -1 to continue, or the exit code to return now (help, errors).
[[nodiscard]] int parse_args(CLI::App& app, int argc, const char* const* argv);

}  // namespace rateopt::cli
