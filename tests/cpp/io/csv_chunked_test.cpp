// Reading a CSV file in chunks (read_csv_chunked, what read_csv does with an encoding) against the
// oracle of parsing its whole text with the same encoding: the same dataset bit for bit (features,
// storage, labels and their names, weights, slice columns, encoding), the same statistics and
// warnings, and the same error (file and line) for bad input, for chunk sizes from one byte to
// the whole file, on texts with quoted fields holding delimiters, doubled quotes and line breaks,
// CRLF endings, comments, blank lines, skipped banner lines, a byte-order mark and missing values.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "io/io_util.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::write_temp;

// A CSV text with every construct the tokenizer knows, `rows` records, from `seed`.
std::string tricky_csv(std::uint32_t seed, int rows, bool crlf) {
  std::mt19937 rng(seed);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::string eol = crlf ? "\r\n" : "\n";
  std::string text =
      "\xEF\xBB\xBF"
      "banner with a \" quote" +
      eol;  // BOM, skipped line
  text += "# a comment" + eol + "num,cat,grp,w,y,ign" + eol;
  const std::vector<std::string> cats{
      "red", "\"blue, dark\"", "\"say \"\"hi\"\"\"", "\"two" + eol + "lines\"", " green ", "?"};
  for (int i = 0; i < rows; ++i) {
    if (pick(17) == 0) text += (pick(2) != 0 ? "" : "# note, \"quoted\"") + eol;
    const std::string num = pick(13) == 0 ? "NA" : fmt::format("{}", pick(1000) / 7.0 - 40);
    text += num + "," + cats[static_cast<std::size_t>(pick(6))] + "," + "g" +
            std::to_string(pick(3)) + "," + std::to_string(pick(4)) + "," +
            (pick(3) == 0   ? ">50K"
             : pick(2) != 0 ? "<=50K"
                            : "\"<=50K.\"") +
            "," + "\"x" + std::to_string(i) + "\"" + eol;
  }
  return text;
}

CsvOptions tricky_options(MissingPolicy missing) {
  CsvOptions o;
  o.skip_lines = 1;
  o.comment_prefix = "#";
  o.label_column = "y";
  o.positive_values = {">50K"};
  o.group_columns = {"grp"};
  o.weight_column = "w";
  o.ignore_columns = {"ign"};
  o.missing = missing;
  return o;
}

void expect_same(const Dataset& a, const Dataset& b, const std::string& what) {
  SCOPED_TRACE(what);
  test::expect_same_dataset(a, b);
  EXPECT_TRUE(b.row_parts().empty());
}

void expect_same_stats(const ReadStats& a, const ReadStats& b) {
  EXPECT_EQ(a.lines, b.lines);
  EXPECT_EQ(a.rows_dropped_missing, b.rows_dropped_missing);
  EXPECT_EQ(a.rows_imputed_missing, b.rows_imputed_missing);
  EXPECT_EQ(a.unseen_levels, b.unseen_levels);
  EXPECT_EQ(a.warnings, b.warnings);
}

const std::vector<std::size_t> kChunkSizes{1, 7, 64, 500, 4096, std::size_t{1} << 24};

TEST(CsvChunked, EqualsTheWholeTextBitForBitForEveryChunkSize) {
  for (const bool crlf : {false, true}) {
    for (const MissingPolicy missing : {MissingPolicy::kDrop, MissingPolicy::kZero}) {
      const std::string text = tricky_csv(crlf ? 7 : 11, 300, crlf);
      const std::string path = write_temp("chunked.csv", text);
      const CsvOptions o = tricky_options(missing);
      // The encoding from another sample, so that some of this file's levels are unseen.
      const Dataset trained = parse_csv(tricky_csv(3, 40, crlf), o, "train.csv");
      const Encoding& enc = trained.encoding();
      ReadStats whole_stats;
      const Dataset whole = parse_csv(text, o, path, &enc, &whole_stats);
      ASSERT_GT(whole.num_rows(), 200u);
      for (const std::size_t chunk : kChunkSizes) {
        ReadStats stats;
        const Dataset got = io_detail::read_csv_chunked(path, o, enc, &stats, nullptr, chunk);
        expect_same(
            whole, got,
            fmt::format("crlf {} missing {} chunk {}", crlf, static_cast<int>(missing), chunk));
        expect_same_stats(whole_stats, stats);
      }
    }
  }
}

