// libFuzzer target for the ARFF reader. The first input byte picks the label source (none, the
// last 1 or 2 attributes, or XML names), the rest is the file. On success the dataset must satisfy
// every invariant (fuzz_check.hpp), have one label set per row, and re-encoding the same text with
// the dataset's own encoding must give exactly the same features. Only ParseError and NotFound
// may escape the parser; anything else aborts.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "io/io_util.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  rateopt::ArffOptions options;
  const std::vector<std::string> xml = {"L2", "L1"};
  const std::vector<std::string>* xml_labels = nullptr;
  switch (data[0] % 4) {
    case 0:
      break;
    case 1:
      options.num_labels = 1;
      break;
    case 2:
      options.num_labels = 2;
      break;
    default:
      xml_labels = &xml;
      break;
  }
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  rateopt::Dataset ds;
  try {
    ds = rateopt::parse_arff(text, options, "fuzz.arff", xml_labels);
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (const rateopt::NotFound&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("the ARFF parser threw something other than ParseError or NotFound");
  }
  rateopt::fuzz::check_dataset(ds);
  const rateopt::Labels& y = ds.labels();
  const bool labelled = options.num_labels > 0 || xml_labels != nullptr;
  rateopt::fuzz::require(
      labelled ? y.kind == rateopt::LabelKind::kMultilabel && y.size() == ds.num_rows()
               : y.kind == rateopt::LabelKind::kNone,
      "multilabel labels, one set per row, exactly when labels are named");
  if (xml_labels != nullptr) rateopt::fuzz::require(y.names == xml, "label names in XML order");
  try {
    const rateopt::Dataset again = rateopt::io_detail::parse_arff_impl(
        text, options, "fuzz.arff", xml_labels, &ds.encoding(), nullptr);
    rateopt::fuzz::require(rateopt::fuzz::same_features(ds.features(), again.features()),
                           "re-encoding with the dataset's own encoding gives the same features");
    rateopt::fuzz::require(again.labels().set_indices == y.set_indices,
                           "re-encoding gives the same labels");
  } catch (...) {
    rateopt::fuzz::fail("re-encoding with the dataset's own encoding threw");
  }
  return 0;
}
