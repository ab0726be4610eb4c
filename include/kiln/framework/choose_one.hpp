// choose_one: the best (runner, tactic) of an op for the shape of a call.
//
//   kiln::TacticTuner tuner({.device = device.get()});
//   std::vector<kiln::TunableRunner*> runners = {&kiln_rmsnorm, &reference_rmsnorm};
//   kiln::Choice c = tuner.choose_one("rmsnorm", runners, inputs, spec);
//   c.run(inputs);
//
// The decision path: this process's table (a per-thread snapshot, so a hit
// costs a TLS read, a generation check and one hash-map probe); then the
// attached tuning caches (a TuningScope's file, the tuner's own cache);
// then, inside a TuningScope with tuning on, a tuning pass over every
// profile of the spec (the product of its buckets); else the fallback
// (tactic -1 of the first runner), with one warning per op.
//
// A decision's key is the op, each runner's RunnerId (name@version, the
// same in every process) and the profile (dtype and bucketed shape of every
// tensor input; scalars stay out). Persisted decisions are TuningRecords in
// a TuningCache, so they inherit its guarantees: atomic writes, per-rank
// files, records of another device, toolchain or environment never served.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/cache/tuning_record.hpp"
#include "kiln/core/collective.hpp"
#include "kiln/framework/dynamic_shapes.hpp"
#include "kiln/framework/runner.hpp"
#include "kiln/tuner/compare.hpp"
#include "kiln/tuner/measurement.hpp"
#include "kiln/tuner/selection.hpp"

namespace kiln {

class TuningCache;

enum class ChoiceSource {
  kMemory,    // this process decided before
  kDisk,      // a tuning cache held the decision
  kTuned,     // tuned by this call
  kFallback,  // nothing known and not tuning: tactic -1
  kSkipped,   // the op is in this thread's skip list: tactic -1
  kReplay,    // forced by a ReplayScope
};
const char* choice_source_name(ChoiceSource source);

struct Choice {
  TunableRunner* runner = nullptr;
  std::size_t runner_index = 0;  // in the runners given to choose_one
  int tactic = kFallbackTactic;
  ChoiceSource source = ChoiceSource::kFallback;

  Status run(const ArgList& inputs) const { return runner->run(inputs, tactic); }
};

struct TacticTunerOptions {
  // Where tuning inputs are generated (and runners run). Null: host memory,
  // for runners that take host pointers (the CPU backend, plain C++).
  Device* device = nullptr;
  // What records are tagged with. Default: device->properties(), else
  // {"host", "host CPU"}.
  std::optional<DeviceIdentity> identity;
  // The toolchain records are tagged with. Default: Kiln's version and
  // codegen hash alone, for runners no backend compiles; runners whose code
  // a Kiln backend compiles pass its fingerprint,
  // kiln::current_toolchain(kind) (kiln/backends/toolchain.hpp), so an
  // upgrade of that compiler retunes them.
  std::optional<ToolchainFingerprint> toolchain;
  // A cache consulted beneath the scopes' files; decisions are saved to it
  // after each tuning pass. May be null.
  TuningCache* cache = nullptr;
  // Timing of each (runner, tactic): warm-up runs, then repetitions until
  // target_seconds or max_reps (never fewer than min_reps).
  int warmup = 1;
  int min_reps = 3;
  int max_reps = 20;
  double target_seconds = 0.005;
  SelectionPolicy selection;
  // Output tensors (by name) compared, for every (runner, tactic) timed,
  // with what the first runner's fallback writes on the same inputs; a
  // tactic that disagrees is recorded as a wrong result and never chosen.
  // Empty: no check.
  std::vector<std::string> check_outputs;
  Tolerance tolerance;  // allclose, or cosine when min_cosine > 0
  // Ranks that decide together (set_collective() sets it later too). With
  // one, every decision this process has not made yet is a collective round:
  // each rank says what its caches hold, and a decision any rank holds is
  // every rank's (the lowest such rank's), so one rank's hit never leaves
  // another tuning alone or waiting; when none holds one, the ranks tune it
  // together as `strategy` says and every rank gets the identical winner.
  // Every rank must then make the same choose_one calls in the same order
  // (SPMD); ranks naming different problems get kiln::Error naming both.
  std::shared_ptr<Collective> collective;
  DistributedStrategy strategy = DistributedStrategy::kBroadcast;
};

// Counters of the slow paths (hits in this process's table are not
// counted: the hot path stays free of shared writes).
struct TacticStats {
  std::uint64_t disk_hits = 0;
  std::uint64_t tuned_profiles = 0;  // profiles decided by tuning
  std::uint64_t profiled = 0;        // (runner, tactic) pairs timed
  std::uint64_t failed = 0;          // pairs that returned an error
  std::uint64_t fallbacks = 0;       // misses outside tuning
  std::uint64_t skipped = 0;         // calls of skipped ops
  std::uint64_t stale = 0;           // cached decisions naming an unknown runner or tactic
};

// 128 bits of op, runner identities and profile: this process's table key.
struct TacticKey {
  std::uint64_t a = 0, b = 0;
  bool operator==(const TacticKey&) const = default;
};
struct TacticKeyHash {
  std::size_t operator()(const TacticKey& k) const { return static_cast<std::size_t>(k.a); }
};

class TacticTuner {
 public:
  explicit TacticTuner(TacticTunerOptions options = {});
  ~TacticTuner();
  TacticTuner(const TacticTuner&) = delete;
  TacticTuner& operator=(const TacticTuner&) = delete;

