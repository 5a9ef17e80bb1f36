// libFuzzer target for the gzip reading path (decompress_gzip, io.hpp: what read_text_file does
// after reading a file), then the CSV reader on what comes out. The first input byte, when odd,
// puts the gzip magic bytes in front of the rest (so that most inputs reach zlib). Only IoError may
// escape decompression, only ParseError and NotFound the CSV reader. Input without the magic bytes
// must come back unchanged; decompressed text, gzipped again with zlib and decompressed, must come
// back unchanged; a parsed dataset must satisfy every invariant (fuzz_check.hpp).
#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

namespace {

using rateopt::fuzz::require;

std::string gzip(std::string_view text) {
  z_stream zs{};
  require(
      deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK,
      "deflateInit2");
  std::string out(deflateBound(&zs, static_cast<uLong>(text.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  require(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate finishes");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string bytes;
  if ((data[0] & 1) != 0) bytes = "\x1f\x8b";
  bytes.append(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool magic = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
                     static_cast<unsigned char>(bytes[1]) == 0x8b;
  std::string text;
  try {
    text = rateopt::decompress_gzip(bytes, "fuzz.csv.gz");
  } catch (const rateopt::IoError&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("decompress_gzip threw something other than IoError");
  }
  if (!magic) require(text == bytes, "input without the gzip magic comes back unchanged");
  if (text.size() > (1u << 20)) return 0;
  try {
    require(rateopt::decompress_gzip(gzip(text), "again.gz") == text,
            "gzip then decompress_gzip gives the text back");
  } catch (const rateopt::IoError&) {
    rateopt::fuzz::fail("decompress_gzip rejected zlib's own gzip stream");
  }
  rateopt::Dataset ds;
  try {
    ds = rateopt::parse_csv(text, rateopt::CsvOptions{}, "fuzz.csv.gz");
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (const rateopt::NotFound&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("the CSV reader threw something other than ParseError or NotFound");
  }
  rateopt::fuzz::check_dataset(ds);
  return 0;
}
