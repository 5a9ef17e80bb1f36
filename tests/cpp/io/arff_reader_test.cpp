// MULAN ARFF reader: dense and sparse rows, label attributes, feature encoding, malformed input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

std::vector<std::int32_t> set_of(const Labels& y, std::size_t i) {
  const auto s = y.label_set(i);
  return {s.begin(), s.end()};
}

const std::string kDense =
    "% comment line\n"
    "@relation test\n"
    "\n"
    "@attribute x numeric\n"
    "@attribute colour {red, green, blue}\n"
    "@attribute flag {0,1}\n"
    "@attribute answer {YES,NO}\n"
    "@attribute note string\n"
    "@attribute L1 {0,1}\n"
    "@attribute L2 {0,1}\n"
    "@data\n"
    "1.5,red,1,YES,'a note',1,0\n"
    "?,blue,0,NO,plain,1,1\n"
    "-2,green,?,YES,?,0,0\n";

TEST(ArffReader, DenseRowsWithLastNumLabels) {
  ArffOptions o;
  o.num_labels = 2;
  const Dataset ds = parse_arff(kDense, o, "t.arff");
  ASSERT_EQ(ds.num_rows(), 3u);
  EXPECT_FALSE(ds.features().is_sparse());
  const Encoding& e = ds.encoding();
  EXPECT_EQ(e.format, "arff");
  EXPECT_EQ(e.feature_names, (std::vector<std::string>{"x", "colour=red", "colour=green",
                                                       "colour=blue", "flag", "answer"}));
  EXPECT_EQ(e.num_features, 6u);
  EXPECT_EQ(e.excluded_columns, (std::vector<std::string>{"note"}));
  ASSERT_EQ(e.specs.size(), 4u);
  EXPECT_EQ(e.specs[2].levels, (std::vector<std::string>{"1"}));    // {0,1}: one 0/1 feature
  EXPECT_EQ(e.specs[3].levels, (std::vector<std::string>{"YES"}));  // {YES,NO}: 1 = YES

  const FeatureMatrix& x = ds.features();
  EXPECT_DOUBLE_EQ(x.at(0, 0), 1.5);  // numeric attributes are not standardised
  EXPECT_DOUBLE_EQ(x.at(1, 0), 0.0);  // '?' -> 0
  EXPECT_DOUBLE_EQ(x.at(0, 1), 1.0);
  EXPECT_DOUBLE_EQ(x.at(1, 3), 1.0);
  EXPECT_DOUBLE_EQ(x.at(2, 2), 1.0);
  EXPECT_DOUBLE_EQ(x.at(0, 4), 1.0);
  EXPECT_DOUBLE_EQ(x.at(2, 4), 0.0);  // '?' in a nominal attribute -> 0
  EXPECT_DOUBLE_EQ(x.at(0, 5), 1.0);
  EXPECT_DOUBLE_EQ(x.at(1, 5), 0.0);

  const Labels& y = ds.labels();
  EXPECT_EQ(y.kind, LabelKind::kMultilabel);
  EXPECT_EQ(y.names, (std::vector<std::string>{"L1", "L2"}));
  EXPECT_EQ(set_of(y, 0), (std::vector<std::int32_t>{0}));
  EXPECT_EQ(set_of(y, 1), (std::vector<std::int32_t>{0, 1}));
  EXPECT_TRUE(set_of(y, 2).empty());

  // The string attribute and the multi-valued nominal attribute are slice columns.
  EXPECT_EQ(ds.column("note").levels, (std::vector<std::string>{"a note", "plain"}));
  EXPECT_EQ(ds.column("note").codes[2], -1);
  EXPECT_EQ(ds.column("colour").levels, (std::vector<std::string>{"red", "blue", "green"}));
  EXPECT_EQ(ds.find_column("flag"), nullptr);
}

