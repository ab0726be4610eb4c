// Configs that failed in earlier tunings of one problem on this machine,
// remembered so that a rerun (a larger budget, a retune) does not compile
// and run them again. A side table of the tuning cache, kept apart from the
// records because a tuning in which nothing ran correctly saves no record
// and still has failures worth remembering: one JSON file per key under
// <cache dir>/tuning/failed/.
//
// The key is the tuning record's (problem, kernel definition, device arch
// and name, toolchain, cache-invalidating environment) plus the benchmark
// threads: a config that hangs or crashes on 16 threads may run on 2. A
// changed kernel source changes its definition hash, so the failures of
// the old source are never applied to the new one.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/cache/tuning_record.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

class TuningCache;

// Identifies a failure file. Bump it on ANY change to the JSON layout:
// files of another version are ignored (their configs are measured again).
inline constexpr const char* kFailedConfigsFormat = "kiln-failed-configs";
inline constexpr int kFailedConfigsFormatVersion = 1;

struct FailedConfig {
  Config config;
  std::string outcome;  // outcome_name(): "compile_failed", "crashed", "timeout", "wrong_result"
  std::string reason;   // the first 500 characters of why
};

struct FailureKey {
  ProblemKey problem{"unset"};
  TuningIdentity identity;
  int threads = 0;  // benchmark threads on the CPU (BenchPlan::cpu_threads); 0 on a GPU
  Hash128 id() const;
};

class FailedConfigs {
 public:
  // Off: recalls nothing, remembers nothing.
  FailedConfigs() = default;
  // The table in `dir`; with `read_only`, remember() writes nothing.
  explicit FailedConfigs(std::filesystem::path dir, bool read_only = false);
  // The table beside `cache`'s files: off when the cache is disabled or
  // refused or is a single file (open_file), read-only when the cache is.
  static FailedConfigs beside(const TuningCache& cache);

  bool enabled() const { return !dir_.empty(); }
  const std::filesystem::path& dir() const { return dir_; }
  // Every config remembered for `key` (empty when none, or when the file is
  // unreadable: then it is logged once and the configs are measured again).
  std::vector<FailedConfig> recall(const FailureKey& key) const;
  // Adds `failed` to what `key` remembers (the file is merged under a lock
  // and replaced atomically, so two tuners of one problem lose nothing).
  // Ok without writing when off, read-only or `failed` is empty.
  [[nodiscard]] Status remember(const FailureKey& key, const std::vector<FailedConfig>& failed);

 private:
  std::filesystem::path file_for(const FailureKey& key) const;
  std::filesystem::path dir_;
  bool read_only_ = true;
};

}  // namespace kiln
