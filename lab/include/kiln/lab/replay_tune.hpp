// A tuning run replayed on a recorded space (kiln/lab/recorded_space.hpp):
// the file's space is tuned as if on the GPU that recorded it, through the
// real tuner — the search driver and the pipeline with its
// compile workers, benchmark worker and grouping — on a VirtualClock.
// "Compiling" a config costs its recorded compile time, "benchmarking" it
// its recorded benchmark time and times it at its recorded run time; a
// config the file says failed fails the same way (compile failure, or a
// launch failure for the others). What comes out is what a tuning run on
// that GPU would have measured and how long it would have taken: the
// simulated wall time of this tuner, not of the machine running the replay.
//
//   auto space = read_recorded_space("convolution_A100.json.gz");
//   TuneOptions o;
//   o.search.strategy = "random";
//   o.search.max_configs = 88;
//   o.pipeline.compile_threads = 2;           // simulated compile workers
//   auto run = replay_tune(*space, o);
//   run->fraction;            // the best found as a fraction of the optimum
//   run->simulated_seconds;   // its wall time on that GPU's costs
#pragma once

#include <optional>
#include <vector>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/tuner/measurement.hpp"
#include "kiln/tuner/tune_options.hpp"
#include "kiln/tuner/tuning_stats.hpp"

namespace kiln {

struct ReplayTuneResult {
  // Every config the search tried, as the tuner returns them (a one-shot
  // round in completion order: the simulated times and outcomes are the
  // same in every run, the order of results landing at one moment may
  // differ); their times
  // are the recorded run times, their compile_seconds the simulated compile
  // time of their program.
  std::vector<Measurement> measurements;
  // Per measurement (same order): the simulated second its outcome was
  // known: its benchmark's end, its failed compile's end, or the run's end
  // for a config the budget stopped. A best-so-far curve against simulated
  // time steps at these moments.
  std::vector<double> landed_seconds;
  std::optional<Measurement> winner;  // the tuner's pick (kiln/tuner/selection.hpp)
  Config default_config;              // the space's default, measured first
  // The fastest config measured, its recorded time, and the file's optimum
  // over it (1: the optimum was found; 0: nothing ran).
  std::optional<Config> best;
  double best_ms = 0;
  double fraction = 0;
  // The run on the virtual clock: compile, benchmark and overlap are unions
  // of simulated spans, wall the whole tuning (KernelStats' meanings).
  double simulated_seconds = 0;
  KernelStats stats;
  std::size_t budget_cancelled = 0;  // configs the budget stopped
  std::size_t stalls = 0;            // VirtualClock::stalls(); 0 in a correct run
};

// Tunes `recorded`'s space. Read from `options`: search (strategy,
// max_configs, seed, batch, in_flight, warm_start, warm_start_devices) and
// pipeline (overlap, group_size, compile_threads,
// budget_seconds). The budget is in simulated seconds. compile_threads is
// the simulated compile workers (0: 1, the recording's one compile at a
// time); group_size the configs per program (0: 1, each config compiled
// alone as recorded: a group costs the sum of its configs' compile times
// and lands when the last is done). Measurement, checking and caching
// options do not apply. `warm_from` stands in for the tuning cache of a
// warm start (kiln/tuner/warm_start.hpp): recorded_record of other
// devices' files of this kernel, say; its seeds are measured first, as in
// a tuning (stats.warm_started counts them). kInvalidArgument for an
// unknown strategy.
Result<ReplayTuneResult> replay_tune(const RecordedSpace& recorded, const TuneOptions& options,
                                     const std::vector<TuningRecord>& warm_from = {});

}  // namespace kiln
