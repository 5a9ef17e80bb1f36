// File: rateopt/status.hpp
// Typed termination status for algorithmic outcomes (STYLE R6 tier 2): these are results, not
// exceptions. Bad input still throws (error.hpp).
#pragma once

#include <string_view>

namespace rateopt {

enum class Termination {
  kConverged,        // stopping tolerance met
  kMaxIterations,    // iteration budget spent before the tolerance was met
  kInfeasible,       // constraints cannot be met (certificate or best violation in the result)
  kNumericalError,   // line search / factorisation failed; the result holds the last good iterate
  kFeasible,         // constraints met, but the optimality certificate did not reach the tolerance
  kInterrupted,      // stopped on request (TrainOptions::should_stop, e.g. Ctrl-C in Python); the
                     // result holds what was found so far
  kNoSolutionFound,  // guaranteed mode (intervals.hpp): the safety test could not certify the
                     // constraints at the requested confidence; no model is returned
};

[[nodiscard]] std::string_view to_string(Termination t) noexcept;

}  // namespace rateopt
