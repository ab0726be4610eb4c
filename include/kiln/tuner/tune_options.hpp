// What a tuning call may do, grouped by the part of the tuner that reads it:
// the search (which configs), the pipeline (how they compile and run), the
// measurement (how each is timed), the checking (what outputs are compared
// against) and the cache (whether decisions are reused and saved).
//
//   TuneOptions o;
//   o.search.strategy = "random";
//   o.search.max_configs = 32;
//   o.measure.warmup = 2;
//   o.check.enabled = false;
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/device/device.hpp"
#include "kiln/search/search.hpp"
#include "kiln/search/search_plan.hpp"
#include "kiln/tuner/args.hpp"
#include "kiln/tuner/compare.hpp"
#include "kiln/tuner/warm_start.hpp"

namespace kiln {

struct Options;

struct SearchOptions {
  // A registered strategy (search_strategies(): "exhaustive", "random",
  // "hybrid") or "auto" (the plan, below: the default here, in Python and
  // in `kiln tune`); an unknown name is an error that lists the valid ones.
  std::string strategy{kAutoSearch};
  // Configs measured in all, the default config included: 0 = the effort's
  // budget (auto), all (exhaustive) or 64 (random, hybrid).
  std::size_t max_configs = 0;
  // Read when `strategy` is "auto" (kAutoSearch): plan_search picks the
  // strategy and, unless max_configs is set, the budget from this effort and
  // the size of the space (kiln/search/search_plan.hpp).
  SearchEffort effort = SearchEffort::kDefault;
  std::uint64_t seed = 0;
  // Strategies that steer by feedback (kiln/search/search.hpp, SearchPacing):
  // by default `in_flight` proposals are kept in the pipeline and one more
  // is asked for as each result lands (0: kDefaultInFlight); with `batch`
  // set they are proposed in rounds of that many and each round is waited
  // for. Rounds are also used without pipeline overlap and when ranks share
  // one search (shard_count > 1). hybrid's space-filling start is proposed
  // at once either way.
  std::size_t batch = 0;
  std::size_t in_flight = 0;
  // This process's share of the space when ranks tune one problem together
  // (kiln/distributed/distributed_tune.hpp, "parallel"): of each round the
  // search proposes (the same on every rank for a one-shot strategy and
  // seed), this rank measures every shard_count-th config from position
  // shard_index; the default config is measured on every rank (it is each
  // rank's reference). 1: all.
  std::uint32_t shard_index = 0;
  std::uint32_t shard_count = 1;
  // Warm start: the winners of up to this many neighbouring problems of the
  // same kernel in the tuning cache (other shapes, nearest first) are
  // measured first, right after the default. 0: off.
  std::size_t warm_start = 3;
  // Whose winners: this device's only, or, for the seeds this device's
  // records leave over, what other devices found fast for the kernel
  // (kiln/tuner/warm_start.hpp; a shared cache holds other GPUs' tunings).
  WarmStartDevices warm_start_devices = WarmStartDevices::kAny;
  // Finalists: the fastest this many are benchmarked again at the end,
  // interleaved over several rounds and in full, and the winner is chosen
  // from that re-measurement. 0 (or 1): off.
  std::size_t finalists = 3;
};

// `options` with "auto" replaced by the plan for `space` (plan_search:
// strategy and max_configs); any other strategy unchanged.
SearchOptions planned_search(SearchOptions options, const ConfigSpace& space);

struct PipelineOptions {
  // Benchmark each kernel as soon as it compiles. Off: compile everything,
  // then benchmark (to measure what the pipeline gains).
  bool overlap = true;
  std::size_t group_size = 0;             // 0: kDefaultGroupSize / KILN_GROUP_SIZE
  int compile_threads = 0;                // 0: KILN_COMPILE_THREADS, else one per core
  double budget_seconds = 0;              // whole tuning; 0 = none
  double compile_deadline_seconds = 120;  // per compile unit
  double bench_deadline_seconds = 10;     // per config: a hung config is abandoned
  std::string trace_path;                 // Chrome/Perfetto trace of the run
  std::optional<bool> progress;           // nullopt: on a terminal
  // Asked on the calling thread about every 50 ms while the run waits on
  // its workers (Python's Ctrl-C check): true stops the run as a spent
  // budget would, and tune() returns ErrorCode::kCancelled with nothing
  // saved or remembered. Unset: never asked.
  std::function<bool()> interrupted;
};

// Timing: warm-up runs, then repetitions until `target_seconds` of kernel
// time or max_reps (a slow kernel gets fewer, never fewer than min_reps).
struct MeasureOptions {
  int warmup = 1;
  int min_reps = 3;
  int max_reps = 100;
  double target_seconds = 0.05;
  bool cold_l2 = false;  // flush the L2 before every repetition
  bool graphs = false;   // time a replayed graph (strips launch overhead)
  double delay_us = 0;   // occupy the stream first so host overhead stays out
  // Early stop, a race (TileLang's early stop, TensorRT-LLM's short
  // profile, with rungs): a config's timed repetitions end as soon as its
  // fastest is above early_stop x the best median measured so far in this
  // tuning, a bar that is early_stop times higher for each repetition short
  // of early_stop_reps (a config 4x slower stops after one); after
  // early_stop_reps, once its fastest is above the best median (it cannot
  // win); and after early_stop_reps in any case when finalists
  // (SearchOptions::finalists) will measure the fastest few again in full.
  // The winner gets all its repetitions. 0: off, every config in full.
  double early_stop = 1.5;
  int early_stop_reps = 3;
};

enum class ReferenceKind { kDefaultConfig, kUser, kNone };
// Writes the expected outputs into the output arguments (host code, or a
// trusted kernel on `device`). Inputs are restored before it runs.
using ReferenceFn = std::function<Status(Device& device, const ArgList& args)>;

struct CheckOptions {
  bool enabled = true;
  ReferenceKind reference = ReferenceKind::kDefaultConfig;
  ReferenceFn reference_fn;
  std::optional<Tolerance> tolerance;  // default: Tolerance::for_dtype of each output
};

// Host callables around benchmarking: Triton's pre_hook / post_hook and
// do_bench=. A callable cannot cross into a worker process, so a run with
// any of them set benchmarks in threads on the caller's device, with the
// caller's own arguments (Isolation::kAuto says so in the log; kProcess is
// an error): the hooks see the very buffers the kernel runs on, and a config
// that crashes ends this process. Every hook is called on a benchmark
// thread; `args` are the arguments of the measured run.
//
// NOTES: they do not enter the tuning key: they prepare or time a run, and
// do not change which config computes the right outputs, nor what a cached
// winner does when it is served (the real call runs none of them).
struct BenchHooks {
  // Before every run of a config while it is measured (the checked run,
  // warm-ups, timed repetitions, each run of `benchmark`), after Kiln's own
  // preparation (restore_value, reset_to_zero) and outside the timed
  // events. An error fails that config; the evidence names the hook.
  std::function<Status(const Config& config, const ArgList& args)> pre_run;
  // After each of those runs, synchronised, the last one included, with the
  // run's status (ok, or the launch's error, which stays the evidence). An
  // error fails that config; the evidence names the hook.
  std::function<Status(const Config& config, const ArgList& args, const Status& run)> post_run;
  // A user's benchmarker, in place of Kiln's warm-ups and timed repetitions
  // (the checked first run and the output comparison still happen): given
  // `run`, which makes one complete run of the config (prepare, pre_run,
  // launch, synchronise, post_run), it returns the time samples in seconds
  // (at least one, each finite and not negative), or an error that fails
  // the config. A run that failed fails the config, whatever it returns.
  std::function<Result<std::vector<double>>(const Config& config,
                                            const std::function<Status()>& run)>
      benchmark;

