// Which configs a tuning run measures, and in what rounds. Exhaustive and
// random search know every candidate up front: one pipelined run. Annealing
// needs feedback: the pipeline runs once per round of proposals, and each
// round's times (in proposal order, so a seed repeats its walk) steer the
// next. Both stop at max_configs and at the time budget.
#pragma once

#include <vector>

#include "kiln/progress.hpp"
#include "kiln/tuner.hpp"
#include "pipeline.hpp"

namespace kiln::internal {

// The configs of a one-shot search (exhaustive or random), after the early
// prune and the performance model, the default config always among them and
// never more than max_configs in all.
std::vector<Config> candidate_configs(const TunableKernel& kernel, const ProblemKey& problem,
                                      const TuneOptions& options);

// Runs the search of `inputs.options` through run_pipeline. `progress` may
// be null. The output's measurements are one per config measured; its
// times are those of the whole search (all rounds).
PipelineOutput run_search(const ProblemKey& problem, PipelineInputs inputs, ProgressBar* progress);

}  // namespace kiln::internal
