// libFuzzer target for problem files (problem_file.hpp). The first input byte picks TOML or JSON;
// the rest is the file. Only ParseError may escape. A parsed problem's options must apply to
// TrainOptions without an error and pass check_train_options, every option's text form must read
// back to the same value, and lambda / mm_steps must be in their ranges.
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "rateopt/error.hpp"
#include "rateopt/problem_file.hpp"
#include "rateopt/train_options.hpp"

using rateopt::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto format =
      (data[0] & 1) != 0 ? rateopt::ProblemFileFormat::kJson : rateopt::ProblemFileFormat::kToml;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  rateopt::ProblemFile p;
  try {
    p = rateopt::parse_problem_file(text, format, "fuzz.problem");
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (...) {
    rateopt::fuzz::fail("the problem-file parser threw something other than ParseError");
  }
  if (p.lambda) require(std::isfinite(*p.lambda) && *p.lambda > 0, "lambda finite and > 0");
  if (p.mm_steps) require(*p.mm_steps >= 1, "mm_steps >= 1");
  rateopt::TrainOptions o;
  try {
    rateopt::apply_problem_options(p, o, std::set<std::string, std::less<>>{});
    rateopt::check_train_options(o);
  } catch (...) {
    rateopt::fuzz::fail("a parsed problem file's options do not apply");
  }
  for (const auto& [key, value] : p.options) {
    rateopt::TrainOptions again;
    try {
      rateopt::set_train_option(again, key, rateopt::format_train_option(o, key));
    } catch (...) {
      rateopt::fuzz::fail("an option's text form does not read back");
    }
    require(rateopt::format_train_option(again, key) == rateopt::format_train_option(o, key),
            "an option's text form reads back to the same value");
  }
  return 0;
}