  // The best (runner, tactic) for `inputs`. Throws kiln::Error for misuse
  // (no runners, a spec naming inputs the call lacks, a spec with dynamic
  // dims that was not finalize()d). Never fails otherwise: a tuning pass in
  // which nothing runs yields the fallback, with a warning.
  Choice choose_one(std::string_view op, std::span<TunableRunner* const> runners,
                    const ArgList& inputs, const TuningSpec& spec = TuningSpec());

  // Tuning caches consulted (the calling thread's scope first, then the
  // newest) and written (the calling thread's scope's, else the tuner's
  // own). A TuningScope attaches its file; attaching drops fallback
  // decisions from memory so the new file is consulted for them.
  void attach(TuningCache* cache);
  void detach(TuningCache* cache);
  // Forgets this process's decisions (the caches keep theirs).
  void clear_memory();
  std::size_t memory_size() const;

  // Decide together with the ranks of `collective` from now on (null: alone
  // again); decisions made alone before are forgotten, so that the next
  // ones are agreed. kInvalidArgument for kIndependent (that is no
  // collective: pass null).
  void set_collective(std::shared_ptr<Collective> collective,
                      DistributedStrategy strategy = DistributedStrategy::kBroadcast);

  TacticStats stats() const;
  const TuningIdentity& identity() const { return identity_; }
  const TacticTunerOptions& options() const { return options_; }

  // The table key of a call: what choose_one() looks up. Exposed for
  // capture/replay and the benchmark.
  static TacticKey key_of(std::string_view op, std::span<TunableRunner* const> runners,
                          const ArgList& inputs, const TuningSpec& spec);

  struct Entry {
    std::uint32_t runner_index = 0;
    int tactic = kFallbackTactic;
    bool fallback = false;  // a miss outside tuning: retried when tuning is on
  };

 private:
  Choice decide_slow(std::string_view op, std::span<TunableRunner* const> runners,
                     const ArgList& inputs, const TuningSpec& spec, const TacticKey& key,
                     bool tuning);
  std::optional<Entry> from_caches(std::string_view op, std::span<TunableRunner* const> runners,
                                   const ArgList& inputs, const TuningSpec& spec,
                                   std::span<const std::int64_t> profile);
  void tune_profiles(std::string_view op, std::span<TunableRunner* const> runners,
                     const ArgList& inputs, const TuningSpec& spec);
  // With a collective (lib/framework/tactic_agree.cpp): the decision agreed
  // with every rank, and the tuning pass the ranks share.
  Choice decide_together(std::string_view op, std::span<TunableRunner* const> runners,
                         const ArgList& inputs, const TuningSpec& spec, const TacticKey& key,
                         bool tuning);
  void tune_profiles_together(std::string_view op, std::span<TunableRunner* const> runners,
                              const ArgList& inputs, const TuningSpec& spec);
  // One round: every rank says its problem (differing ones: kiln::Error) and
  // what its caches hold; the entry of the lowest rank that holds one.
  // `all_tune` (may be null): whether every rank is tuning.
  std::optional<Entry> agree_known(std::string_view op, std::span<TunableRunner* const> runners,
                                   const ArgList& inputs, const TuningSpec& spec,
                                   std::span<const std::int64_t> profile, bool tuning,
                                   bool* all_tune);
  // One profile's (runner, tactic) pairs measured on generated inputs:
  // those `take` accepts by their index in the pass (null: every pair);
  // nullopt when its inputs cannot be generated.
  std::optional<std::vector<Measurement>> measure_profile(
      std::string_view op, std::span<TunableRunner* const> runners, const ArgList& inputs,
      const TuningSpec& spec, std::span<const std::int64_t> profile,
      std::vector<std::set<int>>& prepared, const std::function<bool(std::size_t)>* take);
  // The winner of `measured` remembered (and recorded in `target`); whether
  // a record was put there.
  bool settle_profile(std::string_view op, std::span<TunableRunner* const> runners,
                      const ArgList& inputs, const TuningSpec& spec,
                      std::span<const std::int64_t> profile, const TacticKey& key,
                      const std::vector<Measurement>& measured, TuningCache* target);
  // The tuner's own cache saved when this pass recorded into it (a scope's
  // file is saved when the scope ends).
  void save_own(std::string_view op, std::size_t recorded, TuningCache* target);
  // Where a tuning pass on this thread records: its scope's file, else the
  // tuner's own cache.
  TuningCache* record_target_now() const;
  void insert(const TacticKey& key, Entry entry);
  const std::unordered_map<TacticKey, Entry, TacticKeyHash>& snapshot();

  TacticTunerOptions options_;
  TuningIdentity identity_;
  bool tuning_allowed_ = true;  // Options::tuning (KILN_TUNING), read once
  std::uint64_t serial_ = 0;    // tells apart tuners in the per-thread snapshots

  mutable std::shared_mutex table_mutex_;
  std::unordered_map<TacticKey, Entry, TacticKeyHash> table_;
  std::atomic<std::uint64_t> generation_{1};

  // One tuning pass or cache read at a time; recursive so that a runner
  // whose run() calls choose_one() for an inner op cannot deadlock.
  std::recursive_mutex slow_mutex_;
  std::vector<TuningCache*> caches_;

  struct Counters;
  std::unique_ptr<Counters> counters_;
};

// choose_one on a process-wide tuner (host memory, no cache of its own):
// what TuningScope-driven framework code calls.
TacticTuner& default_tactic_tuner();
inline Choice choose_one(std::string_view op, std::span<TunableRunner* const> runners,
                         const ArgList& inputs, const TuningSpec& spec = TuningSpec()) {
  return default_tactic_tuner().choose_one(op, runners, inputs, spec);
}

}  // namespace kiln
