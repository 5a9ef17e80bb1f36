// CSV/TSV reader: happy paths on small strings and malformed input.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

using test::write_temp;

CsvOptions income_options() {
  CsvOptions o;
  o.label_column = "income";
  o.positive_values = {">50K"};
  return o;
}

TEST(CsvReader, StandardisesNumericAndOneHotEncodesCategorical) {
  const std::string text =
      "age,sex,income\n"
      "30,Male,>50K\n"
      "40,Female,<=50K\n"
      "50,Male,>50K\n";
  const Dataset ds = parse_csv(text, income_options(), "adult.csv");
  ASSERT_EQ(ds.num_rows(), 3u);
  ASSERT_EQ(ds.num_features(), 3u);
  const Encoding& e = ds.encoding();
  EXPECT_EQ(e.format, "csv");
  EXPECT_EQ(e.num_features, 3u);
  EXPECT_EQ(e.feature_names, (std::vector<std::string>{"age", "sex=Male", "sex=Female"}));
  ASSERT_EQ(e.specs.size(), 2u);
  EXPECT_EQ(e.specs[0].kind, FeatureSpec::Kind::kNumeric);
  EXPECT_EQ(e.specs[0].source, "age");
  EXPECT_DOUBLE_EQ(e.specs[0].offset, 40.0);
  const double sd = std::sqrt(200.0 / 3.0);  // population standard deviation
  EXPECT_DOUBLE_EQ(e.specs[0].scale, sd);
  EXPECT_EQ(e.specs[1].kind, FeatureSpec::Kind::kOneHot);
  EXPECT_EQ(e.specs[1].first_feature, 1u);
  EXPECT_EQ(e.specs[1].levels, (std::vector<std::string>{"Male", "Female"}));
  EXPECT_EQ(e.label_column, "income");
  EXPECT_EQ(e.positive_value, ">50K");
  EXPECT_EQ(e.missing_policy, "drop");

  const FeatureMatrix& x = ds.features();
  EXPECT_DOUBLE_EQ(x.at(0, 0), -10.0 / sd);
  EXPECT_DOUBLE_EQ(x.at(1, 0), 0.0);
  EXPECT_DOUBLE_EQ(x.at(2, 0), 10.0 / sd);
  EXPECT_DOUBLE_EQ(x.at(0, 1), 1.0);
  EXPECT_DOUBLE_EQ(x.at(0, 2), 0.0);
  EXPECT_DOUBLE_EQ(x.at(1, 2), 1.0);

  const Labels& y = ds.labels();
  EXPECT_EQ(y.kind, LabelKind::kBinary);
  EXPECT_EQ(y.values, (std::vector<std::int32_t>{1, 0, 1}));
  EXPECT_EQ(y.names, (std::vector<std::string>{"<=50K", ">50K"}));

  // Every raw column is also a slice column.
  ASSERT_EQ(ds.columns().size(), 3u);
  EXPECT_EQ(ds.column("sex").levels, (std::vector<std::string>{"Male", "Female"}));
  EXPECT_EQ(ds.column("sex").codes, (std::vector<std::int32_t>{0, 1, 0}));
  EXPECT_TRUE(ds.column("age").is_numeric());
  EXPECT_EQ(ds.column("income").find_level(">50K"), 0);
}

