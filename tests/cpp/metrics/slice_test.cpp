// Slice parsing/printing and slice_mask on a small hand-built dataset.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rateopt/dataset.hpp"
#include "rateopt/error.hpp"
#include "rateopt/metrics.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using Mask = std::vector<std::uint8_t>;

using test::make_column;

// Six people. Labels use LIBSVM-style names {"-1", "+1"}; "?" is a missing value.
//   row  sex  race   age   baseline  label  f1  f2 (CSR; absent = 0; row 5 stores an explicit 0)
//   0    F    White  30    1         +1     1   1
//   1    M    Black  40    0         -1     0   -
//   2    F    Black  30.0  1.0       -1     1   2
//   3    M    White  25    0         +1     0   1
//   4    F    ?      ?     0         +1     0   -
//   5    M    White  40    1         -1     1   0 (stored)
Dataset people(bool sparse = true) {
  Labels y;
  y.kind = LabelKind::kBinary;
  y.values = {1, 0, 0, 1, 1, 0};
  y.names = {"-1", "+1"};
  FeatureMatrix x =
      sparse ? FeatureMatrix::csr({0, 2, 2, 4, 5, 5, 7}, {0, 1, 0, 1, 1, 0, 1},
                                  {1, 1, 1, 2, 1, 1, 0}, 3)
             : FeatureMatrix::dense({1, 1, 0, 0, 0, 0, 1, 2, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}, 6, 3);
  Dataset ds(std::move(x), y);
  ds.add_column(make_column("sex", {"F", "M", "F", "M", "F", "M"}));
  ds.add_column(make_column("race", {"White", "Black", "Black", "White", "?", "White"}));
  ds.add_column(make_column("age", {"30", "40", "30.0", "25", "?", "40"}));
  ds.add_column(make_column("baseline", {"1", "0", "1.0", "0", "0", "1"}));
  ds.encoding().feature_names = {"f1", "f2", "f3"};
  ds.encoding().num_features = 3;
  ds.set_source("people.csv");
  return ds;
}

Mask mask_of(const Dataset& ds, const std::string& text) {
  return slice_mask(ds, Slice::parse(text));
}

// Expects NotFound whose message contains every needle.
void expect_not_found(const Dataset& ds, const std::string& text,
                      const std::vector<std::string>& needles) {
  SCOPED_TRACE(text);
  try {
    (void)mask_of(ds, text);
    ADD_FAILURE() << "expected NotFound";
  } catch (const NotFound& e) {
    const std::string what = e.what();
    for (const auto& needle : needles)
      EXPECT_NE(what.find(needle), std::string::npos) << "'" << needle << "' not in: " << what;
  }
}

// Expects ParseError at 1-based column `column`.
void expect_parse_error(const std::string& text, std::size_t column) {
  SCOPED_TRACE(text);
  try {
    (void)Slice::parse(text);
    ADD_FAILURE() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_EQ(e.line(), 1u);
    EXPECT_NE(std::string(e.what()).find("[rateopt.parse_error]"), std::string::npos);
  }
}

TEST(SliceParse, ConditionsAndSeparators) {
  const Slice s = Slice::parse("sex=Female,race=White");
  ASSERT_EQ(s.conditions.size(), 2u);
  EXPECT_EQ(s.conditions[0], (Condition{"sex", "Female"}));
  EXPECT_EQ(s.conditions[1], (Condition{"race", "White"}));
  EXPECT_EQ(Slice::parse("sex=Female&race=White"), s);
  EXPECT_EQ(Slice::parse("  sex = Female  &\trace= White "), s);
  EXPECT_EQ(Slice::parse("sex=\"Female\",race='White'"), s);
  EXPECT_TRUE(Slice::parse("").empty());
  EXPECT_TRUE(Slice::parse("   ").empty());
  EXPECT_EQ(s.to_string(), "sex=Female,race=White");
}

