// libFuzzer target for the binary dataset reader (read_dataset_binary, io.hpp). The input is the
// body of a file: the target puts the magic bytes in front and the body's correct CRC-32 behind,
// so that mutations reach the parser's checks instead of stopping at a checksum mismatch. Only
// ParseError may escape; a dataset read must satisfy every invariant (fuzz_check.hpp) and come
// back the same after a write and a second read.
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_check.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

namespace {

using rateopt::fuzz::require;

const std::string& temp_path(const char* stem) {
  static const std::string a = "/tmp/rateopt-fuzz-binary-" + std::to_string(::getpid()) + ".rods";
  static const std::string b = "/tmp/rateopt-fuzz-binary-" + std::to_string(::getpid()) + "-2.rods";
  return stem[0] == 'a' ? a : b;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  require(f != nullptr, "open the temporary file");
  require(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size(), "write it");
  require(std::fclose(f) == 0, "close it");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file("\x89RODS\r\n\x1a", 8);
  file.append(reinterpret_cast<const char*>(data), size);
  const auto crc =
      static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0), data, static_cast<uInt>(size)));
  file.append(reinterpret_cast<const char*>(&crc), sizeof crc);
  const std::string& path = temp_path("a");
  write_bytes(path, file);
  rateopt::Dataset ds;
  try {
    ds = rateopt::read_dataset_binary(path);
  } catch (const rateopt::ParseError&) {
    return 0;
  }
  rateopt::fuzz::check_dataset(ds);
  const std::string& again = temp_path("b");
  rateopt::write_dataset_binary(ds, again);
  const rateopt::Dataset back = rateopt::read_dataset_binary(again);
  require(rateopt::fuzz::same_features(back.features(), ds.features()) &&
              back.labels().values == ds.labels().values &&
              back.labels().set_indices == ds.labels().set_indices &&
              back.columns().size() == ds.columns().size() &&
              back.encoding().to_json() == ds.encoding().to_json(),
          "a dataset read back after writing is the same");
  return 0;
}
