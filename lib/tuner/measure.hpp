// Measuring one compiled config on one device: load, one checked run
// against the reference, then warm-up and timed repetitions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "call_state.hpp"
#include "kiln/tuner/measurement.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::internal {

// Outputs by name, widened to double.
using Outputs = std::map<std::string, std::vector<double>>;
// Expected outputs; absent when they are not known before the run (not
// checked, or judged afterwards by an OutputJudge from captured outputs).
using Reference = std::optional<Outputs>;

// Early stop's bars for one config (MeasureOptions::early_stop; all unset:
// measure in full), from what this tuning measured before it. A config's
// timed repetitions end at the first after which its fastest so far is
//  - above early_stop x `best` (the best median so far) times early_stop
//    once more for each repetition short of early_stop_reps: clearly
//    slower. One repetition is enough for a config many times slower, and
//    one near the bar gets early_stop_reps: noise only ever adds time, and
//    it takes more repetitions to be sure that it did not add to all of
//    them;
//  - or, from early_stop_reps on, above `best` itself: it can no longer
//    win;
//  - or, from early_stop_reps on, whatever its time, when `screen`: the
//    finalists (finalists.hpp) measure the fastest few again in full, so
//    this pass only has to say which few those are. Repetitions go to the
//    configs whose ranking is still open, at the end, not to every config
//    that looked fast when it was measured (early in a run, before the
//    fastest landed, that is most of them).
struct StopBars {
  double best = 0;  // 0: nothing measured yet
  bool screen = false;
};

// Whether a config with `reps` timed repetitions, the fastest `fastest`,
// stops there (StopBars).
bool stop_early(const StopBars& bars, const MeasureOptions& options, int reps, double fastest);

// The same code measures in the tuner's threads and in a benchmark worker
// process (lib/tuner/bench_worker.cpp), which has no TunableKernel: the
// launch geometry is computed by the tuner and passed in.
struct MeasureInputs {
  const ArgList* args;
  const CallState* state;
  const Reference* reference;
  const TuneOptions* options;
  // When set and there is no reference: the checked run's outputs go here,
  // for the tuner to judge against the default config or the consensus.
  Outputs* captured = nullptr;
  // Early stop: where timed repetitions end (StopBars).
  StopBars stop;
};

// The failure of `artifact`'s config, with its compile time kept.
Measurement failure(const Artifact& artifact, Outcome outcome, ErrorInfo error);
Measurement failure(const Artifact& artifact, Outcome outcome, std::string reason);

// Never throws for a config's own failure: a Measurement with the outcome
// and the evidence (driver error, comparison) comes back instead.
Measurement measure(Device& device, const Artifact& artifact, const LaunchGeometry& geometry,
                    const MeasureInputs& in);

// The kernel's launch rule for one config and the caller's arguments; a rule
// that throws kiln::Error is that config's failure (kLaunchFailed).
Result<LaunchGeometry> launch_geometry(const TunableKernel& kernel, const Config& config,
                                       const ArgList& args);

// Whether `device` still works after a failed measurement (a CUDA fault
// poisons the context: every later call fails). An error when it does not.
Status probe_device(Device& device);

// The benchmark hooks (TuneOptions::hooks) of one config's runs. An error
// of a hook names it and carries details["hook"]: the config failed, but
// not by its own fault, so the failure is not remembered against it.
struct RunHooks {
  const BenchHooks* hooks = nullptr;  // null: none
  const Config* config = nullptr;
  const ArgList* args = nullptr;

  Status before() const;
  // The run's status, else the post_run hook's error.
  Status after(const Status& run) const;
};

// One run of a loaded kernel as the real call makes it: prepare, the
// pre_run hook, launch, sync, the post_run hook. A `checked` run starts
// from the outputs' first contents.
Status run_once(Device& device, const LoadedKernel& kernel, const LaunchGeometry& geometry,
                const KernelArgs& packed, const CallState& state, bool checked = false,
                const RunHooks& hooks = {});

}  // namespace kiln::internal
