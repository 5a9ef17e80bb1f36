// LineReader (streamed lines, gunzip on the fly) and AtomicFileWriter (streamed atomic output):
// the same lines as read_text_file + line splitting, the same gzip errors, and a file that is
// replaced whole or not at all (issue 12: rateopt decide streams its input and output).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

using test::io_fixture;

using test::write_temp;

using test::slurp;

std::vector<std::string> lines_of(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> out;
  std::string_view line;
  while (reader.next(line)) {
    out.emplace_back(line);
    EXPECT_EQ(reader.line_number(), out.size());
  }
  return out;
}

TEST(LineReader, SplitsAtNewlinesDropsOneCarriageReturnAndNoEmptyLastLine) {
  EXPECT_EQ(lines_of(write_temp("lr1.txt", "a\nb\r\n\nc")),
            (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(lines_of(write_temp("lr2.txt", "a\n")), (std::vector<std::string>{"a"}));
  EXPECT_EQ(lines_of(write_temp("lr3.txt", "a\n\n")), (std::vector<std::string>{"a", ""}));
  EXPECT_TRUE(lines_of(write_temp("lr4.txt", "")).empty());
  EXPECT_EQ(lines_of(write_temp("lr5.txt", "x\r\r\n")), (std::vector<std::string>{"x\r"}));
}

TEST(LineReader, LinesLongerThanOneRead) {
  // Lines of 3 MiB and more cross the 1 MiB reads.
  std::string text;
  std::vector<std::string> expected;
  for (std::size_t len : {std::size_t{3} << 20, std::size_t{1}, (std::size_t{1} << 20) + 7}) {
    expected.emplace_back(len, static_cast<char>('a' + expected.size()));
    text += expected.back() + "\n";
  }
  EXPECT_EQ(lines_of(write_temp("lr_long.txt", text)), expected);
}

TEST(LineReader, GzipAsReadTextFile) {
  for (const char* name : {"small.csv.gz", "concat.csv.gz", "gzipped_without_suffix.data"}) {
    const std::string text = read_text_file(io_fixture(name));
    std::vector<std::string> expected;
    std::stringstream ss(text);
    for (std::string l; std::getline(ss, l);) expected.push_back(l);
    EXPECT_EQ(lines_of(io_fixture(name)), expected) << name;
  }
  const std::string truncated = io_fixture("truncated.csv.gz");
  const std::string msg = error_of<IoError>([&] { (void)lines_of(truncated); });
  EXPECT_TRUE(contains(msg, truncated) && contains(msg, "truncated")) << msg;
  const std::string gz = slurp(io_fixture("small.csv.gz"));
  EXPECT_EQ(lines_of(write_temp("lr_pad.gz", gz + std::string(100, '\0'))).size(), 4u);
  const std::string garbage = error_of<IoError>(
      [&] { (void)lines_of(write_temp("lr_garbage.gz", gz + std::string("\0x", 2))); });
  EXPECT_TRUE(contains(garbage, "trailing garbage")) << garbage;
}

TEST(LineReader, MissingFileAndFolder) {
  const std::string missing = error_of<IoError>([] { LineReader r("/no/such/file.txt"); });
  EXPECT_TRUE(contains(missing, "/no/such/file.txt") && contains(missing, "No such file"))
      << missing;
  const std::string dir = error_of<IoError>([] { LineReader r(::testing::TempDir()); });
  EXPECT_TRUE(contains(dir, "directory")) << dir;
}

TEST(AtomicFileWriter, CommittedReplacesUncommittedLeavesTheOldFile) {
  const std::string path = ::testing::TempDir() + "afw_target.txt";
  write_temp("afw_target.txt", "old\n");
  const std::string big((std::size_t{3} << 20) + 5, 'z');  // several flushes
  {
    AtomicFileWriter w(path);
    w.write("new\n");
    w.write(big);
    // destroyed uncommitted: as after an input error
  }
  EXPECT_EQ(slurp(path), "old\n");
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir()))
    EXPECT_FALSE(contains(entry.path().filename().string(), ".afw_target.txt.tmp")) << entry.path();
  {
    AtomicFileWriter w(path);
    w.write("new\n");
    w.write(big);
    w.commit();
  }
  EXPECT_EQ(slurp(path), "new\n" + big);
  // Nothing written and committed: an empty file, as write_file_atomic(path, "").
  {
    AtomicFileWriter w(path);
    w.commit();
  }
  EXPECT_EQ(slurp(path), "");
  // An uncommitted writer to a new path creates nothing.
  const std::string fresh = ::testing::TempDir() + "afw_fresh.txt";
  std::filesystem::remove(fresh);
  {
    AtomicFileWriter w(fresh);
    w.write(big);
  }
  EXPECT_FALSE(std::filesystem::exists(fresh));
  const std::string full = error_of<WriteError>([] {
    AtomicFileWriter w("/dev/full");
    w.write("x");
    w.commit();
  });
  EXPECT_TRUE(contains(full, "/dev/full")) << full;
}

}  // namespace
}  // namespace rateopt