  bool any() const { return pre_run || post_run || benchmark; }
};

struct CacheOptions {
  // Tune even when a result is cached (in this process or on disk); the new
  // winner replaces it. For a changed machine, driver or kernel version the
  // cache keys do not see.
  bool retune = false;
  bool save = true;  // write the winner to the tuning cache
};

struct TuneOptions {
  bool tune = true;  // false: cached or default config only
  // The tuner applies with_tuning_env to these options (KILN_SEARCH,
  // KILN_EFFORT, KILN_BUDGET_S win over what the code says). False: the
  // caller applied it already, with its own overrides on top (`kiln tune`'s
  // flags, which win over the environment).
  bool environment = true;
  SearchOptions search;
  PipelineOptions pipeline;
  MeasureOptions measure;
  CheckOptions check;
  CacheOptions cache;
  BenchHooks hooks;
};

// `o` as the environment's tuning overrides leave it (Options: KILN_SEARCH,
// KILN_EFFORT, KILN_BUDGET_S; kiln/core/options.hpp): for a user who cannot
// edit the code that declares the kernel, so they win over it. KILN_EFFORT
// without KILN_SEARCH also sets the auto search and its budget (max_configs
// 0). A KILN_SEARCH that names no strategy is a warning, ignored.
TuneOptions with_tuning_env(TuneOptions o, const Options& env);

}  // namespace kiln
