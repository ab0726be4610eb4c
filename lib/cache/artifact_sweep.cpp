// Maintenance of the artifact directory: listing, LRU pruning, verification
// and clearing. These walk the directory; lookups and stores never do.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "entry_check.hpp"
#include "file_io.hpp"
#include "kiln/artifact_cache.hpp"

namespace kiln {

namespace {

// A temporary file older than this belongs to a writer that died (a live
// one renames within seconds); sweeping it earlier could race a slow write.
constexpr std::int64_t kStaleTempSeconds = 600;

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

bool is_hex2(const std::string& name) {
  return name.size() == 2 && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

nlohmann::json file_json(const ArtifactFileInfo& f) {
  nlohmann::json j = {{"path", f.path.string()},
                      {"size", f.size},
                      {"last_use_ns", f.last_use},
                      {"temporary", f.temporary}};
  if (!f.temporary) j["key"] = f.key.hex();
  if (!f.problem.empty()) j["problem"] = f.problem;
  return j;
}

bool remove_file(const ArtifactFileInfo& f, SweepReport& report) {
  if (::unlink(f.path.c_str()) != 0) return false;
  ++report.removed_entries;
  report.removed_bytes += f.size;
  return true;
}

}  // namespace

nlohmann::json SweepReport::to_json() const {
  nlohmann::json broken_json = nlohmann::json::array();
  for (const auto& f : broken) broken_json.push_back(file_json(f));
  return {{"entries", entries},
          {"bytes", bytes},
          {"removed_entries", removed_entries},
          {"removed_bytes", removed_bytes},
          {"broken", broken_json}};
}

std::vector<ArtifactFileInfo> ArtifactCache::scan(bool check) const {
  std::vector<ArtifactFileInfo> out;
  if (state_ == CacheState::kDisabled) return out;
  std::error_code ec;
  for (const auto& shard : std::filesystem::directory_iterator(dir_, ec)) {
    if (!is_hex2(shard.path().filename().string())) continue;
    std::error_code inner;
    for (const auto& file : std::filesystem::directory_iterator(shard.path(), inner)) {
      const std::string name = file.path().filename().string();
      ArtifactFileInfo info;
      info.path = file.path();
      info.temporary = name.rfind(cache::kTempPrefix, 0) == 0;
      if (!info.temporary) {
        auto key = name.size() == 37 && name.ends_with(".kiln")
                       ? Hash128::from_hex(std::string_view(name).substr(0, 32))
                       : std::nullopt;
        if (!key) continue;  // not Kiln's: leave it alone
        info.key = *key;
      }
      struct stat st {};
      if (::lstat(info.path.c_str(), &st) != 0) continue;  // removed meanwhile
      info.size = static_cast<std::uint64_t>(st.st_size);
      info.last_use = mtime_ns(st);
      if (check && !info.temporary) {
        CachedArtifact artifact;
        cache::EntryCheck result = cache::read_entry(info.path, info.key, false, &artifact);
        if (result.status == cache::EntryStatus::kMissing) continue;
        if (result.status == cache::EntryStatus::kOk)
          info.meta = std::move(artifact.meta);
        else
          info.problem = result.problem;
      }
      out.push_back(std::move(info));
    }
  }
  return out;
}

SweepReport ArtifactCache::prune(std::uint64_t max_bytes) {
  SweepReport report;
  std::vector<ArtifactFileInfo> files = scan(false);
  std::optional<cache::FileLock> lock;
  if (state_ == CacheState::kReady) lock = cache::FileLock::try_acquire(dir_ / ".prune.lock");
  const bool may_remove = lock.has_value();
  const std::int64_t now_ns = static_cast<std::int64_t>(std::time(nullptr)) * 1'000'000'000;
  std::vector<ArtifactFileInfo> entries;
  for (auto& f : files) {
    if (!f.temporary) {
      entries.push_back(std::move(f));
    } else if (may_remove && now_ns - f.last_use > kStaleTempSeconds * 1'000'000'000) {
      remove_file(f, report);
    }
  }
  // Oldest last use first; the path breaks ties so the order is stable.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.last_use != b.last_use ? a.last_use < b.last_use : a.path < b.path;
  });
  std::uint64_t total = 0;
  for (const auto& f : entries) total += f.size;
  for (const auto& f : entries) {
    if (total <= max_bytes || !may_remove) break;
    // Gone already (another process pruned it) also counts as gone.
    if (remove_file(f, report) || errno == ENOENT) total -= f.size;
  }
  report.bytes = total;
  for (const auto& f : entries) {
    if (::access(f.path.c_str(), F_OK) == 0) ++report.entries;
  }
  if (may_remove) approx_bytes_.store(static_cast<std::int64_t>(total));
  return report;
}

SweepReport ArtifactCache::verify(bool remove) {
  SweepReport report;
  for (auto& f : scan(true)) {
    if (f.temporary) continue;
    if (f.problem.empty()) {
      ++report.entries;
      report.bytes += f.size;
      continue;
    }
    if (remove && state_ == CacheState::kReady) remove_file(f, report);
    report.broken.push_back(std::move(f));
  }
  return report;
}

SweepReport ArtifactCache::clear() {
  SweepReport report;
  clear_memory();
  if (state_ != CacheState::kReady) {
    for (const auto& f : scan(false)) {
      ++report.entries;
      report.bytes += f.size;
    }
    return report;
  }
  for (const auto& f : scan(false)) {
    if (!remove_file(f, report)) {
      ++report.entries;
      report.bytes += f.size;
    }
  }
  approx_bytes_.store(static_cast<std::int64_t>(report.bytes));
  return report;
}

}  // namespace kiln