// The slice columns equal Column::push_back over the raw values of the kept rows: a categorical
// feature (its columns built from the feature's levels and codes), one forced categorical whose
// values are numbers (a numeric slice column), one whose quoted values are numbers only once
// trimmed (a categorical feature, a numeric slice column), a numeric one, with missing values
// and dropped rows between.
TEST(CsvSliceColumns, EqualColumnPushBackOverTheKeptRows) {
  const std::vector<std::vector<std::string>> rows = {
      {"red", "02139", "\" 5\"", "1.5", "1"}, {"blue", "10001", "6", "?", "0"},
      {"?", "02139", "\" 7\"", "2.5", "1"},   {"red", "94305", "6", "3", "0"},
      {"green", "?", "\"8 \"", "4", "1"},     {"blue", "10001", "\" 5\"", "NA", "0"},
      {"red", "02139", "9", "5.25", "1"},     {"?", "94305", "6", "6", "0"}};
  std::string text = "colour,zip,q,x,y\n";
  for (const auto& r : rows) text += fmt::format("{}\n", fmt::join(r, ","));
  const auto unquoted = [](const std::string& v) {
    return v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v;
  };
  for (const MissingPolicy policy : {MissingPolicy::kDrop, MissingPolicy::kZero}) {
    SCOPED_TRACE(static_cast<int>(policy));
    CsvOptions o;
    o.label_column = "y";
    o.categorical_columns = {"zip"};
    o.missing = policy;
    const Dataset ds = parse_csv(text, o, "slices.csv");
    ASSERT_EQ(ds.columns().size(), 5U);
    for (std::size_t c = 0; c < 5; ++c) {
      SCOPED_TRACE(ds.columns()[c].name);
      Column want;
      for (const auto& r : rows) {
        const bool drop =
            policy == MissingPolicy::kDrop &&
            std::ranges::any_of(r, [](const std::string& v) { return v == "?" || v == "NA"; });
        if (drop) continue;
        const std::string v = unquoted(r[c]);
        want.push_back(v, v == "?" || v == "NA");
      }
      EXPECT_EQ(ds.columns()[c].levels, want.levels);
      EXPECT_EQ(ds.columns()[c].codes, want.codes);
      ASSERT_EQ(ds.columns()[c].numeric.size(), want.numeric.size());
      for (std::size_t k = 0; k < want.numeric.size(); ++k) {
        if (std::isnan(want.numeric[k])) {
          EXPECT_TRUE(std::isnan(ds.columns()[c].numeric[k]));
        } else {
          EXPECT_EQ(ds.columns()[c].numeric[k], want.numeric[k]);
        }
      }
    }
    // The kinds the cases stand for: colour and q text features, zip forced; zip and q numeric
    // slice columns.
    EXPECT_FALSE(ds.columns()[0].is_numeric());
    EXPECT_TRUE(ds.columns()[1].is_numeric());
    EXPECT_TRUE(ds.columns()[2].is_numeric());
    EXPECT_EQ(ds.encoding().specs[2].kind, FeatureSpec::Kind::kOneHot);
  }
}

TEST(CsvReader, NoStandardisationAndConstantColumn) {
  CsvOptions o;
  o.standardize = false;
  const Dataset ds = parse_csv("a,b\n1,7\n3,7\n", o);
  EXPECT_DOUBLE_EQ(ds.features().at(1, 0), 3.0);
  EXPECT_DOUBLE_EQ(ds.encoding().specs[1].scale, 1.0);
  EXPECT_EQ(ds.labels().kind, LabelKind::kNone);

  o.standardize = true;
  const Dataset z = parse_csv("a,b\n1,7\n3,7\n", o);
  EXPECT_DOUBLE_EQ(z.encoding().specs[1].offset, 7.0);
  EXPECT_DOUBLE_EQ(z.encoding().specs[1].scale, 1.0);  // std == 0 -> scale 1
  EXPECT_DOUBLE_EQ(z.features().at(0, 1), 0.0);
  EXPECT_DOUBLE_EQ(z.features().at(0, 0), -1.0);
}

// Issue 10: a missing value is imputed with the training mean (standardised or not), the same
// value when the encoding is reused at prediction time, and every row is kept.
TEST(CsvReader, ImputeUsesTheTrainingMeanWithOrWithoutStandardisation) {
  for (const bool standardize : {false, true}) {
    CsvOptions o;
    o.standardize = standardize;
    o.missing = MissingPolicy::kZero;
    const Dataset train = parse_csv("a,c\n1,x\n5,y\n?,x\n", o);
    ASSERT_EQ(train.num_rows(), 3u);
    const FeatureSpec& a = train.encoding().specs[0];
    EXPECT_DOUBLE_EQ(a.impute, 3.0);
    const double mean_feature = (3.0 - a.offset) / a.scale;
    EXPECT_DOUBLE_EQ(train.features().at(2, 0), mean_feature);
    EXPECT_DOUBLE_EQ(train.features().at(2, 1) + train.features().at(2, 2), 1.0);  // c=x

    const Encoding reloaded = Encoding::from_json(train.encoding().to_json());
    EXPECT_DOUBLE_EQ(reloaded.specs[0].impute, 3.0);
    ReadStats stats;
    const Dataset test = parse_csv("a,c\n?,?\n7,y\n", o, "test.csv", &reloaded, &stats);
    ASSERT_EQ(test.num_rows(), 2u);
    EXPECT_EQ(stats.rows_imputed_missing, 1u);
    EXPECT_DOUBLE_EQ(test.features().at(0, 0), mean_feature);
    EXPECT_DOUBLE_EQ(test.features().at(0, 1) + test.features().at(0, 2), 0.0);  // no level
  }
}

