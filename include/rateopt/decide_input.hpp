// File: rateopt/decide_input.hpp
// The text inputs of `rateopt decide` (docs/decide.md section 6), parsed in the library so that
// they can be tested and fuzzed. Every malformed input throws ParseError naming the file, the
// 1-based line (and the column of a bad number) and what was expected.
//
// Independent / multiclass text: one instance per line, probabilities separated by spaces, tabs or
// commas (lines may differ in length). Every line is one instance, so the n-th output row belongs
// to the n-th input line: a blank (or whitespace-only) line is an error, except blank lines at the
// very end of the file (the final newline, or several). With `column`, the whole text is one
// instance with one probability per line; the same blank-line rule applies (a blank line in the
// middle would shift every later item of `--format indicator`'s one-per-line output).
//
// GFM text: JSON Lines, one instance per line, with the same blank-line rule. Each line is
//   {"p0": P(y = 0), "P": [[...], ...]}   P[i][s] = P(y_i = 1, |y| = s + 1): m rows (one per
//                                          label) of S <= m entries each, S = m (square) or the
//                                          largest cardinality with mass; columns s >= S are 0;
//   {"p0": P(y = 0), "m": M, "P_sparse": [[i, s, value], ...]}   P[i][s] = value with the dense
//                                          form's 0-based i and s (|y| = s + 1); every other entry
//                                          0; each (i, s) at most once;
//   {"samples": [[label indices], ...], "weights": [...], "m": M}   weights and m optional;
//   {"indicators": [[0/1 per label], ...], "weights": [...]}         0/1 rows of length m.
// P must be a distribution (check_gfm_distribution below). "samples" are label-index lists;
// when every sample is a 0/1 list of one length >= 2 and neither "m" nor "format" is given, the
// line is ambiguous (indicator rows read as index lists) and rejected with a hint. "format":
// "indicator" reads "samples" as 0/1 rows (as "indicators"), "format": "indices" as index lists.
//
// Reading: a hand-written single-pass reader takes the JSON subset these lines are written in
// (the keys above once each, numbers by Clinger's fast path or std::from_chars, indices as plain
// integers); at anything else it hands the line to nlohmann::json, which accepts it or names the
// error. Both read a number the same way (integers exactly, others correctly rounded), so the
// reader never changes what is accepted, the values read or an error message (tested line by
// line, and fuzzed).
//
// Thread-safety: all functions are pure (decide_lines calls its callback from several threads).
// Complexity: linear in the text, plus O(m^2) per GFM line with a P (none for samples:
// parse_gfm_record never forms P from them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"

