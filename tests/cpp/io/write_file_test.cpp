// write_file_atomic (io.hpp): outputs are replaced whole or not at all (issue 10).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::error_of;

using test::slurp;

// A fresh folder under the test temp dir.
fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("rateopt-write-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Files in `dir` other than `keep` (temporary files left behind would show here).
std::size_t others(const fs::path& dir, const std::string& keep) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != keep) ++n;
  return n;
}

TEST(WriteFileAtomic, CreatesAndReplacesWithoutLeavingTemporaries) {
  const fs::path dir = fresh_folder("replace");
  const fs::path target = dir / "out.json";
  write_file_atomic(target.string(), "first\n");
  EXPECT_EQ(slurp(target), "first\n");
  const std::string big(3 << 20, 'x');  // several write() calls
  write_file_atomic(target.string(), big);
  EXPECT_EQ(slurp(target), big);
  write_file_atomic(target.string(), "");
  EXPECT_EQ(slurp(target), "");
  EXPECT_EQ(others(dir, "out.json"), 0U);
}

TEST(WriteFileAtomic, KeepsTheModeOfTheFileItReplaces) {
  const fs::path dir = fresh_folder("mode");
  const fs::path target = dir / "m.txt";
  write_file_atomic(target.string(), "a");
  ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
  write_file_atomic(target.string(), "b");
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640U);
}

TEST(WriteFileAtomic, FailureLeavesTheOldFileAndSaysWhy) {
  // A folder that does not exist: nothing is created.
  const fs::path dir = fresh_folder("fail");
  std::string msg = error_of<WriteError>(
      [&] { write_file_atomic((dir / "no" / "such" / "out.txt").string(), "x"); });
  EXPECT_TRUE(contains(msg, "rateopt.write_error") && contains(msg, "out.txt")) << msg;
  // A folder as the target.
  msg = error_of<WriteError>([&] { write_file_atomic(dir.string(), "x"); });
  EXPECT_TRUE(contains(msg, "folder")) << msg;
  // /dev/full: every write fails with ENOSPC (a device is written in place, checked).
  if (fs::exists("/dev/full")) {
    msg = error_of<WriteError>([] { write_file_atomic("/dev/full", std::string(100000, 'x')); });
    EXPECT_TRUE(contains(msg, "/dev/full") && contains(msg, "space")) << msg;
  }
  // A read-only folder (not for root, who may write anywhere): the old file survives.
  const fs::path ro = dir / "ro";
  fs::create_directories(ro);
  write_file_atomic((ro / "keep.txt").string(), "old");
  ASSERT_EQ(::chmod(ro.c_str(), 0555), 0);
  if (::geteuid() != 0) {
    EXPECT_THROW(write_file_atomic((ro / "keep.txt").string(), "new"), WriteError);
    EXPECT_EQ(slurp(ro / "keep.txt"), "old");
    EXPECT_EQ(others(ro, "keep.txt"), 0U);
  }
  ::chmod(ro.c_str(), 0755);
}

TEST(WriteFileAtomic, DevicesAreWrittenInPlace) {
  if (!fs::exists("/dev/null")) GTEST_SKIP() << "no /dev/null";
  write_file_atomic("/dev/null", "discarded");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));  // not replaced by a regular file
}

}  // namespace
}  // namespace rateopt
