#include "rateopt/dataset.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rateopt/error.hpp"

namespace rateopt {
namespace {

TEST(FeatureMatrix, DenseAndCsrAgree) {
  auto d = FeatureMatrix::dense({1, 0, 2, 0, 3, 0}, 2, 3);
  auto s = FeatureMatrix::csr({0, 2, 3}, {0, 2, 1}, {1, 2, 3}, 3);
  const std::vector<double> w{0.5, -1, 2};
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_DOUBLE_EQ(d.row_dot(i, w), s.row_dot(i, w));
    for (std::size_t j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ(d.at(i, j), s.at(i, j));
  }
  EXPECT_EQ(s.nnz(), 3u);
  EXPECT_EQ(d.nnz(), 3u);
  std::vector<double> g(3, 0.0);
  s.row_axpy(0, 2.0, g);
  EXPECT_DOUBLE_EQ(g[0], 2.0);
  EXPECT_DOUBLE_EQ(g[2], 4.0);
}

TEST(FeatureMatrix, RejectsBadCsr) {
  EXPECT_THROW(FeatureMatrix::csr({0, 2}, {1, 0}, {1, 1}, 3), InvalidArgument);  // not increasing
  EXPECT_THROW(FeatureMatrix::csr({0, 1}, {3}, {1}, 3), InvalidArgument);        // out of range
  EXPECT_THROW(FeatureMatrix::csr({0, 2}, {0}, {1}, 3), InvalidArgument);        // nnz mismatch
  // An offset past nnz before indptr decreases again (a fuzz finding of the binary dataset
  // reader): rejected before any row is read, never an out-of-bounds read.
  EXPECT_THROW(FeatureMatrix::csr({0, 100, 3}, {0, 1, 2}, {1, 1, 1}, 3), InvalidArgument);
  EXPECT_THROW(FeatureMatrix::csr({0, -4, 0}, {}, {}, 3), InvalidArgument);
  EXPECT_THROW(FeatureMatrix::dense({1, 2, 3}, 2, 2), InvalidArgument);
}

TEST(FeatureMatrix, WidenAndSelect) {
  auto d = FeatureMatrix::dense({1, 2, 3, 4}, 2, 2);
  d.set_cols(3);
  EXPECT_EQ(d.cols(), 3u);
  EXPECT_DOUBLE_EQ(d.at(1, 0), 3);
  EXPECT_DOUBLE_EQ(d.at(1, 2), 0);
  EXPECT_THROW(d.set_cols(1), InvalidArgument);
  const std::vector<std::size_t> rows{1};
  auto one = d.select_rows(rows);
  EXPECT_EQ(one.rows(), 1u);
  EXPECT_DOUBLE_EQ(one.at(0, 1), 4);
}

TEST(Column, NumericAndCategorical) {
  Column c;
  c.name = "age";
  c.push_back("30");
  c.push_back("", true);
  c.push_back("30.0");
  EXPECT_TRUE(c.is_numeric());
  EXPECT_EQ(c.codes[1], -1);
  EXPECT_EQ(c.find_level("30"), 0);
  EXPECT_EQ(c.find_level("3e1"), 0);
  Column s;
  s.push_back("Male");
  s.push_back("Female");
  EXPECT_FALSE(s.is_numeric());
  EXPECT_EQ(s.find_level("Female"), 1);
  EXPECT_EQ(s.find_level("Other"), -1);
}

TEST(Dataset, ColumnsAndWeights) {
  Labels y;
  y.kind = LabelKind::kBinary;
  y.values = {0, 1};
  y.names = {"0", "1"};
  Dataset ds(FeatureMatrix::dense({1, 2}, 2, 1), y);
  EXPECT_THROW(ds.set_weights({1.0}), InvalidArgument);
  EXPECT_THROW(ds.set_weights({1.0, -1.0}), InvalidArgument);
  ds.set_weights({1.0, 2.0});
  EXPECT_DOUBLE_EQ(ds.weight(1), 2.0);
  Column c;
  c.name = "sex";
  c.push_back("F");
  c.push_back("M");
  ds.add_column(c);
  EXPECT_EQ(&ds.column("sex"), ds.find_column("sex"));
  EXPECT_THROW((void)ds.column("race"), NotFound);
}

// Issue 10: columns are indexed by name (adding 80,000 columns used to take 40 s, quadratic).
TEST(Dataset, ManyColumnsAreIndexedAndReplacedInPlace) {
  Dataset ds(FeatureMatrix::dense({1, 2}, 2, 1), Labels{});
  constexpr int kColumns = 50'000;
  for (int j = 0; j < kColumns; ++j) {
    Column c;
    c.name = "c" + std::to_string(j);
    c.push_back(std::to_string(j));
    c.push_back("x");
    ds.add_column(std::move(c));
  }
  ASSERT_EQ(ds.columns().size(), static_cast<std::size_t>(kColumns));
  for (int j = 0; j < kColumns; j += 997) {
    const Column& c = ds.column("c" + std::to_string(j));
    EXPECT_EQ(c.levels[static_cast<std::size_t>(c.codes[0])], std::to_string(j));
    EXPECT_EQ(&c, &ds.columns()[static_cast<std::size_t>(j)]);  // order of addition kept
  }
  Column again;
  again.name = "c7";
  again.push_back("new");
  again.push_back("new");
  ds.add_column(again);  // replaces in place: same position, same count
  EXPECT_EQ(ds.columns().size(), static_cast<std::size_t>(kColumns));
  EXPECT_EQ(ds.columns()[7].levels, (std::vector<std::string>{"new"}));
  EXPECT_EQ(ds.find_column("c50000"), nullptr);
  const Dataset copy = ds;  // the index is copied with the columns
  EXPECT_EQ(&copy.column("c42"), &copy.columns()[42]);
}

TEST(Encoding, JsonRoundTrip) {
  Encoding e;
  e.format = "csv";
  e.num_features = 3;
  e.feature_names = {"age", "sex=F", "sex=M"};
  FeatureSpec a;
  a.source = "age";
  a.offset = 38.5;
  a.scale = 13.2;
  FeatureSpec b;
  b.kind = FeatureSpec::Kind::kOneHot;
  b.source = "sex";
  b.first_feature = 1;
  b.levels = {"F", "M"};
  e.specs = {a, b};
  auto back = Encoding::from_json(e.to_json());
  EXPECT_EQ(back.feature_names, e.feature_names);
  ASSERT_EQ(back.specs.size(), 2u);
  EXPECT_DOUBLE_EQ(back.specs[0].offset, 38.5);
  EXPECT_EQ(back.specs[1].levels, b.levels);
  EXPECT_THROW(Encoding::from_json("{"), ParseError);
  EXPECT_THROW(Encoding::from_json("{}"), ParseError);
}

}  // namespace
}  // namespace rateopt
