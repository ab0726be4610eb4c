#include "kiln/cache/artifact_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checked_read.hpp"
#include "dir_safety.hpp"
#include "entry_check.hpp"
#include "entry_format.hpp"
#include "file_io.hpp"
#include "memory_lru.hpp"

namespace kiln {

struct ArtifactCache::Counters {
  std::atomic<std::uint64_t> memory_hits{0}, disk_hits{0}, misses{0}, stores{0},
      corrupt_discarded{0}, refused_entries{0}, evicted_entries{0}, evicted_bytes{0};
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
          {"misses", misses},
          {"stores", stores},
          {"corrupt_discarded", corrupt_discarded},
          {"refused_entries", refused_entries},
          {"evicted_entries", evicted_entries},
          {"evicted_bytes", evicted_bytes}};
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
  if (!found) {
    ++counters_->misses;
    return nullptr;
  }
  ++counters_->disk_hits;
  if (memory_) memory_->put(key, found);
  return found;
}

std::shared_ptr<const CachedArtifact> ArtifactCache::read_disk(const Hash128& key) {
  const std::filesystem::path path = entry_path(key);
  auto artifact = std::make_shared<CachedArtifact>();
  cache::EntryCheck check = cache::read_entry(path, key, /*touch=*/state_ == CacheState::kReady,
                                              cache::kMaxArtifactEntryBytes, artifact.get());
  if (check.status == cache::EntryStatus::kOk) {
    // An entry is trusted only in a shard directory others cannot write;
    // checked once per shard per cache object.
    std::size_t shard = key.high >> 56;
    std::lock_guard<std::mutex> lock(shard_mutex_);
    if (!shard_checked_[shard]) {
      if (Status safe = cache::check_private_dir(path.parent_path()); !safe.ok()) {
        ++counters_->refused_entries;
        log_once(LogLevel::kWarn, "artifact-shard-refused:" + path.parent_path().string(),
                 "artifact cache entry not used: " + safe.error().message);
        return nullptr;
      }
      shard_checked_[shard] = true;
    }
    return artifact;
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
      break;
    case cache::EntryStatus::kIoError:
      log_once(LogLevel::kWarn, "artifact-entry-io:" + path.string(),
               "artifact cache entry not readable (treated as a miss): " + check.problem);
      break;
    default:
      break;
  }
  return nullptr;
}

void ArtifactCache::discard(const std::filesystem::path& path, std::uint64_t device,
                            std::uint64_t inode, const std::string& problem) {
  bool removed = false;
  if (state_ == CacheState::kReady) {
    // Remove only the file that was read: a writer may have renamed a good
    // replacement into place since.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && st.st_dev == device && st.st_ino == inode) {
      removed = ::unlink(path.c_str()) == 0;
    }
  }
  KILN_LOG(kWarn) << problem << (removed ? "; removed, it will be rebuilt" : "; not used");
}

Result<StoreOutcome> ArtifactCache::store(const Hash128& key, CachedArtifact artifact) {
  if (state_ == CacheState::kDisabled || state_ == CacheState::kRefused) {
    return StoreOutcome::kSkippedDisabled;
  }
  auto shared = std::make_shared<const CachedArtifact>(std::move(artifact));
  if (memory_) memory_->put(key, shared);
  if (state_ == CacheState::kReadOnly) return StoreOutcome::kSkippedReadOnly;
  std::string bytes = cache::encode_entry(key, shared->meta.dump(), shared->binary);
  // Never write what no reader would take in.
  if (bytes.size() > max_bytes_ || bytes.size() > cache::kMaxArtifactEntryBytes) {
    return StoreOutcome::kTooLarge;
  }
  const std::filesystem::path path = entry_path(key);
  std::size_t shard = key.high >> 56;
  {
    std::lock_guard<std::mutex> lock(shard_mutex_);
    if (!shard_checked_[shard]) {
      if (Status made = cache::ensure_private_dir(path.parent_path()); !made.ok())
        return made.error();
      shard_checked_[shard] = true;
    }
  }
  if (Status written = cache::atomic_write(path, bytes); !written.ok()) {
    ErrorInfo error = written.error();
    error.details["key"] = key.hex();
    return error;
  }
  ++counters_->stores;
  account_and_evict(bytes.size());
  return StoreOutcome::kWritten;
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
  const Counters& c = *counters_;
  ArtifactCacheStats s;
  s.memory_hits = c.memory_hits;
  s.disk_hits = c.disk_hits;
  s.misses = c.misses;
  s.stores = c.stores;
  s.corrupt_discarded = c.corrupt_discarded;
  s.refused_entries = c.refused_entries;
  s.evicted_entries = c.evicted_entries;
  s.evicted_bytes = c.evicted_bytes;
  return s;
}

void ArtifactCache::clear_memory() {
  if (memory_) memory_->clear();
}

}  // namespace kiln
