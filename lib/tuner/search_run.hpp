// The search driver: which configs a tuning run measures, and when. A
// registered SearchStrategy (kiln/search/search.hpp) proposes; the driver
// applies the rules every strategy shares (the default config measured
// first, the kernel's early prune, its performance model, max_configs in
// all) and feeds the times back in proposal order, so a seed repeats its
// walk. A one-shot strategy (exhaustive, random) is one pipelined run. A
// steered one is, by default, one pipelined run that it refills as results
// land, SearchOptions::in_flight configs at a time (SearchPacing); with
// SearchOptions::batch set, without overlap, or when ranks share the
// search, it runs in rounds, each round one pipelined run, until it stops
// proposing or the budget is spent.
#pragma once

#include <vector>

#include "kiln/tuner/tuner.hpp"
#include "pipeline.hpp"
#include "search_memory.hpp"
#include "tuner/progress.hpp"

namespace kiln::internal {

// Whether the kernel's early prune keeps `config` for this problem.
bool prune_keeps(const TunableKernel& kernel, const ProblemKey& problem, const Config& config);

// The config used without tuning: the space's default, unless the kernel's
// early prune rejects it for this problem, then the first config the prune
// keeps (scanning, never enumerating a huge space); the default when the
// prune keeps none.
Config heuristic_config(const TunableKernel& kernel, const ProblemKey& problem);

// The registered strategy named by `options.search.strategy`; throws
// kiln::Error (kInvalidArgument) naming the valid ones when there is none.
const SearchStrategyInfo& strategy_for(const TuneOptions& options);

// Runs the search of `inputs.options` through run_pipeline, seeded and
// filtered by `memory` (search_memory.hpp), then re-measures the finalists
// (finalists.hpp). `progress` may be null. The output's measurements are
// one per config measured; its times are those of the whole search (all
// rounds and the finalists).
PipelineOutput drive_search(const ProblemKey& problem, PipelineInputs inputs, ProgressBar* progress,
                            SearchMemory memory = {});

}  // namespace kiln::internal