TEST(CsvReader, ByteOrderMarkIsStripped) {
  const Dataset ds = parse_csv(
      "\xEF\xBB\xBF"
      "a,y\n1,0\n2,1\n",
      CsvOptions{});
  EXPECT_NE(ds.find_column("a"), nullptr);
}

TEST(CsvReader, DegenerateInputIsReportedInTheStats) {
  CsvOptions o;
  o.label_column = "y";
  o.positive_values = {"Yes"};
  o.weight_column = "w";
  std::string text = "x,w,y\n";
  for (int i = 0; i < 200; ++i) text += fmt::format("{},0,{}\n", i, i % 2 ? "yes" : "no");
  text += "12a,0,no\n";
  ReadStats stats;
  const Dataset ds = parse_csv(text, o, "d.csv", nullptr, &stats);
  ASSERT_EQ(stats.warnings.size(), 3u);
  const std::string all = stats.warnings[0] + stats.warnings[1] + stats.warnings[2];
  EXPECT_TRUE(contains(all, "'Yes' matches none of the 201 rows")) << all;
  EXPECT_TRUE(contains(all, "'no', 'yes'")) << all;
  EXPECT_TRUE(contains(all, "1 of its 201 values is not a number (first: '12a' on line 202)"))
      << all;
  EXPECT_TRUE(contains(all, "every weight in column 'w' is 0")) << all;
  // A column that is mostly text is not a stray-token case.
  const Dataset words = parse_csv("x\na\nb\n1\n", CsvOptions{}, "w.csv", nullptr, &stats);
  EXPECT_TRUE(stats.warnings.empty());
}

// A column's fields after its first non-number are not parsed while read (kUnparsed): the
// warning, a column whose only text is in a dropped row, and the first bad value under a numeric
// encoding still read them, on one thread and on pieces read by two.
TEST(CsvReader, FieldsAfterATextValueAreParsedWhereNeeded) {
  CsvOptions o;
  o.label_column = "y";
  // The stray token first: the warning counts and names it, and every later value.
  std::string text = "x,y\n12a,0\n";
  for (int i = 0; i < 200; ++i) text += fmt::format("{},{}\n", i, i % 2);
  ReadStats stats;
  const Dataset stray = parse_csv(text, o, "s.csv", nullptr, &stats);
  ASSERT_EQ(stats.warnings.size(), 1u);
  EXPECT_TRUE(contains(stats.warnings[0],
                       "1 of its 201 values is not a number (first: '12a' on "
                       "line 2)"))
      << stats.warnings[0];
  EXPECT_EQ(stray.encoding().specs[0].levels.size(), 201u);

  // The only text of x in a row dropped for z's missing value: x is numeric, with the values of
  // the file without that row. Rows long enough for two pieces of over 1 MiB with two threads;
  // w's text values (in the second piece) make it categorical there and in one piece alike.
  const auto file = [](bool with_text_row) {
    std::string t = "x,z,w,y\n";
    if (with_text_row) t += "abc,?,0,1\n";
    for (int i = 0; i < 120000; ++i)
      t += fmt::format("{}.25,{},{},{}\n", i % 977, i % 5, i == 100000 ? "text" : "7", i % 2);
    return t;
  };
  for (const int threads : {1, 2}) {
    o.n_threads = threads;
    const Dataset with = parse_csv(file(true), o, "d.csv");
    const Dataset without = parse_csv(file(false), o, "d.csv");
    ASSERT_EQ(with.num_rows(), 120000u);
    EXPECT_EQ(with.encoding().specs[0].kind, FeatureSpec::Kind::kNumeric);
    EXPECT_EQ(with.encoding().specs[2].kind, FeatureSpec::Kind::kOneHot);
    EXPECT_EQ(with.encoding().specs[2].levels, (std::vector<std::string>{"7", "text"}));
    EXPECT_EQ(with.encoding().specs[0].offset, without.encoding().specs[0].offset);
    EXPECT_EQ(with.encoding().specs[0].scale, without.encoding().specs[0].scale);
    for (std::size_t r = 0; r < 120000; r += 997)
      for (std::size_t f = 0; f < with.num_features(); ++f)
        ASSERT_EQ(with.features().at(r, f), without.features().at(r, f)) << r << " " << f;
  }
  o.n_threads = 1;

  // A numeric encoding: the first kept non-number is the error, after a dropped text row.
  const Dataset train = parse_csv("x,z,y\n1,1,0\n2,2,1\n", o);
  const std::string msg = error_of<ParseError>([&] {
    (void)parse_csv("x,z,y\nabc,?,0\n1,1,1\ndef,2,0\nghi,3,1\n", o, "e.csv", &train.encoding());
  });
  EXPECT_TRUE(contains(msg, "e.csv:4")) << msg;
  EXPECT_TRUE(contains(msg, "found 'def'")) << msg;
}