TEST(ArffReader, NoLabelsWithoutXmlOrNumLabels) {
  const Dataset ds = parse_arff(kDense, ArffOptions{});
  EXPECT_EQ(ds.labels().kind, LabelKind::kNone);
  EXPECT_EQ(ds.num_features(), 8u);
}

TEST(ArffReader, SparseRowsOmittedValuesAreZeroOrFirstLevel) {
  const std::string text =
      "@RELATION sparse\n"
      "@ATTRIBUTE a REAL\n"
      "@ATTRIBUTE c {u,v,w}\n"
      "@ATTRIBUTE b INTEGER\n"
      "@ATTRIBUTE lab1 {0,1}\n"
      "@ATTRIBUTE lab2 {1,0}\n"
      "@DATA\n"
      "{0 2.5, 3 1}\n"
      "{}\n"
      "{1 w,2 7,4 0}\n";
  ArffOptions o;
  o.num_labels = 2;
  const Dataset ds = parse_arff(text, o, "s.arff");
  ASSERT_TRUE(ds.features().is_sparse());
  ASSERT_EQ(ds.num_rows(), 3u);
  ASSERT_EQ(ds.num_features(), 5u);  // a, c=u, c=v, c=w, b
  const FeatureMatrix& x = ds.features();
  EXPECT_DOUBLE_EQ(x.at(0, 0), 2.5);
  EXPECT_DOUBLE_EQ(x.at(0, 1), 1.0);  // omitted nominal -> first declared value 'u'
  EXPECT_DOUBLE_EQ(x.at(1, 1), 1.0);
  EXPECT_DOUBLE_EQ(x.at(2, 1), 0.0);
  EXPECT_DOUBLE_EQ(x.at(2, 3), 1.0);
  EXPECT_DOUBLE_EQ(x.at(2, 4), 7.0);
  EXPECT_DOUBLE_EQ(x.at(1, 4), 0.0);
  // lab2 is declared {1,0}: omitted means its first value, '1'.
  EXPECT_EQ(set_of(ds.labels(), 0), (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(set_of(ds.labels(), 1), (std::vector<std::int32_t>{1}));
  EXPECT_TRUE(set_of(ds.labels(), 2).empty());
  const CsrView v = ds.features().csr_view();
  for (std::size_t i = 0; i < v.rows; ++i)
    for (auto k = v.indptr[i] + 1; k < v.indptr[i + 1]; ++k)
      EXPECT_LT(v.indices[k - 1], v.indices[k]);
}

TEST(ArffReader, QuotedNamesAndXmlLabelOrder) {
  const std::string text =
      "@relation q\r\n"
      "@attribute 'first feature' numeric\r\n"
      "@attribute \"dq name\" {a,'b c'}\r\n"
      "@attribute 'Swainson\\'s Thrush' {0,1}\r\n"
      "@attribute TAG_m\\'usica {0,1}\r\n"
      "@attribute Class3 {0,1}\r\n"
      "@data\r\n"
      "1,'b c',1,0,1\r\n"
      "2,a,0,1,1\r\n";
  // XML order differs from the file order; labels are matched by name.
  const std::vector<std::string> xml = {"Class3", "TAG_m\\'usica", "Swainson's Thrush"};
  const Dataset ds = parse_arff(text, ArffOptions{}, "q.arff", &xml);
  EXPECT_EQ(ds.labels().names, xml);
  EXPECT_EQ(set_of(ds.labels(), 0), (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(set_of(ds.labels(), 1), (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(ds.encoding().feature_names,
            (std::vector<std::string>{"first feature", "dq name=b c"}));
  EXPECT_DOUBLE_EQ(ds.features().at(0, 1), 1.0);
  EXPECT_DOUBLE_EQ(ds.features().at(1, 1), 0.0);
}

TEST(ArffReader, IdentifierAttributeIsAColumnNotAFeature) {
  std::string text = "@relation ids\n@attribute protein {";
  for (int i = 0; i < 12; ++i) text += fmt::format("{}P{}", i > 0 ? "," : "", i);
  text += "}\n@attribute site {YES,NO}\n@attribute lab {0,1}\n@data\n";
  for (int i = 0; i < 12; ++i) text += fmt::format("P{}{}", 11 - i, i % 2 ? ",YES,1\n" : ",NO,0\n");
  ArffOptions o;
  o.num_labels = 1;
  const Dataset ds = parse_arff(text, o, "genbase.arff");
  EXPECT_EQ(ds.encoding().feature_names, (std::vector<std::string>{"site"}));
  EXPECT_EQ(ds.encoding().excluded_columns, (std::vector<std::string>{"protein"}));
  EXPECT_EQ(ds.column("protein").levels.front(), "P11");
  EXPECT_DOUBLE_EQ(ds.features().at(1, 0), 1.0);

  // With a repeated value it is an ordinary one-hot attribute.
  const std::string repeated = text + "P0,NO,0\n";
  const Dataset r = parse_arff(repeated, o, "genbase.arff");
  EXPECT_EQ(r.num_features(), 13u);
  EXPECT_TRUE(r.encoding().excluded_columns.empty());
}

TEST(ArffReader, MissingNumericValuesEncodeZero) {
  const Dataset ds = parse_arff(
      "@relation m\n@attribute a numeric\n@attribute b numeric\n@data\n?,1\n3,?\n", ArffOptions{});
  EXPECT_DOUBLE_EQ(ds.features().at(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(ds.features().at(0, 1), 1.0);
  EXPECT_DOUBLE_EQ(ds.features().at(1, 1), 0.0);
  EXPECT_EQ(ds.encoding().missing_policy, "zero");
}

// ---- malformed input ----------------------------------------------------------------------------

TEST(ArffMalformed, NominalValueNotInSet) {
  std::string text = "@relation x\n@attribute a numeric\n@attribute Class3 {0,1}\n@data\n";
  for (int line = 5; line < 40; ++line) text += "1,0\n";
  text += "2,foo\n";
  const std::string msg =
      error_of<ParseError>([&] { (void)parse_arff(text, ArffOptions{}, "x.arff"); });
  EXPECT_TRUE(contains(msg, "x.arff:40")) << msg;
  EXPECT_TRUE(contains(msg, "value 'foo' is not in the nominal set {0,1} of attribute 'Class3'"))
      << msg;
}

struct BadArff {
  std::string text;
  std::string expected;
};

TEST(ArffMalformed, HeaderAndRows) {
  const std::string head = "@relation r\n@attribute a numeric\n@attribute b {x,y}\n";
  const std::vector<BadArff> cases = {
      {head, "r.arff:3: expected '@data' before the end of the file"},
      {head + "1,x\n", "r.arff:4:1: expected '@relation', '@attribute' or '@data', found '1,x'"},
      {"@relation r\n@attribute a blob\n@data\n",
       "r.arff:2:14: unknown type 'blob' of attribute 'a'"},
      {"@relation r\n@attribute a relational\n@data\n", "r.arff:2:14: unknown type 'relational'"},
      {"@relation r\n@attribute 'a numeric\n@data\n", "r.arff:2:12: expected a closing"},
      {"@relation r\n@attribute a\n@data\n", "r.arff:2:13: expected a type for attribute 'a'"},
      {"@relation r\n@attribute a {x,y\n@data\n", "r.arff:2:14: expected '}' closing"},
      {"@relation r\n@attribute a {x,,y}\n@data\n", "r.arff:2:17: expected a nominal value"},
      {"@relation r\n@attribute a {x,x}\n@data\n",
       "r.arff:2:17: nominal value 'x' of attribute 'a' is declared twice"},
      {"@relation r\n@attribute a numeric\n@attribute a numeric\n@data\n",
       "r.arff:3: attribute 'a' is declared twice"},
      {"@relation r\n@attribute a numeric extra\n@data\n", "r.arff:2:22: unexpected 'extra'"},
      {"@relation r\nfoo\n@data\n",
       "r.arff:2:1: expected '@relation', '@attribute' or '@data', found 'foo'"},
      {"@relation r\n@data\n", "r.arff:2: expected at least one @attribute"},
      {head + "@data\n1\n", "r.arff:5: expected 2 values, found 1"},
      {head + "@data\n1,x,3\n", "r.arff:5: expected 2 values, found 3"},
      {head + "@data\nabc,x\n", "r.arff:5:1: expected a number for attribute 'a', found 'abc'"},
      {head + "@data\nnan,x\n",
       "r.arff:5:1: expected a finite number for attribute 'a', found 'nan'"},
      {head + "@data\n1,'x\n", "r.arff:5:3: expected a closing"},
      {head + "@data\n1,'x' y\n", "r.arff:5:7: expected ',' after the quoted value, found 'y'"},
      {head + "@data\n{0 1,2 x}\n", "r.arff:5:6: sparse index 2 is out of range [0, 2)"},
      {head + "@data\n{1 x,0 1}\n", "r.arff:5:6: expected a sparse index greater than 1"},
      {head + "@data\n{1 x,1 y}\n", "r.arff:5:6: expected a sparse index greater than 1"},
      {head + "@data\n{-1 x}\n", "r.arff:5:2: sparse index -1 is out of range"},
      {head + "@data\n{0 1\n", "r.arff:5:4: expected '}' at the end of a sparse row"},
      {head + "@data\n{0}\n", "r.arff:5:2: expected 'index value' in a sparse row, found '0'"},
      {head + "@data\n{a 1}\n", "r.arff:5:2: expected 'index value' in a sparse row, found 'a 1'"},
      {head + "@data\n{1 z}\n",
       "r.arff:5:4: value 'z' is not in the nominal set {x,y} of attribute 'b'"},
  };
  for (const auto& c : cases) {
    const std::string msg =
        error_of<ParseError>([&] { (void)parse_arff(c.text, ArffOptions{}, "r.arff"); });
    EXPECT_TRUE(contains(msg, c.expected)) << "expected '" << c.expected << "' in: " << msg;
  }
}

TEST(ArffMalformed, LabelProblems) {
  const std::string text = "@relation r\n@attribute a numeric\n@attribute s string\n@data\n1,x\n";
  const std::vector<std::string> xml = {"nope"};
  const std::string nf =
      error_of<NotFound>([&] { (void)parse_arff(text, ArffOptions{}, "r.arff", &xml); });
  EXPECT_TRUE(contains(nf, "label 'nope'")) << nf;
  EXPECT_TRUE(contains(nf, "r.arff")) << nf;
  EXPECT_TRUE(contains(nf, "attributes: a, s")) << nf;

  ArffOptions many;
  many.num_labels = 3;
  const std::string n = error_of<ParseError>([&] { (void)parse_arff(text, many, "r.arff"); });
  EXPECT_TRUE(contains(n, "r.arff: expected at least 3 attributes (num_labels), found 2")) << n;

  ArffOptions one;
  one.num_labels = 1;
  const std::string s = error_of<ParseError>([&] { (void)parse_arff(text, one, "r.arff"); });
  EXPECT_TRUE(contains(s, "r.arff:3: label attribute 's' is a string attribute")) << s;

  const std::string numeric_label =
      "@relation r\n@attribute a numeric\n@attribute l numeric\n@data\n1,1\n2,0.5\n";
  const std::string v =
      error_of<ParseError>([&] { (void)parse_arff(numeric_label, one, "r.arff"); });
  EXPECT_TRUE(contains(v, "r.arff:6: expected 0 or 1 for label attribute 'l', found '0.5'")) << v;
}

TEST(ArffMalformed, MissingFile) {
  const std::string msg = error_of<IoError>([] { (void)read_arff("/no/such/yeast-train.arff"); });
  EXPECT_TRUE(contains(msg, "/no/such/yeast-train.arff")) << msg;
}

}  // namespace
}  // namespace rateopt
