// Issue 12 item 3: the GFM line reader's fast path against the nlohmann::json reference (same
// records bit for bit, same errors), the m x S and sparse P forms, samples beyond the dense limit
// read without forming P, and decide_lines (rateopt decide's batches) against one-by-one decisions.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/decide_input.hpp"
#include "rateopt/error.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

using test::same_bits;

void expect_same_record(const GfmRecord& a, const GfmRecord& b, const std::string& line) {
  EXPECT_EQ(a.is_samples, b.is_samples) << line;
  EXPECT_EQ(a.matrix.m, b.matrix.m) << line;
  EXPECT_TRUE(same_bits(a.matrix.p, b.matrix.p)) << line;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.matrix.p_zero),
            std::bit_cast<std::uint64_t>(b.matrix.p_zero))
      << line;
  EXPECT_EQ(a.m, b.m) << line;
  EXPECT_EQ(a.indptr, b.indptr) << line;
  EXPECT_EQ(a.indices, b.indices) << line;
  EXPECT_TRUE(same_bits(a.weights, b.weights)) << line;
}

// The fast reader and the reference agree: the same record, or the same error text.
void expect_fast_equals_reference(const std::string& line, const GfmLimits& limits = {}) {
  GfmLimits reference = limits;
  reference.fast = false;
  std::string fast_error, reference_error;
  GfmRecord fast, ref;
  try {
    fast = parse_gfm_record(line, "g.jsonl", 9, limits);
  } catch (const ParseError& e) {
    fast_error = e.what();
  }
  try {
    ref = parse_gfm_record(line, "g.jsonl", 9, reference);
  } catch (const ParseError& e) {
    reference_error = e.what();
  }
  EXPECT_EQ(fast_error, reference_error) << line;
  if (fast_error.empty() && reference_error.empty()) expect_same_record(fast, ref, line);
}

