// Regression tests for what fuzz_model found (docs/fuzzing.md).
#include <gtest/gtest.h>

#include <string>

#include "rateopt/error.hpp"
#include "rateopt/model.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

// A JSON number beyond a double escaped from model_format / from_json as nlohmann's
// out_of_range (the CLI printed it without an id and exited 1).
TEST(ModelFuzzFindings, NumberOverflowIsAParseErrorNamingTheFile) {
  const std::string text =
      R"({"format": "rateopt.model", "version": 2, "components": [{"weights": [1e400], "bias": 0}]})";
  const std::string f = error_of<ParseError>([&] { (void)model_format(text, "m.json"); });
  EXPECT_TRUE(contains(f, "m.json") && contains(f, "1e400")) << f;
  const std::string c = error_of<ParseError>([&] { (void)Classifier::from_json(text, "m.json"); });
  EXPECT_TRUE(contains(c, "m.json") && contains(c, "not valid JSON")) << c;
  const std::string o = error_of<ParseError>([&] {
    (void)OneVsRest::from_json(R"({"format": "rateopt.one_vs_rest", "version": -1e999})", "o.json");
  });
  EXPECT_TRUE(contains(o, "o.json")) << o;
}

}  // namespace
}  // namespace rateopt
