// Which configs a tuning run measures, and in what rounds. Exhaustive and
// random search know every candidate up front: one pipelined run. Annealing
// needs feedback: the pipeline runs once per round of proposals, and each
// round's times (in proposal order, so a seed repeats its walk) steer the
// next. Both stop at max_configs and at the time budget.
#pragma once

#include <vector>

#include "kiln/tuner/tuner.hpp"
#include "pipeline.hpp"
#include "tuner/progress.hpp"

namespace kiln::internal {

// Whether the kernel's early prune keeps `config` for this problem.
bool prune_keeps(const TunableKernel& kernel, const ProblemKey& problem, const Config& config);

// The config used without tuning: the space's default, unless the kernel's
// early prune rejects it for this problem, then the first config the prune
// keeps (scanning, never enumerating a huge space); the default when the
// prune keeps none.
Config heuristic_config(const TunableKernel& kernel, const ProblemKey& problem);

// The configs of a one-shot search (exhaustive or random), after the early
// prune and the performance model, never more than max_configs in all. The
// default config comes first (it is the reference and the baseline, so it
// compiles and runs first), unless the early prune rejects it.
std::vector<Config> candidate_configs(const TunableKernel& kernel, const ProblemKey& problem,
                                      const TuneOptions& options);

// Runs the search of `inputs.options` through run_pipeline. `progress` may
// be null. The output's measurements are one per config measured; its
// times are those of the whole search (all rounds).
PipelineOutput run_search(const ProblemKey& problem, PipelineInputs inputs, ProgressBar* progress);

}  // namespace kiln::internal
