// libFuzzer target for the MULAN label XML reader (parse_mulan_labels, io.hpp: what
// read_mulan_labels does after reading the file). Only ParseError may escape. On success there is
// at least one label and the names are unique; a MULAN file written back from them
// (<labels><label name="..."/>...</labels>, names escaped) must read back to the same names.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "rateopt/error.hpp"
#include "rateopt/io.hpp"

namespace {

using rateopt::fuzz::require;

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> labels;
  try {
    labels = rateopt::parse_mulan_labels(text, "fuzz.xml");
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("the MULAN XML reader threw something other than ParseError");
  }
  require(!labels.empty(), "at least one label");
  require(std::set<std::string>(labels.begin(), labels.end()).size() == labels.size(),
          "label names unique");
  std::string xml =
      "<?xml version=\"1.0\"?>\n<labels xmlns=\"http://mulan.sourceforge.net/labels\">\n";
  for (const std::string& l : labels) xml += "<label name=\"" + escaped(l) + "\"></label>\n";
  xml += "</labels>\n";
  std::vector<std::string> again;
  try {
    again = rateopt::parse_mulan_labels(xml, "again.xml");
  } catch (...) {
    rateopt::fuzz::fail("labels written back as MULAN XML do not read back");
  }
  require(again == labels, "labels written back as MULAN XML read back the same");
  return 0;
}
