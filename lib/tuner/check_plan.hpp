// How a tuning run checks outputs, decided before it starts.
#pragma once

#include <memory>

#include "call_state.hpp"
#include "kiln/tuner/tuner.hpp"
#include "measure.hpp"
#include "output_judge.hpp"

namespace kiln::internal {

// How a tuning run checks outputs: against the user's reference, computed
// here before the run (the caller's own code, trusted); or afterwards by a
// judge, from the outputs every config's checked run captured (the default
// config's, else the consensus); or not at all, and why.
struct Checking {
  Reference reference;
  std::shared_ptr<OutputJudge> judge;
  ReferenceReport report;  // when there is no judge
};

// Runs the caller's reference function now when it has one (a failing one
// falls back to the default config's outputs, with a warning). Throws
// kiln::Error for ReferenceKind::kUser without a reference function.
Checking plan_checking(const TunableKernel& kernel, const ArgList& args, Device& device,
                       const CallState& state, const TuneOptions& opt, const ProblemKey& problem);

}  // namespace kiln::internal