TEST(CsvChunked, LabelNamesAndWarningsAreTheWholeFiles) {
  // The only negative value appears late, after chunks of positives; then a second one.
  std::string text = "x,y\n";
  for (int i = 0; i < 50; ++i) text += fmt::format("{},yes\n", i);
  text += "50,no\n";
  CsvOptions o;
  o.label_column = "y";
  o.positive_values = {"yes"};
  const Encoding enc = parse_csv(text, o).encoding();
  for (const std::size_t chunk : kChunkSizes) {
    const Dataset got =
        io_detail::read_csv_chunked(write_temp("late.csv", text), o, enc, nullptr, nullptr, chunk);
    EXPECT_EQ(got.labels().names, (std::vector<std::string>{"no", "yes"})) << chunk;
  }
  text += "51,maybe\n";
  const Dataset two =
      io_detail::read_csv_chunked(write_temp("two.csv", text), o, enc, nullptr, nullptr, 5);
  EXPECT_EQ(two.labels().names, (std::vector<std::string>{"not yes", "yes"}));
  // No positive at all, and every weight 0: one warning each, as for the whole text.
  std::string none = "x,w,y\n";
  for (int i = 0; i < 40; ++i) none += fmt::format("{},0,v{}\n", i, i % 7);
  o.weight_column = "w";
  ReadStats whole_stats;
  (void)parse_csv(none, o, "none.csv", &enc, &whole_stats);
  ASSERT_EQ(whole_stats.warnings.size(), 2u);
  ReadStats stats;
  (void)io_detail::read_csv_chunked(write_temp("none.csv", none), o, enc, &stats, nullptr, 9);
  EXPECT_EQ(stats.warnings.size(), 2u);
  for (std::size_t k = 0; k < 2 && k < stats.warnings.size(); ++k)
    EXPECT_EQ(stats.warnings[k].substr(stats.warnings[k].find(':')),
              whole_stats.warnings[k].substr(whole_stats.warnings[k].find(':')));
}

// CsvOptions::n_threads: the per-column work on 1, 2 or 4 threads gives the same dataset, the
// same warnings in column order and, with bad values in two columns, the first column's error.
// The same dataset, encoding, warnings and slice columns from a read on threads as from one.
void expect_same_read(const Dataset& one, const ReadStats& one_stats, const Dataset& many,
                      const ReadStats& stats) {
  test::expect_same_dataset(one, many);
  EXPECT_EQ(many.encoding().to_json(), one.encoding().to_json());
  EXPECT_EQ(stats.warnings, one_stats.warnings);
  for (std::size_t c = 0; c < one.columns().size(); ++c) {
    EXPECT_EQ(many.columns()[c].levels, one.columns()[c].levels);
    EXPECT_EQ(many.columns()[c].codes, one.columns()[c].codes);
  }
}

