// The autotuner. A TunableKernel (template + config space + launch rule) and
// one call's arguments go in; the best config and its loaded kernel come out,
// from the in-memory table, the tuning cache on disk, or a tuning run in
// which the compile pool feeds benchmark workers as each kernel lands.
//
//   Autotuner tuner(backend, &artifact_cache, &tuning_cache);
//   auto best = tuner.tune(kernel, args, device, options);   // tunes on a miss
//   best->launch(device, args);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/cache/failed_configs.hpp"
#include "kiln/cache/tuning_record.hpp"
#include "kiln/compile/compile.hpp"
#include "kiln/compile/compile_pool.hpp"
#include "kiln/compile/kernel.hpp"
#include "kiln/core/fingerprint.hpp"
#include "kiln/device/device.hpp"
#include "kiln/search/search.hpp"
#include "kiln/tuner/args.hpp"
#include "kiln/tuner/compare.hpp"
#include "kiln/tuner/measurement.hpp"
#include "kiln/tuner/tune_options.hpp"
#include "kiln/tuner/tuning_stats.hpp"

namespace kiln {

class ArtifactCache;
class TuningCache;
namespace internal {
struct TuneCall;
}

struct LaunchGeometry {
  Dim3 grid;
  Dim3 block;
  std::size_t shared_bytes = 0;
};
// Grid, block and dynamic shared memory for a config and a call. May throw
// kiln::Error for a config that cannot serve the call (the config fails).
using LaunchRule = std::function<LaunchGeometry(const Config&, const ArgList&)>;

struct TunableKernel {
  KernelTemplate tmpl;
  LaunchRule launch;
  std::vector<std::string> outputs;        // compared with the reference
  std::vector<std::string> restore_value;  // snapshot once, restored before every run
  std::vector<std::string> reset_to_zero;  // zeroed before every run, real calls included
  EarlyPrune early_prune;                  // optional: sees the problem
  PerfModel perf_model;                    // optional: with top_k > 0 keeps the k best
  std::size_t top_k = 0;
  // Dynamic shapes: the key entries whose size is bucketed (a scalar's
  // value, a tensor's dim; kiln/tuner/buckets.hpp). A bucket is tuned once,
  // on the arguments of the first call that lands in it (a size the kernel
  // surely runs, and the one the output check then runs on), and its record,
  // filed under the bucket's representative, serves every size in it.
  // Extents no rule names stay exact.
  std::vector<KeyBucket> buckets;
  // What the definition hash cannot see: the code of the launch rule, the
  // early prune, the performance model and the space's constraint
  // predicates. Change it whenever that code changes ("2", a date, a commit):
  // records tuned for another version are not served.
  std::string version;
};

// A content hash of the kernel's definition: template_hash(tmpl) (source,
// entry, defines, options, headers, space), the output, restore and reset
// lists, top_k and `version`. It enters the tuning key, so a record is only
// served to the kernel it was measured for: an edited kernel is tuned again,
// and two kernels that share a name never share records.
Hash128 definition_hash(const TunableKernel& kernel);

// What a tuning run's outputs were checked against. The default config is
// measured like any other config; when it gives no reference (crash, hang,
// compile error, pruned), the largest group of configs whose outputs agree
// is the reference, and when no group stands out nothing was checked.
struct ReferenceReport {
  enum class Kind { kDefault, kUser, kConsensus, kNone };
  Kind kind = Kind::kNone;
  std::size_t agreeing = 0;  // kConsensus: the configs that agree
  std::string detail;        // which config or code, or why the default could not serve
  // "default", "user", "consensus of 5 configs" or "none".
  std::string name() const;
  bool checked() const { return kind != Kind::kNone; }
};

// Where a TuneResult's config came from.
enum class ResultSource {
  kMemory,   // decided before in this process
  kDisk,     // the tuning cache on disk
  kTuned,    // this call's tuning run
  kUntuned,  // tuning is off (TuneOptions::tune, KILN_TUNING): the heuristic default
  // Tuning is off and the key has no record: the winner of the nearest
  // tuned key of the kernel on this device (problem_distance), valid for
  // this call (in the space, kept by the early prune, launchable); its
  // record is TuneResult::record.
  kNearest,
  // The ranks of a job agreed on this record (Autotuner::adopt): this rank
  // may have measured part of it, or nothing.
  kAgreed,
  kFallback,  // tuning ran but no config ran correctly: the heuristic default, unsaved
  kFailed,    // as kFallback, and the default cannot be built: launch() is an error
};
// "memory", "disk", "tuned", "default", "nearest", "agreed", "fallback",
// "failed".
const char* source_name(ResultSource source);

struct TuneResult {
  Config config;
  LoadedKernel kernel;  // loaded on the device given to tune()
  LaunchGeometry geometry;
  ResultSource source = ResultSource::kUntuned;
  std::vector<Measurement> measurements;  // every config tried (tuned only)
  std::optional<Measurement> best;
  std::optional<double> default_seconds;  // the default config's median, when measured
  KernelStats stats;                      // this call's statistics
  ReferenceReport reference;              // tuned only: what outputs were checked against
  // Tuned only: whether the winner was written to the tuning cache, and why
  // not when it was not (read-only, disabled, refused directory, full disk).
  bool saved = false;
  std::string not_saved_reason;
  // The decision's record: the one this run made (and saved when `saved`),
  // or the one served from memory or disk, so a caller reports it without
  // reading the tuning cache back; for kNearest, the nearest key's record.
  // Empty for kUntuned, kFallback, kFailed.
  std::optional<TuningRecord> record;
  // Tuned only: the configs not measured because they failed in an earlier
  // run and the failure still stands (kiln/cache/failed_configs.hpp), with
  // what was remembered (outcome, reason, failed_at); and the remembered
  // failures that no longer stood and were measured again, with why.
  std::vector<FailedConfig> skipped;
  std::vector<ForgottenFailure> forgotten;
  double speedup_over_default() const;  // 1 when unknown

