// The binary dataset cache: every array survives a round trip exactly (dense and CSR features,
// binary and multi-label labels, weights, numeric and categorical slice columns, the encoding),
// read_dataset recognises it by its magic bytes, and every truncation or flipped byte of a file
// is a clear error (never a crash or a silently different dataset).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::write_temp;

using test::slurp;

using test::expect_same_dataset;

Dataset small_csv() {
  CsvOptions o;
  o.label_column = "y";
  o.positive_values = {"yes"};
  o.group_columns = {"sex", "age"};
  o.weight_column = "w";
  o.missing = MissingPolicy::kZero;
  return parse_csv(
      "x,sex,age,color,w,y\n1.5,F,30,red,1,yes\n-2,M,41,blue,2.5,no\n?,F,30,red,0.5,no\n"
      "7,M,?,green,1,yes\n",
      o, "small.csv");
}

Dataset small_multilabel() {
  return parse_libsvm("0,2 1:0.5 3:1\n 2:2\n1 1:1 2:1 3:1\n2 4:-1\n", LibsvmOptions{}, "small.svm");
}

TEST(BinaryDataset, RoundTripsDenseCsvWithColumnsWeightsAndEncoding) {
  const Dataset ds = small_csv();
  ASSERT_FALSE(ds.weights().empty());
  const std::string path = ::testing::TempDir() + "rt_dense.rods";
  write_dataset_binary(ds, path);
  EXPECT_TRUE(is_dataset_binary(path));
  expect_same_dataset(ds, read_dataset_binary(path));
  expect_same_dataset(ds, read_dataset(path));  // found by its magic bytes, whatever its name
  EXPECT_EQ(read_dataset(path).source(), path);
}

TEST(BinaryDataset, RoundTripsCsrMultilabel) {
  const Dataset ds = small_multilabel();
  ASSERT_TRUE(ds.features().is_sparse());
  ASSERT_EQ(ds.labels().kind, LabelKind::kMultilabel);
  const std::string path = ::testing::TempDir() + "rt_csr.bin";
  write_dataset_binary(ds, path);
  expect_same_dataset(ds, read_dataset(path));
}

// ReadOptions::keep_columns: the binary reader drops the columns not named as it reads them
// (the CSV reader after its read), and the dataset names them when one is asked for.
TEST(BinaryDataset, KeepColumnsDropsTheOthersInBothReaders) {
  const std::string path = ::testing::TempDir() + "keep.rods";
  write_dataset_binary(small_csv(), path);
  const std::string csv =
      write_temp("keep.csv", "x,sex,age,color,w,y\n1.5,F,30,red,1,yes\n-2,M,41,blue,2.5,no\n");
  ReadOptions o;
  o.csv.label_column = "y";
  o.csv.group_columns = {"sex", "age"};
  o.keep_columns = std::vector<std::string>{"age", "not-a-column"};
  for (const std::string& file : {path, csv}) {
    const Dataset d = read_dataset(file, o);
    ASSERT_EQ(d.columns().size(), 1u) << file;
    EXPECT_EQ(d.columns()[0].name, "age");
    EXPECT_EQ(d.column("age").codes.size(), d.num_rows());
    EXPECT_EQ(d.dropped_columns(), (std::vector<std::string>{"x", "sex", "color", "w", "y"}));
    EXPECT_THROW((void)d.column("sex"), NotFound);
  }
  o.keep_columns.reset();
  EXPECT_EQ(read_dataset(path, o).columns().size(), 6u);
}

TEST(BinaryDataset, TextFilesAreNotBinary) {
  const std::string path = write_temp("not_binary.csv", "a,y\n1,0\n");
  EXPECT_FALSE(is_dataset_binary(path));
  EXPECT_FALSE(is_dataset_binary(::testing::TempDir() + "does_not_exist.rods"));
  const std::string msg = test::error_of<ParseError>([&] { (void)read_dataset_binary(path); });
  EXPECT_TRUE(test::contains(msg, "not a rateopt binary dataset")) << msg;
  EXPECT_THROW((void)read_dataset_binary(::testing::TempDir() + "does_not_exist.rods"), IoError);
}

// Every proper prefix of a valid file, and the file with any one byte changed, is rejected with
// a ParseError naming the file (CRC-32 detects every single-byte change).
TEST(BinaryDataset, EveryTruncationAndEveryFlippedByteIsAnError) {
  for (const Dataset& ds : {small_csv(), small_multilabel()}) {
    const std::string good = ::testing::TempDir() + "corrupt_src.rods";
    write_dataset_binary(ds, good);
    const std::string bytes = slurp(good);
    ASSERT_GT(bytes.size(), 100U);
    const std::string bad = ::testing::TempDir() + "corrupt.rods";
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      write_temp("corrupt.rods", bytes.substr(0, n));
      try {
        (void)read_dataset_binary(bad);
        ADD_FAILURE() << "a prefix of " << n << " bytes was accepted";
      } catch (const ParseError& e) {
        EXPECT_TRUE(test::contains(e.what(), "corrupt.rods")) << e.what();
      }
    }
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      std::string flipped = bytes;
      flipped[k] = static_cast<char>(flipped[k] ^ 0x5a);
      write_temp("corrupt.rods", flipped);
      EXPECT_THROW((void)read_dataset_binary(bad), ParseError) << "byte " << k;
    }
    write_temp("corrupt.rods", bytes + "x");
    EXPECT_THROW((void)read_dataset_binary(bad), ParseError);
  }
}