TEST(SliceParse, QuotedTokens) {
  const Slice s = Slice::parse(R"(income="<=50K", 'native country'='United States', x="a,b&c")");
  ASSERT_EQ(s.conditions.size(), 3u);
  EXPECT_EQ(s.conditions[0], (Condition{"income", "<=50K"}));
  EXPECT_EQ(s.conditions[1], (Condition{"native country", "United States"}));
  EXPECT_EQ(s.conditions[2], (Condition{"x", "a,b&c"}));
  // Inner spaces of bare tokens are kept; escapes inside quotes.
  EXPECT_EQ(Slice::parse("native country = United States").conditions[0],
            (Condition{"native country", "United States"}));
  EXPECT_EQ(Slice::parse(R"(q="say \"hi\" \\ o'k")").conditions[0],
            (Condition{"q", R"(say "hi" \ o'k)"}));
  EXPECT_EQ(Slice::parse("x=''").conditions[0], (Condition{"x", ""}));
  // One-hot feature names contain '=' and need quotes.
  EXPECT_EQ(Slice::parse("\"sex=Male\"=1").conditions[0], (Condition{"sex=Male", "1"}));
}

TEST(SliceParse, ToStringRoundTrips) {
  const std::vector<Slice> slices{
      Slice{},
      Slice{{{"sex", "F"}}},
      Slice{{{"income", "<=50K"}, {"native country", "United States"}}},
      Slice{{{"sex=Male", "1"}, {"q", R"(a"b'c\d)"}, {"e", ""}, {"s", " padded "}}},
      Slice{{{"amp&", "x,y"}, {"t", "tab\tinside"}}},
  };
  for (const auto& s : slices) {
    SCOPED_TRACE(s.to_string());
    EXPECT_EQ(Slice::parse(s.to_string()), s);
  }
  EXPECT_EQ(slices[2].to_string(), "income=\"<=50K\",native country=United States");
  // Random tokens over an alphabet full of special characters.
  const std::string alphabet = "ab =,&\"'\\\t1.";
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 500; ++trial) {
    Slice s;
    const auto k = 1 + rng() % 3;
    for (std::size_t c = 0; c < k; ++c) {
      Condition cond;
      const auto len_name = 1 + rng() % 5;
      const auto len_value = rng() % 5;
      for (std::size_t i = 0; i < len_name; ++i) cond.column += alphabet[rng() % alphabet.size()];
      for (std::size_t i = 0; i < len_value; ++i) cond.value += alphabet[rng() % alphabet.size()];
      s.conditions.push_back(cond);
    }
    ASSERT_EQ(Slice::parse(s.to_string()), s) << s.to_string();
  }
}

TEST(SliceParse, ErrorsPointAtTheBadCharacter) {
  expect_parse_error("sex=", 5);           // value missing at the end
  expect_parse_error("=x", 1);             // column name missing
  expect_parse_error("sex=F,", 7);         // condition missing after ','
  expect_parse_error("sex=F,,race=W", 7);  // empty condition
  expect_parse_error("sex=\"F", 5);        // unbalanced quote: the opening quote
  expect_parse_error("sex='F", 5);
  expect_parse_error("\"sex=F", 1);
  expect_parse_error("sex", 4);            // no '='
  expect_parse_error("sex=F race=W", 11);  // missing separator: the second '='
  expect_parse_error("sex=F\"x\"", 6);     // quote inside a bare value
  expect_parse_error("\"sex\"x=1", 6);     // junk after a quoted name
  expect_parse_error("sex= ,race=W", 6);   // empty value before ','
  expect_parse_error("\"\"=1", 1);         // empty quoted column name
  try {
    (void)Slice::parse("sex=");
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("sex="), std::string::npos);  // quotes the text
  }
}

TEST(SliceMask, Columns) {
  const Dataset ds = people();
  EXPECT_EQ(mask_of(ds, ""), (Mask{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(mask_of(ds, "sex=F"), (Mask{1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(mask_of(ds, "race=White"), (Mask{1, 0, 0, 1, 0, 1}));  // row 4 missing
  EXPECT_EQ(mask_of(ds, "sex=F,race=White"), (Mask{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(mask_of(ds, "sex=M & race=White"), (Mask{0, 0, 0, 1, 0, 1}));
  EXPECT_EQ(mask_of(ds, "sex=F,sex=M"), (Mask{0, 0, 0, 0, 0, 0}));
}

TEST(SliceMask, NumericColumnsMatchNumerically) {
  const Dataset ds = people();
  EXPECT_EQ(mask_of(ds, "age=30"), (Mask{1, 0, 1, 0, 0, 0}));  // "30" and "30.0"
  EXPECT_EQ(mask_of(ds, "age=30.0"), (Mask{1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(mask_of(ds, "age=3e1"), (Mask{1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(mask_of(ds, "baseline=1"), (Mask{1, 0, 1, 0, 0, 1}));
  EXPECT_EQ(mask_of(ds, "baseline=1.0"), (Mask{1, 0, 1, 0, 0, 1}));
  EXPECT_EQ(mask_of(ds, "baseline=0"), (Mask{0, 1, 0, 1, 1, 0}));
  EXPECT_EQ(mask_of(ds, "baseline=0,sex=F"), (Mask{0, 0, 0, 0, 1, 0}));
}

TEST(SliceMask, BinaryLabels) {
  const Dataset ds = people();
  const Mask pos{1, 0, 0, 1, 1, 0};
  const Mask neg{0, 1, 1, 0, 0, 1};
  EXPECT_EQ(mask_of(ds, "label=1"), pos);
  EXPECT_EQ(mask_of(ds, "label=1.0"), pos);
  EXPECT_EQ(mask_of(ds, "label=+1"), pos);  // the label name (also numerically 1)
  EXPECT_EQ(mask_of(ds, "label=0"), neg);
  EXPECT_EQ(mask_of(ds, "label=-1"), neg);  // the label name
  EXPECT_EQ(mask_of(ds, "label=1,sex=F"), (Mask{1, 0, 0, 0, 1, 0}));
}

TEST(SliceMask, Features) {
  for (bool sparse : {true, false}) {
    SCOPED_TRACE(sparse ? "csr" : "dense");
    const Dataset ds = people(sparse);
    EXPECT_EQ(mask_of(ds, "f2=1"), (Mask{1, 0, 0, 1, 0, 0}));
    EXPECT_EQ(mask_of(ds, "f2=1.0"), (Mask{1, 0, 0, 1, 0, 0}));
    EXPECT_EQ(mask_of(ds, "f2=0"), (Mask{0, 1, 0, 0, 1, 1}));  // absent and stored zeros
    EXPECT_EQ(mask_of(ds, "f2=2"), (Mask{0, 0, 1, 0, 0, 0}));
    EXPECT_EQ(mask_of(ds, "f1=1"), (Mask{1, 0, 1, 0, 0, 1}));
    EXPECT_EQ(mask_of(ds, "f3=0"), (Mask{1, 1, 1, 1, 1, 1}));
    EXPECT_EQ(mask_of(ds, "f1=1,f2=1"), (Mask{1, 0, 0, 0, 0, 0}));
  }
  // Without feature names, LIBSVM names f<1-based index> still resolve.
  Dataset ds = people();
  ds.encoding().feature_names.clear();
  EXPECT_EQ(mask_of(ds, "f2=2"), (Mask{0, 0, 1, 0, 0, 0}));
  expect_not_found(ds, "f4=1", {"'f4'", "f1 .. f3"});
  expect_not_found(ds, "f0=1", {"'f0'"});
  expect_not_found(ds, "f02=1", {"'f02'"});
}

TEST(SliceMask, CsrMatchesAtOnRandomMatrices) {
  std::mt19937_64 rng(5);
  const std::size_t rows = 200, cols = 6;
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<double> values;
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      if (rng() % 3 == 0) {
        indices.push_back(static_cast<std::int32_t>(j));
        values.push_back(static_cast<double>(rng() % 3));  // includes stored zeros
      }
    }
    indptr.push_back(static_cast<std::int64_t>(indices.size()));
  }
  Dataset ds(FeatureMatrix::csr(indptr, indices, values, cols), Labels{});
  for (std::size_t j = 0; j < cols; ++j) {
    for (int v = 0; v < 3; ++v) {
      const std::string text = "f" + std::to_string(j + 1) + "=" + std::to_string(v);
      SCOPED_TRACE(text);
      const Mask m = mask_of(ds, text);
      for (std::size_t i = 0; i < rows; ++i)
        ASSERT_EQ(m[i], ds.features().at(i, j) == v ? 1 : 0) << "row " << i;
    }
  }
}

TEST(SliceMask, MulticlassAndMultilabelLabels) {
  Labels y;
  y.kind = LabelKind::kMulticlass;
  y.values = {0, 2, 1, 2};
  y.names = {"cat", "dog", "3"};
  const Dataset mc(FeatureMatrix::dense({0, 0, 0, 0}, 4, 1), y);
  EXPECT_EQ(mask_of(mc, "label=dog"), (Mask{0, 0, 1, 0}));
  EXPECT_EQ(mask_of(mc, "label=3"), (Mask{0, 1, 0, 1}));  // a name wins over an index
  EXPECT_EQ(mask_of(mc, "label=0"), (Mask{1, 0, 0, 0}));  // 0-based index
  expect_not_found(mc, "label=bird", {"'bird'", "cat", "dog"});
  expect_not_found(mc, "label=7", {"'7'"});

  Labels ml;
  ml.kind = LabelKind::kMultilabel;
  ml.set_indptr = {0, 2, 2, 3};
  ml.set_indices = {0, 1, 1};
  ml.names = {"a", "b"};
  const Dataset mld(FeatureMatrix::dense({0, 0, 0}, 3, 1), ml);
  EXPECT_EQ(mask_of(mld, "label=b"), (Mask{1, 0, 1}));
  EXPECT_EQ(mask_of(mld, "label=a"), (Mask{1, 0, 0}));
}

TEST(SliceMask, NotFoundMessages) {
  const Dataset ds = people();
  expect_not_found(
      ds, "colour=red",
      {"[rateopt.not_found]", "'colour'", "people.csv", "sex", "race", "baseline", "label", "f2"});
  expect_not_found(ds, "sex=X", {"'sex'", "'X'", "F", "M"});
  expect_not_found(ds, "age=31", {"'age'", "'31'", "30", "25"});
  expect_not_found(ds, "baseline=0.5", {"'baseline'", "'0.5'"});
  expect_not_found(ds, "label=2", {"'2'", "-1", "+1"});
  expect_not_found(ds, "label=yes", {"'yes'"});
  expect_not_found(ds, "f2=7", {"'f2'", "7", "people.csv"});
  expect_not_found(ds, "f2=abc", {"'f2'", "'abc'"});

  Dataset bare(FeatureMatrix::dense({0, 0}, 2, 1), Labels{});
  bare.add_column(make_column("sex", {"F", "M"}));
  expect_not_found(bare, "baseline=1", {"'baseline'", "sex"});
  expect_not_found(bare, "label=1", {"no labels"});

  // Long level lists are truncated.
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i) ids.push_back("id" + std::to_string(i));
  bare = Dataset(FeatureMatrix::dense(std::vector<double>(50, 0.0), 50, 1), Labels{});
  bare.add_column(make_column("id", ids));
  try {
    (void)mask_of(bare, "id=zzz");
    ADD_FAILURE() << "expected NotFound";
  } catch (const NotFound& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("id0"), std::string::npos);
    EXPECT_NE(what.find("(30 more)"), std::string::npos) << what;
    EXPECT_EQ(what.find("id49"), std::string::npos) << what;
  }
}

TEST(SliceMask, MissingValuesNeverMatch) {
  Dataset ds(FeatureMatrix::dense({0, 0, 0}, 3, 1), Labels{});
  ds.add_column(make_column("g", {"?", "a", "?"}));
  EXPECT_EQ(mask_of(ds, "g=a"), (Mask{0, 1, 0}));
  expect_not_found(ds, "g=?", {"'g'"});
}

}  // namespace
}  // namespace rateopt
