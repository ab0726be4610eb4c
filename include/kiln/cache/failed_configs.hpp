// Configs that failed in earlier tunings of one problem on this machine,
// remembered so that a rerun (a larger budget, a record that went stale)
// does not compile and run them again. A side table of the tuning cache,
// kept apart from the records because a tuning in which nothing ran
// correctly saves no record and still has failures worth remembering: one
// JSON file per key under <cache dir>/tuning/failed/.
//
// The key is the tuning record's (problem, kernel definition, device arch
// and name, toolchain, cache-invalidating environment) plus the benchmark
// threads: a config that hangs or crashes on 16 threads may run on 2. A
// changed kernel source changes its definition hash, so the failures of
// the old source are never applied to the new one. What the key cannot
// hold travels with each failure and is checked when it is recalled
// (kiln/tuner's failure_evidence.hpp): the headers a compile looked for
// and did not find, the files its errors named, when it failed and how
// many runs have skipped it since.
#pragma once

#include <cstdint>
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
inline constexpr int kFailedConfigsFormatVersion = 2;

// A file a failure depended on, as it was when the config failed.
struct FileWitness {
  std::string path;    // absolute
  std::string digest;  // content hash (hex); empty: the file did not exist
  bool operator==(const FileWitness&) const = default;
};

struct FailedConfig {
  Config config;
  std::string outcome;  // outcome_name(): "compile_failed", "crashed", "timeout", "wrong_result"
  std::string reason;   // the first 500 characters of why
  std::int64_t failed_at = 0;  // Unix seconds of the failure (0: unknown, treated as long ago)
  int skipped_runs = 0;        // tuning runs that skipped it since
  // A compile failure's evidence: the #include names the compiler looked
  // for and did not find, the directories it looked in, and the files its
  // diagnostics named (their content then).
  std::vector<std::string> missing_headers{};
  std::vector<std::string> search_dirs{};
  std::vector<FileWitness> files{};
};

// A remembered failure that no longer stood when a run began, and why: its
// config was measured again.
struct ForgottenFailure {
  FailedConfig failure;
  std::string why;
};

struct FailureKey {
  ProblemKey problem{"unset"};
  TuningIdentity identity;
  int threads = 0;  // benchmark threads on the CPU (BenchPlan::cpu_threads); 0 on a GPU
  Hash128 id() const;
};

// What one tuning run changes in the failures remembered for its key.
struct FailureUpdate {
  std::vector<FailedConfig> failed;  // this run's failures: added, or replacing older ones
  std::vector<Config> measured;      // configs it ran: forgotten unless in `failed`
  std::vector<Config> skipped;       // configs it skipped as failed before: skipped_runs + 1
  std::vector<Config> forgotten;     // remembered failures that no longer stand: dropped
  bool replace = false;              // a retune: the file holds this run's failures alone
};

// One failure file, for `kiln cache ls` and `stats`.
struct FailureFile {
  std::filesystem::path path;
  std::string kernel;   // empty when the file could not be read
  std::string problem;  // ProblemKey::canonical()
  std::string device;   // the device's name
  std::vector<FailedConfig> failed;
  std::string problem_text;  // why the file is not used; empty when it is
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
  // Applies one run's changes to what `key` remembers (merged under a lock
  // and replaced atomically, so two tuners of one problem lose nothing; a
  // file left with no failure is removed). Ok without writing when off or
  // read-only.
  [[nodiscard]] Status update(const FailureKey& key, const FailureUpdate& changes);
  // update() with `failed` alone.
  [[nodiscard]] Status remember(const FailureKey& key, const std::vector<FailedConfig>& failed);

  // Every failure file, sorted by kernel then problem.
  std::vector<FailureFile> list() const;
  // Removes the failure files of `kernel` (every kernel when empty); good
  // tuning records are untouched. How many configs were forgotten.
  Result<std::size_t> forget(const std::string& kernel);

 private:
  std::filesystem::path file_for(const FailureKey& key) const;
  std::filesystem::path dir_;
  bool read_only_ = true;
};

}  // namespace kiln