TEST(GfmFastReader, AgreesWithTheReferenceOnCraftedLines) {
  for (const std::string line : {
           // accepted
           R"({"p0": 0.5, "P": [[0.25, 0.25], [0, 0.25]]})",
           R"({"P":[[0.25,0.25],[0,0.25]],"p0":0.5})",
           " \t{ \"p0\" : 0.5 , \"P\" : [ [ 0.5 ] , [ 0 ] ] } \r",
           R"({"p0": 1, "P": []})",
           R"({"p0": 0.5, "P": [[0.5], [0]], "m": 7, "weights": [1]})",
           R"({"p0": 5E-1, "P": [[2.5e-1, 0.25], [-0, 0.25e0]]})",
           R"({"p0": 0.4, "P": [[0.6], [0.3], [0]]})",
           R"({"p0": 0.0, "P": [[0.0, 1.0], [0.0 , 0.0], [0.05, 0.00]]})",
           R"({"p0": 0.0, "P": [[1.0, 0.0e5], [0.0, -0.0]]})",
           R"({"p0": 0.0, "P": [[1.0, 0.0], [0.0, 0.0x]]})",
           R"({"p0": 0.0, "P": [[1.0, 0.0], [0.0, 0.0]], "weights": [0.0]})",
           R"({"p0": 0.4, "m": 3, "P_sparse": [[0, 0, 0.6], [1, 0, 0.3]]})",
           R"({"p0": 1, "m": 0, "P_sparse": []})",
           R"({"samples": [[0, 2], [1], []], "weights": [1, 2, 0.5]})",
           R"({"samples": [[2, 0], [1]], "m": 5})",
           R"({"samples": [[1, 0], [0, 1]], "format": "indices"})",
           R"({"samples": [[1, 0], [0, 1]], "format": "indicator", "weights": [3, 1]})",
           R"({"indicators": [[1, 0, 1], [0, 0, 0]], "m": 3})",
           R"({"samples": [[0]], "weights": [-0]})",
           R"({"samples": [[0], [1]], "weights": [0, 18446744073709551615]})",
           R"({"samples": [[0], [1]], "weights": [1e-300, 123456789012345678901234567890]})",
           R"({"samples": [[3]], "p0": 0.1})",
           // another reader's business: unknown keys, booleans, floats as indices, duplicates
           R"({"samples": [[0]], "id": "x"})",
           R"({"indicators": [[true, false]]})",
           R"({"samples": [[2.0, 1]]})",
           R"({"samples": [[0]], "samples": [[1]]})",
           R"({"samples": [[0]], "format": "ind\u0069ces"})",
           "\xEF\xBB\xBF{\"samples\": [[0]]}",
           // errors
           R"({"p0": 0.9, "P": [[0.9, 0.9], [0.9, 0.9]]})",
           R"({"p0": 0.5, "P": [[0.5, 0.1], [0.2]]})",
           R"({"p0": 0.5, "P": [[0.5, 0, 0]]})",
           R"({"p0": 0.5, "P": [[0.5], [0, 0]]})",
           R"({"p0": 0, "P": [[1e999]]})",
           R"({"p0": 0.5, "P": [["0.5"]]})",
           R"({"P": [[1]]})",
           R"({"p0": 0.4, "m": 3, "P_sparse": [[0, 0, 0.6], [0, 0, 0.3]]})",
           R"({"p0": 0.4, "m": 3, "P_sparse": [[0, 3, 0.6]]})",
           R"({"p0": 0.4, "P_sparse": [[0, 0, 0.6]]})",
           R"({"m": 1, "P_sparse": [[0, 0, 1]]})",
           R"({"p0": 0, "m": 1, "P_sparse": [[0, 0]]})",
           R"({"p0": 0, "m": 1, "P_sparse": [[-1, 0, 1]]})",
           R"({"p0": 0.5, "m": 1, "P_sparse": [[0, 0, 0.5]], "P": [[0.5]]})",
           R"({"samples": [[1, 0], [0, 1]]})",
           R"({"samples": [[0, 0]]})",
           R"({"samples": [[-1]]})",
           R"({"samples": [[5]], "m": 3})",
           R"({"samples": [[0]], "m": 1.5})",
           R"({"samples": []})",
           R"({"samples": [[0]], "weights": [0]})",
           R"({"samples": [[0], [1]], "weights": [1]})",
           R"({"samples": [[0], [1]], "weights": [1, -1]})",
           R"({"samples": [[0], [1]], "weights": [1.7e308, 1.7e308]})",
           R"({"samples": [[1, 2]], "format": "indicator"})",
           R"({"samples": [[1, 0]], "format": "bits"})",
           R"({"indicators": [[1]], "m": 2})",
           R"({"indicators": []})",
           R"({"samples": [[0]]} x)",
           R"({"samples": [[01]]})",
           R"({"samples": [[+1]]})",
           R"({"p0": .5, "P": [[0.5]]})",
           R"({"p0": 1., "P": [[0]]})",
           R"({"p0": NaN, "P": [[0]]})",
           R"({"samples": [[0]],})",
           R"({,})",
           R"({})",
           R"([1, 2])",
           "",
           "not json",
       }) {
    expect_fast_equals_reference(line);
  }
  // Limits: the dense limit for P forms, the samples limit for samples.
  expect_fast_equals_reference(R"({"samples": [[9]]})", GfmLimits{4, 8});
  expect_fast_equals_reference(R"({"samples": [[9]]})", GfmLimits{4, 16});
  expect_fast_equals_reference(R"({"p0": 0.5, "P": [[0.5], [0], [0], [0], [0]]})",
                               GfmLimits{4, 16});
}

