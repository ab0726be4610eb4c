// The tuning cache: the winning config per (kernel, problem, device,
// toolchain, environment), as JSON files under Options::cache_dir/tuning.
//
// A process writes one file: tuning.json, or tuning.rank<N>.json when it
// has a rank (Options::rank), so ranks of one job never contend; lookups
// read every tuning*.json there plus any shipped table added with
// add_table(). save() merges this process's new records into its file under
// an advisory lock (flock on a sidecar .lock) and replaces the file
// atomically, so concurrent savers never lose each other's records and a
// reader (which takes no lock) never sees a torn file. A record made on
// another device or with another toolchain or environment is a miss, logged
// once, never served. Thread-safe.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_record.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/options.hpp"

namespace kiln {

// Identifies a Kiln tuning file; with kTuningFormatVersion in every header.
inline constexpr const char* kTuningFormat = "kiln-tuning";
// Version of the tuning file layout (lib/cache/tuning_file.hpp). Bump it on
// ANY change to the header or record JSON, and add a golden file under
// tests/cache/golden/: files of another version are not read (an older
// file is replaced by the next save). 2: records carry the kernel's
// definition hash and a checksum over their whole content. 3: the
// toolchain is one backend's (backend, compiler), not every backend's.
inline constexpr int kTuningFormatVersion = 3;

// One file the cache read, for `kiln cache ls/stats/verify`.
struct TuningFileStatus {
  std::filesystem::path path;
  std::size_t records = 0;
  std::string problem;               // why it was not read; empty when it was
  std::vector<std::string> skipped;  // malformed records it held
  nlohmann::json to_json() const;
};

class TuningCache {
 public:
  // The user's cache (see above). Read-only and disabled modes come from
  // `options`; a directory that fails its safety checks is refused with a
  // warning (the cache then behaves as disabled).
  explicit TuningCache(const Options& options = Options::global());
  // A single file, such as a table shipped with an application. With
  // `read_only`, save() never writes it.
  static TuningCache open_file(const std::filesystem::path& file, bool read_only);

  TuningCache(TuningCache&&) noexcept;
  TuningCache& operator=(TuningCache&&) noexcept;
  ~TuningCache();

  // The record for `problem` made on `present`, or nullopt. Records for the
  // same problem made elsewhere are a miss and logged once with what differs.
  std::optional<TuningRecord> lookup(const ProblemKey& problem,
                                     const TuningIdentity& present) const;
  // What put() does with a record already held for the same problem and
  // identity: keep the faster of the two (tuners racing on one problem), or
  // replace it (a retune: the old time was measured under other conditions).
  enum class PutMode { kKeepFaster, kReplace };
  // Adds a record in memory (served at once); save() writes it. A replacing
  // record replaces the held one in memory and in the file save() writes (a
  // record for the same problem in another rank's file still competes on
  // time when the directory is read).
  void put(TuningRecord record, PutMode mode = PutMode::kKeepFaster);
  // Merges the records put since the last save into this process's file.
  // kWritten: every record put is now on disk (also when none was pending).
  // kSkippedReadOnly / kSkippedDisabled (disabled or refused): nothing was
  // written, by design, so not an error (a read-only cache is an ordinary
  // setup and must not warn on every tune); writable() says why. An error:
  // the write was tried and failed (full disk, a FIFO planted at the file,
  // a file over the 64 MiB limit for a tuning table).
  Result<StoreOutcome> save();
  // Whether save() would write. When not, `*why` (if given) says why in
  // words a user can act on: "the cache is read-only (KILN_CACHE_READ_ONLY
  // is set)", "caching is disabled (KILN_CACHE_DISABLE is set)", "the cache
  // directory is refused: <the safety check and its fix>".
  bool writable(std::string* why = nullptr) const;
  // Rereads every file (records put and not yet saved are kept).
  void reload();
  // Reads a shipped table as one more source for lookups (never written).
  Result<std::size_t> add_table(const std::filesystem::path& file);

  // Writes every known record into `file` (atomically), in the tuning file
  // format: the table to ship. Returns the number of records written.
  // kUnavailable when the cache is disabled or refused (it read nothing);
  // kInvalidArgument when `file` is a FIFO, a device or a directory.
  Result<std::size_t> export_table(const std::filesystem::path& file) const;
  // Reads `file` (a table exported anywhere), puts its records and saves.
  // Returns the number of records imported; malformed records are skipped
  // and listed in files(). kUnavailable unless writable(); anything but a
  // regular file of at most 64 MiB is refused before it is read.
  Result<std::size_t> import_table(const std::filesystem::path& file);
  // Removes every tuning file this cache reads from its directory (and the
  // temporary files of savers that died). kUnavailable unless writable();
  // kIo naming how many files could not be removed and the first path with
  // its errno text, when any could not.
  Result<std::size_t> clear();

  std::vector<TuningRecord> records() const;  // every known record, by id
  std::vector<TuningFileStatus> files() const;
  std::size_t pending() const;  // put and not yet saved
  const std::filesystem::path& write_path() const { return write_path_; }
  const std::filesystem::path& dir() const { return dir_; }
  CacheState state() const { return state_; }
  const std::string& state_reason() const { return state_reason_; }

 private:
  struct FileTag {};
  explicit TuningCache(FileTag) {}
  void load_file_locked(const std::filesystem::path& path);
  // The first record for `want` a tier of cache_tiers() holds that passes
  // the checks of a record on disk; saved to local disk.
  std::optional<TuningRecord> lookup_tiers(const Hash128& want,
                                           const TuningIdentity& present) const;

  std::filesystem::path dir_;         // empty for open_file
  std::filesystem::path write_path_;  // the one file save() writes
  CacheState state_ = CacheState::kReady;
  std::string state_reason_;
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  std::map<Hash128, TuningRecord> records_;    // everything known
  std::map<Hash128, TuningRecord> pending_;    // put, not yet saved
  std::set<Hash128> replacing_;                // pending records put with kReplace
  std::vector<std::filesystem::path> tables_;  // added with add_table
  std::vector<TuningFileStatus> files_;
};

}  // namespace kiln
