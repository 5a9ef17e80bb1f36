// The front door of rate-constrained training: one registry of the solvers of train.hpp, each
// with its name, paper and the problems it takes. `train` checks the options (the option table
// of train_options.hpp), resolves `auto` and calls the solver's entry point. The ramp solver
// (Goh et al. 2016) has its own problem form and result (ramp.hpp); the CLI reaches it through
// ramp_problem.
#include <array>
#include <string>

#include "common/check.hpp"
#include "common/enum_names.hpp"
#include "rateopt/train_options.hpp"
#include "train/train_impl.hpp"

namespace rateopt {

namespace {

// Which kinds of function a problem has.
struct Shape {
  bool all_linear = true;  // objective and constraints affine in rates (or constant)
  bool any_general = false;
  // Linear but for spread constraints (parity over many values, FunctionInfo::spread): what the
  // cutting-plane solver takes.
  bool linear_or_spread = true;
};

Shape shape_of(const RateProblem& problem) {
  Shape s;
  const auto visit = [&](const FunctionInfo& f) {
    const bool linear = f.kind == FunctionKind::kLinear || f.kind == FunctionKind::kConstant;
    s.all_linear = s.all_linear && linear;
    s.linear_or_spread = s.linear_or_spread && (linear || f.spread.has_value());
    s.any_general = s.any_general || f.kind == FunctionKind::kGeneral;
  };
  visit(problem.objective());
  for (const FunctionInfo& c : problem.constraints()) visit(c);
  return s;
}

TrainResult run_cutting_plane(const RateProblem& p, const TrainOptions& o) {
  return train_cutting_plane(p, o);
}

struct SolverEntry {
  TrainSolverInfo info;
  bool linear_only = false;
  TrainResult (*run)(const RateProblem&, const TrainOptions&) = nullptr;
};

// The order is the order of `auto`'s preference among the solvers that take a problem.
const std::array<SolverEntry, 5> kSolvers = {{
    {{TrainSolver::kCuttingPlane, "cutting-plane",
      "Narasimhan, Cotter & Gupta 2019, Algorithm 1, with Kelley's cutting-plane multipliers "
      "(src/train/cutting_plane.cpp)",
      "linear"},
     true,
     &run_cutting_plane},
    {{TrainSolver::kProxyLagrangian, "proxy",
      "Cotter, Jiang & Sridharan 2019, proxy-Lagrangian (src/train/proxy_lagrangian.cpp)",
      "linear"},
     true,
     &train_proxy_lagrangian},
    {{TrainSolver::kThreePlayer, "three-player",
      "Narasimhan, Cotter & Gupta 2019, Algorithm 2 (src/train/three_player.cpp)",
      "linear, ratio, general"},
     false,
     &train_three_player},
    {{TrainSolver::kRatio, "ratio",
      "Narasimhan, Cotter & Gupta 2019, Algorithm 3, sums of ratios (src/train/ratio.cpp)",
      "linear, ratio"},
     false,
     &train_ratio},
    {{TrainSolver::kOracle, "oracle",
      "Narasimhan, Cotter & Gupta 2019, Algorithm 1 with gradient multipliers and a user "
      "oracle (src/train/algorithm1_oracle.cpp)",
      "linear, ratio, general"},
     false,
     &train_oracle_game},
}};

const SolverEntry* find(TrainSolver s) {
  for (const SolverEntry& e : kSolvers)
    if (e.info.solver == s) return &e;
  return nullptr;
}

std::string names() {
  std::string out = "auto";
  for (const SolverEntry& e : kSolvers) out += ", " + std::string(e.info.name);
  return out;
}

}  // namespace

std::span<const TrainSolverInfo> train_solvers() {
  static const std::array<TrainSolverInfo, kSolvers.size()> infos = [] {
    std::array<TrainSolverInfo, kSolvers.size()> out{};
    for (std::size_t i = 0; i < kSolvers.size(); ++i) out[i] = kSolvers[i].info;
    return out;
  }();
  return infos;
}

// The solver names are detail::kTrainSolverNames (src/common/enum_names.hpp; to_string(TrainSolver)
// is in train_options.cpp, which needs the names without the solvers); a test checks that they
// agree with this table.

TrainSolver parse_train_solver(std::string_view name) {
  if (const auto s = detail::parse(detail::kTrainSolverNames, name)) return *s;
  throw InvalidArgument(fmt::format("unknown solver '{}' (solvers: {})", name, names()));
}

TrainSolver resolve_train_solver(const RateProblem& problem, TrainSolver requested) {
  const Shape s = shape_of(problem);
  if (requested == TrainSolver::kAuto)
    return s.linear_or_spread ? TrainSolver::kCuttingPlane
                              : (s.any_general ? TrainSolver::kThreePlayer : TrainSolver::kRatio);
  const SolverEntry* e = find(requested);
  RATEOPT_CHECK(e != nullptr, "unknown solver {}", static_cast<int>(requested));
  const bool takes = requested == TrainSolver::kCuttingPlane ? s.linear_or_spread : s.all_linear;
  RATEOPT_CHECK(!e->linear_only || takes,
                "the {} solver needs an objective and constraints linear in rates{}; use --solver "
                "three-player or ratio (or auto)",
                e->info.name,
                s.linear_or_spread ? " (parity over more than 16 values is one convex constraint "
                                     "max - min <= b here, which the cutting-plane solver takes)"
                                   : "");
  return requested;
}

TrainResult train(const RateProblem& problem, const TrainOptions& options) {
  check_train_options(options);
  if (options.learner == Learner::kGbdt) return train_gbdt(problem, options);
  TrainOptions o = options;
  o.solver = resolve_train_solver(problem, options.solver);
  RATEOPT_CHECK(o.solver != TrainSolver::kOracle || static_cast<bool>(o.oracle),
                "the oracle solver needs TrainOptions::oracle (a cost-sensitive oracle, e.g. "
                "weighted_logistic_oracle())");
  return find(o.solver)->run(problem, o);
}

TrainResult train_rate_constrained(const RateProblem& problem, const TrainOptions& options) {
  return train(problem, options);
}

}  // namespace rateopt
