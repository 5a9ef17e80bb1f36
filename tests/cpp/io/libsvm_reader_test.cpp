// LIBSVM reader: label kinds, CSR layout, widening and malformed input.
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

TEST(LibsvmReader, BinaryPlusMinusOne) {
  const Dataset ds = parse_libsvm("+1 1:0.5 3:1\n-1 2:2\n", LibsvmOptions{}, "a9a");
  ASSERT_EQ(ds.num_rows(), 2u);
  ASSERT_EQ(ds.num_features(), 3u);
  ASSERT_TRUE(ds.features().is_sparse());
  const CsrView v = ds.features().csr_view();
  EXPECT_EQ(std::vector<std::int64_t>(v.indptr.begin(), v.indptr.end()),
            (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(std::vector<std::int32_t>(v.indices.begin(), v.indices.end()),
            (std::vector<std::int32_t>{0, 2, 1}));
  EXPECT_EQ(std::vector<double>(v.values.begin(), v.values.end()),
            (std::vector<double>{0.5, 1.0, 2.0}));
  const Labels& y = ds.labels();
  EXPECT_EQ(y.kind, LabelKind::kBinary);
  EXPECT_EQ(y.names, (std::vector<std::string>{"-1", "+1"}));
  EXPECT_EQ(y.values, (std::vector<std::int32_t>{1, 0}));
  const Encoding& e = ds.encoding();
  EXPECT_EQ(e.format, "libsvm");
  EXPECT_EQ(e.num_features, 3u);
  EXPECT_EQ(e.feature_names, (std::vector<std::string>{"f1", "f2", "f3"}));
  ASSERT_EQ(e.specs.size(), 1u);
  EXPECT_EQ(e.specs[0].kind, FeatureSpec::Kind::kIndex);
  EXPECT_EQ(e.positive_value, "+1");
}

TEST(LibsvmReader, ZeroOneLabelsCommentsCrlfAndEmptyRows) {
  const std::string text =
      "# a header comment\r\n"
      "1.0 2:1 # trailing comment\r\n"
      "\r\n"
      "0\r\n"
      "  1\t1:3\t5:-1.5e-1\r\n";
  const Dataset ds = parse_libsvm(text, LibsvmOptions{});
  ASSERT_EQ(ds.num_rows(), 3u);
  EXPECT_EQ(ds.num_features(), 5u);
  EXPECT_EQ(ds.labels().names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(ds.labels().values, (std::vector<std::int32_t>{1, 0, 1}));
  EXPECT_EQ(ds.features().nnz(), 3u);
  EXPECT_DOUBLE_EQ(ds.features().at(2, 4), -0.15);
  EXPECT_EQ(ds.encoding().positive_value, "1");
}

TEST(LibsvmReader, NumFeaturesWidens) {
  LibsvmOptions o;
  o.num_features = 123;
  const Dataset ds = parse_libsvm("-1 3:1 122:1\n", o, "a9a.t");
  EXPECT_EQ(ds.num_features(), 123u);
  EXPECT_EQ(ds.encoding().feature_names.back(), "f123");
  EXPECT_DOUBLE_EQ(ds.features().at(0, 121), 1.0);

  o.num_features = 100;
  const std::string msg =
      error_of<ParseError>([&] { (void)parse_libsvm("-1 3:1\n+1 122:1\n", o, "a9a.t"); });
  EXPECT_TRUE(contains(msg, "a9a.t:2:4")) << msg;
  EXPECT_TRUE(contains(msg, "feature index 122 exceeds num_features = 100")) << msg;
}

TEST(LibsvmReader, MulticlassSortedNumerically) {
  const Dataset ds = parse_libsvm("3 1:1\n1 1:2\n10 2:1\n3 2:2\n", LibsvmOptions{});
  EXPECT_EQ(ds.labels().kind, LabelKind::kMulticlass);
  EXPECT_EQ(ds.labels().names, (std::vector<std::string>{"1", "3", "10"}));
  EXPECT_EQ(ds.labels().values, (std::vector<std::int32_t>{1, 0, 2, 1}));
}

TEST(LibsvmReader, MultilabelWithCommasAndEmptySets) {
  const Dataset ds = parse_libsvm("0,2 1:1\n 2:1\n1 1:1\n3,1 2:0.5\n", LibsvmOptions{});
  const Labels& y = ds.labels();
  ASSERT_EQ(y.kind, LabelKind::kMultilabel);
  EXPECT_EQ(y.names, (std::vector<std::string>{"0", "1", "2", "3"}));
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(std::vector<std::int32_t>(y.label_set(0).begin(), y.label_set(0).end()),
            (std::vector<std::int32_t>{0, 2}));
  EXPECT_TRUE(y.label_set(1).empty());
  EXPECT_EQ(std::vector<std::int32_t>(y.label_set(3).begin(), y.label_set(3).end()),
            (std::vector<std::int32_t>{1, 3}));

  LibsvmOptions forced;
  forced.multilabel = true;
  const Dataset f = parse_libsvm("1 1:1\n0 2:1\n", forced);
  EXPECT_EQ(f.labels().kind, LabelKind::kMultilabel);
  EXPECT_EQ(f.labels().names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(f.labels().set_indices, (std::vector<std::int32_t>{1, 0}));
}

TEST(LibsvmReader, EmptyInput) {
  const Dataset ds = parse_libsvm("", LibsvmOptions{});
  EXPECT_EQ(ds.num_rows(), 0u);
  EXPECT_EQ(ds.labels().kind, LabelKind::kNone);
}

// ---- malformed input ----------------------------------------------------------------------------

struct BadLine {
  std::string line;
  std::string expected;  // part of the message
};

TEST(LibsvmMalformed, FeatureTokens) {
  const std::vector<BadLine> cases = {
      {"1 3:1 abc", "a9a:3:7: expected 'index:value', found 'abc'"},
      {"1 3:1 2:1", "a9a:3:7: expected a feature index greater than 3"},
      {"1 3:1 3:1", "a9a:3:7: expected a feature index greater than 3"},
      {"1 0:1", "a9a:3:3: expected a positive feature index, found '0:1'"},
      {"1 -2:1", "a9a:3:3: expected a positive feature index, found '-2:1'"},
      {"1 3:", "a9a:3:3: expected 'index:value', found '3:'"},
      {"1 :4", "a9a:3:3: expected 'index:value', found ':4'"},
      {"1 3:abc", "a9a:3:3: expected a number after '3:', found '3:abc'"},
      {"1 3:nan", "a9a:3:3: expected a finite number after '3:', found '3:nan'"},
      {"1 3:inf", "a9a:3:3: expected a finite number after '3:', found '3:inf'"},
      {"1 x:1", "a9a:3:3: expected an integer feature index"},
      {"1 99999999999:1", "a9a:3:3: expected a feature index of at most 2147483647"},
  };
  for (const auto& c : cases) {
    const std::string text = "+1 1:1\n-1 2:1\n" + c.line + "\n";
    const std::string msg =
        error_of<ParseError>([&] { (void)parse_libsvm(text, LibsvmOptions{}, "a9a"); });
    EXPECT_TRUE(contains(msg, c.expected)) << "line '" << c.line << "': " << msg;
  }
}

TEST(LibsvmMalformed, Labels) {
  const std::vector<BadLine> cases = {
      {"abc 1:1", "l.svm:2:1: expected an integer label"},
      {"0.5 1:1",
       "l.svm:2:1: expected an integer label (-1/+1, 0/1 or a class number), found '0.5'"},
      {"1:1 2:1", "l.svm:2:1: expected a label before the features, found '1:1'"},
  };
  for (const auto& c : cases) {
    const std::string text = "1 1:1\n" + c.line + "\n";
    const std::string msg =
        error_of<ParseError>([&] { (void)parse_libsvm(text, LibsvmOptions{}, "l.svm"); });
    EXPECT_TRUE(contains(msg, c.expected)) << "line '" << c.line << "': " << msg;
  }
  const std::vector<BadLine> multi = {
      {"0,-1 1:1", "m.svm:2:3: expected a label id in [0, 1048575]"},
      {"0,,1 1:1", "m.svm:2:3: expected a label id"},
      {"1,1 1:1", "m.svm:2:1: label 1 appears twice in '1,1'"},
      {"a,b 1:1", "m.svm:2:1: expected a label id"},
      {"5000000 1:1", "m.svm:2:1: expected a label id in [0, 1048575]"},
  };
  for (const auto& c : multi) {
    const std::string text = "0,1 1:1\n" + c.line + "\n";
    const std::string msg =
        error_of<ParseError>([&] { (void)parse_libsvm(text, LibsvmOptions{}, "m.svm"); });
    EXPECT_TRUE(contains(msg, c.expected)) << "line '" << c.line << "': " << msg;
  }
}

TEST(LibsvmMalformed, MissingFile) {
  const std::string msg = error_of<IoError>([] { (void)read_libsvm("/no/such/a9a.t"); });
  EXPECT_TRUE(contains(msg, "/no/such/a9a.t")) << msg;
}

}  // namespace
}  // namespace rateopt