TEST(CsvColumnsOnThreads, SameDatasetWarningsAndFirstError) {
  std::string text = "a,b,c,d,e,g,y\n";
  std::mt19937 rng(3);
  for (int i = 0; i < 3000; ++i) {
    const bool stray = i == 1700;  // one stray token: d is read as categorical, with a warning
    text += fmt::format("{},{},{},{},k{},g{},{}\n", static_cast<int>(rng() % 1000) / 8.0, rng() % 7,
                        static_cast<int>(rng() % 100) - 50,
                        stray ? std::string("oops") : std::to_string(rng() % 9), rng() % 40,
                        rng() % 5, rng() % 2);
  }
  CsvOptions o;
  o.label_column = "y";
  o.group_columns = {"g"};
  ReadStats one_stats;
  const Dataset one = parse_csv(text, o, "cols.csv", nullptr, &one_stats);
  ASSERT_EQ(one_stats.warnings.size(), 1U);
  for (const int threads : {2, 4}) {
    SCOPED_TRACE(threads);
    CsvOptions t = o;
    t.n_threads = threads;
    ReadStats stats;
    const Dataset many = parse_csv(text, t, "cols.csv", nullptr, &stats);
    expect_same_read(one, one_stats, many, stats);
  }
  // Infinite values in columns c (line 10) and a (line 2000): column a's error, for any count.
  std::string bad = text;
  const auto line_start = [&](int line) {
    std::size_t pos = 0;
    for (int k = 1; k < line; ++k) pos = bad.find('\n', pos) + 1;
    return pos;
  };
  std::size_t at = line_start(10);
  at = bad.find(',', bad.find(',', at) + 1) + 1;  // column c
  bad.insert(at, "1e999");
  bad.erase(at + 5, bad.find(',', at + 5) - (at + 5));
  at = line_start(2000);
  bad.insert(at, "inf");
  bad.erase(at + 3, bad.find(',', at + 3) - (at + 3));
  const auto error_at = [&](int threads) {
    CsvOptions t = o;
    t.n_threads = threads;
    try {
      (void)parse_csv(bad, t, "cols.csv");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string want = error_at(1);
  EXPECT_NE(want.find("cols.csv:2000"), std::string::npos) << want;
  EXPECT_EQ(error_at(2), want);
  EXPECT_EQ(error_at(4), want);
}

// Over 1 MiB without a quote, threads read the records in pieces split at line ends: the same
// records, line numbers, dropped rows, warnings and first error as one piece, with blank and
// comment lines, CRLF ends and missing values falling anywhere, and pieces that end mid-way
// through them.
TEST(CsvPiecesOnThreads, SameRecordsLinesAndFirstErrorAsOnePiece) {
  std::string text = "a,b,c,d,g,y\r\n";
  std::mt19937 rng(11);
  std::vector<std::size_t> line_of_row;  // the physical line of each record
  std::size_t line = 1;
  for (int i = 0; i < 120000; ++i) {
    if (i % 997 == 0) {
      text += "\r\n";
      ++line;
    }
    if (i % 1499 == 0) {
      text += "# a comment line\n";
      ++line;
    }
    const bool missing = i % 211 == 0;
    text += fmt::format("{},{},{},{},g{},{}\r\n", static_cast<int>(rng() % 10000) / 16.0,
                        missing ? std::string("?") : std::to_string(rng() % 50), rng() % 9,
                        i == 90000 ? std::string("word") : std::to_string(rng() % 3), rng() % 6,
                        rng() % 2);
    line_of_row.push_back(++line);
  }
  ASSERT_GT(text.size(), std::size_t{2} << 20);
  CsvOptions o;
  o.label_column = "y";
  o.group_columns = {"g"};
  o.comment_prefix = "#";
  ReadStats one_stats;
  const Dataset one = parse_csv(text, o, "pieces.csv", nullptr, &one_stats);
  EXPECT_EQ(one_stats.rows_dropped_missing, 569U);  // rows 0, 211, ... (b missing)
  ASSERT_EQ(one_stats.warnings.size(), 1U);         // d: one stray token, read as categorical
  for (const int threads : {2, 3, 4}) {
    SCOPED_TRACE(threads);
    CsvOptions t = o;
    t.n_threads = threads;
    ReadStats stats;
    const Dataset many = parse_csv(text, t, "pieces.csv", nullptr, &stats);
    expect_same_read(one, one_stats, many, stats);
    EXPECT_EQ(stats.rows_dropped_missing, one_stats.rows_dropped_missing);
  }
  // Two records with a field too many, in different pieces, and an infinite value after both:
  // the first record's error, with its physical line, for any thread count.
  const auto line_start = [&](const std::string& s, std::size_t want) {
    std::size_t pos = 0;
    for (std::size_t k = 1; k < want; ++k) pos = s.find('\n', pos) + 1;
    return pos;
  };
  const auto set_first_field = [&](std::string& s, std::size_t want, const std::string& value) {
    const std::size_t at = line_start(s, want);
    s.replace(at, s.find(',', at) - at, value);
  };
  std::string bad = text;
  set_first_field(bad, line_of_row[100000], "inf");
  bad.insert(line_start(bad, line_of_row[82000]), "1,");
  bad.insert(line_start(bad, line_of_row[60000]), "1,");
  const auto error_at = [&](const std::string& s, int threads) {
    CsvOptions t = o;
    t.n_threads = threads;
    try {
      (void)parse_csv(s, t, "pieces.csv");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string want = error_at(bad, 1);
  EXPECT_NE(want.find(fmt::format("pieces.csv:{}:", line_of_row[60000])), std::string::npos)
      << want;
  EXPECT_NE(want.find("expected 6 fields, found 7"), std::string::npos) << want;
  for (const int threads : {2, 3}) EXPECT_EQ(error_at(bad, threads), want);
  // Without the field counts, the infinite value's error names its own line.
  std::string inf = text;
  set_first_field(inf, line_of_row[100000], "inf");
  const std::string want_inf = error_at(inf, 1);
  EXPECT_NE(want_inf.find(fmt::format("pieces.csv:{}:", line_of_row[100000])), std::string::npos)
      << want_inf;
  for (const int threads : {2, 3}) EXPECT_EQ(error_at(inf, threads), want_inf);
}

// A first piece (1 MiB) of comment and blank lines only holds no record: the records of the
// later pieces, and their numbers, are still all read.
TEST(CsvPiecesOnThreads, FirstPieceWithoutRecords) {
  std::string text = "a,b,y\n";
  while (text.size() < (std::size_t{3} << 19)) text += "# nothing here yet\n\n";
  for (int i = 0; i < 40000; ++i) text += fmt::format("{},k{},{}\n", i % 97, i % 5, i % 2);
  CsvOptions o;
  o.label_column = "y";
  o.comment_prefix = "#";
  ReadStats one_stats;
  const Dataset one = parse_csv(text, o, "quiet.csv", nullptr, &one_stats);
  ASSERT_EQ(one.num_rows(), 40000U);
  CsvOptions t = o;
  t.n_threads = 2;
  ReadStats stats;
  const Dataset many = parse_csv(text, t, "quiet.csv", nullptr, &stats);
  expect_same_read(one, one_stats, many, stats);
}

TEST(CsvChunked, BadInputGivesTheWholeTextsErrorWithTheFilesLine) {
  const std::string good = tricky_csv(5, 120, false);
  const CsvOptions o = tricky_options(MissingPolicy::kZero);  // a missing label is an error
  const Encoding enc = parse_csv(good, o).encoding();
  const auto error_of = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A record with a field too many near the end, an unclosed quote at the end, a label missing.
  const std::vector<std::string> bad{good + "1,red,g1,2,>50K,x,extra\n" + "2,red,g0,1,>50K,z\n",
                                     good + "3,\"red,g1,1,>50K,z\n", good + "4,red,g1,1,?,z\n"};
  for (const std::string& text : bad) {
    const std::string path = write_temp("bad.csv", text);
    const std::string want = error_of([&] { (void)parse_csv(text, o, path, &enc); });
    ASSERT_NE(want, "no error");
    for (const std::size_t chunk : kChunkSizes)
      EXPECT_EQ(error_of([&] {
                  (void)io_detail::read_csv_chunked(path, o, enc, nullptr, nullptr, chunk);
                }),
                want)
          << chunk;
  }
}

TEST(CsvChunked, KeepsOnlyTheNamedColumnsAndTheWholeFilesStorage) {
  // 2^22 cells and more, 2 of 11 features non-zero: CSR, as make_matrix decides for the whole text.
  std::string text = "c,x,y\n";
  for (int i = 0; i < 400000; ++i) text += fmt::format("L{},{},{}\n", i % 10, i % 7, i % 2);
  CsvOptions o;
  o.label_column = "y";
  o.positive_values = {"1"};
  o.standardize = false;
  const Encoding enc = parse_csv(text, o).encoding();
  const std::string path = write_temp("big.csv", text);
  const std::vector<std::string> keep{"c"};
  const Dataset got = io_detail::read_csv_chunked(path, o, enc, nullptr, &keep, 1 << 16);
  EXPECT_TRUE(got.features().is_sparse());
  EXPECT_EQ(got.num_rows(), 400000u);
  EXPECT_DOUBLE_EQ(got.features().at(399999, 9), 1.0);
  EXPECT_DOUBLE_EQ(got.features().at(399999, 10), static_cast<double>(399999 % 7));
  ASSERT_EQ(got.columns().size(), 1u);
  EXPECT_EQ(got.columns()[0].name, "c");
  EXPECT_EQ(got.dropped_columns(), (std::vector<std::string>{"x", "y"}));
  // Few cells: dense, as the whole text.
  const std::string small = write_temp("small.csv", "c,x,y\nL1,2,1\nL3,0,0\n");
  EXPECT_FALSE(
      io_detail::read_csv_chunked(small, o, enc, nullptr, nullptr, 1).features().is_sparse());
}

// Inferring the encoding chunk by chunk and merging the chunks (infer_csv_chunked +
// merge_encodings) gives one reading's encoding: the same columns, kinds and levels in order,
// scaling equal to rounding; a column numeric in one chunk and categorical in another, or a chunk
// that warns, gives nothing (the caller reads the whole text).
TEST(CsvChunked, InferredChunksMergeToTheWholeTextsEncoding) {
  const std::string text = tricky_csv(21, 400, false);
  const std::string path = write_temp("infer.csv", text);
  for (const MissingPolicy missing : {MissingPolicy::kDrop, MissingPolicy::kZero}) {
    const CsvOptions o = tricky_options(missing);
    const Encoding whole = parse_csv(text, o, path).encoding();
    for (const std::size_t chunk : kChunkSizes) {
      const auto parts = io_detail::infer_csv_chunked(path, o, chunk);
      ASSERT_TRUE(parts.has_value()) << chunk;
      if (chunk >= text.size()) {
        EXPECT_EQ(parts->size(), 1u);
      }
      const Encoding merged = merge_encodings(*parts, o.standardize);
      ASSERT_EQ(merged.specs.size(), whole.specs.size());
      EXPECT_EQ(merged.feature_names, whole.feature_names);
      for (std::size_t k = 0; k < whole.specs.size(); ++k) {
        EXPECT_EQ(merged.specs[k].kind, whole.specs[k].kind);
        EXPECT_EQ(merged.specs[k].levels, whole.specs[k].levels);
        EXPECT_NEAR(merged.specs[k].offset, whole.specs[k].offset, 1e-12);
        EXPECT_NEAR(merged.specs[k].scale, whole.specs[k].scale, 1e-12);
        EXPECT_NEAR(merged.specs[k].impute, whole.specs[k].impute, 1e-12);
      }
      if (chunk >= text.size()) {
        EXPECT_EQ(merged.to_json(), whole.to_json());
      }
    }
  }
  // A column whose text values all come late: numeric chunks, then categorical ones.
  std::string late = "a,y\n";
  for (int i = 0; i < 300; ++i) late += fmt::format("{},yes\n", i < 200 ? std::to_string(i) : "t");
  CsvOptions o;
  o.label_column = "y";
  o.positive_values = {"yes"};
  const std::string late_path = write_temp("late_text.csv", late);
  EXPECT_FALSE(io_detail::infer_csv_chunked(late_path, o, 100).has_value());
  EXPECT_TRUE(io_detail::infer_csv_chunked(late_path, o, 1 << 20).has_value());
  // The public entry falls back to one reading: the whole text's encoding, one part.
  ReadOptions late_options;
  late_options.format = FileFormat::kCsv;
  late_options.csv = o;
  const std::vector<InferredEncoding> parts = infer_encoding_parts(late_path, late_options);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].encoding.to_json(), parse_csv(late, o, late_path).encoding().to_json());
  // One stray token among numbers: the chunk holding it warns, so the whole text decides.
  std::string stray = "a,y\n";
  for (int i = 0; i < 300; ++i)
    stray += fmt::format("{},yes\n", i == 150 ? std::string("x") : std::to_string(i));
  EXPECT_FALSE(io_detail::infer_csv_chunked(write_temp("stray.csv", stray), o, 100).has_value());
}

// Parts of a file (ReadOptions::part_bytes): read in order, the parts of a tricky CSV (quoted
// line breaks, comments, a BOM, skipped lines, CRLF) and of a LIBSVM file hold the whole file's
// rows once each, in order, with its encoding: the concatenation equals the whole read, for part
// sizes from 1, 16 or 29 bytes (cuts inside most records and quoted fields) to more than the
// file; each part read from file_parts' ranges as from its number.
TEST(FileParts, ConcatenatedPartsEqualTheWholeFile) {
  for (const bool crlf : {false, true}) {
    const std::string text = tricky_csv(crlf ? 13 : 17, 150, crlf);
    const std::string path = write_temp("parts.csv", text);
    ReadOptions o;
    o.csv = tricky_options(MissingPolicy::kZero);
    const Dataset trained = parse_csv(tricky_csv(3, 40, crlf), o.csv, "train.csv");
    o.encoding = &trained.encoding();
    const Dataset whole = read_dataset(path, o);
    ASSERT_GT(whole.num_rows(), 120u);
    for (const std::size_t bytes :
         {std::size_t{1}, std::size_t{29}, std::size_t{500}, std::size_t{4096}, text.size() + 1}) {
      ReadOptions part = o;
      part.part_bytes = bytes;
      const std::size_t count = file_part_count(path, bytes);
      EXPECT_EQ(count, (text.size() + bytes - 1) / bytes);
      const std::vector<FilePart> ranges = file_parts(path, part);
      ASSERT_EQ(ranges.size(), count);
      EXPECT_EQ(ranges.back().end, text.size());
      std::vector<Dataset> parts;
      for (std::size_t k = 0; k < count; ++k) {
        EXPECT_LE(ranges[k].header_end, ranges[k].begin);
        if (k > 0) {
          EXPECT_EQ(ranges[k].begin, ranges[k - 1].end);
        }
        ReadOptions one = part;
        one.part_range = ranges[k];
        parts.push_back(read_dataset(path, one));
        if (k % 37 == 3 && bytes > 1) {  // by number: the same part
          part.part = k;
          const Dataset by_number = read_dataset(path, part);
          EXPECT_EQ(by_number.num_rows(), parts.back().num_rows());
          EXPECT_EQ(by_number.labels().values, parts.back().labels().values);
        }
      }
      Dataset joined = concat_rows(std::move(parts));
      joined.set_row_parts({});
      joined.set_source(whole.source());
      SCOPED_TRACE(fmt::format("crlf {} part bytes {}", crlf, bytes));
      test::expect_same_dataset(whole, joined);
    }
  }
  // LIBSVM, blank and comment lines among the records.
  std::string svm;
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    if (i % 23 == 0) svm += "\n";
    svm += fmt::format("{} 1:{} {}:{}\n", rng() % 2, static_cast<int>(rng() % 9) - 4, 2 + rng() % 5,
                       static_cast<int>(rng() % 100) / 10.0);
  }
  const std::string svm_path = write_temp("parts.svm", svm);
  ReadOptions lo;
  lo.format = FileFormat::kLibsvm;
  lo.libsvm.num_features = 6;
  const Dataset whole = read_dataset(svm_path, lo);
  for (const std::size_t bytes :
       {std::size_t{1}, std::size_t{16}, std::size_t{64}, std::size_t{999}}) {
    lo.part_bytes = bytes;
    std::vector<Dataset> parts;
    for (const FilePart& range : file_parts(svm_path, lo)) {
      ReadOptions one = lo;
      one.part_range = range;
      parts.push_back(read_dataset(svm_path, one));
    }
    lo.part = 2;  // by number: the same part
    EXPECT_EQ(read_dataset(svm_path, lo).labels().values, parts[2].labels().values);
    Dataset joined = concat_rows(std::move(parts));
    joined.set_row_parts({});
    SCOPED_TRACE(fmt::format("libsvm part bytes {}", bytes));
    ASSERT_EQ(joined.num_rows(), whole.num_rows());
    ASSERT_EQ(joined.num_features(), whole.num_features());
    EXPECT_EQ(joined.labels().values, whole.labels().values);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < whole.num_rows(); ++i)
      for (std::size_t j = 0; j < whole.num_features(); ++j)
        differ += joined.features().at(i, j) == whole.features().at(i, j) ? 0 : 1;
    EXPECT_EQ(differ, 0u);
  }
}

