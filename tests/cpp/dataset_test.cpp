#include "rateopt/dataset.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

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

// select_rows keeps the row parts (the files a dataset was read from) when the rows increase:
// each part's selected rows, empty parts included, so a subset sums per file alike in one
// process and over ranks; other row orders give one part.
TEST(Dataset, SelectRowsKeepsTheRowPartsOfIncreasingRows) {
  Labels y;
  y.kind = LabelKind::kBinary;
  y.names = {"0", "1"};
  y.values = {0, 1, 0, 1, 0, 1, 0, 1, 0};
  Dataset d(FeatureMatrix::dense(std::vector<double>(9, 1.0), 9, 1), y);
  d.set_row_parts({3, 2, 4});
  const std::vector<std::size_t> rows{0, 2, 7, 8};
  const Dataset sub = select_rows(d, rows);
  EXPECT_EQ(std::vector<std::size_t>(sub.row_parts().begin(), sub.row_parts().end()),
            (std::vector<std::size_t>{2, 0, 2}));
  const std::vector<std::size_t> shuffled{2, 0, 7};
  EXPECT_TRUE(select_rows(d, shuffled).row_parts().empty());
  const std::vector<std::size_t> repeated{0, 0, 7};
  EXPECT_TRUE(select_rows(d, repeated).row_parts().empty());
  Dataset plain(FeatureMatrix::dense(std::vector<double>(9, 1.0), 9, 1), y);
  EXPECT_TRUE(select_rows(plain, rows).row_parts().empty());
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

// A part of concat_rows' tests: rows of x (dense or CSR), 0/1 labels, a "g" column, weights.
Dataset concat_part(const std::vector<double>& x, std::size_t cols, bool sparse,
                    const std::vector<std::int32_t>& y, const std::vector<std::string>& g,
                    std::vector<double> weights = {}) {
  const std::size_t rows = y.size();
  FeatureMatrix m = FeatureMatrix::dense(x, rows, cols);
  if (sparse) {
    std::vector<std::int64_t> indptr{0};
    std::vector<std::int32_t> indices;
    std::vector<double> values;
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < cols; ++j) {
        if (x[i * cols + j] == 0) continue;
        indices.push_back(static_cast<std::int32_t>(j));
        values.push_back(x[i * cols + j]);
      }
      indptr.push_back(static_cast<std::int64_t>(indices.size()));
    }
    m = FeatureMatrix::csr(indptr, indices, values, cols);
  }
  Labels labels;
  labels.kind = LabelKind::kBinary;
  labels.values = y;
  labels.names = {"0", "1"};
  Dataset d(std::move(m), std::move(labels));
  Column c;
  c.name = "g";
  for (const auto& v : g) c.push_back(v, v.empty());
  d.add_column(std::move(c));
  if (!weights.empty()) d.set_weights(std::move(weights));
  return d;
}

TEST(ConcatRows, StacksFeaturesLabelsWeightsAndMergesColumnLevels) {
  for (const bool sparse : {false, true}) {
    std::vector<Dataset> parts;
    parts.push_back(concat_part({1, 0, 0, 2}, 2, sparse, {1, 0}, {"b", "a"}));
    parts.push_back(concat_part({3, 4}, 2, sparse, {1}, {"c"}, {2.5}));
    parts.push_back(concat_part({0, 0, 5, 0}, 2, sparse, {0, 0}, {"a", ""}));
    parts[0].set_source("p0.csv");
    const Dataset d = concat_rows(std::move(parts));
    ASSERT_EQ(d.num_rows(), 5u);
    EXPECT_EQ(d.features().is_sparse(), sparse);
    const std::vector<double> want{1, 0, 0, 2, 3, 4, 0, 0, 5, 0};
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = 0; j < 2; ++j) EXPECT_EQ(d.features().at(i, j), want[i * 2 + j]);
    EXPECT_EQ(d.labels().values, (std::vector<std::int32_t>{1, 0, 1, 0, 0}));
    EXPECT_EQ(std::vector<double>(d.weights().begin(), d.weights().end()),
              (std::vector<double>{1, 1, 2.5, 1, 1}));
    const Column& g = d.column("g");
    EXPECT_EQ(g.levels, (std::vector<std::string>{"b", "a", "c"}));
    EXPECT_EQ(g.codes, (std::vector<std::int32_t>{0, 1, 2, 1, -1}));
    EXPECT_EQ(d.source(), "p0.csv");
  }
}

// Parts larger than the 8 MB chunks whose pages are given back while they are copied (dense
// rows; CSR indptr, indices and values): every value arrives, and the row parts record each
// part's rows.
TEST(ConcatRows, LargePartsArriveWholeWhileTheirPagesAreReleased) {
  const std::size_t cols = 60;
  const std::vector<std::size_t> rows{20000, 3, 41000};
  for (const bool sparse : {false, true}) {
    std::vector<Dataset> parts;
    std::size_t first = 0;
    for (const std::size_t n : rows) {
      std::vector<double> x(n * cols);
      for (std::size_t k = 0; k < x.size(); ++k) {
        const std::size_t at = first * cols + k;
        x[k] = sparse && at % 3 == 0 ? 0.0 : static_cast<double>(at);  // a third of zeros in CSR
      }
      std::vector<std::int32_t> y(n, 0);
      y[n - 1] = 1;
      std::vector<std::string> g(n, "a");
      parts.push_back(concat_part(x, cols, sparse, y, g));
      first += n;
    }
    const Dataset d = concat_rows(std::move(parts));
    ASSERT_EQ(d.num_rows(), first);
    ASSERT_EQ(d.features().is_sparse(), sparse);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < d.num_rows(); ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t at = i * cols + j;
        const double want = sparse && at % 3 == 0 ? 0.0 : static_cast<double>(at);
        wrong += d.features().at(i, j) == want ? 0 : 1;
      }
    EXPECT_EQ(wrong, 0u) << (sparse ? "csr" : "dense");
    if (sparse) {
      EXPECT_EQ(d.features().nnz(), first * cols - (first * cols + 2) / 3);
    }
    EXPECT_EQ(std::vector<std::size_t>(d.row_parts().begin(), d.row_parts().end()), rows);
    EXPECT_EQ(d.column("g").codes.size(), first);
    EXPECT_EQ(d.labels().values[rows[0] - 1], 1);
    EXPECT_EQ(d.labels().values[first - 1], 1);
    EXPECT_EQ(d.labels().values[first - 2], 0);
  }
}

