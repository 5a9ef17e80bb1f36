// Regression tests for what fuzz_model found (docs/fuzzing.md).
#include <gtest/gtest.h>

#include <string>

#include "rateopt/dataset.hpp"
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

// A float where the encoding holds a count ("num_features": 4e73) was converted to size_t with
// undefined behaviour (UBSan: outside the range of representable values).
TEST(ModelFuzzFindings, EncodingCountsMustBeIntegers) {
  for (const std::string bad : {"4e73", "-1", "2.5", "\"3\""}) {
    const std::string enc =
        R"({"format": "libsvm", "num_features": )" + bad + R"(, "feature_names": [], "specs": []})";
    EXPECT_THROW((void)Encoding::from_json(enc), ParseError) << bad;
    const std::string spec =
        R"({"format": "csv", "num_features": 1, "feature_names": ["a"], "specs": [{"kind": )"
        R"("numeric", "source": "a", "first_feature": )" +
        bad + "}]}";
    EXPECT_THROW((void)Encoding::from_json(spec), ParseError) << bad;
  }
  const std::string model =
      R"({"format": "rateopt.model", "version": 2, "kind": "linear", "link": "logistic",)"
      R"( "components": [{"weights": [1], "bias": 0}], "mixture": [1], "best": 0,)"
      R"( "encoding": {"format": "libsvm", "num_features": 4e73, "feature_names": [],)"
      R"( "specs": []}})";
  EXPECT_ANY_THROW((void)Classifier::from_json(model, "m.json"));
  try {
    (void)Classifier::from_json(model, "m.json");
  } catch (const ParseError& e) {
    EXPECT_TRUE(contains(e.what(), "num_features")) << e.what();
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "num_features")) << e.what();
  }
}

}  // namespace
}  // namespace rateopt