namespace rateopt {

// Independent or multiclass instances and the 1-based line each came from (with `column`: one
// instance, line 1).
struct DecideInstances {
  std::vector<std::vector<double>> instances;
  std::vector<std::size_t> lines;
};

// Parses independent / multiclass text (above). Probabilities must be finite and in [0, 1];
// `name` appears in error messages.
[[nodiscard]] DecideInstances parse_decide_instances(std::string_view text,
                                                     const std::string& name = "<string>",
                                                     bool column = false);

// One line of independent / multiclass text (above): appends its probabilities to `out` and
// returns how many (ParseError for a bad number, or a blank line: there are none).
std::size_t parse_decide_row(std::string_view line, const std::string& name, std::size_t line_no,
                             std::vector<double>& out);
// The error for a blank line inside the input (above), for readers that go line by line.
[[nodiscard]] ParseError decide_blank_line_error(const std::string& name, std::size_t line_no);

// The largest m a GFM line with a P may have by default (P is formed as an m x m matrix: 128 MiB).
inline constexpr std::size_t kGfmMaxLabels = 4096;
// The largest m of samples or indicator rows read as samples (parse_gfm_record): P is not formed,
// memory is O(labels in the samples + m), 8 bytes per label for decide_gfm_samples' index tables.
inline constexpr std::size_t kGfmMaxSampleLabels = std::size_t{1} << 22;

struct GfmLimits {
  std::size_t max_labels = kGfmMaxLabels;               // P, m x S and P_sparse (P is m x m)
  std::size_t max_sample_labels = kGfmMaxSampleLabels;  // samples and indicators
  bool fast = true;  // false: nlohmann::json only (the reference the fast reader is tested against)
};

// One GFM line as read: a P (every P form expanded to m x m), or samples kept as label sets.
struct GfmRecord {
  bool is_samples = false;
  GfmInput matrix;                      // !is_samples: P, checked by check_gfm_distribution
  std::size_t m = 0;                    // is_samples: the number of labels
  std::vector<std::int64_t> indptr{0};  // is_samples: sample j = indices[indptr[j], indptr[j+1]),
  std::vector<std::int32_t> indices;    //   ascending and unique, each < m
  std::vector<double> weights;          // empty: every sample weighs 1; the total is positive
  [[nodiscard]] LabelSetsView samples() const { return LabelSetsView{indptr, indices, m}; }
  [[nodiscard]] std::size_t labels() const noexcept { return is_samples ? m : matrix.m; }
};

// One GFM JSON line (above), samples and indicator rows as label sets: no P is formed from them.
[[nodiscard]] GfmRecord parse_gfm_record(std::string_view line,
                                         const std::string& name = "<string>",
                                         std::size_t line_no = 1, const GfmLimits& limits = {});
// decide_gfm_samples for samples (never forming P), decide_gfm for a P: the same decision, bit for
// bit, as decide_gfm(parse_gfm_line(...)).
[[nodiscard]] Decision decide_gfm_record(const GfmRecord& record, const DecideMetric& metric,
                                         const DecideOptions& options = {});

// One GFM JSON line (above) as a GfmInput. Samples and indicator rows are counted with
// gfm_from_samples. Labels are limited to m <= max_labels (every form).
[[nodiscard]] GfmInput parse_gfm_line(std::string_view line, const std::string& name = "<string>",
                                      std::size_t line_no = 1,
                                      std::size_t max_labels = kGfmMaxLabels);

// GFM instances and the 1-based line each came from.
struct GfmInstances {
  std::vector<GfmInput> instances;
  std::vector<std::size_t> lines;
};
// Every line of GFM JSON Lines text (above).
[[nodiscard]] GfmInstances parse_gfm_lines(std::string_view text,
                                           const std::string& name = "<string>",
                                           std::size_t max_labels = kGfmMaxLabels);

// Why `input` is not a distribution over label vectors, or "" when it is one. The checks and their
// tolerances, which accept P counted from samples (gfm_from_samples) and P printed with 6 decimals
// (each printed number off by up to 5e-7):
//   * every P[i][s] and p_zero finite and in [0, 1];
//   * row i: sum_s P[i][s] = P(y_i = 1) <= 1 - p_zero, within 1e-9 + 5e-7 (k + 1), k = the
//     row's non-zero entries;
//   * total mass: |p_zero + sum_{i,s} P[i][s] / (s + 1) - 1| <= 1e-6 + 5e-7 sum' 1 / (s + 1), the
//     sum' over the non-zero entries (sum_i P[i][s] / (s + 1) = P(|y| = s + 1)).
// Also InvalidArgument-free: a P of the wrong size is reported in the returned text. O(m^2).
[[nodiscard]] std::string check_gfm_distribution(const GfmInput& input);

// A multiclass row's sum check (`rateopt decide --model multiclass`): "" when the row sums to 1
// within 1e-6, or within 1e-3 with `normalize` (the row is then divided by its sum); else why not.
[[nodiscard]] std::string check_class_sum(std::vector<double>& row, bool normalize);

// ---- line batches: the streaming loop of `rateopt decide` -------------------------------------
enum class DecideInputModel { kIndependent, kMulticlass, kGfm };

struct DecideLinesOptions {
  DecideInputModel model = DecideInputModel::kIndependent;
  bool normalize = false;  // multiclass: check_class_sum's normalize
  GfmLimits limits;        // gfm
  bool check_sums = true;  // multiclass: check the row sums (false: parse only)
  bool decide = true;      // false: parse (and check sums) only, when an error is already due
  bool column = false;     // errors after parsing name line 0 (`--column`: one instance)
  int n_threads = 0;       // <= 0: all cores
};

struct DecideLineResult {
  enum class Status { kOk, kParseError, kSumError, kDecideError };
  Status status = Status::kOk;
  // kParseError: the parser's ParseError; kSumError / kDecideError: a ParseError naming the file
  // and line with check_class_sum's or decide's text (anything decide throws that is not
  // InvalidArgument is kept as it was thrown).
  std::exception_ptr error;
};

// Parses and decides lines[k], line line_numbers[k] of `name`, for every k in parallel (thread
// pool; results do not depend on n_threads). Each line is parsed (parse_decide_row or
// parse_gfm_record), a multiclass row's sum checked, then decided (decide_independent,
// decide_multiclass or decide_gfm_record); on_decision(k, decision, items) is called from the
// thread that decided line k (items: n, or the GFM line's m) and must be safe to call
// concurrently for different k. A GFM metric or option decide_gfm refuses is reported with
// decide_gfm's text at every line. Memory: one parsed instance per thread at a time.
[[nodiscard]] std::vector<DecideLineResult> decide_lines(
    std::span<const std::string_view> lines, std::span<const std::size_t> line_numbers,
    const std::string& name, const DecideMetric& metric, const DecideOptions& options,
    const DecideLinesOptions& how,
    const std::function<void(std::size_t, const Decision&, std::size_t)>& on_decision);

}  // namespace rateopt
