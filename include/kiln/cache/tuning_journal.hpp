// The journal of a tuning in progress: each measurement kept as it lands,
// so that a run cut short (Ctrl-C, SIGTERM, a spent budget, SIGKILL) loses
// none of them and the next tuning of the same key measures only what is
// missing. One file per key under <cache dir>/tuning/journal/, named and
// keyed like the failure table (FailureKey: the tuning record's key plus
// the device name and the benchmark threads), so a journal made by another
// compiler, device, environment or kernel definition is never read. A
// finished run removes its journal.
//
// NOTES: one JSON object a line, each written with a single write(2) under
// O_APPEND and an flock on the file: a writer killed mid-line leaves one
// torn line, which the reader skips with a warning (the next writer starts
// a fresh line after it), and two tuners of one key append side by side.
// The reader keeps the last line of each config.
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/cache/failed_configs.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

class TuningCache;

// In every line. Bump the version on ANY change to a line's layout: lines
// of another version are skipped (their configs are measured again).
inline constexpr const char* kJournalFormat = "kiln-journal";
inline constexpr int kJournalFormatVersion = 1;

class TuningJournal {
 public:
  // Off: reads nothing, writes nothing.
  TuningJournal() = default;
  // The journals in `dir`; with `read_only`, append() and remove() write nothing.
  explicit TuningJournal(std::filesystem::path dir, bool read_only = false);
  // The journals beside `cache`'s files: off when the cache is disabled,
  // refused or a single file; read-only when the cache is.
  static TuningJournal beside(const TuningCache& cache);

  bool enabled() const { return !dir_.empty(); }
  bool writable() const { return enabled() && !read_only_; }
  std::filesystem::path file_for(const FailureKey& key) const;

  // The entries kept for `key` (each an object with a "config"), the last
  // one of each config; lines that are torn, not JSON, of another format
  // or key are skipped and logged once. Empty when there is no journal.
  std::vector<nlohmann::json> read(const FailureKey& key) const;
  // Appends `entry` (an object with a "config") to `key`'s journal.
  [[nodiscard]] Status append(const FailureKey& key, const nlohmann::json& entry) const;
  // Removes `key`'s journal: its run finished.
  [[nodiscard]] Status remove(const FailureKey& key) const;

 private:
  std::filesystem::path dir_;
  bool read_only_ = true;
};

}  // namespace kiln