TEST(GfmFastReader, AgreesWithTheReferenceOnRandomLines) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> unif(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t m = 1 + rng() % 9;
    std::string line;
    if (trial % 3 == 0) {  // samples, printed with random precision
      const std::size_t n = 1 + rng() % 6;
      line = "{\"samples\": [";
      std::string weights;
      for (std::size_t j = 0; j < n; ++j) {
        line += j ? ", [" : "[";
        int count = 0;
        for (std::size_t i = 0; i < m; ++i)
          if (unif(rng) < 0.4) line += fmt::format("{}{}", count++ ? ", " : "", i);
        line += "]";
        weights += fmt::format("{}{:.{}g}", j ? ", " : "", unif(rng) * 10, 1 + rng() % 17);
      }
      line += "]";
      if (rng() % 2) line += ", \"weights\": [" + weights + "]";
      if (rng() % 2) line += fmt::format(", \"m\": {}", m + rng() % 2);
      line += "}";
    } else {  // P counted from random label vectors, as m x S, dense or sparse
      const std::size_t n = 1 + rng() % 20;
      std::vector<double> p(m * m, 0);
      double p0 = 0;
      for (std::size_t j = 0; j < n; ++j) {
        std::vector<std::size_t> on;
        for (std::size_t i = 0; i < m; ++i)
          if (unif(rng) < 0.3) on.push_back(i);
        if (on.empty()) p0 += 1.0 / static_cast<double>(n);
        for (std::size_t i : on) p[i * m + on.size() - 1] += 1.0 / static_cast<double>(n);
      }
      const int digits = trial % 2 ? 17 : 6;
      std::size_t width = 0;
      for (std::size_t s = 0; s < m; ++s)
        for (std::size_t i = 0; i < m; ++i)
          if (p[i * m + s] != 0) width = s + 1;
      if (trial % 3 == 1) {
        line = fmt::format("{{\"p0\": {:.{}g}, \"P\": [", p0, digits);
        const std::size_t cols = rng() % 2 ? m : width;
        for (std::size_t i = 0; i < m; ++i) {
          line += i ? ", [" : "[";
          for (std::size_t s = 0; s < cols; ++s)
            line += fmt::format("{}{:.{}g}", s ? ", " : "", p[i * m + s], digits);
          line += "]";
        }
        line += "]}";
      } else {
        line = fmt::format("{{\"m\": {}, \"p0\": {:.{}g}, \"P_sparse\": [", m, p0, digits);
        int count = 0;
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t s = 0; s < m; ++s)
            if (p[i * m + s] != 0)
              line += fmt::format("{}[{}, {}, {:.{}g}]", count++ ? ", " : "", i, s, p[i * m + s],
                                  digits);
        line += "]}";
      }
    }
    expect_fast_equals_reference(line);
    // One byte changed: mostly errors, which must read the same.
    std::string broken = line;
    broken[rng() % broken.size()] = "0-1.e]}[,\" x"[rng() % 12];
    expect_fast_equals_reference(broken);
  }
}