  // Zeroes reset_to_zero args, then launches (kernel needed for its lists).
  // `stream`: a stream of `device`, such as a caller's own CUDA stream
  // (Device::wrap_stream), on which the zeroing and the launch are queued
  // (asynchronous on CUDA); null: the device's default stream.
  Status launch(Device& device, const TunableKernel& kernel, const ArgList& args,
                Stream* stream = nullptr) const;
};

// Zeroes `tunable`'s reset_to_zero arguments, then launches `loaded` with
// `geometry`, both on `stream` (null: the default stream): how every caller
// runs a tuned kernel (TuneResult::launch, the framework's KernelRunner), so
// a real call sees what the benchmark saw.
[[nodiscard]] Status launch_with_resets(Device& device, const LoadedKernel& loaded,
                                        const TunableKernel& tunable,
                                        const LaunchGeometry& geometry, const ArgList& args,
                                        Stream* stream = nullptr);

// Where benchmarks run (docs/reliability.md).
enum class Isolation {
  // Worker processes where the worker executable is found, else threads;
  // the choice is logged. A raw pointer argument of unknown extent is the
  // call's error, as for kProcess: never a silent fall back to threads.
  kAuto,
  // One kiln-bench-worker process per device (include/kiln/tuner/bench_worker.hpp): a
  // config that segfaults, poisons its CUDA context or hangs costs only its
  // worker, which is replaced. Each worker measures on its own copy of the
  // arguments (tensors, and raw pointers with their extent: Arg::of_pointer),
  // so the caller's memory is never touched while tuning; a raw pointer of
  // unknown extent is the call's error (kInvalidArgument, naming it).
  kProcess,
  // Worker threads in this process: a crash ends the process, a hung
  // config strands its thread (abandoned at its deadline).
  kThread,
};

// Where benchmarks run, independent of what compiles them.
struct BenchPlacement {
  // Opens the benchmark device for worker `slot`; called again to replace a
  // worker whose kernel hung. Null: benchmark on the device given to tune()
  // alone (a hung kernel then ends benchmarking with the rest cancelled).
  std::function<Result<std::unique_ptr<Device>>(int slot)> open_device;
  int workers = 1;  // one per device
  // The benchmark devices, one worker each, all taking from one queue; the
  // arguments are replicated onto each. Empty: the device given to tune()
  // (or open_device's slots). Thread workers open devices[slot] through
  // open_device, which is then required; worker processes open their own.
  std::vector<DeviceRef> devices;
  Isolation isolation = Isolation::kAuto;
  // The kiln-bench-worker executable; empty: find_bench_worker() decides.
  std::string worker_path;
};

// What compiles code for the tuner (the compiler side), and where its
// benchmarks run (`bench`).
struct Backend {
  std::shared_ptr<Compiler> compiler;
  // Optional: a compiler per compile pool worker for tuning runs instead of
  // sharing `compiler`. process_compilers() (include/kiln/tuner/bench_worker.hpp) gives
  // worker processes: a compile past its deadline is killed there, so a
  // compile that never finishes cannot hold up the run.
  CompilerFactory compiler_factory;
  // Enters every key: kiln::current_toolchain(kind) in an application.
  ToolchainFingerprint toolchain;
  std::string arch;  // "host", "sm_90a"
  BinaryFormat format = BinaryFormat::kCpuObject;
  BenchPlacement bench;
};

class Autotuner {
 public:
  // The caches may be null (no persistence).
  Autotuner(Backend backend, ArtifactCache* artifacts, TuningCache* tunings);
  ~Autotuner();
  Autotuner(const Autotuner&) = delete;
  Autotuner& operator=(const Autotuner&) = delete;

