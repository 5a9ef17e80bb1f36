// rateopt/rateopt.hpp includes every public header: this file compiles against the umbrella
// header alone, and the test lists include/rateopt and checks each header is included there.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "rateopt/rateopt.hpp"

namespace rateopt {
namespace {

TEST(UmbrellaHeader, IncludesEveryPublicHeader) {
  const std::filesystem::path dir = std::filesystem::path(RATEOPT_SOURCE_DIR) / "include/rateopt";
  std::ifstream in(dir / "rateopt.hpp");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  int headers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".hpp" || name == "rateopt.hpp") continue;
    ++headers;
    EXPECT_NE(text.str().find("#include \"rateopt/" + name + "\""), std::string::npos)
        << name << " is missing from rateopt/rateopt.hpp";
  }
  EXPECT_GE(headers, 18);
  // The umbrella header is usable on its own: a few names from different headers.
  EXPECT_EQ(to_string(DecideMethod::kQuadratic), "quadratic");
  EXPECT_FALSE(default_c_grid().empty());
}

}  // namespace
}  // namespace rateopt
