// Tuning one problem across the ranks of a job (docs/distributed.md), with
// TensorRT-LLM's strategies:
//   independent  each rank tunes alone (decisions may differ);
//   broadcast    rank 0 tunes, every other rank receives its decision;
//   parallel     the space is sharded across ranks (SearchOptions::shard_*),
//                each rank measures its shard on its own device, the
//                measurements are gathered and the winner chosen from all;
//   merge        every rank measures everything; each config's time is the
//                median over ranks (failed anywhere = failed).
// After any strategy but independent every rank holds the identical record,
// byte for byte (same config, same times, same tie break: the lower time,
// then the config's text), and saves it in its own rank's tuning file. A
// rank whose tuning fails makes every rank return an error naming it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/cache/tuning_cache.hpp"
#include "kiln/distributed/collective.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {

// One rank's tuning, as the caller runs it (Autotuner::tune, tune_request):
// called with the options to use (saving off, the rank's shard set).
using RankTune = std::function<Result<TuneResult>(const TuneOptions& options)>;
// What this rank's caches already hold for the problem, without tuning
// (Autotuner::lookup); nullopt for none.
using RankLookup = std::function<std::optional<TuningRecord>()>;

struct DistributedOutcome {
  TuningRecord record;          // the decision (identical on every rank but independent)
  std::size_t benchmarked = 0;  // configs this rank measured
  std::vector<std::size_t> benchmarked_by_rank;
  bool served = false;  // the decision came from a cache, nothing was measured
  bool saved = false;
  std::string not_saved_reason;
  double collective_seconds = 0;  // time spent in collectives
};

// Runs `tune` on every rank as `strategy` says and saves the decision into
// `cache` (this rank's file). Must be called by every rank of `collective`.
// `problem`: what this rank tunes, as text every rank must share (`kiln
// tune` passes the kernel's name and definition hash, the shape and the
// dtype). Unless the strategy is independent, the ranks compare theirs
// before anything is measured and, when one differs, every rank returns
// kInvalidArgument naming it; an empty text (a rank that cannot say) is
// not compared. Records that name
// different problems or kernel definitions are refused the same way.
// `lookup`, when given, is asked first on every rank: a record any rank
// holds is every rank's (the lowest such rank's) and nobody measures, so
// one rank's hit never leaves the others tuning without it.
Result<DistributedOutcome> tune_distributed(Collective& collective, DistributedStrategy strategy,
                                            const TuneOptions& options, TuningCache& cache,
                                            const RankTune& tune, std::string_view problem = {},
                                            const RankLookup& lookup = {});

}  // namespace kiln
