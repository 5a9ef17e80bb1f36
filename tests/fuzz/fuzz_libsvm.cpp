// libFuzzer target for the LIBSVM reader. The first input byte picks the options, the rest is the
// file. On success the dataset must satisfy every invariant (fuzz_check.hpp) and survive a round
// trip: written back as LIBSVM text (values with 17 significant digits) and parsed again, it must
// give exactly the same matrix and labels. Only ParseError may escape the parser.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

namespace {

std::string write_libsvm(const rateopt::Dataset& ds) {
  const rateopt::Labels& y = ds.labels();
  const rateopt::CsrView x = ds.features().csr_view();
  std::string out;
  for (std::size_t i = 0; i < ds.num_rows(); ++i) {
    if (y.kind == rateopt::LabelKind::kMultilabel) {
      const auto set = y.label_set(i);
      for (std::size_t k = 0; k < set.size(); ++k) out += fmt::format("{}{}", k ? "," : "", set[k]);
    } else {
      out += y.names[static_cast<std::size_t>(y.values[i])];
    }
    for (auto k = x.indptr[i]; k < x.indptr[i + 1]; ++k)
      out += fmt::format(" {}:{:.17g}", x.indices[k] + 1, x.values[k]);
    out += '\n';
  }
  return out;
}

// Whether the text holds an integer in [10^4, 2^20): a label or feature index the reader accepts
// and for which it builds one name per id up to it (about a million strings: fast in a release
// build, but past libFuzzer's timeout under ASan with coverage tracing on a busy machine, twice
// per input with the round trip). Such inputs are skipped: the per-id loop is not where bugs hide,
// and larger numbers (the reader's range errors) are still fuzzed.
bool has_large_valid_index(std::string_view text) {
  std::size_t k = 0;
  while (k < text.size()) {
    if (text[k] < '0' || text[k] > '9') {
      ++k;
      continue;
    }
    std::size_t end = k;
    std::uint64_t value = 0;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') {
      if (value < (std::uint64_t{1} << 40)) value = value * 10 + (text[end] - '0');
      ++end;
    }
    if (value >= 10000 && value < (std::uint64_t{1} << 20)) return true;
    k = end;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (has_large_valid_index(text)) return 0;
  rateopt::LibsvmOptions options;
  options.multilabel = (data[0] & 1) != 0;
  options.num_features = (data[0] & 2) != 0 ? 64 : 0;
  rateopt::Dataset ds;
  try {
    ds = rateopt::parse_libsvm(text, options, "fuzz.svm");
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("the LIBSVM parser threw something other than ParseError");
  }
  rateopt::fuzz::check_dataset(ds);
  rateopt::fuzz::require(ds.features().is_sparse(), "LIBSVM features are CSR");
  if (options.num_features != 0)
    rateopt::fuzz::require(ds.num_features() == options.num_features, "num_features widens");
  if (ds.labels().kind == rateopt::LabelKind::kNone) {
    rateopt::fuzz::require(ds.num_rows() == 0, "unlabelled only when empty");
    return 0;
  }
  rateopt::LibsvmOptions again_options;
  again_options.num_features = ds.num_features();
  again_options.multilabel = ds.labels().kind == rateopt::LabelKind::kMultilabel;
  try {
    const rateopt::Dataset again =
        rateopt::parse_libsvm(write_libsvm(ds), again_options, "roundtrip.svm");
    rateopt::fuzz::require(rateopt::fuzz::same_features(ds.features(), again.features()),
                           "round trip keeps the features");
    rateopt::fuzz::require(again.labels().kind == ds.labels().kind &&
                               again.labels().values == ds.labels().values &&
                               again.labels().set_indices == ds.labels().set_indices &&
                               again.labels().set_indptr == ds.labels().set_indptr,
                           "round trip keeps the labels");
  } catch (...) {
    rateopt::fuzz::fail("parsing the written-back LIBSVM text threw");
  }
  return 0;
}
