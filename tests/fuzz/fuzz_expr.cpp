// libFuzzer target for the expression parser (src/expr/parser.cpp). Any text either parses or
// throws ParseError; nothing else may escape. A parsed expression must be well formed (children
// before parents, rate indices in range, roots in range), its text must reparse to the same graph,
// and evaluating it with gradients at arbitrary rate values must not crash (NaN and infinities are
// allowed results: log(0), 1/0).
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
  const std::string_view text(reinterpret_cast<const char*>(data), size);
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
