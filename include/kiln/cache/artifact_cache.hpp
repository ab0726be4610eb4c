// The artifact cache: compiled kernels on disk, found by kiln::artifact_key,
// with an in-memory layer in front. It stores opaque bytes plus a small JSON
// description and never interprets either, so every backend (NVRTC
// CUBIN/PTX, Clang object code) shares it.
//
// Stored once: the bytes go into a program file named by their content hash,
// written once however many specializations a grouped program serves; each
// key gets a small index entry (the metadata and the program's hash). A
// program is written before any index entry names it, and eviction drops a
// program only with the last index entry naming it. A file found under a
// program's name is kept only when it checks out and holds the very bytes
// a store would write (else it is replaced), and a program a lookup finds
// damaged or missing takes every index entry naming it with it: whatever a
// store or a repair leaves behind verifies clean.
//
// Guarantees (docs/caching.md): writes are atomic (temporary file, fsync,
// rename); readers take no lock; a truncated, bit-flipped or wrong-version
// entry is discarded and reported as a miss, never returned; an entry owned
// by another user or a directory others can write is refused with a
// warning; the directory stays under Options::cache_max_bytes by evicting
// the least recently used entries. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/core/options.hpp"

namespace kiln {

// Version of the on-disk layout (lib/cache/entry_format.hpp). Bump it on
// ANY change to that layout, and add golden files under tests/cache/golden/:
// entries of another version are discarded, not read. Version 2: programs
// stored once by content hash, index entries per key (version 1: one file
// per key holding its own copy of the bytes).
inline constexpr std::uint32_t kArtifactFormatVersion = 2;

// What is cached for one key.
struct CachedArtifact {
  std::string binary;                              // CUBIN, PTX, object code: opaque to the cache
  nlohmann::json meta = nlohmann::json::object();  // format, arch, lowered names, log, options
  // The content hash of `binary`, the name its program file has; set by
  // lookup and store (ignored when passed to store).
  Hash128 program;
};

enum class CacheState {
  kReady,     // reads and writes
  kReadOnly,  // reads only: no stores, no eviction, no touch, no removal
  kDisabled,  // KILN_CACHE_DISABLE: every lookup misses, nothing touches the disk
  kRefused,   // the directory failed its safety checks: as disabled, with a warning
};
const char* cache_state_name(CacheState state);

enum class StoreOutcome { kWritten, kSkippedReadOnly, kSkippedDisabled, kTooLarge };

struct ArtifactCacheStats {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;
  // Served by a tier behind the disk (cache_tier.hpp: the remote tier, or
  // one an application registered) and then written to disk; tier_hits
  // says which, by tier name.
  std::uint64_t remote_hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t stores = 0;
  std::uint64_t programs_written = 0;   // stores that wrote their program's bytes
  std::uint64_t programs_shared = 0;    // stores whose program was already on disk
  std::uint64_t programs_repaired = 0;  // stores that replaced a damaged file of their program
  std::uint64_t corrupt_discarded = 0;  // entries that failed their checks
  std::uint64_t entries_dropped = 0;    // index entries removed with the program they named
  std::uint64_t refused_entries = 0;    // entries owned by someone else
  std::uint64_t evicted_entries = 0;
  std::uint64_t evicted_bytes = 0;
  std::map<std::string, std::uint64_t> tier_hits;  // remote_hits by tier name
  nlohmann::json to_json() const;
};

// One file in the artifact directory, as listed by ArtifactCache::scan: an
// index entry (one per key), a program (one per distinct binary) or a
// temporary file.
struct ArtifactFileInfo {
  std::filesystem::path path;
  Hash128 key;                // from the file name: the artifact key, or the program's hash
  bool temporary = false;     // a write in progress, or one whose writer died
  bool is_program = false;    // a program file (<hash>.prog), not an index entry
  Hash128 program;            // when checked and healthy: the program an index entry names
  std::uint64_t size = 0;     // bytes on disk
  std::int64_t last_use = 0;  // seconds since the epoch (mtime, touched on every hit)
  std::string problem;        // empty = healthy (or not checked)
  nlohmann::json meta;        // when checked and healthy
};

// What a maintenance pass (prune, verify, clear) did.
struct SweepReport {
  std::uint64_t entries = 0;           // healthy index entries left (one per key)
  std::uint64_t programs = 0;          // programs left (one per distinct binary)
  std::uint64_t bytes = 0;             // bytes left, index entries and programs
  std::uint64_t removed_entries = 0;   // index entries (and temporary files)
  std::uint64_t removed_programs = 0;  // program files
  std::uint64_t removed_bytes = 0;     // of both
  // Files that were to be removed and could not be (read-only file system,
  // permissions, an immutable file), and directories that could not be
  // listed; first_failure names the first with its errno text.
  std::uint64_t failed_removals = 0;
  std::string first_failure;
  // Why the pass removed nothing although something was due: another
  // process holds the prune lock, the lock file cannot be opened, the
  // cache is not writable. Empty when it did its work.
  std::string skipped;
  std::vector<ArtifactFileInfo> broken;  // failed checks (removed when asked)
  nlohmann::json to_json() const;
};

class ArtifactCache {
 public:
  // Directory: options.cache_dir / "artifacts". Creates it (0700) unless
  // read-only or disabled; a failed safety check puts the cache in kRefused
  // and logs a warning naming the path and the fix.
  explicit ArtifactCache(const Options& options = Options::global());
  ~ArtifactCache();
  ArtifactCache(const ArtifactCache&) = delete;
  ArtifactCache& operator=(const ArtifactCache&) = delete;

