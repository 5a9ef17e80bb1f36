// RateProblem (train.hpp) -> RowRampProblem (ramp.hpp): the one bridge from the expression
// language to Goh et al.'s ramp solver, used by the CLI and the Python package.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "common/check.hpp"
#include "rateopt/ramp.hpp"
#include "rateopt/train.hpp"

namespace rateopt {

namespace {

// `text`: the function as the user wrote it (FunctionInfo::text of a maximised objective is
// negated).
void require_linear(const FunctionInfo& fn, const std::string& text, bool objective) {
  const bool ok =
      fn.kind == FunctionKind::kLinear || (objective && fn.kind == FunctionKind::kConstant);
  if (ok && fn.linear) return;
  const std::string what = fn.kind == FunctionKind::kRatio     ? "a ratio"
                           : fn.kind == FunctionKind::kGeneral ? "not linear (" + fn.shape + ")"
                                                               : std::string(to_string(fn.kind));
  throw InvalidArgument(
      fmt::format("the ramp solver needs an objective and constraints linear in rates; '{}' is {} "
                  "(the cutting-plane, three-player or ratio solvers take it: --solver auto)",
                  text, what));
}

RowCombination rows_of(const RateProblem& problem, const AffineForm& form) {
  RowCombination c;
  c.constant = form.constant;
  c.coef.resize(problem.data().size());
  for (std::size_t d = 0; d < c.coef.size(); ++d)
    c.coef[d].assign(problem.data()[d].data->num_rows(), 0.0);
  for (const AtomTerm& t : form.terms) {
    const Atom& a = problem.atoms()[t.atom];
    a.rows.for_each(
        [&](std::size_t r, std::uint32_t row) { c.coef[a.dataset][row] += t.coef * a.coef_at(r); });
  }
  return c;
}

}  // namespace

RowRampProblem ramp_problem(const RateProblem& problem) {
  require_linear(problem.objective(), problem.spec().objective, true);
  for (const FunctionInfo& c : problem.constraints()) require_linear(c, c.text, false);
  RowRampProblem rp;
  rp.objective = rows_of(problem, *problem.objective().linear);
  for (const FunctionInfo& c : problem.constraints())
    rp.constraints.push_back({c.text, rows_of(problem, *c.linear), 0.0});
  return rp;
}

std::vector<NamedDataset> ramp_datasets(const RateProblem& problem) {
  std::vector<NamedDataset> out;
  for (const TrainingData& t : problem.data()) out.push_back({t.name, t.data});
  return out;
}

}  // namespace rateopt