// Fields are split eight bytes at a time (CsvTokenizer::field_end): random texts of bytes next
// in value to the delimiter and '\n' (and with their high bit set), of every length and
// alignment, with ',', ';' and tab delimiters, give the fields written.
TEST(CsvReader, FieldsSplitAtEveryByteOffset) {
  std::mt19937_64 rng(29);
  for (const char delim : {',', ';', '\t'}) {
    std::string alphabet;  // bytes near the delimiter's and '\n''s, none of the special ones
    for (const int b : std::initializer_list<int>{'a', 'Z', delim - 1, delim + 1, delim | 0x80,
                                                  '\n' - 1, '\n' + 1, '\n' | 0x80, 0x7F, 0xFF}) {
      const auto ch = static_cast<char>(b);
      if (ch != delim && ch != '\n' && ch != '\r' && ch != '\t' && ch != ' ' && ch != '"')
        alphabet += ch;
    }
    const std::size_t rows = 300;
    const std::size_t cols = 3;
    std::vector<std::vector<std::string>> want(cols);
    std::string text = fmt::format("c0{}c1{}c2\n", delim, delim);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        std::string v(1 + rng() % 19, 'a');
        for (char& ch : v) ch = alphabet[rng() % alphabet.size()];
        want[c].push_back(v);
        text += v;
        text += c + 1 < cols ? delim : '\n';
      }
    }
    if (rng() % 2 == 0) text.pop_back();  // no '\n' at the end of the last record
    CsvOptions o;
    o.delimiter = delim;
    o.missing_values = {};
    o.categorical_columns = {"c0", "c1", "c2"};
    const Dataset ds = parse_csv(text, o, "t.csv");
    ASSERT_EQ(ds.num_rows(), rows);
    for (std::size_t c = 0; c < cols; ++c) {
      const Column& col = ds.column(fmt::format("c{}", c));
      for (std::size_t r = 0; r < rows; ++r)
        ASSERT_EQ(col.levels[static_cast<std::size_t>(col.codes[r])], want[c][r])
            << "delimiter " << static_cast<int>(delim) << " row " << r << " column " << c;
    }
  }
}

TEST(CsvReader, QuotedFieldsCrlfAndMultilineQuotes) {
  const std::string text =
      "name,comment,y\r\n"
      "\"Smith, J\",\"said \"\"hi\"\"\",1\r\n"
      "  \"Doe\" , \"two\r\nlines\",0\r\n"
      "plain,\"\",1\r\n";
  CsvOptions o;
  o.label_column = "y";
  o.missing = MissingPolicy::kZero;
  const Dataset ds = parse_csv(text, o, "q.csv");
  ASSERT_EQ(ds.num_rows(), 3u);
  const Column& name = ds.column("name");
  EXPECT_EQ(name.levels, (std::vector<std::string>{"Smith, J", "Doe", "plain"}));
  const Column& comment = ds.column("comment");
  EXPECT_EQ(comment.levels, (std::vector<std::string>{"said \"hi\"", "two\r\nlines"}));
  EXPECT_EQ(comment.codes[2], -1);  // "" is a missing value
  EXPECT_EQ(ds.labels().values, (std::vector<std::int32_t>{1, 0, 1}));
  EXPECT_EQ(ds.labels().names, (std::vector<std::string>{"0", "1"}));

  // A ragged row after the multi-line field is reported on its physical line.
  const std::string bad = text + "only,two\r\n";
  const std::string msg = error_of<ParseError>([&] { (void)parse_csv(bad, o, "q.csv"); });
  EXPECT_TRUE(contains(msg, "q.csv:6: expected 3 fields, found 2")) << msg;
}