TEST(FileParts, ErrorsNameTheFileAndTheFilesLine) {
  std::string text = "a,b,y\n";
  for (int i = 0; i < 100; ++i) text += fmt::format("{},\"x\ny\",{}\n", i, i % 2);
  text += "1,2,3,4\n";  // line 202
  const std::string path = write_temp("bad_parts.csv", text);
  ReadOptions o;
  o.csv.label_column = "y";
  o.part_bytes = 40;
  o.part = file_part_count(path, 40) - 1;
  EXPECT_THROW(
      {
        try {
          (void)read_dataset(path, o);
        } catch (const ParseError& e) {
          EXPECT_NE(std::string(e.what()).find("bad_parts.csv:202"), std::string::npos) << e.what();
          throw;
        }
      },
      ParseError);
  // The same error from the part's range.
  ReadOptions ranged = o;
  ranged.part_range = file_parts(path, o).back();
  try {
    (void)read_dataset(path, ranged);
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("bad_parts.csv:202"), std::string::npos) << e.what();
  }
  o.part = file_part_count(path, 40);
  EXPECT_THROW((void)read_dataset(path, o), InvalidArgument);  // no such part
  o.part = 0;
  o.format = FileFormat::kArff;
  EXPECT_THROW((void)read_dataset(path, o), InvalidArgument);
  EXPECT_THROW((void)file_parts(path, o), InvalidArgument);
  const std::string gz = write_temp("parts.csv.gz", std::string("\x1f\x8b rest"));
  EXPECT_THROW((void)file_part_count(gz, 10), InvalidArgument);
}