// Dense P as json.dumps prints it (zeros as "0.0", ", " between numbers): the fast reader takes
// runs of ", 0.0" several at a time and checks only the non-zero entries (also those of P_sparse
// written in row-major order). Runs of every length around its 8- and 3-at-a-time steps (m up to
// 24), zero spellings it must leave to number() ("0.00", "0.0e0", "-0.0", "0.05"), odd spacing,
// and P that breaks each check (a value out of range, a row over 1 - p0, a total off 1, the first
// failing row before or after an out-of-range entry) give the reference reader's record or error
// text.
TEST(GfmFastReader, AgreesWithTheReferenceOnJsonDumpsZeroRuns) {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> unif(0, 1);
  const char* const zero_spellings[] = {"0.0", "0.0", "0.0", "0.0", "0.00", "0.0e0", "-0.0", "0"};
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t m = 1 + rng() % 24;
    std::vector<double> p(m * m, 0);
    double p0 = 0;
    const std::size_t n = 1 + rng() % 6;
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<std::size_t> on;
      for (std::size_t i = 0; i < m; ++i)
        if (unif(rng) < 0.15) on.push_back(i);
      if (on.empty()) p0 += 1.0 / static_cast<double>(n);
      for (std::size_t i : on) p[i * m + on.size() - 1] += 1.0 / static_cast<double>(n);
    }
    switch (trial % 5) {  // break one check in some lines
      case 1:
        p[rng() % (m * m)] = trial % 2 ? -0.25 : 1.5;
        break;
      case 2:
        p[(rng() % m) * m] += 0.75;
        break;
      case 3:
        p0 = std::min(1.0, p0 + 0.125);
        break;
      default:
        break;
    }
    const bool odd = trial % 7 == 0;  // other zero spellings and spacing
    std::string line =
        fmt::format("{{\"p0\": {}, \"P\": [", p0 == 0 ? "0.0" : fmt::format("{}", p0));
    for (std::size_t i = 0; i < m; ++i) {
      line += i ? ", [" : "[";
      for (std::size_t s = 0; s < m; ++s) {
        if (s) line += odd && rng() % 5 == 0 ? " ,  " : ", ";
        const double x = p[i * m + s];
        line += x != 0 ? fmt::format("{}", x) : odd ? zero_spellings[rng() % 8] : "0.0";
      }
      line += "]";
    }
    line += "]}";
    expect_fast_equals_reference(line);
    // The same P as P_sparse, in row-major order (checked entry by entry) or shuffled.
    std::vector<std::string> entries;
    for (std::size_t k = 0; k < m * m; ++k)
      if (p[k] != 0 || rng() % 16 == 0)
        entries.push_back(fmt::format("[{}, {}, {}]", k / m, k % m, p[k]));
    if (trial % 4 == 3) std::shuffle(entries.begin(), entries.end(), rng);
    std::string sparse = fmt::format("{{\"p0\": {}, \"m\": {}, \"P_sparse\": [", p0, m);
    for (std::size_t k = 0; k < entries.size(); ++k) sparse += (k ? ", " : "") + entries[k];
    expect_fast_equals_reference(sparse + "]}");
  }
  for (
      const std::string line : {
          R"({"p0": 0.0, "P": [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]})",
          R"({"p0": 0.0, "P": [[1.0, 0.0, 0.0, 0.0, ], [0.0, 0.0, 0.0, 0.0]]})",
          R"({"p0": 0.0, "P": [[1.0, 0.0, 0.0, 0.0, 0.0x], [0.0, 0.0, 0.0, 0.0, 0.0]]})",
          R"({"p0": 0.0, "P": [[1.0, 0.0, 0.0, 0.0, 0.05], [0.0, 0.0, 0.0, 0.0, 0.0]]})",
          R"({"p0": 0.0, "P": [[1.0, 0.0, 0.0, 0.0, 0.0,], [0.0, 0.0, 0.0, 0.0, 0.0]]})",
          R"({"p0": 0.0, "P": [[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0])",
          R"({"p0": 0.0, "P": [[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]])",
          R"({"p0": 0.5, "P": [[0.9, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, -0.5], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]})",
          R"({"p0": 0.5, "P": [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0], [0.9, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]})",
      }) {
    expect_fast_equals_reference(line);
  }
  // Runs just below, at and above the 8-at-a-time step, ended by ']', by another zero, by a
  // non-zero and by a token that is not a number.
  for (const int run : {7, 8, 9, 15, 16, 17, 24}) {
    for (const std::string tail : {"]", ", 0.0]", ", 0.5]", ", 0.0x]", ",0.0]"}) {
      std::string row = "[0.25";
      for (int k = 0; k < run; ++k) row += ", 0.0";
      row += tail;
      expect_fast_equals_reference(R"({"p0": 0.75, "P": [)" + row + "]}");
      expect_fast_equals_reference(R"({"p0": 0.5, "P": [)" + row + ", " + row + "]}");
    }
  }
}

TEST(GfmFastReader, NumbersReadAsTheReferenceReadsThem) {
  // Weights in every notation, short and long, tiny and huge: the fast path (Clinger's, then
  // from_chars) gives the reference's doubles bit for bit.
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> unif(0, 1);
  for (int trial = 0; trial < 40; ++trial) {
    std::string samples, weights;
    for (int k = 0; k < 200; ++k) {
      const double x = unif(rng) * std::pow(10.0, static_cast<double>(rng() % 60) - 30);
      const int digits = 1 + static_cast<int>(rng() % 19);
      std::string w;
      switch (rng() % 5) {
        case 0:
          w = fmt::format("{:.{}g}", x, digits);
          break;
        case 1:
          w = fmt::format("{:.{}f}", x, digits % 8);
          break;
        case 2:
          w = fmt::format("{:.{}e}", x, digits);
          break;
        case 3:
          w = fmt::format("{:.{}E}", x, digits);
          break;
        default:
          w = fmt::format("{}", x);
          break;
      }
      samples += k ? ", [0]" : "[0]";
      weights += (k ? ", " : "") + w;
    }
    expect_fast_equals_reference("{\"samples\": [" + samples + "], \"weights\": [" + weights +
                                 "]}");
  }
  for (const std::string w :
       {"0.1", "0.3", "1.0000000000000002", "9007199254740993.5", "0.000000000000000000001", "1e22",
        "1e23", "1.5e-22", "123456789e-30", "4.9e-324", "2.2250738585072014e-308",
        "1.7976931348623157e308", "0.0", "-0.0", "12345678901234567890.5", "1e-0005"}) {
    expect_fast_equals_reference("{\"samples\": [[0], [1]], \"weights\": [1, " + w + "]}");
    expect_fast_equals_reference("{\"p0\": " + w + ", \"P\": [[0]]}");
  }
}

