// Kiln's environment, read once. Every KILN_* setting lives in Options; the
// variables that change generated code are listed in one registry whose
// snapshot enters every cache key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/hash.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

// A set of environment variables: the process's own, or one built by hand
// (tests, or a tool describing another environment).
class Environment {
 public:
  static Environment process();  // a copy of `environ` now
  std::optional<std::string> get(const std::string& name) const;
  Environment& set(std::string name, std::string value);
  Environment& unset(const std::string& name);

 private:
  std::map<std::string, std::string> vars_;
};

struct Options {
  std::filesystem::path cache_dir;  // KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln
  std::string cache_dir_source;     // the variable that decided cache_dir
  std::uint64_t cache_max_bytes = 4ull << 30;  // KILN_CACHE_MAX_SIZE ("512M", "4G", bytes)
  bool cache_read_only = false;                // KILN_CACHE_READ_ONLY=1
  bool cache_disabled = false;                 // KILN_CACHE_DISABLE=1
  LogLevel log_level = LogLevel::kWarn;        // KILN_LOG_LEVEL
  int compile_threads = 0;                     // KILN_COMPILE_THREADS; 0 = one per core
  int group_size = 0;                          // KILN_GROUP_SIZE; 0 = Kiln's measured default
  std::string arch;                            // KILN_ARCH ("sm_90a"); empty = the device's
  bool pch = true;                             // KILN_PCH=0 turns NVRTC precompiled headers off
  bool tuning = true;                          // KILN_TUNING=0: cached or default configs only
  // KILN_RETUNE=1: each key's first decision in this process is tuned again,
  // records and remembered failures on disk notwithstanding (as --retune).
  bool retune = false;
  std::filesystem::path cuda_home = "/usr/local/cuda";  // CUDA_HOME, else CUDA_PATH
  std::string nvrtc_flags;  // KILN_NVRTC_FLAGS: extra NVRTC options (in keys)
  std::string cpu_flags;    // KILN_CPU_FLAGS: extra Clang options (in keys)
  // KILN_CACHE_MEMORY_SIZE: bound of the in-memory layer in front of the
  // artifact cache; 0 turns it off.
  std::uint64_t cache_memory_bytes = 256ull << 20;
  // KILN_RANK, else RANK, else LOCAL_RANK: this process's rank in a
  // multi-process job, which gets its own tuning file; -1 = none.
  int rank = -1;
  // KILN_WORKER: the benchmark worker executable (include/kiln/tuner/bench_worker.hpp);
  // empty = the build tree's, else the installed one. Named and missing or
  // broken, it is an error unless benchmarks run in threads.
  std::filesystem::path bench_worker;
  // KILN_WORKER_MEMORY: the data memory each worker process may take
  // (RLIMIT_DATA: heap and private mappings), so that a config that
  // allocates without end fails in its worker, recorded as crashed, instead
  // of driving the machine into swap; 0 = no limit.
  std::uint64_t worker_memory_bytes = 0;
  // Tuning overrides, for a user who cannot edit the code that declares the
  // kernel: they replace what the declaration's TuneOptions say
  // (with_tuning_env, kiln/tuner/tune_options.hpp); a `kiln tune` flag given
  // on its command line replaces them in turn. Empty/unset: the declaration's.
  std::string search;                    // KILN_SEARCH: a strategy name or "auto"
  std::string effort;                    // KILN_EFFORT: quick, default or full
  std::optional<double> budget_seconds;  // KILN_BUDGET_S: the whole tuning; 0 = none
  bool print_autotuning = false;         // KILN_PRINT_AUTOTUNING=1: a line per decision
  std::filesystem::path autotune_log;    // KILN_AUTOTUNE_LOG: every measurement, JSON lines

  // Reads `env`. A malformed value never throws: it is reported in
  // `problems` (naming the variable, the value and the fix) and the default
  // is kept, so a bad environment cannot take a run down.
  static Options from_env(const Environment& env, std::vector<std::string>* problems = nullptr);
  // The process's options, read on first use (thread-safe), problems logged once.
  static const Options& global();
  // For the worker processes Kiln starts (benchmark and compile workers):
  // they inherit the environment, and stderr, of the process that started
  // them, which has reported its problems already; global() then reports
  // none, so each warning is printed once per run, not once per process.
  // Call before anything reads global().
  static void problems_reported_by_parent();
  // Problems found when global() was read.
  static const std::vector<std::string>& global_problems();

  nlohmann::json to_json() const;
};

// Parses "123", "64K", "512M", "4G" (powers of 1024). nullopt when malformed.
std::optional<std::uint64_t> parse_size(const std::string& text);

// The values of the cache-invalidating variables at one moment.
struct EnvSnapshot {
  // Sorted by name; nullopt = unset (which differs from set-to-empty).
  std::vector<std::pair<std::string, std::optional<std::string>>> values;

  Hash128 hash() const;
  nlohmann::json to_json() const;
  static EnvSnapshot from_json(const nlohmann::json& json);
  bool operator==(const EnvSnapshot&) const = default;
};

// Names of the environment variables that change generated code. Kiln's
// own are built in; a user registers more (say, a variable their template
// reads through a -D). Thread-safe.
class CacheEnvRegistry {
 public:
  CacheEnvRegistry();  // Kiln's own names only
  static CacheEnvRegistry& global();
  static const std::vector<std::string>& builtin_names();

  void add(std::string name);
  std::vector<std::string> names() const;  // sorted
  EnvSnapshot snapshot(const Environment& env) const;
  EnvSnapshot snapshot() const { return snapshot(Environment::process()); }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> names_;
};

}  // namespace kiln
