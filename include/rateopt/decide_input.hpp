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
//   {"p0": P(y = 0), "P": [[...], ...]}   P[i][s] = P(y_i = 1, |y| = s + 1), m x m;
//   {"samples": [[label indices], ...], "weights": [...], "m": M}   weights and m optional;
//   {"indicators": [[0/1 per label], ...], "weights": [...]}         0/1 rows of length m.
// P must be a distribution (check_gfm_distribution below). "samples" are label-index lists;
// when every sample is a 0/1 list of one length >= 2 and neither "m" nor "format" is given, the
// line is ambiguous (indicator rows read as index lists) and rejected with a hint. "format":
// "indicator" reads "samples" as 0/1 rows (as "indicators"), "format": "indices" as index lists.
//
// Thread-safety: all functions are pure. Complexity: linear in the text, plus O(m^2) per GFM line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/decide.hpp"

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

// The largest m a GFM line may have by default (P is formed as an m x m matrix: 128 MiB).
inline constexpr std::size_t kGfmMaxLabels = 4096;

// One GFM JSON line (above) as a GfmInput. Samples and indicator rows are counted with
// gfm_from_samples. Labels are limited to m <= max_labels.
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

}  // namespace rateopt
