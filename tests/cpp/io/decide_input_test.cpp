// The text inputs of rateopt decide (decide_input.hpp): probability rows, --column, GFM JSON lines,
// and the issue 10 defects (blank lines, impossible P, fractional indices, indicator rows).
#include "rateopt/decide_input.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rateopt/decide.hpp"
#include "rateopt/error.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

TEST(DecideInput, RowsSpacesCommasAndTheirLines) {
  const auto in = parse_decide_instances("0.9 0.1,0.5\n1\t0 \r\n0.25\n", "p.txt");
  ASSERT_EQ(in.instances.size(), 3u);
  EXPECT_EQ(in.instances[0], (std::vector<double>{0.9, 0.1, 0.5}));
  EXPECT_EQ(in.instances[1], (std::vector<double>{1, 0}));
  EXPECT_EQ(in.instances[2], (std::vector<double>{0.25}));
  EXPECT_EQ(in.lines, (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_TRUE(parse_decide_instances("", "p.txt").instances.empty());
}

TEST(DecideInput, BlankLineInsideIsAnErrorNamingFileAndLine) {
  // Issue 10: a blank line was skipped, so output row 2 belonged to input line 3.
  for (const std::string text : {"0.9 0.1\n\n0.5\n", "0.9\n   \n0.5", "0.9\n\t\r\n0.5\n"}) {
    const std::string msg =
        error_of<ParseError>([&] { (void)parse_decide_instances(text, "p.txt"); });
    EXPECT_TRUE(contains(msg, "p.txt:2")) << msg;
    EXPECT_TRUE(contains(msg, "blank line: every line is one instance")) << msg;
  }
  const std::string first = error_of<ParseError>([] { (void)parse_decide_instances("\n0.5\n"); });
  EXPECT_TRUE(contains(first, ":1")) << first;
}

TEST(DecideInput, TrailingBlankLinesAreFine) {
  for (const std::string text : {"0.9 0.1\n0.5", "0.9 0.1\n0.5\n", "0.9 0.1\n0.5\n\n\n",
                                 "0.9 0.1\n0.5\n  \n\t\n", "0.9 0.1\r\n0.5\r\n\r\n"}) {
    const auto in = parse_decide_instances(text, "p.txt");
    EXPECT_EQ(in.instances.size(), 2u) << text;
    EXPECT_EQ(in.lines, (std::vector<std::size_t>{1, 2}));
  }
}

TEST(DecideInput, ColumnIsOneInstanceWithTheSameBlankLineRule) {
  const auto in = parse_decide_instances("0.9\n0.1\n0.8\n\n", "c.txt", true);
  ASSERT_EQ(in.instances.size(), 1u);
  EXPECT_EQ(in.instances[0], (std::vector<double>{0.9, 0.1, 0.8}));
  EXPECT_EQ(in.lines, (std::vector<std::size_t>{1}));
  const std::string blank =
      error_of<ParseError>([] { (void)parse_decide_instances("0.9\n\n0.8\n", "c.txt", true); });
  EXPECT_TRUE(contains(blank, "c.txt:2")) << blank;
  const std::string two =
      error_of<ParseError>([] { (void)parse_decide_instances("0.9\n0.1 0.2\n", "c.txt", true); });
  EXPECT_TRUE(contains(two, "c.txt:2") && contains(two, "one probability per line")) << two;
  EXPECT_TRUE(parse_decide_instances("", "c.txt", true).instances.at(0).empty());
}

TEST(DecideInput, BadProbabilitiesNameLineAndColumn) {
  const std::string range =
      error_of<ParseError>([] { (void)parse_decide_instances("0.1\n0.5 1.5\n", "p.txt"); });
  EXPECT_TRUE(contains(range, "p.txt:2:5") && contains(range, "[0, 1]")) << range;
  for (const std::string bad : {"nan", "inf", "x", "0.5.1", "1e999", "--1"}) {
    const std::string msg =
        error_of<ParseError>([&] { (void)parse_decide_instances("0.5 " + bad, "p.txt"); });
    EXPECT_TRUE(contains(msg, "p.txt:1:5")) << msg;
  }
}

TEST(DecideInputGfm, PFormAndLines) {
  const auto g = parse_gfm_lines(
      "{\"p0\": 0.5, \"P\": [[0.25, 0.25], [0, 0.25]]}\n{\"samples\": [[0], [1]]}\n\n", "g.jsonl");
  ASSERT_EQ(g.instances.size(), 2u);
  EXPECT_EQ(g.lines, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(g.instances[0].m, 2u);
  EXPECT_EQ(g.instances[0].p, (std::vector<double>{0.25, 0.25, 0, 0.25}));
  EXPECT_EQ(g.instances[0].p_zero, 0.5);
  const std::string blank =
      error_of<ParseError>([] { (void)parse_gfm_lines("{\"samples\": [[0]]}\n\n{}\n", "g"); });
  EXPECT_TRUE(contains(blank, "g:2") && contains(blank, "blank line")) << blank;
}

TEST(DecideInputGfm, ImpossiblePIsAnError) {
  // Issue 10: this P gave an expected F1 of 2.1.
  const std::string big = error_of<ParseError>(
      [] { (void)parse_gfm_line("{\"p0\": 0.9, \"P\": [[0.9, 0.9], [0.9, 0.9]]}", "g", 3); });
  EXPECT_TRUE(contains(big, "g:3") && contains(big, "row 0 of P sums to 1.8")) << big;
  // Rows fine, total mass not 1.
  const std::string mass = error_of<ParseError>(
      [] { (void)parse_gfm_line("{\"p0\": 0.2, \"P\": [[0.3, 0], [0.3, 0]]}", "g", 1); });
  EXPECT_TRUE(contains(mass, "sum to 0.8")) << mass;
  const std::string entry =
      error_of<ParseError>([] { (void)parse_gfm_line("{\"p0\": 0.5, \"P\": [[-0.1]]}", "g", 1); });
  EXPECT_TRUE(contains(entry, "P[0][0] is -0.1")) << entry;
  // JSON cannot write inf; an overflowing number is a JSON error naming the line.
  const std::string inf =
      error_of<ParseError>([] { (void)parse_gfm_line("{\"p0\": 0, \"P\": [[1e999]]}", "g", 1); });
  EXPECT_TRUE(contains(inf, "g:1") && contains(inf, "1e999")) << inf;
  GfmInput nan_p{1, {std::nan("")}, 0};
  EXPECT_TRUE(contains(check_gfm_distribution(nan_p), "P[0][0] is nan"));
  const std::string p0 =
      error_of<ParseError>([] { (void)parse_gfm_line("{\"p0\": 1.5, \"P\": [[0]]}", "g", 1); });
  EXPECT_TRUE(contains(p0, "p0 = P(y = 0) is 1.5")) << p0;
  const std::string str = error_of<ParseError>(
      [] { (void)parse_gfm_line("{\"p0\": 0.5, \"P\": [[\"0.5\"]]}", "g", 1); });
  EXPECT_TRUE(contains(str, "expected a probability")) << str;
}

// P counted from samples passes the check at full precision and printed with 6 decimals.
TEST(DecideInputGfm, LegitimatePCountedOrRoundedIsAccepted) {
  const std::vector<std::int64_t> indptr{0, 0, 1, 3, 6, 6, 8, 9};
  const std::vector<std::int32_t> indices{2, 0, 1, 0, 1, 2, 1, 2, 0};
  const std::vector<double> weights{1, 1, 1, 1, 1, 1, 1};  // sevenths: inexact in binary
  const GfmInput exact = gfm_from_samples(LabelSetsView{indptr, indices, 3}, weights, 3);
  EXPECT_EQ(check_gfm_distribution(exact), "");
  GfmInput rounded = exact;
  for (double& x : rounded.p) x = std::round(x * 1e6) / 1e6;
  rounded.p_zero = std::round(rounded.p_zero * 1e6) / 1e6;
  EXPECT_EQ(check_gfm_distribution(rounded), "");
  // ... and the JSON of the rounded P parses.
  std::string json = fmt::format("{{\"p0\": {:.6f}, \"P\": [", rounded.p_zero);
  for (std::size_t i = 0; i < 3; ++i)
    json += fmt::format("{}[{:.6f}, {:.6f}, {:.6f}]", i ? ", " : "", rounded.p[i * 3],
                        rounded.p[i * 3 + 1], rounded.p[i * 3 + 2]);
  json += "]}";
  EXPECT_EQ(parse_gfm_line(json, "g", 1).m, 3u);
  // Off by 1e-4 is not rounding.
  GfmInput off = exact;
  off.p_zero += 1e-4;
  EXPECT_TRUE(contains(check_gfm_distribution(off), "sum to"));
}

TEST(DecideInputGfm, FractionalLabelIndexIsAnError) {
  const std::string msg =
      error_of<ParseError>([] { (void)parse_gfm_line("{\"samples\": [[0, 1.5]]}", "g", 4); });
  EXPECT_TRUE(contains(msg, "g:4") && contains(msg, "1.5 is not an integer")) << msg;
  // An integral float is an index.
  EXPECT_EQ(parse_gfm_line("{\"samples\": [[0, 2.0]]}", "g", 1).m, 3u);
  for (const std::string bad : {"[[-1]]", "[[\"1\"]]", "[[1e300]]", "[[5000]]", "[[true]]"}) {
    const std::string e =
        error_of<ParseError>([&] { (void)parse_gfm_line("{\"samples\": " + bad + "}", "g", 1); });
    EXPECT_TRUE(contains(e, "g:1")) << e;
  }
}

TEST(DecideInputGfm, IndicatorRowsGivenAsSamplesAreAmbiguous) {
  const std::string msg =
      error_of<ParseError>([] { (void)parse_gfm_line("{\"samples\": [[1, 0], [0, 1]]}", "g", 1); });
  EXPECT_TRUE(contains(msg, "ambiguous") && contains(msg, "\"indicators\"") &&
              contains(msg, "\"m\""))
      << msg;
  // With "m" they are label-index lists; as "indicators" they are 0/1 rows.
  const GfmInput as_indices = parse_gfm_line("{\"samples\": [[1, 0], [0, 1]], \"m\": 2}", "g", 1);
  EXPECT_EQ(as_indices.p, (std::vector<double>{0, 1, 0, 1}));
  const GfmInput rows = parse_gfm_line("{\"indicators\": [[1, 0], [0, 1], [0, 0]]}", "g", 1);
  const std::vector<std::int64_t> indptr{0, 1, 2, 2};
  const std::vector<std::int32_t> indices{0, 1};
  const GfmInput ref = gfm_from_samples(LabelSetsView{indptr, indices, 2}, {}, 2);
  EXPECT_EQ(rows.p, ref.p);
  EXPECT_EQ(rows.p_zero, ref.p_zero);
  EXPECT_EQ(parse_gfm_line("{\"indicators\": [[true, false]]}", "g", 1).p,
            (std::vector<double>{1, 0, 0, 0}));
  for (const std::string bad :
       {"{\"indicators\": [[1, 2]]}", "{\"indicators\": [[1, 0], [1]]}", "{\"indicators\": []}",
        "{\"indicators\": [[1]], \"m\": 2}", "{\"indicators\": [[1]], \"samples\": [[0]]}"}) {
    const std::string e = error_of<ParseError>([&] { (void)parse_gfm_line(bad, "g", 1); });
    EXPECT_TRUE(contains(e, "g:1")) << e;
  }
  // Samples of length 1 or of mixed lengths are not ambiguous.
  EXPECT_EQ(parse_gfm_line("{\"samples\": [[1], [0]]}", "g", 1).m, 2u);
  EXPECT_EQ(parse_gfm_line("{\"samples\": [[1, 0], [0]]}", "g", 1).m, 2u);
}

// Issue 12: "format": "indicator" reads "samples" as 0/1 rows (as "indicators"), "format":
// "indices" as label-index lists; any other format, or a format without samples, names the line.
TEST(DecideInputGfm, SamplesFormatIndicatorOrIndices) {
  const std::string rows = "[[1, 0, 1], [0, 1, 0], [0, 0, 0]]";
  const GfmInput a =
      parse_gfm_line("{\"samples\": " + rows + ", \"format\": \"indicator\"}", "g", 1);
  const GfmInput b = parse_gfm_line("{\"indicators\": " + rows + "}", "g", 1);
  EXPECT_EQ(a.m, 3u);
  EXPECT_EQ(a.p, b.p);
  EXPECT_EQ(a.p_zero, b.p_zero);
  // The example: read as indicators E[F1] = 2/3 (it was 1.0 read as index lists).
  const GfmInput two =
      parse_gfm_line("{\"samples\": [[1, 0], [0, 1]], \"format\": \"indicator\"}", "g", 1);
  EXPECT_NEAR(decide_gfm(two, DecideMetric::from_name("f1")).expected, 2.0 / 3, 1e-15);
  const GfmInput idx =
      parse_gfm_line("{\"samples\": [[1, 0], [0, 1]], \"format\": \"indices\"}", "g", 1);
  EXPECT_EQ(idx.p, (std::vector<double>{0, 1, 0, 1}));
  for (const std::string bad :
       {"{\"samples\": [[1, 0]], \"format\": \"bits\"}", "{\"samples\": [[1, 0]], \"format\": 1}",
        "{\"p0\": 1, \"P\": [[0]], \"format\": \"indicator\"}",
        "{\"samples\": [[1, 2]], \"format\": \"indicator\"}",
        "{\"samples\": [[1, 0], [1]], \"format\": \"indicator\"}"}) {
    const std::string e = error_of<ParseError>([&] { (void)parse_gfm_line(bad, "g", 7); });
    EXPECT_TRUE(contains(e, "g:7")) << bad << ": " << e;
  }
}

TEST(DecideInputGfm, BadWeightsAndM) {
  for (const std::string bad :
       {"{\"samples\": [[0], [1]], \"weights\": [1, -1]}",
        "{\"samples\": [[0], [1]], \"weights\": [1, 1e999]}",
        "{\"samples\": [[0], [1]], \"weights\": [1]}", "{\"samples\": [[0]], \"weights\": [0]}",
        "{\"samples\": [[0]], \"weights\": [\"1\"]}", "{\"samples\": [[0]], \"m\": -1}",
        "{\"samples\": [[0]], \"m\": 1.5}", "{\"samples\": [[3]], \"m\": 2}",
        "{\"samples\": [[0]], \"m\": 100000000}", "{\"samples\": []}", "{\"samples\": [[0, 0]]}",
        "[1]", "{}", "{\"p0\": 1}", "not json"}) {
    const std::string e = error_of<ParseError>([&] { (void)parse_gfm_line(bad, "g", 2); });
    EXPECT_TRUE(contains(e, "g:2")) << bad << " -> " << e;
  }
  const std::string neg = error_of<ParseError>(
      [] { (void)parse_gfm_line("{\"samples\": [[0], [1]], \"weights\": [1, -1]}", "g", 1); });
  EXPECT_TRUE(contains(neg, "weight 1 is -1")) << neg;
  // max_labels caps m (P is formed as an m x m matrix).
  EXPECT_THROW((void)parse_gfm_line("{\"samples\": [[9]]}", "g", 1, 8), ParseError);
  EXPECT_EQ(parse_gfm_line("{\"samples\": [[7]]}", "g", 1, 8).m, 8u);
}

}  // namespace
}  // namespace rateopt
