// Whole-file reading (gzip detection, errors), format dispatch, MULAN XML and sibling lookup.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

using test::io_fixture;

using test::write_temp;

const std::string kSmall = "a,b,y\n1,x,1\n2,y,0\n3,x,1\n";

TEST(IoReadTextFile, PlainGzipConcatenatedAndMagicDetection) {
  EXPECT_EQ(read_text_file(io_fixture("small.csv.gz")), kSmall);
  EXPECT_EQ(read_text_file(io_fixture("concat.csv.gz")), kSmall);
  // gzip detected from the magic bytes, whatever the name.
  EXPECT_EQ(read_text_file(io_fixture("gzipped_without_suffix.data")), kSmall);
  EXPECT_EQ(read_text_file(io_fixture("tiny.svm")), "+1 1:1 3:0.5\n-1 2:2\n");
  const std::string empty = write_temp("empty.txt", "");
  EXPECT_EQ(read_text_file(empty), "");
}

TEST(IoReadTextFile, TruncatedGzipAndMissingFile) {
  const std::string path = io_fixture("truncated.csv.gz");
  const std::string msg = error_of<IoError>([&] { (void)read_text_file(path); });
  EXPECT_TRUE(contains(msg, path)) << msg;
  EXPECT_TRUE(contains(msg, "truncated") || contains(msg, "corrupt")) << msg;

  const std::string missing = error_of<IoError>([] { (void)read_text_file("/no/such/file.csv"); });
  EXPECT_TRUE(contains(missing, "/no/such/file.csv")) << missing;
  EXPECT_TRUE(contains(missing, "No such file")) << missing;

  const std::string dir = error_of<IoError>([] { (void)read_text_file(::testing::TempDir()); });
  EXPECT_TRUE(contains(dir, "directory")) << dir;

  // Not gzip after a valid member.
  std::ifstream in(io_fixture("small.csv.gz"), std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string garbage = write_temp("garbage.gz", raw + "junk");
  const std::string g = error_of<IoError>([&] { (void)read_text_file(garbage); });
  EXPECT_TRUE(contains(g, "trailing garbage")) << g;
  // A corrupt deflate stream.
  std::string corrupt = raw;
  for (std::size_t i = 12; i < corrupt.size() - 8; ++i) corrupt[i] = static_cast<char>(0xff);
  const std::string c = write_temp("corrupt.gz", corrupt);
  const std::string cm = error_of<IoError>([&] { (void)read_text_file(c); });
  EXPECT_TRUE(contains(cm, "corrupt gzip stream")) << cm;
}

TEST(IoReadDataset, FormatFromExtensionOrOption) {
  ReadOptions o;
  o.csv.label_column = "y";
  const Dataset csv = read_dataset(io_fixture("small.csv.gz"), o);
  EXPECT_EQ(csv.encoding().format, "csv");
  EXPECT_EQ(csv.num_rows(), 3u);
  EXPECT_EQ(csv.source(), io_fixture("small.csv.gz"));

  ReadOptions t;
  t.csv.label_column = "y";
  const Dataset tsv = read_dataset(io_fixture("tiny.tsv"), t);
  EXPECT_EQ(tsv.encoding().format, "csv");
  EXPECT_EQ(tsv.labels().names, (std::vector<std::string>{"-1", "+1"}));

  const Dataset svm = read_dataset(io_fixture("tiny.svm"));
  EXPECT_EQ(svm.encoding().format, "libsvm");
  EXPECT_EQ(svm.num_features(), 3u);

  ReadOptions forced;
  forced.format = FileFormat::kCsv;
  forced.csv.label_column = "y";
  const Dataset magic = read_dataset(io_fixture("gzipped_without_suffix.data"), forced);
  EXPECT_EQ(magic.num_rows(), 3u);

  // LIBSVM with a reused encoding takes its width.
  ReadOptions widen;
  Encoding enc = svm.encoding();
  enc.num_features = 10;
  enc.feature_names.clear();
  widen.encoding = &enc;
  EXPECT_EQ(read_dataset(io_fixture("tiny.svm"), widen).num_features(), 10u);
}

// In memory (what the fuzz targets call): the same bytes and errors as reading the file.
TEST(IoDecompressGzip, MatchesReadTextFileAndPassesPlainBytes) {
  std::ifstream in(io_fixture("concat.csv.gz"), std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(decompress_gzip(raw, "c.gz"), kSmall);
  EXPECT_EQ(decompress_gzip(raw + std::string(7, '\0'), "c.gz"), kSmall);  // zero padding
  EXPECT_EQ(decompress_gzip("plain,text\n", "p"), "plain,text\n");
  EXPECT_EQ(decompress_gzip("", "p"), "");
  const std::string t =
      error_of<IoError>([&] { (void)decompress_gzip(raw.substr(0, 20), "t.gz"); });
  EXPECT_TRUE(contains(t, "'t.gz'") && contains(t, "truncated")) << t;
  const std::string m = error_of<IoError>([] { (void)decompress_gzip("\x1f\x8b", "m.gz"); });
  EXPECT_TRUE(contains(m, "m.gz")) << m;
}

TEST(IoMulanXml, ParseFromMemory) {
  EXPECT_EQ(parse_mulan_labels("<labels><label name=\"a\"/><label name='b&amp;c'/></labels>"),
            (std::vector<std::string>{"a", "b&c"}));
  const std::string d =
      error_of<ParseError>([] { (void)parse_mulan_labels("<labels>\n<x/>\n</labels>", "m.xml"); });
  EXPECT_TRUE(contains(d, "m.xml")) << d;
}

TEST(IoMulanXml, NamesInOrderWithEntitiesAndNesting) {
  EXPECT_EQ(read_mulan_labels(io_fixture("mini.xml")), (std::vector<std::string>{"A", "B & C"}));
  const std::string path =
      write_temp("h.xml",
                 "<?xml version=\"1.0\"?>\n<labels>\n<!-- <label name=\"commented\"/> -->\n"
                 "<label name='p&lt;1&gt;'><label name=\"c&#233;&#x41;\"></label></label>\n"
                 "<labels><label   name = \"q&quot;\" /></labels>\n</labels>\n");
  EXPECT_EQ(read_mulan_labels(path), (std::vector<std::string>{"p<1>",
                                                               "c\xc3\xa9"
                                                               "A",
                                                               "q\""}));
}

TEST(IoMulanXml, Malformed) {
  const std::string none = write_temp("none.xml", "<labels></labels>\n");
  EXPECT_THROW((void)read_mulan_labels(none), ParseError);
  const std::string dup =
      write_temp("dup.xml", "<labels>\n<label name=\"a\"/>\n<label name=\"a\"/>\n</labels>");
  const std::string d = error_of<ParseError>([&] { (void)read_mulan_labels(dup); });
  EXPECT_TRUE(contains(d, "dup.xml:3:1: label 'a' is listed twice")) << d;
  const std::string ent = write_temp("ent.xml", "<labels>\n<label name=\"a&bogus;\"/>\n</labels>");
  const std::string e = error_of<ParseError>([&] { (void)read_mulan_labels(ent); });
  EXPECT_TRUE(contains(e, "ent.xml:2")) << e;
  EXPECT_TRUE(contains(e, "unknown XML entity 'bogus'")) << e;
  const std::string noname = write_temp("noname.xml", "<labels><label id=\"a\"/></labels>");
  EXPECT_THROW((void)read_mulan_labels(noname), ParseError);
  const std::string open = write_temp("open.xml", "<labels><label name=\"a");
  EXPECT_THROW((void)read_mulan_labels(open), ParseError);
  EXPECT_THROW((void)read_mulan_labels("/no/such/labels.xml"), IoError);
}

TEST(IoReadDataset, ArffUsesSiblingMulanXml) {
  ReadStats stats;
  const Dataset train = read_dataset(io_fixture("mini-train.arff"), {}, &stats);
  EXPECT_EQ(stats.lines, 10u);
  EXPECT_EQ(train.labels().kind, LabelKind::kMultilabel);
  EXPECT_EQ(train.labels().names, (std::vector<std::string>{"A", "B & C"}));  // XML order
  const auto s0 = train.labels().label_set(0);
  EXPECT_EQ(std::vector<std::int32_t>(s0.begin(), s0.end()), (std::vector<std::int32_t>{1}));
  EXPECT_EQ(train.encoding().feature_names,
            (std::vector<std::string>{"x1", "colour=red", "colour=green", "colour=blue"}));

  // The gzipped sparse test split, read with the training encoding.
  ReadOptions o;
  o.encoding = &train.encoding();
  const Dataset test = read_dataset(io_fixture("mini-test.arff.gz"), o);
  ASSERT_EQ(test.num_rows(), 2u);
  EXPECT_TRUE(test.features().is_sparse());
  EXPECT_EQ(test.num_features(), train.num_features());
  EXPECT_DOUBLE_EQ(test.features().at(0, 0), 2.5);
  EXPECT_DOUBLE_EQ(test.features().at(0, 1), 1.0);  // omitted -> 'red'
  EXPECT_DOUBLE_EQ(test.features().at(1, 3), 1.0);
  const auto t1 = test.labels().label_set(1);
  EXPECT_EQ(std::vector<std::int32_t>(t1.begin(), t1.end()), (std::vector<std::int32_t>{0}));

  // num_labels set: the last attributes, no XML lookup.
  ReadOptions last;
  last.arff.num_labels = 1;
  EXPECT_EQ(read_dataset(io_fixture("mini-train.arff"), last).labels().names,
            (std::vector<std::string>{"A"}));
  // An explicit XML path.
  ReadOptions explicit_xml;
  explicit_xml.format = FileFormat::kArff;
  explicit_xml.arff.xml_path = io_fixture("mini.xml");
  EXPECT_EQ(read_dataset(io_fixture("mini-train.arff"), explicit_xml).labels().size(), 3u);
}

}  // namespace
}  // namespace rateopt