TEST(CsvReader, TsvByNameAndTrimmedFields) {
  const std::string text = "x\tgroup\ty\n 1.5 \tA\t+1\n2.5\t B \t-1\n";
  CsvOptions o;
  o.label_column = "y";
  o.group_columns = {"group"};
  const Dataset ds = parse_csv(text, o, "data.tsv");
  ASSERT_EQ(ds.num_rows(), 2u);
  EXPECT_EQ(ds.num_features(), 1u);  // the group column is not a feature
  EXPECT_EQ(ds.encoding().feature_names, (std::vector<std::string>{"x"}));
  EXPECT_EQ(ds.encoding().excluded_columns, (std::vector<std::string>{"group"}));
  EXPECT_EQ(ds.column("group").levels, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(ds.labels().names, (std::vector<std::string>{"-1", "+1"}));
  EXPECT_EQ(ds.labels().values, (std::vector<std::int32_t>{1, 0}));
  EXPECT_EQ(ds.encoding().positive_value, "+1");

  // UCI Adult style ", " separators.
  CsvOptions adult;
  adult.has_header = false;
  adult.column_names = {"age", "sex", "income"};
  adult.label_column = "income";
  adult.positive_values = {">50K", ">50K."};
  const Dataset a = parse_csv("39, Male, <=50K\n50, Female, >50K.\n", adult, "adult.data");
  EXPECT_EQ(a.labels().values, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(a.labels().names, (std::vector<std::string>{"<=50K", ">50K|>50K."}));
  EXPECT_EQ(a.column("sex").levels, (std::vector<std::string>{"Male", "Female"}));
  EXPECT_EQ(a.encoding().positive_value, ">50K|>50K.");
}

TEST(CsvReader, SkipLinesCommentsBlankLinesAndExplicitDelimiter) {
  const std::string text = "|1x3 Cross validator\n# comment\na;b\n\n1;2\n# another\n3;4\n\n";
  CsvOptions o;
  o.skip_lines = 1;
  o.comment_prefix.assign(1, '#');  // (not = "#": a GCC 12 -Wrestrict false positive)
  o.delimiter = ';';
  o.standardize = false;
  const Dataset ds = parse_csv(text, o);
  ASSERT_EQ(ds.num_rows(), 2u);
  EXPECT_DOUBLE_EQ(ds.features().at(1, 1), 4.0);
}

TEST(CsvReader, MulticlassLabelsSortedByName) {
  CsvOptions o;
  o.label_column = "letter";
  const Dataset ds = parse_csv("letter,x\nT,1\nA,2\nI,3\nA,4\n", o);
  EXPECT_EQ(ds.labels().kind, LabelKind::kMulticlass);
  EXPECT_EQ(ds.labels().names, (std::vector<std::string>{"A", "I", "T"}));
  EXPECT_EQ(ds.labels().values, (std::vector<std::int32_t>{2, 0, 1, 0}));
  EXPECT_EQ(ds.encoding().positive_value, "");
}

TEST(CsvReader, CategoricalColumnsIgnoreAndWeights) {
  const std::string text = "id,code,w,y\n1,10,0.5,1\n2,20,2,0\n3,10,1,0\n";
  CsvOptions o;
  o.label_column = "y";
  o.ignore_columns = {"id"};
  o.categorical_columns = {"code"};
  o.weight_column = "w";
  const Dataset ds = parse_csv(text, o);
  EXPECT_EQ(ds.encoding().feature_names, (std::vector<std::string>{"code=10", "code=20"}));
  EXPECT_EQ(ds.find_column("id"), nullptr);
  EXPECT_NE(ds.find_column("w"), nullptr);
  ASSERT_EQ(ds.weights().size(), 3u);
  EXPECT_DOUBLE_EQ(ds.weight(0), 0.5);
  EXPECT_DOUBLE_EQ(ds.weight(1), 2.0);
  EXPECT_EQ(ds.encoding().excluded_columns, (std::vector<std::string>{"w"}));
}

TEST(CsvReader, DuplicateAndEmptyHeaderNames) {
  CsvOptions o;
  o.label_column = "y";
  const Dataset ds = parse_csv(",y,s,s,y\n0,1,a,b,0\n1,0,a,c,1\n", o);
  std::vector<std::string> names;
  for (const auto& c : ds.columns()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"col1", "y", "s", "s.1", "y.1"}));
  EXPECT_EQ(ds.labels().values, (std::vector<std::int32_t>{1, 0}));  // the first 'y'
}

