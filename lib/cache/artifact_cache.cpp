#include "kiln/cache/artifact_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dir_safety.hpp"
#include "entry_check.hpp"
#include "entry_format.hpp"
#include "kiln/cache/cache_tier.hpp"
#include "kiln/cache/checked_read.hpp"
#include "kiln/cache/file_io.hpp"
#include "memory_lru.hpp"

namespace kiln {

struct ArtifactCache::Counters {
  std::atomic<std::uint64_t> memory_hits{0}, disk_hits{0}, remote_hits{0}, misses{0}, stores{0},
      programs_written{0}, programs_shared{0}, programs_repaired{0}, corrupt_discarded{0},
      entries_dropped{0}, refused_entries{0}, evicted_entries{0}, evicted_bytes{0};
  std::mutex tier_mutex;  // guards tier_hits
  std::map<std::string, std::uint64_t> tier_hits;
};

const char* cache_state_name(CacheState state) {
  switch (state) {
    case CacheState::kReady:
      return "ready";
    case CacheState::kReadOnly:
      return "read-only";
    case CacheState::kDisabled:
      return "disabled";
    case CacheState::kRefused:
      return "refused";
  }
  return "unknown";
}

nlohmann::json ArtifactCacheStats::to_json() const {
  return {{"memory_hits", memory_hits},
          {"disk_hits", disk_hits},
          {"remote_hits", remote_hits},
          {"misses", misses},
          {"stores", stores},
          {"programs_written", programs_written},
          {"programs_shared", programs_shared},
          {"programs_repaired", programs_repaired},
          {"corrupt_discarded", corrupt_discarded},
          {"entries_dropped", entries_dropped},
          {"refused_entries", refused_entries},
          {"evicted_entries", evicted_entries},
          {"evicted_bytes", evicted_bytes},
          {"tier_hits", tier_hits}};
}

ArtifactCache::ArtifactCache(const Options& options)
    : dir_(options.cache_dir / "artifacts"),
      max_bytes_(options.cache_max_bytes),
      counters_(std::make_unique<Counters>()),
      shard_checked_(256, false) {
  if (options.cache_memory_bytes > 0)
    memory_ = std::make_unique<Memory>(options.cache_memory_bytes);
  cache::OpenedDir opened = cache::open_cache_dir(options, dir_, "artifact cache");
  state_ = opened.state;
  state_reason_ = std::move(opened.reason);
}

ArtifactCache::~ArtifactCache() = default;

std::filesystem::path ArtifactCache::entry_path(const Hash128& key) const {
  std::string hex = key.hex();
  return dir_ / hex.substr(0, 2) / (hex + ".kiln");
}

std::filesystem::path ArtifactCache::program_path(const Hash128& program) const {
  std::string hex = program.hex();
  return dir_ / hex.substr(0, 2) / (hex + ".prog");
}

std::shared_ptr<const CachedArtifact> ArtifactCache::lookup(const Hash128& key) {
  if (state_ == CacheState::kDisabled || state_ == CacheState::kRefused) {
    ++counters_->misses;
    return nullptr;
  }
  if (memory_) {
    Memory::Hit hit = memory_->get(key);
    if (hit.artifact) {
      ++counters_->memory_hits;
      // Keep the disk entry young for other processes' eviction.
      if (hit.touch_due && state_ == CacheState::kReady) {
        // AT_SYMLINK_NOFOLLOW: a link planted there must not pass the
        // touch on to whatever it points at.
        ::utimensat(AT_FDCWD, entry_path(key).c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
      }
      return hit.artifact;
    }
  }
  std::shared_ptr<const CachedArtifact> found = read_disk(key);
  if (found) {
    ++counters_->disk_hits;
  } else if ((found = read_tiers(key))) {
    ++counters_->remote_hits;
  } else {
    ++counters_->misses;
    return nullptr;
  }
  if (memory_) memory_->put(key, found);
  return found;
}

std::shared_ptr<const CachedArtifact> ArtifactCache::read_tiers(const Hash128& key) {
  for (const std::shared_ptr<CacheTier>& tier : cache_tiers()) {
    std::optional<std::string> payload = tier->get(TierEntryKind::kArtifact, key);
    if (!payload) continue;
    const std::string name = tier->name();
    // Checked as the disk's entries are: a payload that does not decode is
    // a miss of that tier, never loaded.
    Result<CachedArtifact> artifact = decode_tier_artifact(*payload);
    if (!artifact) {
      log_once(LogLevel::kWarn, "tier-artifact-undecodable:" + name,
               "artifact " + key.hex() + " from the " + name +
                   " cache tier not used: " + artifact.error().message +
                   " (it is compiled again; a store replaces it in the tier)");
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(counters_->tier_mutex);
      ++counters_->tier_hits[name];
    }
    auto shared = std::make_shared<const CachedArtifact>(std::move(*artifact));
    // On disk at once, so the next process is warm without the tier; a
    // local store that fails still serves this process.
    if (state_ == CacheState::kReady) {
      Result<StoreOutcome> stored = store_local(key, shared);
      if (!stored)
        KILN_LOG(kDebug) << name << " tier hit not written to disk: " << stored.error().message;
    }
    return shared;
  }
  return nullptr;
}

bool ArtifactCache::shard_trusted(const std::filesystem::path& dir, std::size_t shard) {
  std::lock_guard<std::mutex> lock(shard_mutex_);
  if (shard_checked_[shard]) return true;
  if (Status safe = cache::check_private_dir(dir); !safe.ok()) {
    ++counters_->refused_entries;
    log_once(LogLevel::kWarn, "artifact-shard-refused:" + dir.string(),
             "artifact cache entry not used: " + safe.error().message);
    return false;
  }
  shard_checked_[shard] = true;
  return true;
}

std::shared_ptr<const CachedArtifact> ArtifactCache::read_disk(const Hash128& key) {
  const bool touch = state_ == CacheState::kReady;
  // (1) The index entry: the key's metadata and the program it names.
  std::filesystem::path path = entry_path(key);
  cache::EntryContents index;
  cache::EntryCheck check = cache::read_entry(path, cache::EntryKind::kIndex, key, touch,
                                              cache::kMaxArtifactEntryBytes, &index);
  // (2) The program. The program is not touched: eviction goes by the index
  // entries' clock, a program by its references.
  cache::EntryContents program;
  bool program_read = false;
  if (check.status == cache::EntryStatus::kOk) {
    if (!shard_trusted(path.parent_path(), key.high >> 56)) return nullptr;
    path = program_path(index.program);
    program_read = true;
    check = cache::read_entry(path, cache::EntryKind::kProgram, index.program, false,
                              cache::kMaxArtifactEntryBytes, &program);
    if (check.status == cache::EntryStatus::kOk) {
      // An entry is trusted only in a shard directory others cannot write.
      if (!shard_trusted(path.parent_path(), index.program.high >> 56)) return nullptr;
      auto artifact = std::make_shared<CachedArtifact>();
      artifact->binary = std::move(program.payload);
      artifact->meta = std::move(index.meta);
      artifact->program = index.program;
      return artifact;
    }
  }
  switch (check.status) {
    case cache::EntryStatus::kRefused:
      ++counters_->refused_entries;
      log_once(LogLevel::kWarn, "artifact-entry-refused:" + path.string(),
               "artifact cache entry not used: " + check.problem);
      break;
    case cache::EntryStatus::kCorrupt:
      ++counters_->corrupt_discarded;
      discard(path, check.device, check.inode, check.problem);
      // A damaged program takes every index entry naming it with it (a
      // grouped program is named by G of them), or they stay behind, each
      // a miss that `verify` calls broken.
      if (program_read) counters_->entries_dropped += drop_dangling_entries();
      break;
    case cache::EntryStatus::kIoError:
      log_once(LogLevel::kWarn, "artifact-entry-io:" + path.string(),
               "artifact cache entry not readable (treated as a miss): " + check.problem);
      break;
    case cache::EntryStatus::kMissing:
      // The program is gone (removed by hand, or discarded by a process that
      // died before its entries went): the entries naming it are no use.
      if (program_read) counters_->entries_dropped += drop_dangling_entries();
      break;
    case cache::EntryStatus::kOk:
      break;
  }
  return nullptr;
}

void ArtifactCache::discard(const std::filesystem::path& path, std::uint64_t device,
                            std::uint64_t inode, const std::string& problem) {
  // Remove only the file that was read: a writer may have renamed a good
  // replacement into place since.
  const bool removed =
      state_ == CacheState::kReady && cache::remove_if_unchanged(path, device, inode);
  KILN_LOG(kWarn) << problem << (removed ? "; removed, it will be rebuilt" : "; not used");
}

Result<StoreOutcome> ArtifactCache::store(const Hash128& key, CachedArtifact artifact) {
  if (state_ == CacheState::kDisabled || state_ == CacheState::kRefused) {
    return StoreOutcome::kSkippedDisabled;
  }
  artifact.program = cache::program_hash(artifact.binary);
  auto shared = std::make_shared<const CachedArtifact>(std::move(artifact));
  if (memory_) memory_->put(key, shared);
  Result<StoreOutcome> stored = store_local(key, shared);
  if (stored && (*stored == StoreOutcome::kWritten || *stored == StoreOutcome::kSkippedReadOnly)) {
    std::vector<std::shared_ptr<CacheTier>> tiers = cache_tiers();
    if (!tiers.empty()) {
      const std::string payload = encode_tier_artifact(*shared);
      for (const auto& tier : tiers) tier->put(TierEntryKind::kArtifact, key, payload);
    }
  }
  return stored;
}

Result<StoreOutcome> ArtifactCache::store_local(const Hash128& key,
                                                std::shared_ptr<const CachedArtifact> shared) {
  if (state_ == CacheState::kReadOnly) return StoreOutcome::kSkippedReadOnly;
  std::string index = cache::encode_index(key, shared->program, shared->meta.dump());
  const std::uint64_t program_bytes = cache::kEntryHeaderSize + shared->binary.size();
  // Never write what no reader would take in.
  if (index.size() + program_bytes > max_bytes_ || index.size() > cache::kMaxArtifactEntryBytes ||
      program_bytes > cache::kMaxArtifactEntryBytes) {
    // A bound smaller than one entry (KILN_CACHE_MAX_SIZE=0 or 1K) keeps
    // nothing on disk: said once, since every later run would compile again.
    if (index.size() + program_bytes > max_bytes_)
      log_once(LogLevel::kWarn, "artifact-over-bound",
               "an artifact entry of " + std::to_string(index.size() + program_bytes) +
                   " bytes is larger than the whole cache bound, KILN_CACHE_MAX_SIZE=" +
                   std::to_string(max_bytes_) +
                   " bytes, so it is not kept on disk and later runs compile it again; raise "
                   "KILN_CACHE_MAX_SIZE (512M, 4G) to keep compiled kernels");
    return StoreOutcome::kTooLarge;
  }
  const std::filesystem::path path = entry_path(key);
  {
    // The entry's and the program's shard directories: created 0700 and
    // checked once per cache object.
    std::lock_guard<std::mutex> lock(shard_mutex_);
    for (const Hash128* name : {&key, &shared->program}) {
      const std::size_t shard = name->high >> 56;
      if (shard_checked_[shard]) continue;
      if (Status made = cache::ensure_private_dir(dir_ / name->hex().substr(0, 2)); !made.ok()) {
        return made.error();
      }
      shard_checked_[shard] = true;
    }
  }
  // The program first, then the index entry: a reader that finds the entry
  // finds its program whole (atomic_write has fsynced it and its directory).
  Result<std::uint64_t> added = store_program(shared->program, shared->binary);
  if (!added) {
    ErrorInfo error = added.error();
    error.details["key"] = key.hex();
    return error;
  }
  if (Status written = cache::atomic_write(path, index); !written.ok()) {
    ErrorInfo error = written.error();
    error.details["key"] = key.hex();
    return error;
  }
  ++counters_->stores;
  account_and_evict(*added + index.size());
  return StoreOutcome::kWritten;
}

Result<std::uint64_t> ArtifactCache::store_program(const Hash128& program,
                                                   const std::string& binary) {
  const std::filesystem::path path = program_path(program);
  // Already there (a sibling of a grouped program, or the same bytes from
  // another kernel): kept and touched, so a pruner that listed it as
  // unnamed sees it is in use, but only when it passes every check a
  // lookup makes and holds exactly these bytes. A file is never trusted by
  // its name: a damaged, truncated or refused one is replaced, or the
  // entries about to name it would be misses that `verify` calls broken.
  cache::EntryContents found;
  cache::EntryCheck check = cache::read_entry(path, cache::EntryKind::kProgram, program, true,
                                              cache::kMaxArtifactEntryBytes, &found);
  if (check.status == cache::EntryStatus::kOk && found.payload == binary) {
    ++counters_->programs_shared;
    return std::uint64_t{0};
  }
  if (Status written = cache::atomic_write(path, cache::encode_program(binary)); !written.ok()) {
    ErrorInfo error = written.error();
    error.details["program"] = program.hex();
    return error;
  }
  if (check.status != cache::EntryStatus::kMissing) {
    ++counters_->programs_repaired;
    KILN_LOG(kWarn) << "artifact program " << program.hex() << " on disk was not usable ("
                    << (check.problem.empty() ? "other bytes under its name" : check.problem)
                    << "); replaced by the bytes just compiled";
  }
  ++counters_->programs_written;
  return cache::kEntryHeaderSize + binary.size();
}

void ArtifactCache::account_and_evict(std::uint64_t added) {
  // The running total starts from one scan and then counts this process's
  // writes; other processes keep their own. Whoever sees the bound crossed
  // prunes to 90% of it, so eviction runs now and then, not on every store.
  std::int64_t total = approx_bytes_.load();
  if (total < 0) {
    std::uint64_t sum = 0;
    for (const auto& f : scan(false)) sum += f.size;
    total = static_cast<std::int64_t>(sum);
    approx_bytes_.store(total);
  } else {
    total = approx_bytes_.fetch_add(static_cast<std::int64_t>(added)) +
            static_cast<std::int64_t>(added);
  }
  if (static_cast<std::uint64_t>(total) > max_bytes_) {
    SweepReport report = prune(max_bytes_ / 10 * 9);
    counters_->evicted_entries += report.removed_entries;
    counters_->evicted_bytes += report.removed_bytes;
  }
}

ArtifactCacheStats ArtifactCache::stats() const {
  Counters& c = *counters_;  // its mutex is locked below
  ArtifactCacheStats s;
  s.memory_hits = c.memory_hits;
  s.disk_hits = c.disk_hits;
  s.remote_hits = c.remote_hits;
  s.misses = c.misses;
  s.stores = c.stores;
  s.programs_written = c.programs_written;
  s.programs_shared = c.programs_shared;
  s.programs_repaired = c.programs_repaired;
  s.corrupt_discarded = c.corrupt_discarded;
  s.entries_dropped = c.entries_dropped;
  s.refused_entries = c.refused_entries;
  s.evicted_entries = c.evicted_entries;
  s.evicted_bytes = c.evicted_bytes;
  std::lock_guard<std::mutex> lock(c.tier_mutex);
  s.tier_hits = c.tier_hits;
  return s;
}

void ArtifactCache::clear_memory() {
  if (memory_) memory_->clear();
}

}  // namespace kiln