  // The best config for this call, loaded on `device` (whose memory the
  // tensor arguments live in). Tuning failures of single configs are
  // recorded in the result; an error only when nothing can run at all.
  Result<TuneResult> tune(const TunableKernel& kernel, const ArgList& args, Device& device,
                          const TuneOptions& options = {});
  // Serves `record`, a decision made elsewhere (the ranks of a job agreed
  // on it: kiln/distributed/distributed_tune.hpp), for this call: remembered
  // for the call's key in this process and its best config loaded
  // (ResultSource::kAgreed). kInvalidArgument when that config is not in the
  // kernel's space.
  Result<TuneResult> adopt(const TunableKernel& kernel, const ArgList& args, Device& device,
                           const TuningRecord& record, const TuneOptions& options = {});
  // The record this process or the tuning cache holds for this call, as
  // tune() would serve it (memory, then disk; none when retuning), without
  // compiling or measuring anything; nullopt when there is none.
  std::optional<TuningRecord> lookup(const TunableKernel& kernel, const ArgList& args,
                                     Device& device, const TuneOptions& options = {});
  // tune() then one real launch (reset_to_zero applied), synchronised.
  Result<TuneResult> run(const TunableKernel& kernel, const ArgList& args, Device& device,
                         const TuneOptions& options = {});

  const TuningStatistics& statistics() const { return stats_; }
  const Backend& backend() const { return backend_; }

 private:
  // The steps of tune(), in lib/tuner/autotuner.cpp.
  // `disk`: the tuning cache on disk may answer too (else this process's
  // own decisions alone).
  std::optional<std::pair<TuningRecord, ResultSource>> decided_before(
      const internal::TuneCall& call, bool disk = true);
  Result<TuneResult> tune_now(const internal::TuneCall& call, TuneResult result);
  Result<TuneResult> serve_fallback(const internal::TuneCall& call, TuneResult result);
  // Tuning off: the nearest tuned key's winner when valid here, else the default.
  Result<TuneResult> serve_untuned(const internal::TuneCall& call, TuneResult result);
  // `retune`: the record replaces the one saved before, faster or not.
  void save(const std::string& name, const TuneOptions& options, bool retune, TuneResult& result);
  Status serve(const internal::TuneCall& call, TuneResult& result, Config config,
               ResultSource source, const Artifact* made = nullptr);

  Backend backend_;
  ArtifactCache* artifacts_;
  TuningCache* tunings_;
  TuningStatistics stats_;
  std::mutex mutex_;
  std::map<Hash128, TuningRecord> table_;  // tuning key -> the winner's record, this process
};

}  // namespace kiln