TEST(GfmForms, MxSAndSparseEqualTheSquareForm) {
  const GfmInput dense =
      parse_gfm_line(R"({"p0": 0.3, "P": [[0.3, 0.2, 0], [0.2, 0, 0], [0, 0.2, 0]]})", "g", 1);
  const GfmInput narrow =
      parse_gfm_line(R"({"p0": 0.3, "P": [[0.3, 0.2], [0.2, 0], [0, 0.2]]})", "g", 1);
  const GfmInput sparse = parse_gfm_line(
      R"({"p0": 0.3, "m": 3, "P_sparse": [[2, 1, 0.2], [0, 0, 0.3], [0, 1, 0.2], [1, 0, 0.2]]})",
      "g", 1);
  for (const GfmInput* g : {&narrow, &sparse}) {
    EXPECT_EQ(g->m, 3u);
    EXPECT_EQ(g->p, dense.p);
    EXPECT_EQ(g->p_zero, dense.p_zero);
  }
  // The distribution check applies to every form.
  for (const std::string bad : {R"({"p0": 0.9, "P": [[0.9], [0.9]]})",
                                R"({"p0": 0.9, "m": 2, "P_sparse": [[0, 0, 0.9], [1, 0, 0.9]]})"}) {
    const std::string e = error_of<ParseError>([&] { (void)parse_gfm_line(bad, "g", 4); });
    EXPECT_TRUE(contains(e, "g:4") && contains(e, "impossible GFM input")) << e;
  }
  const std::string ragged = error_of<ParseError>(
      [] { (void)parse_gfm_line(R"({"p0": 0.5, "P": [[0.5], [0, 0], [0]]})", "g", 2); });
  EXPECT_TRUE(contains(ragged, "g:2") && contains(ragged, "row 1 of \"P\" must have 1 entries"))
      << ragged;
  const std::string twice = error_of<ParseError>([] {
    (void)parse_gfm_line(R"({"p0": 0.5, "m": 1, "P_sparse": [[0, 0, 0.5], [0, 0, 0.5]]})", "g", 1);
  });
  EXPECT_TRUE(contains(twice, "a second time")) << twice;
  const std::string no_m = error_of<ParseError>(
      [] { (void)parse_gfm_line(R"({"p0": 0.5, "P_sparse": [[0, 0, 0.5]]})", "g", 1); });
  EXPECT_TRUE(contains(no_m, "\"m\"")) << no_m;
}

TEST(GfmForms, SamplesBeyondTheDenseLimitAreReadWithoutP) {
  // m = 20,000 (P would be 3.2 GB): read as label sets, decided by decide_gfm_samples.
  std::string line = "{\"m\": 20000, \"samples\": [";
  std::mt19937_64 rng(3);
  for (int j = 0; j < 200; ++j) {
    line += j ? ", [" : "[";
    const std::size_t first = rng() % 19990;
    for (int t = 0; t < 5; ++t) line += fmt::format("{}{}", t ? ", " : "", first + 2 * t);
    line += "]";
  }
  line += "]}";
  const GfmRecord rec = parse_gfm_record(line, "g", 1);
  EXPECT_TRUE(rec.is_samples);
  EXPECT_EQ(rec.m, 20000u);
  EXPECT_TRUE(rec.matrix.p.empty());
  const DecideMetric f1 = DecideMetric::from_name("f1");
  const Decision a = decide_gfm_record(rec, f1);
  const Decision b = decide_gfm_samples(rec.samples(), rec.weights, rec.m, f1);
  EXPECT_EQ(a.selected, b.selected);
  EXPECT_EQ(a.expected, b.expected);
  // parse_gfm_line forms P, so it keeps its limit.
  EXPECT_THROW((void)parse_gfm_line(line, "g", 1), ParseError);
  // At small m the samples path is bit-identical to the P formed from them.
  const std::string small =
      R"({"samples": [[0, 2], [1], [], [2, 0, 1]], "weights": [1, 2, 0.5, 3]})";
  const DecideOptions all_k{.all_k = true};
  const Decision via_record = decide_gfm_record(parse_gfm_record(small), f1, all_k);
  const Decision via_p = decide_gfm(parse_gfm_line(small), f1, all_k);
  EXPECT_EQ(via_record.selected, via_p.selected);
  EXPECT_TRUE(same_bits(via_record.expected_by_k, via_p.expected_by_k));
}