// The encoding alone (what a pattern of binary shards agrees on) is the stored one; a prefix of
// the file is a ParseError (or the encoding, once the file holds it whole), never a crash, and a
// flipped byte is an error or some encoding, never a huge allocation.
TEST(BinaryDataset, TheEncodingAloneIsReadBySkippingTheArrays) {
  for (const Dataset& ds : {small_csv(), small_multilabel()}) {
    const std::string good = ::testing::TempDir() + "encoding_src.rods";
    write_dataset_binary(ds, good);
    EXPECT_EQ(read_dataset_binary_encoding(good).to_json(), ds.encoding().to_json());
    const std::string bytes = slurp(good);
    const std::string bad = ::testing::TempDir() + "encoding_cut.rods";
    for (std::size_t n = 0; n + 4 < bytes.size(); ++n) {  // the last 4 bytes are the CRC
      write_temp("encoding_cut.rods", bytes.substr(0, n));
      try {
        (void)read_dataset_binary_encoding(bad);
        ADD_FAILURE() << "a prefix of " << n << " bytes gave an encoding";
      } catch (const ParseError& e) {
        EXPECT_TRUE(test::contains(e.what(), "encoding_cut.rods")) << e.what();
      }
    }
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      std::string flipped = bytes;
      flipped[k] = static_cast<char>(flipped[k] ^ 0x5a);
      write_temp("encoding_cut.rods", flipped);
      try {
        (void)read_dataset_binary_encoding(bad);
      } catch (const ParseError&) {
      } catch (const InvalidArgument&) {
      }
    }
  }
  const std::string text = write_temp("encoding_text.csv", "a,y\n1,0\n");
  EXPECT_THROW((void)read_dataset_binary_encoding(text), ParseError);
}

// A row count the file cannot hold is an error before anything is allocated or looped over, even
// for a matrix of 0 columns (whose rows take no feature bytes).
TEST(BinaryDataset, ARowCountLargerThanTheFileIsAnError) {
  Dataset ds(FeatureMatrix::dense({}, 3, 0), Labels{});
  ds.encoding().num_features = 0;
  const std::string path = ::testing::TempDir() + "zero_cols.rods";
  write_dataset_binary(ds, path);
  EXPECT_EQ(read_dataset_binary(path).num_rows(), 3U);
  std::string bytes = slurp(path);
  const std::uint64_t huge = std::uint64_t{1} << 40;
  std::memcpy(bytes.data() + 17, &huge, sizeof huge);  // magic, version, flags, storage flag
  write_temp("zero_cols_huge.rods", bytes);
  const std::string msg = test::error_of<ParseError>(
      [&] { (void)read_dataset_binary(::testing::TempDir() + "zero_cols_huge.rods"); });
  EXPECT_TRUE(test::contains(msg, "claims 1099511627776 rows")) << msg;
}

TEST(BinaryDataset, ModelEncodingMustMatchTheStoredFeatures) {
  const Dataset ds = small_csv();
  const std::string path = ::testing::TempDir() + "enc.rods";
  write_dataset_binary(ds, path);
  Encoding same = ds.encoding();
  same.positive_value = "other";  // label fields may differ
  same.missing_policy = "error";  // so may the missing-value policy
  EXPECT_NO_THROW((void)read_dataset_binary(path, &same));
  Encoding other = ds.encoding();
  other.specs.front().scale *= 2;
  const std::string msg =
      test::error_of<InvalidArgument>([&] { (void)read_dataset_binary(path, &other); });
  EXPECT_TRUE(test::contains(msg, "rateopt convert --model")) << msg;
  ReadOptions ro;
  ro.encoding = &other;
  EXPECT_THROW((void)read_dataset(path, ro), InvalidArgument);
}

TEST(BinaryDataset, AFailedWriteKeepsTheOldFile) {
  const std::string path = write_temp("keep.rods", "old content");
  EXPECT_THROW(write_dataset_binary(small_csv(), "/dev/full"), WriteError);
  EXPECT_THROW(write_dataset_binary(small_csv(), ::testing::TempDir() + "no/such/dir.rods"),
               WriteError);
  EXPECT_EQ(slurp(path), "old content");
}

}  // namespace
}  // namespace rateopt