TEST(CsvReader, MissingValuePolicies) {
  const std::string text = "x,c,y\n1,a,1\n?,b,0\n3,?,1\n5,a,NA\n";
  CsvOptions o;
  o.label_column = "y";
  ReadStats stats;
  const std::string path = write_temp("missing.csv", text);
  const Dataset dropped = read_csv(path, o, nullptr, &stats);
  EXPECT_EQ(dropped.num_rows(), 1u);
  EXPECT_EQ(stats.rows_dropped_missing, 3u);
  EXPECT_EQ(stats.lines, 5u);
  EXPECT_EQ(dropped.source(), path);

  // kZero: numeric -> the mean (0 after standardisation), categorical -> all-zero; a missing
  // label is still an error.
  o.missing = MissingPolicy::kZero;
  const std::string msg = error_of<ParseError>([&] { (void)parse_csv(text, o, "m.csv"); });
  EXPECT_TRUE(contains(msg, "m.csv:5")) << msg;
  EXPECT_TRUE(contains(msg, "label")) << msg;
  const Dataset zero = parse_csv("x,c,y\n1,a,1\n?,b,0\n3,?,1\n", o);
  ASSERT_EQ(zero.num_rows(), 3u);
  EXPECT_DOUBLE_EQ(zero.encoding().specs[0].offset, 2.0);  // mean of the present values
  EXPECT_DOUBLE_EQ(zero.features().at(1, 0), 0.0);
  EXPECT_DOUBLE_EQ(zero.features().at(2, 1) + zero.features().at(2, 2), 0.0);
  EXPECT_EQ(zero.column("x").codes[1], -1);
  EXPECT_EQ(zero.encoding().missing_policy, "zero");

  o.missing = MissingPolicy::kError;
  const std::string err = error_of<ParseError>([&] { (void)parse_csv(text, o, "m.csv"); });
  EXPECT_TRUE(contains(err, "m.csv:3")) << err;
  EXPECT_TRUE(contains(err, "column 'x'")) << err;
}

