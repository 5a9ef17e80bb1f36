// Problem files (problem_file.hpp): TOML and JSON keys, checks and error messages.
#include "rateopt/problem_file.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rateopt/error.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

using test::contains;
using test::error_of;

TEST(ProblemFile, TomlAndJsonGiveTheSameKeys) {
  const std::string toml =
      "maximize = \"f1\"\nconstraints = [\"recall >= 0.7\", \"ppr <= 0.5\"]\niterations = 300\n"
      "model_step = 0.02\nshrink = false\nsolver = \"ramp\"\nlambda = 0.001\nmm_steps = 4\n";
  const std::string json =
      R"({"maximize": "f1", "constraints": ["recall >= 0.7", "ppr <= 0.5"], "iterations": 300,
          "model_step": 0.02, "shrink": false, "solver": "ramp", "lambda": 0.001, "mm_steps": 4})";
  for (const ProblemFile& p : {parse_problem_file(toml, ProblemFileFormat::kToml, "p.toml"),
                               parse_problem_file(json, ProblemFileFormat::kJson, "p.json")}) {
    EXPECT_EQ(p.maximize, "f1");
    EXPECT_EQ(p.minimize, "");
    EXPECT_EQ(p.constraints, (std::vector<std::string>{"recall >= 0.7", "ppr <= 0.5"}));
    EXPECT_EQ(p.solver, "ramp");  // a CLI-only solver is kept as written
    EXPECT_EQ(p.lambda, 0.001);
    EXPECT_EQ(p.mm_steps, 4);
    TrainOptions o;
    apply_problem_options(p, o, std::set<std::string, std::less<>>{});
    EXPECT_EQ(o.iterations, 300);
    EXPECT_EQ(o.model_step, 0.02);
    EXPECT_FALSE(o.shrink);
    // Keys in `skip` (given on the command line) keep their value.
    TrainOptions kept;
    apply_problem_options(p, kept, std::set<std::string, std::less<>>{"iterations"});
    EXPECT_EQ(kept.iterations, TrainOptions{}.iterations);
    EXPECT_EQ(kept.model_step, 0.02);
  }
  // "objective" is "minimize" and wins over it.
  const ProblemFile obj = parse_problem_file(R"({"minimize": "a", "objective": "error"})",
                                             ProblemFileFormat::kJson, "p.json");
  EXPECT_EQ(obj.minimize, "error");
}

TEST(ProblemFile, ErrorsNameTheFileAndTheKey) {
  const auto err = [](const std::string& text, ProblemFileFormat f) {
    return error_of<ParseError>([&] { (void)parse_problem_file(text, f, "p.file"); });
  };
  const auto toml = ProblemFileFormat::kToml;
  const auto json = ProblemFileFormat::kJson;
  EXPECT_TRUE(contains(err("minimise = \"error\"\n", toml), "unknown key 'minimise'"));
  EXPECT_TRUE(contains(err("minimize = \"error\"\nmodel_step = -1\n", toml),
                       "model_step (--model-step) is -1, expected a finite number > 0"));
  EXPECT_TRUE(contains(err("iterations = \"many\"\n", toml), "iterations (--iterations) is"));
  EXPECT_TRUE(contains(err("minimize = 3\n", toml), "key 'minimize': expected a string"));
  EXPECT_TRUE(contains(err("constraints = [1]\n", toml), "key 'constraints': expected a string"));
  EXPECT_TRUE(contains(err("constraints = 1\n", toml), "expected a list of strings"));
  EXPECT_TRUE(contains(err("lambda = 0\n", toml), "key 'lambda'"));
  EXPECT_TRUE(contains(err("lambda = inf\n", toml), "p.file"));
  EXPECT_TRUE(contains(err("mm_steps = 0\n", toml), "key 'mm_steps'"));
  EXPECT_TRUE(contains(err("mm_steps = 99999999999\n", toml), "key 'mm_steps'"));
  EXPECT_TRUE(contains(err("iterations = [1]\n", toml), "expected a number, bool or string"));
  EXPECT_TRUE(contains(err("minimize = \"error\n", toml), "p.file:1:"));  // TOML syntax
  EXPECT_TRUE(contains(err("[1, 2]", json), "expected a table / object"));
  EXPECT_TRUE(contains(err("{", json), "p.file"));
  EXPECT_TRUE(contains(err(R"({"solver": 1})", json), "key 'solver': expected a string"));
}

// Found by fuzz_problem: toml++ 3.3 reached __builtin_unreachable() on some non-ASCII code points
// (U+FEFD in a key; U+00A7 after a line-ending backslash, upstream issues 190 and 295). toml++ now
// sees ASCII only, and non-ASCII text in strings and comments reads back as written.
TEST(ProblemFile, NonAsciiTextIsReadAsWrittenAndNeverReachesTomlxx) {
  const std::string text =
      "# caf\xc3\xa9 \xe2\x80\x94 comment\n"
      "minimize = \"ppr[city=Z\xc3\xbcrich]\"\n"
      "maximize = 'lit\\eral \xc2\xa7 \"q\"'\n"
      "constraints = [\"\"\"\\\n\xc2\xa7 <= 1\"\"\", '''a\xf0\x9f\x99\x82''b''']\n";
  const ProblemFile p = parse_problem_file(text, ProblemFileFormat::kToml, "p.toml");
  EXPECT_EQ(p.minimize, "ppr[city=Z\xc3\xbcrich]");
  EXPECT_EQ(p.maximize, "lit\\eral \xc2\xa7 \"q\"");
  EXPECT_EQ(p.constraints, (std::vector<std::string>{"\xc2\xa7 <= 1", "a\xf0\x9f\x99\x82''b"}));
  const auto err = [](const std::string& bad) {
    return error_of<ParseError>(
        [&] { (void)parse_problem_file(bad, ProblemFileFormat::kToml, "p.toml"); });
  };
  const std::string key =
      err("maxi\xef\xbb\xbd"
          "e = \"f1\"\n");
  EXPECT_TRUE(contains(key, "p.toml:1") && contains(key, "U+FEFD")) << key;
  EXPECT_TRUE(contains(err("minimize = \"\xc3\"\n"), "invalid UTF-8"));
  EXPECT_TRUE(contains(err("minimize = \"\\\xc3\xa9\"\n"), "invalid escape"));
}

// Found by fuzz_problem: a JSON number beyond a double escaped as nlohmann's out_of_range.
TEST(ProblemFile, JsonNumberOverflowIsAParseError) {
  const std::string msg = error_of<ParseError>([] {
    (void)parse_problem_file(R"({"maximize": "f1", "lambda": 1e400})", ProblemFileFormat::kJson,
                             "p.json");
  });
  EXPECT_TRUE(contains(msg, "p.json") && contains(msg, "1e400")) << msg;
}

}  // namespace
}  // namespace rateopt
