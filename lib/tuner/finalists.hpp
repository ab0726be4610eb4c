// Finalists: at the end of a search, the best few configs are benchmarked
// again, interleaved (round-robin over several rounds, each round in a
// rotated order), with early stop off, and the winner is chosen from these
// measurements alone. One lucky early measurement (a quiet moment on a
// shared machine, a warm cache) then cannot win, and drift over the run
// (clock boost, a neighbour's build) falls on every finalist alike.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "kiln/tuner/selection.hpp"
#include "pipeline.hpp"

namespace kiln::internal {

// Rounds of re-measurement: enough for a median of rounds to outvote one
// disturbed round, few enough that finalists stay a small part of a tuning.
inline constexpr std::size_t kFinalistRounds = 3;
// Only configs within this factor of the fastest are finalists: a config
// 1.5x slower is not a close call (noise that large is a broken
// measurement, not a lucky one), and early stop (1.5x by default) has
// already cut such configs short.
inline constexpr double kFinalistBand = 1.5;

// The `count` fastest ok measurements of `out` (ties by config text) within
// kFinalistBand of the fastest, each
// benchmarked again `rounds` times in one run_pipeline on the artifacts the
// search built (nothing is compiled but the winners an earlier run
// measured, resumed from its journal), interleaved, in full (early stop
// off; each round times target_seconds / rounds, so the rounds together
// cost one more measurement), unchecked (their outputs were checked when
// first measured). Each
// finalist's measurement is replaced by its re-measurement of median time
// over the rounds; one that fails now is replaced by that failure (flaky:
// it must not win). Sets out.finalists and the stats' finalist counters.
// Nothing to do when count < 2, fewer than two configs ran correctly, or
// the run replays recorded times (PipelineClock::measures_real_time).
// The budget (in.deadline) still holds: what it cancels keeps its search
// measurement, or counts with the rounds it had.
void remeasure_finalists(PipelineOutput& out, const PipelineInputs& in, std::size_t count,
                         std::size_t rounds = kFinalistRounds);

// The winner among `finalists` when any of them is ok, else among all
// `measurements` (finalists off, or every finalist failed its
// re-measurement or was found wrong afterwards). Indices are into
// `measurements`.
std::optional<Selection> select_with_finalists(const std::vector<Measurement>& measurements,
                                               const std::vector<Config>& finalists,
                                               const SelectionPolicy& policy);

}  // namespace kiln::internal
