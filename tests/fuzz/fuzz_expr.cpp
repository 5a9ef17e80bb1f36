// libFuzzer target for the expression parser (src/expr/parser.cpp) and the group shorthands
// (src/expr/shorthand.cpp). The shorthands expand (over fixed column values, some of them needing
// quotes) or throw ParseError / InvalidArgument, and leave text without a shorthand name as it
// is; the result either parses or throws ParseError; nothing else may escape. A parsed expression
// must be well formed (children before parents, rate indices in range, roots in range), its text
// must reparse to the same graph, and evaluating it with gradients at arbitrary rate values must
// not crash (NaN and infinities are allowed results: log(0), 1/0).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "rateopt/error.hpp"
#include "rateopt/expr.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

void check_graph(const rateopt::Expression& e) {
  const auto& nodes = e.nodes();
  require(!nodes.empty());
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    for (std::size_t child : nodes[k].args) require(child < k);
    if (nodes[k].op == rateopt::NodeOp::kRate) require(nodes[k].rate < e.rates().size());
    require(nodes[k].position <= e.text().size());
  }
  require(e.lhs_root() < nodes.size());
  if (e.is_constraint()) require(e.rhs_root() < nodes.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string text;
  try {
    text = rateopt::expand_group_shorthands(input, [](std::string_view, std::string_view) {
      return std::vector<std::string>{"a", "b c", "x,y", "q\"]\\", "1.5"};
    });
  } catch (const rateopt::ParseError&) {
    return 0;
  } catch (const rateopt::InvalidArgument&) {
    return 0;
  }
  if (input.find("parity") == std::string_view::npos &&
      input.find("max_over") == std::string_view::npos &&
      input.find("min_over") == std::string_view::npos)
    require(text == input);
  rateopt::Expression e;
  try {
    e = rateopt::Expression::parse(text);
  } catch (const rateopt::ParseError&) {
    return 0;
  }
  check_graph(e);
  const rateopt::Expression again = rateopt::Expression::parse(e.text());
  require(again.nodes().size() == e.nodes().size());
  require(again.rates().size() == e.rates().size());
  require(again.relation() == e.relation());

  const std::size_t r = e.rates().size();
  for (double base : {0.0, 0.25, 1.0}) {
    std::vector<double> values(r), grad(r);
    for (std::size_t j = 0; j < r; ++j) values[j] = base + 0.125 * static_cast<double>(j % 3);
    (void)e.evaluate(e.lhs_root(), values, grad);
    (void)e.value(values);
  }
  return 0;
}