// LevelIndex (the readers' table of a column's distinct values): codes in order of first
// appearance, as a std::map from value to first position gives them, through growth from 16
// slots to 2^18.
// NumberIndex (numeric slice columns): the codes LevelIndex gives the texts, with values of
// several spellings ("1", "1.0", "1e0", "01"), texts longer than 8 bytes, -0 and 0; and
// ColumnBuilder, numeric then a text value, builds what Column::push_back builds.
TEST(NumberIndex, CodesOfTheTextsLikeTheLevelIndex) {
  std::mt19937_64 rng(11);
  std::vector<std::string> texts;
  const std::vector<std::string> spellings{"1", "1.0", "1e0", "01", "-0", "0", "0.0", "1.00"};
  for (int k = 0; k < 100000; ++k) {
    const auto pick = rng() % 10;
    if (pick == 0) {
      texts.push_back(spellings[rng() % spellings.size()]);
    } else if (pick < 4) {
      texts.push_back(fmt::format("{:.9f}", static_cast<double>(rng() % 5000) / 3.0));  // > 8
    } else {
      texts.push_back(std::to_string(static_cast<int>(rng() % 60000) - 30000));
    }
  }
  io_detail::NumberIndex numbers;
  io_detail::LevelIndex levels;
  for (const std::string& t : texts) {
    double x = 0;
    ASSERT_EQ(io_detail::parse_double(t, x), io_detail::NumberKind::kFinite) << t;
    bool a = false;
    bool b = false;
    const std::int32_t code = numbers.find_or_add(x, t, a);
    ASSERT_EQ(code, levels.find_or_add(t, b)) << t;
    ASSERT_EQ(a, b) << t;
  }
  EXPECT_GT(numbers.keys().size(), 30000u);
  // The builder against Column::push_back, numeric to the end or turned text by "x" midway.
  for (const bool turn : {false, true}) {
    // The builder keeps views: the texts outlive it.
    std::vector<std::string> input(texts.begin(), texts.begin() + 3000);
    if (turn) input[2000] = "1x";
    io_detail::ColumnBuilder builder("c", input.size());
    Column reference;
    reference.name = "c";
    for (std::size_t i = 0; i < input.size(); ++i) {
      const bool missing = i % 97 == 5;
      builder.push(input[i], missing);
      reference.push_back(input[i], missing);
    }
    Column built = std::move(builder).finish();
    // A numeric column leaves its levels to build_deferred; a turned one has them.
    EXPECT_EQ(built.deferred != nullptr, !turn);
    EXPECT_EQ(built.size(), input.size());
    if (!turn) {
      EXPECT_TRUE(built.codes.empty());
      EXPECT_TRUE(built.levels.empty());
      built.build_deferred();
      EXPECT_EQ(built.deferred, nullptr);
    }
    EXPECT_EQ(built.levels, reference.levels);
    EXPECT_EQ(built.codes, reference.codes);
    ASSERT_EQ(built.numeric.size(), reference.numeric.size());
    EXPECT_EQ(built.is_numeric(), !turn);
  }
}

