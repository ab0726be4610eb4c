// Statistics of tuning, per kernel: cache hits and misses, configs compiled,
// failed (by reason) and benchmarked, and the time spent compiling and
// benchmarking. Thread-safe: compile and benchmark workers record directly.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kiln/tuner/measurement.hpp"

namespace kiln {

struct KernelStats {
  std::uint64_t cache_hits = 0;     // decisions served from memory or disk
  std::uint64_t cache_misses = 0;   // decisions that had to be tuned (or defaulted)
  std::uint64_t configs = 0;        // configs considered after pruning
  std::uint64_t compiled = 0;       // configs compiled in this run
  std::uint64_t artifact_hits = 0;  // configs whose artifact came from the artifact cache instead
  std::uint64_t benchmarked = 0;    // configs measured successfully
  std::uint64_t failed = 0;         // configs that failed, for any reason
  std::map<std::string, std::uint64_t> failed_by_reason;  // outcome name -> count
  double compile_seconds = 0;    // wall time of the compile pool's work (union of its spans)
  double benchmark_seconds = 0;  // wall time of benchmarking (union of its spans)
  double overlap_seconds = 0;    // time both ran at once
  double wall_seconds = 0;       // the whole tuning

  // Configs not compiled because they failed in an earlier tuning of the
  // same problem here (kiln/cache/failed_configs.hpp).
  std::uint64_t skipped_failed_before = 0;
  std::uint64_t warm_started = 0;  // neighbours' winners measured first (warm start)
  // Configs an earlier run of this key measured before it was cut short,
  // taken from its journal instead of measured (kiln/cache/tuning_journal.hpp).
  std::uint64_t resumed = 0;
  std::uint64_t finalists = 0;  // configs re-measured at the end (SearchOptions::finalists)
  double finalist_seconds = 0;  // wall time of that re-measurement (part of wall_seconds)
  // Misses with tuning off: served the nearest tuned key's winner, or the default.
  std::uint64_t served_nearest = 0;
  std::uint64_t served_default = 0;

  void merge(const KernelStats& other);
  nlohmann::json to_json() const;
};

class TuningStatistics {
 public:
  void cache_hit(const std::string& kernel);
  void cache_miss(const std::string& kernel);
  void outcome(const std::string& kernel, Outcome outcome);
  // Adds to the kernel's counters and times (configs, compiled, artifact hits, times).
  void add(const std::string& kernel, const KernelStats& delta);

  KernelStats kernel(const std::string& kernel) const;
  KernelStats total() const;
  std::map<std::string, KernelStats> snapshot() const;
  nlohmann::json to_json() const;  // {"kernels": {...}, "total": {...}}

 private:
  mutable std::mutex mutex_;
  std::map<std::string, KernelStats> kernels_;
};

}  // namespace kiln