TEST(CsvReader, EncodingReuseWithUnseenLevels) {
  CsvOptions o = income_options();
  o.group_columns = {"race"};
  const Dataset train = parse_csv(
      "age,sex,race,income\n30,Male,White,>50K\n40,Female,Black,<=50K\n50,Male,White,>50K\n", o,
      "train.csv");
  // Columns in another order, an extra column and an unseen level.
  const std::string test_text =
      "income,extra,sex,race,age\n<=50K,q,Other,Asian,40\n>50K,r,Female,White,60\n";
  ReadStats stats;
  const std::string path = write_temp("reuse_test.csv", test_text);
  ReadOptions ro;
  ro.csv = o;
  ro.encoding = &train.encoding();
  const Dataset test = read_dataset(path, ro, &stats);
  ASSERT_EQ(test.num_features(), train.num_features());
  EXPECT_EQ(test.encoding().feature_names, train.encoding().feature_names);
  EXPECT_EQ(stats.unseen_levels, 1u);
  const double sd = std::sqrt(200.0 / 3.0);
  EXPECT_DOUBLE_EQ(test.features().at(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(test.features().at(1, 0), 20.0 / sd);  // the training scaling
  EXPECT_DOUBLE_EQ(test.features().at(0, 1) + test.features().at(0, 2), 0.0);  // unseen
  EXPECT_DOUBLE_EQ(test.features().at(1, 2), 1.0);                             // Female
  EXPECT_EQ(test.labels().values, (std::vector<std::int32_t>{0, 1}));
  EXPECT_NE(test.find_column("extra"), nullptr);
  EXPECT_EQ(test.column("race").levels, (std::vector<std::string>{"Asian", "White"}));
  // unseen_error: the same file is a ParseError at the unseen value's line and column name.
  ro.csv.unseen_error = true;
  const std::string unseen = error_of<ParseError>([&] { (void)read_dataset(path, ro, nullptr); });
  EXPECT_TRUE(contains(unseen, "reuse_test.csv:2")) << unseen;
  EXPECT_TRUE(contains(unseen, "column 'sex': value 'Other' was not seen in training")) << unseen;
  ro.csv.unseen_error = false;

  // A source column of the encoding that the file lacks.
  const std::string msg = error_of<NotFound>([&] {
    (void)parse_csv("income,sex,race\n>50K,Male,White\n", o, "t.csv", &train.encoding());
  });
  EXPECT_TRUE(contains(msg, "'age'")) << msg;
  EXPECT_TRUE(contains(msg, "available: income, sex, race")) << msg;

  // A non-number in a column the encoding treats as numeric.
  const std::string bad = error_of<ParseError>([&] {
    (void)parse_csv("age,sex,race,income\n30,Male,White,>50K\nold,Male,White,>50K\n", o, "t.csv",
                    &train.encoding());
  });
  EXPECT_TRUE(contains(bad, "t.csv:3")) << bad;
  EXPECT_TRUE(contains(bad, "expected a number, found 'old'")) << bad;
}

TEST(CsvReader, EncodingSurvivesJsonRoundTrip) {
  const std::string text = "x,c,y\n0.1,a,1\n0.7,b,0\n1.3,a,1\n-2.9,c,0\n";
  CsvOptions o;
  o.label_column = "y";
  const Dataset ds = parse_csv(text, o);
  const Encoding back = Encoding::from_json(ds.encoding().to_json());
  const Dataset again = parse_csv(text, o, "<string>", &back);
  ASSERT_EQ(again.num_features(), ds.num_features());
  for (std::size_t i = 0; i < ds.num_rows(); ++i)
    for (std::size_t j = 0; j < ds.num_features(); ++j)
      EXPECT_EQ(again.features().at(i, j), ds.features().at(i, j)) << i << "," << j;
  // A LIBSVM encoding cannot be applied to a CSV file.
  const Encoding libsvm = parse_libsvm("1 1:1\n", LibsvmOptions{}).encoding();
  EXPECT_THROW((void)parse_csv(text, o, "<string>", &libsvm), InvalidArgument);
}

TEST(CsvReader, WideSparseOneHotUsesCsr) {
  std::string text = "id,x,y\n";
  for (int i = 0; i < 3000; ++i) text += fmt::format("id{},{},1\n", i, i % 3);
  CsvOptions o;
  o.label_column = "y";
  o.standardize = false;
  const Dataset ds = parse_csv(text, o);
  ASSERT_TRUE(ds.features().is_sparse());
  EXPECT_EQ(ds.num_features(), 3001u);
  EXPECT_DOUBLE_EQ(ds.features().at(5, 5), 1.0);
  EXPECT_DOUBLE_EQ(ds.features().at(5, 3000), 2.0);
  EXPECT_EQ(ds.features().nnz(), 3000u + 2000u);
}

// The storage rule: more than 2^22 cells with at most 30% non-zero (the solvers' own CSR
// threshold) is CSR, above 30% dense; up to 2^22 cells dense whatever the density.
TEST(CsvReader, StorageIsCsrUpToThirtyPercentNonZeroOnLargeFiles) {
  // Ten one-hot features (a level per row out of ten) and a numeric column: 2 of 11 non-zero.
  const auto make = [](int rows, int levels) {
    std::string text = "c,x,y\n";
    for (int i = 0; i < rows; ++i) text += fmt::format("L{},{},{}\n", i % levels, i % 7, i % 2);
    return text;
  };
  CsvOptions o;
  o.label_column = "y";
  o.standardize = false;
  const Dataset big = parse_csv(make(400000, 10), o);  // 4.4e6 cells, 2/11 = 18% non-zero
  EXPECT_TRUE(big.features().is_sparse());
  EXPECT_DOUBLE_EQ(big.features().at(13, 3), 1.0);
  EXPECT_DOUBLE_EQ(big.features().at(13, 10), 6.0);
  const Dataset dense = parse_csv(make(1500000, 2), o);  // 4.5e6 cells, 2/3 non-zero
  EXPECT_FALSE(dense.features().is_sparse());
  const Dataset small = parse_csv(make(300000, 10), o);  // 3.3e6 cells
  EXPECT_FALSE(small.features().is_sparse());
}

TEST(CsvReader, HeaderOnlyAndEmptyWithColumnNames) {
  const Dataset ds = parse_csv("a,b\n", CsvOptions{});
  EXPECT_EQ(ds.num_rows(), 0u);
  CsvOptions o;
  o.has_header = false;
  o.column_names = {"a"};
  EXPECT_EQ(parse_csv("", o).num_rows(), 0u);
}

// ---- malformed input ----------------------------------------------------------------------------

TEST(CsvMalformed, RaggedRows) {
  const std::string msg = error_of<ParseError>(
      [] { (void)parse_csv("a,b,c\n1,2,3\n4,5\n", CsvOptions{}, "adult.csv"); });
  EXPECT_TRUE(contains(msg, "adult.csv:3: expected 3 fields, found 2")) << msg;
  try {
    (void)parse_csv("a,b\n1,2,3\n", CsvOptions{}, "r.csv");
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "r.csv");
    EXPECT_EQ(e.line(), 2u);
  }
}

TEST(CsvMalformed, UnterminatedQuoteAndJunkAfterQuote) {
  const std::string a =
      error_of<ParseError>([] { (void)parse_csv("a,b\n1,\"open\n2,3\n", CsvOptions{}, "u.csv"); });
  EXPECT_TRUE(contains(a, "u.csv:2:3")) << a;
  EXPECT_TRUE(contains(a, "closing '\"'")) << a;
  const std::string b =
      error_of<ParseError>([] { (void)parse_csv("a,b\n\"x\"y,3\n", CsvOptions{}, "j.csv"); });
  EXPECT_TRUE(contains(b, "j.csv:2:4")) << b;
  EXPECT_TRUE(contains(b, "found 'y'")) << b;
}

TEST(CsvMalformed, NonFiniteNumbers) {
  for (const std::string v : {"inf", "nan", "-Infinity", "1e999"}) {
    const std::string msg = error_of<ParseError>(
        [&] { (void)parse_csv("x,y\n1,0\n" + v + ",1\n", CsvOptions{}, "n.csv"); });
    EXPECT_TRUE(contains(msg, "n.csv:3")) << msg;
    EXPECT_TRUE(contains(msg, "expected a finite number, found '" + v + "'")) << msg;
  }
}

TEST(CsvMalformed, UnknownColumns) {
  CsvOptions o;
  o.label_column = "income";
  const std::string msg = error_of<NotFound>([&] { (void)parse_csv("a,b\n1,2\n", o, "k.csv"); });
  EXPECT_TRUE(contains(msg, "'income'")) << msg;
  EXPECT_TRUE(contains(msg, "k.csv")) << msg;
  EXPECT_TRUE(contains(msg, "available: a, b")) << msg;
  CsvOptions g;
  g.group_columns = {"sex"};
  EXPECT_THROW((void)parse_csv("a,b\n1,2\n", g), NotFound);
  CsvOptions i;
  i.ignore_columns = {"zz"};
  EXPECT_THROW((void)parse_csv("a,b\n1,2\n", i), NotFound);
  CsvOptions w;
  w.weight_column = "weight";
  EXPECT_THROW((void)parse_csv("a,b\n1,2\n", w), NotFound);
}

TEST(CsvMalformed, BadWeights) {
  CsvOptions o;
  o.weight_column = "w";
  for (const std::string v : {"abc", "-1", "inf"}) {
    const std::string msg =
        error_of<ParseError>([&] { (void)parse_csv("x,w\n1,1\n2," + v + "\n", o, "w.csv"); });
    EXPECT_TRUE(contains(msg, "w.csv:3")) << msg;
    EXPECT_TRUE(contains(msg, "expected a finite weight >= 0, found '" + v + "'")) << msg;
  }
}

TEST(CsvMalformed, MissingHeaderAndBadOptions) {
  const std::string msg = error_of<ParseError>([] { (void)parse_csv("", CsvOptions{}, "e.csv"); });
  EXPECT_TRUE(contains(msg, "e.csv")) << msg;
  EXPECT_TRUE(contains(msg, "expected a header row")) << msg;
  CsvOptions o;
  o.has_header = false;
  EXPECT_THROW((void)parse_csv("1,2\n", o), InvalidArgument);
  CsvOptions names;
  names.column_names = {"a", "b", "c"};
  EXPECT_THROW((void)parse_csv("a,b\n1,2\n", names), ParseError);
}

TEST(CsvMalformed, MissingFile) {
  const std::string msg =
      error_of<IoError>([] { (void)read_csv("/nonexistent/dir/adult.csv", CsvOptions{}); });
  EXPECT_TRUE(contains(msg, "/nonexistent/dir/adult.csv")) << msg;
}

}  // namespace
}  // namespace rateopt