  // The entry, or nullptr on a miss (absent, corrupt, refused, disabled).
  // Memory, then disk, then each tier of cache_tiers() (the remote tier
  // when KILN_REMOTE_CACHE is set): a tier's hit is written to disk, so
  // the next process is warm offline.
  std::shared_ptr<const CachedArtifact> lookup(const Hash128& key);
  // Writes the entry (atomically), then evicts down to the bound when the
  // directory has grown past it; hands it to each tier of cache_tiers()
  // (the remote tier queues it: never waits on the network). kIo when the
  // disk refuses.
  Result<StoreOutcome> store(const Hash128& key, CachedArtifact artifact);

  // Every file in the directory; `check` reads and verifies each entry.
  // Directories that could not be listed are described in `*problems`.
  std::vector<ArtifactFileInfo> scan(bool check,
                                     std::vector<std::string>* problems = nullptr) const;
  // Removes least recently used index entries, each program with the last
  // entry naming it, until the directory holds at most `max_bytes`; also
  // removes temporary files left by writers that died, programs no entry
  // names (older than a writer needs to name them) and entries naming a
  // program that is gone (a repair killed half way). Skips (returns the current totals, with
  // `skipped` saying why) when another process is pruning or the lock cannot be had.
  SweepReport prune(std::uint64_t max_bytes);
  // Verifies every index entry and program; removes the broken ones when
  // `remove` is set. An index entry whose program is missing or broken is
  // broken (a lookup misses it). A file that is not a regular file, or is
  // over the 1 GiB entry limit, is broken (refused, never opened for
  // blocking or read whole).
  SweepReport verify(bool remove);
  // Removes every entry and temporary file; what could not be removed is
  // counted in failed_removals.
  SweepReport clear();

  CacheState state() const { return state_; }
  const std::string& state_reason() const { return state_reason_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::uint64_t max_bytes() const { return max_bytes_; }
  ArtifactCacheStats stats() const;
  // Drops the in-memory layer (the next lookups read the disk).
  void clear_memory();

  // Where `key`'s index entry lives: dir()/<first two hex digits>/<32 hex>.kiln.
  std::filesystem::path entry_path(const Hash128& key) const;
  // Where the program with content hash `program` lives: dir()/<2>/<32 hex>.prog.
  std::filesystem::path program_path(const Hash128& program) const;

 private:
  class Memory;
  struct Counters;
  std::shared_ptr<const CachedArtifact> read_disk(const Hash128& key);
  std::shared_ptr<const CachedArtifact> read_tiers(const Hash128& key);
  Result<StoreOutcome> store_local(const Hash128& key,
                                   std::shared_ptr<const CachedArtifact> shared);
  // Whether a file read from `dir` may be trusted (checked once per shard).
  bool shard_trusted(const std::filesystem::path& dir, std::size_t shard);
  // Writes the program unless a healthy copy of these bytes is on disk
  // already (shard checked by the caller); bytes added.
  Result<std::uint64_t> store_program(const Hash128& program, const std::string& binary);
  // Removes every index entry naming a program that is not on disk (one
  // just discarded as damaged, or found missing): one walk of the entries'
  // headers (artifact_sweep.cpp). How many it removed.
  std::size_t drop_dangling_entries();
  void discard(const std::filesystem::path& path, std::uint64_t device, std::uint64_t inode,
               const std::string& problem);
  void account_and_evict(std::uint64_t added);

  std::filesystem::path dir_;
  CacheState state_ = CacheState::kReady;
  std::string state_reason_;
  std::uint64_t max_bytes_ = 0;
  std::unique_ptr<Memory> memory_;
  std::unique_ptr<Counters> counters_;
  std::mutex shard_mutex_;
  std::vector<bool> shard_checked_;             // 256 shards, each checked once
  std::atomic<std::int64_t> approx_bytes_{-1};  // -1 until the first scan
};

}  // namespace kiln
