// The solver registry (src/train/solvers.cpp): names round-trip, `auto` resolves by the
// problem's shape, a solver that does not take a problem is refused with its name.
#include <gtest/gtest.h>

#include <string>

#include "rateopt/error.hpp"
#include "rateopt/train.hpp"
#include "test_util.hpp"
#include "train/train_test_util.hpp"

namespace rateopt {
namespace {

TEST(SolverRegistry, NamesRoundTripAndEveryEntryHasAReference) {
  ASSERT_GE(train_solvers().size(), 5u);
  for (const TrainSolverInfo& s : train_solvers()) {
    EXPECT_EQ(parse_train_solver(s.name), s.solver);
    EXPECT_EQ(to_string(s.solver), s.name);
    EXPECT_FALSE(s.reference.empty()) << s.name;
    EXPECT_FALSE(s.problems.empty()) << s.name;
  }
  EXPECT_EQ(parse_train_solver("auto"), TrainSolver::kAuto);
  const std::string msg =
      test::error_of<InvalidArgument>([] { (void)parse_train_solver("simplex"); });
  EXPECT_TRUE(test::contains(msg, "cutting-plane")) << msg;
}

TEST(SolverRegistry, AutoResolvesByShapeAndLinearOnlySolversRefuseOthers) {
  const Dataset ds = test::synthetic(200, 4);
  const RateProblem linear = RateProblem::build(
      test::spec("error", {"abs(ppr[g=a] - ppr[g=b]) <= 0.05"}), {{"train", &ds}});
  const RateProblem ratio = RateProblem::build(test::spec("f1", {}, true), {{"train", &ds}});
  const RateProblem general =
      RateProblem::build(test::spec("kld[g=a]", {"error <= 0.4"}), {{"train", &ds}});
  EXPECT_EQ(resolve_train_solver(linear, TrainSolver::kAuto), TrainSolver::kCuttingPlane);
  EXPECT_EQ(resolve_train_solver(ratio, TrainSolver::kAuto), TrainSolver::kRatio);
  EXPECT_EQ(resolve_train_solver(general, TrainSolver::kAuto), TrainSolver::kThreePlayer);
  EXPECT_EQ(resolve_train_solver(ratio, TrainSolver::kThreePlayer), TrainSolver::kThreePlayer);
  for (TrainSolver s : {TrainSolver::kCuttingPlane, TrainSolver::kProxyLagrangian}) {
    const std::string msg =
        test::error_of<InvalidArgument>([&] { (void)resolve_train_solver(ratio, s); });
    EXPECT_TRUE(test::contains(msg, std::string(to_string(s)) + " solver needs")) << msg;
  }
  // The front door runs the resolved solver and reports it.
  TrainOptions o;
  o.n_threads = 1;
  EXPECT_EQ(train(linear, o).solver, TrainSolver::kCuttingPlane);
  o.solver = TrainSolver::kOracle;  // no oracle given
  EXPECT_THROW((void)train(linear, o), InvalidArgument);
}

}  // namespace
}  // namespace rateopt