// count_lines, 8 bytes at a time, against counting byte by byte: runs of newlines, bytes next to
// '\n' in value (0x0B, 0x09, 0x8A, 0xFF, 0x00), and any length and alignment.
TEST(CountLines, AgreesWithCountingByteByByte) {
  std::mt19937_64 rng(3);
  const std::string alphabet{'\n', '\n', '\n', '\x0b', '\x09', '\x8a', '\xff', '\0', 'a', 'b'};
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text(rng() % 100, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    const auto newlines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    const std::size_t want = newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
    ASSERT_EQ(io_detail::count_lines(text), want) << trial;
  }
  EXPECT_EQ(io_detail::count_lines(std::string(64, '\n')), 64u);  // 8 in every word
}

TEST(LevelIndex, CodesInOrderOfFirstAppearanceLikeAMap) {
  std::mt19937_64 rng(7);
  std::vector<std::string> texts;
  for (int k = 0; k < 200000; ++k) {
    // Mostly distinct numbers, some repeats, the empty string, and short category-like values.
    const auto pick = rng() % 10;
    if (pick == 0)
      texts.emplace_back();
    else if (pick < 4)
      texts.push_back("k" + std::to_string(rng() % 37));
    else
      texts.push_back(std::to_string(static_cast<double>(rng() % 150000) / 7.0));
  }
  io_detail::LevelIndex index;
  std::map<std::string, std::int32_t, std::less<>> oracle;
  for (const std::string& t : texts) {
    bool inserted = false;
    const std::int32_t code = index.find_or_add(t, inserted);
    const auto [it, fresh] = oracle.try_emplace(t, static_cast<std::int32_t>(oracle.size()));
    ASSERT_EQ(inserted, fresh) << t;
    ASSERT_EQ(code, it->second) << t;
  }
  EXPECT_EQ(index.size(), oracle.size());
  EXPECT_GT(oracle.size(), 80000u);  // the table grew to 2^18 slots
}

}  // namespace
}  // namespace rateopt