TEST(DecideLines, SameDecisionsAsOneByOneForAnyThreadCount) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unif(0, 1);
  std::vector<std::string> text;
  for (int k = 0; k < 300; ++k) {
    std::string row;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) row += fmt::format("{}{:.17g}", i ? " " : "", unif(rng));
    text.push_back(row);
  }
  std::vector<std::string_view> lines(text.begin(), text.end());
  std::vector<std::size_t> numbers;
  for (std::size_t k = 0; k < lines.size(); ++k) numbers.push_back(k + 1);
  const DecideMetric f1 = DecideMetric::from_name("f1");
  for (const int threads : {1, 2, 4}) {
    DecideLinesOptions how;
    how.n_threads = threads;
    std::vector<Decision> got(lines.size());
    std::vector<std::size_t> sizes(lines.size());
    const auto results = decide_lines(lines, numbers, "p.txt", f1, {}, how,
                                      [&](std::size_t k, const Decision& d, std::size_t items) {
                                        got[k] = d;
                                        sizes[k] = items;
                                      });
    for (std::size_t k = 0; k < lines.size(); ++k) {
      ASSERT_EQ(results[k].status, DecideLineResult::Status::kOk);
      std::vector<double> row;
      (void)parse_decide_row(lines[k], "p.txt", k + 1, row);
      const Decision ref = decide_independent(row, f1);
      EXPECT_EQ(sizes[k], row.size());
      EXPECT_EQ(got[k].selected, ref.selected);
      EXPECT_EQ(got[k].expected, ref.expected);
    }
  }
  // Errors name the file and line; a metric GFM refuses is decide_gfm's text at each line.
  const std::vector<std::string_view> bad{"0.5 0.5", "0.5 2", "0.3 0.3"};
  const std::vector<std::size_t> at{10, 11, 12};
  DecideLinesOptions mc;
  mc.model = DecideInputModel::kMulticlass;
  const auto r = decide_lines(bad, at, "m.txt", f1, {}, mc, nullptr);
  EXPECT_EQ(r[0].status, DecideLineResult::Status::kOk);
  EXPECT_EQ(r[1].status, DecideLineResult::Status::kParseError);
  EXPECT_EQ(r[2].status, DecideLineResult::Status::kSumError);
  const std::string sum = error_of<ParseError>([&] { std::rethrow_exception(r[2].error); });
  EXPECT_TRUE(contains(sum, "m.txt:12") && contains(sum, "sum to 0.6")) << sum;
  DecideLinesOptions gfm;
  gfm.model = DecideInputModel::kGfm;
  const std::vector<std::string_view> samples{R"({"samples": [[0]]})"};
  const std::vector<std::size_t> line7{7};
  const auto g =
      decide_lines(samples, line7, "g.jsonl", DecideMetric::from_name("jaccard"), {}, gfm, nullptr);
  ASSERT_EQ(g[0].status, DecideLineResult::Status::kDecideError);
  const std::string refused = error_of<ParseError>([&] { std::rethrow_exception(g[0].error); });
  EXPECT_TRUE(contains(refused, "g.jsonl:7") && contains(refused, "decide_gfm: GFM maximises"))
      << refused;
}

}  // namespace
}  // namespace rateopt