// keep_columns drops the columns not named; a lookup of a dropped one says it was not kept,
// also after concat_rows.
TEST(Dataset, KeepColumnsDropsTheOthersAndNamesThemWhenOneIsAskedFor) {
  std::vector<Dataset> parts;
  for (int k = 0; k < 2; ++k) {
    Dataset d = concat_part({1, 2}, 2, false, {1}, {"a"});
    Column h;
    h.name = "h";
    h.push_back("x");
    d.add_column(std::move(h));
    d.keep_columns(std::vector<std::string>{"h", "absent"}, std::vector<std::string>{"before"});
    parts.push_back(std::move(d));
  }
  const Dataset d = concat_rows(std::move(parts));
  ASSERT_EQ(d.columns().size(), 1u);
  EXPECT_EQ(d.columns()[0].name, "h");
  EXPECT_EQ(d.dropped_columns(), (std::vector<std::string>{"before", "g"}));
  try {
    (void)d.column("g");
    FAIL() << "expected NotFound";
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("(available: h; not kept by this command, which reads "
                                         "only the columns its expressions name: before, g)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ConcatRows, PartsReadWithDifferentEncodingsAreAnError) {
  std::vector<Dataset> parts;
  parts.push_back(concat_part({1, 2}, 2, false, {1}, {"a"}));
  parts.push_back(concat_part({1, 2, 3}, 3, false, {1}, {"a"}));
  parts[1].set_source("p1.csv");
  try {
    (void)concat_rows(std::move(parts));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("p1.csv has 3 features, but a part has 2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)concat_rows({}), InvalidArgument);
}

TEST(ConcatRows, DenseAndSparsePartsConcatenateAsCsr) {
  // A reader stores a small file dense and a large sparse one as CSR: the result is CSR with
  // every value in place, whatever the order of the parts.
  for (const bool dense_first : {true, false}) {
    std::vector<Dataset> parts;
    parts.push_back(concat_part({1, 0, 0, 2}, 2, !dense_first, {1, 0}, {"a", "b"}));
    parts.push_back(concat_part({0, 3}, 2, dense_first, {1}, {"a"}));
    const Dataset d = concat_rows(std::move(parts));
    ASSERT_TRUE(d.features().is_sparse());
    const std::vector<double> want{1, 0, 0, 2, 0, 3};
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 2; ++j) EXPECT_EQ(d.features().at(i, j), want[i * 2 + j]);
    EXPECT_EQ(d.features().nnz(), 3u);
  }
}

// merge_encodings against one reading of the concatenated text: the same columns, one-hot
// levels in first-appearance order, and means and scales equal to rounding.
TEST(MergeEncodings, AgreesWithOneReadingOfAllTheRows) {
  const std::string header = "age,city,y\n";
  const std::vector<std::string> bodies{"30,Rome,1\n41,Oslo,0\n", "25,Lima,1\n",
                                        "77,Oslo,0\n19,Rome,1\n60,Kyiv,0\n"};
  CsvOptions o;
  o.label_column = "y";
  std::vector<InferredEncoding> parts;
  std::string all = header;
  for (std::size_t k = 0; k < bodies.size(); ++k) {
    ReadStats stats;
    InferredEncoding e;
    e.encoding = parse_csv(header + bodies[k], o, "part", nullptr, &stats).encoding();
    e.moments = stats.moments;
    e.source = "part" + std::to_string(k);
    ASSERT_EQ(e.moments.size(), e.encoding.specs.size());
    parts.push_back(std::move(e));
    all += bodies[k];
  }
  const Encoding want = parse_csv(all, o, "all").encoding();
  const Encoding got = merge_encodings(parts, true);
  EXPECT_EQ(got.feature_names, want.feature_names);
  EXPECT_EQ(got.num_features, want.num_features);
  ASSERT_EQ(got.specs.size(), want.specs.size());
  for (std::size_t k = 0; k < got.specs.size(); ++k) {
    EXPECT_EQ(got.specs[k].levels, want.specs[k].levels);
    EXPECT_EQ(got.specs[k].first_feature, want.specs[k].first_feature);
    EXPECT_NEAR(got.specs[k].offset, want.specs[k].offset, 1e-12 * std::abs(want.specs[k].offset));
    EXPECT_NEAR(got.specs[k].scale, want.specs[k].scale, 1e-12 * want.specs[k].scale);
  }
  EXPECT_EQ(got.feature_names[1], "city=Rome");  // first appearance over the parts in order
  // A column numeric in one part and categorical in another cannot be merged.
  ReadStats stats;
  InferredEncoding odd;
  odd.encoding = parse_csv(header + "old,Rome,1\n", o, "odd", nullptr, &stats).encoding();
  odd.moments = stats.moments;
  odd.source = "odd.csv";
  parts.push_back(odd);
  try {
    (void)merge_encodings(parts, true);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("column 'age' is numeric in part2 but categorical in "
                                         "odd.csv"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rateopt
