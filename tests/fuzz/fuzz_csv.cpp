// libFuzzer target for the CSV reader. The first input byte picks the options, the rest is the
// file. On success the dataset must satisfy every invariant (fuzz_check.hpp) and re-reading the
// same text with the dataset's own encoding must give exactly the same features. Only ParseError
// and NotFound may escape the parser; anything else aborts.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_check.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

namespace {

rateopt::CsvOptions options_from(std::uint8_t sel) {
  rateopt::CsvOptions o;
  o.delimiter = (sel & 1) != 0 ? ';' : 0;
  o.missing = static_cast<rateopt::MissingPolicy>((sel >> 1) % 3);
  if ((sel & 8) != 0) o.label_column = "y";
  if ((sel & 16) != 0) {
    o.has_header = false;
    o.column_names = {"x", "y", "z"};
  }
  o.standardize = (sel & 32) == 0;
  if ((sel & 64) != 0) o.positive_values = {"1", "yes"};
  if ((sel & 128) != 0) {
    o.comment_prefix = "#";
    o.skip_lines = 1;
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const rateopt::CsvOptions options = options_from(data[0]);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  rateopt::Dataset ds;
  try {
    ds = rateopt::parse_csv(text, options, "fuzz.csv");
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (const rateopt::NotFound&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("the CSV parser threw something other than ParseError or NotFound");
  }
  rateopt::fuzz::check_dataset(ds);
  rateopt::fuzz::require(ds.encoding().format == "csv", "CSV encoding format");
  rateopt::fuzz::require(
      ds.columns().size() == ds.encoding().specs.size() + (options.label_column.empty() ? 0 : 1),
      "one column per raw column");
  try {
    const rateopt::Dataset again = rateopt::parse_csv(text, options, "fuzz.csv", &ds.encoding());
    rateopt::fuzz::check_dataset(again);
    rateopt::fuzz::require(rateopt::fuzz::same_features(ds.features(), again.features()),
                           "re-reading with the dataset's own encoding gives the same features");
    rateopt::fuzz::require(again.labels().values == ds.labels().values,
                           "re-reading gives the same labels");
  } catch (...) {
    rateopt::fuzz::fail("re-reading with the dataset's own encoding threw");
  }
  return 0;
}
