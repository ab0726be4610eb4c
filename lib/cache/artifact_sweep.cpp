// Maintenance of the artifact directory: listing, LRU pruning, verification
// and clearing. These walk the directory; lookups and stores do only to
// repair (the entries naming a program found damaged or missing).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <set>

#include "dir_safety.hpp"
#include "entry_check.hpp"
#include "kiln/cache/file_io.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

namespace {

// A temporary file older than this belongs to a writer that died (a live
// one renames within seconds); sweeping it earlier could race a slow write.
constexpr std::int64_t kStaleTempSeconds = 600;
// A program no index entry names is dropped once it is older than this: a
// writer names its program (writes the index entry) right after writing or
// touching it, so a younger one may be a store in progress.
constexpr std::int64_t kUnnamedProgramSeconds = 60;

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
  if (!f.temporary) j[f.is_program ? "program" : "key"] = f.key.hex();
  if (!f.problem.empty()) j["problem"] = f.problem;
  return j;
}

void note_failure(SweepReport& report, const std::string& what) {
  if (report.failed_removals++ == 0) report.first_failure = what;
}

// Removes one file; a failure other than "already gone" is counted in the
// report (with the first one's path and errno text), never dropped.
bool remove_file(const ArtifactFileInfo& f, SweepReport& report) {
  if (::unlink(f.path.c_str()) != 0) {
    if (errno != ENOENT) {
      const int saved = errno;
      note_failure(report, cache::errno_text("remove", f.path));
      errno = saved;
    }
    return false;
  }
  ++(f.is_program ? report.removed_programs : report.removed_entries);
  report.removed_bytes += f.size;
  return true;
}

}  // namespace

nlohmann::json SweepReport::to_json() const {
  nlohmann::json broken_json = nlohmann::json::array();
  for (const auto& f : broken) broken_json.push_back(file_json(f));
  nlohmann::json j = {{"entries", entries},
                      {"programs", programs},
                      {"bytes", bytes},
                      {"removed_entries", removed_entries},
                      {"removed_programs", removed_programs},
                      {"removed_bytes", removed_bytes},
                      {"failed_removals", failed_removals},
                      {"broken", broken_json}};
  if (!first_failure.empty()) j["first_failure"] = first_failure;
  if (!skipped.empty()) j["skipped"] = skipped;
  return j;
}

std::vector<ArtifactFileInfo> ArtifactCache::scan(bool check,
                                                  std::vector<std::string>* problems) const {
  std::vector<ArtifactFileInfo> out;
  if (state_ == CacheState::kDisabled) return out;
  // A directory that cannot be listed is a problem to report, not an empty
  // one: verify would otherwise call a cache it never saw healthy.
  auto note = [&](const std::filesystem::path& dir, const std::error_code& ec) {
    if (problems && ec && ec != std::errc::no_such_file_or_directory)
      problems->push_back("cannot list " + dir.string() + ": " + ec.message());
  };
  std::error_code ec;
  std::filesystem::directory_iterator shards(dir_, ec);
  for (; !ec && shards != std::filesystem::directory_iterator(); shards.increment(ec)) {
    const std::filesystem::path shard = shards->path();
    if (!is_hex2(shard.filename().string())) continue;
    std::error_code inner;
    std::filesystem::directory_iterator files(shard, inner);
    for (; !inner && files != std::filesystem::directory_iterator(); files.increment(inner)) {
      const std::filesystem::path path = files->path();
      const std::string name = path.filename().string();
      ArtifactFileInfo info;
      info.path = path;
      info.temporary = name.rfind(cache::kTempPrefix, 0) == 0;
      if (!info.temporary) {
        info.is_program = name.ends_with(".prog");
        auto key = name.size() == 37 && (name.ends_with(".kiln") || info.is_program)
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
        cache::EntryContents contents;
        cache::EntryCheck result = cache::read_entry(
            info.path, info.is_program ? cache::EntryKind::kProgram : cache::EntryKind::kIndex,
            info.key, false, cache::kMaxArtifactEntryBytes, &contents);
        if (result.status == cache::EntryStatus::kMissing) continue;
        if (result.status == cache::EntryStatus::kOk) {
          info.meta = std::move(contents.meta);
          info.program = contents.program;
        } else {
          info.problem = result.problem;
        }
      }
      out.push_back(std::move(info));
    }
    note(shard, inner);
  }
  note(dir_, ec);
  return out;
}

SweepReport ArtifactCache::prune(std::uint64_t max_bytes) {
  SweepReport report;
  std::vector<std::string> unlisted;
  std::vector<ArtifactFileInfo> files = scan(false, &unlisted);
  for (const auto& problem : unlisted) note_failure(report, problem);
  const std::int64_t now_ns = static_cast<std::int64_t>(std::time(nullptr)) * 1'000'000'000;
  std::vector<ArtifactFileInfo> entries, stale;
  std::map<Hash128, ArtifactFileInfo> programs;
  for (auto& f : files) {
    if (f.is_program)
      programs.emplace(f.key, std::move(f));
    else if (!f.temporary)
      entries.push_back(std::move(f));
    else if (now_ns - f.last_use > kStaleTempSeconds * 1'000'000'000)
      stale.push_back(std::move(f));
  }
  // Each program's references, from the entries' headers. An entry whose
  // header does not read (damaged, version 1) names nothing; one naming a
  // missing program is evicted like any other.
  std::map<Hash128, std::size_t> refs;
  std::vector<std::optional<Hash128>> names(entries.size());
  // Oldest last use first; the path breaks ties so the order is stable.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.last_use != b.last_use ? a.last_use < b.last_use : a.path < b.path;
  });
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (auto header = cache::peek_index(entries[i].path)) names[i] = header->program;
  }
  // An entry naming a program that is gone (removed by hand, or a repair
  // killed before it removed the entries) is a miss for good: stale, swept
  // like a dead writer's file. Looked for once more, since a store writes
  // its program before the entry and the listing may predate the program.
  for (std::size_t i = 0; i < entries.size();) {
    struct stat st {};
    if (names[i] && !programs.count(*names[i]) &&
        ::lstat(program_path(*names[i]).c_str(), &st) != 0 && errno == ENOENT) {
      stale.push_back(std::move(entries[i]));
      entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
      names.erase(names.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    if (names[i]) ++refs[*names[i]];
    ++i;
  }
  std::uint64_t total = 0;
  for (const auto& f : entries) total += f.size;
  for (const auto& [hash, f] : programs) {
    total += f.size;
    if (!refs.count(hash) && now_ns - f.last_use > kUnnamedProgramSeconds * 1'000'000'000)
      stale.push_back(f);
  }
  // The lock is only needed (and only its failure reported) when there is
  // something to remove: a read-only cache already under the bound is fine.
  bool may_remove = false;
  std::optional<cache::FileLock> lock;
  if (total > max_bytes || !stale.empty()) {
    if (state_ != CacheState::kReady) {
      report.skipped =
          std::string("the cache is ") + cache_state_name(state_) + " (" + state_reason_ + ")";
    } else if (auto taken = cache::FileLock::try_acquire(dir_ / ".prune.lock"); !taken) {
      report.skipped = "cannot take the prune lock: " + taken.error().message;
    } else if (!taken->has_value()) {
      report.skipped = "another process is pruning " + dir_.string();
    } else {
      lock = std::move(*taken);
      may_remove = true;
    }
  }
  std::set<Hash128> dropped;
  if (may_remove) {
    for (const auto& f : stale) {
      if (remove_file(f, report) || errno == ENOENT) {
        if (f.is_program) total -= f.size, dropped.insert(f.key);
      }
    }
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (total <= max_bytes || !may_remove) break;
    // Gone already (another process pruned it) also counts as gone.
    if (!remove_file(entries[i], report) && errno != ENOENT) continue;
    total -= entries[i].size;
    if (!names[i] || --refs[*names[i]] > 0) continue;
    // The last entry naming this program is gone: so is the program, unless
    // a writer touched it since the scan (it is about to name it again).
    auto program = programs.find(*names[i]);
    if (program == programs.end() || dropped.count(program->first)) continue;
    struct stat st {};
    if (::lstat(program->second.path.c_str(), &st) != 0 ||
        mtime_ns(st) != program->second.last_use) {
      continue;
    }
    if (remove_file(program->second, report) || errno == ENOENT) {
      total -= program->second.size;
      dropped.insert(program->first);
    }
  }
  report.bytes = total;
  for (const auto& f : entries) {
    if (::access(f.path.c_str(), F_OK) == 0) ++report.entries;
  }
  for (const auto& [hash, f] : programs) {
    if (!dropped.count(hash) && ::access(f.path.c_str(), F_OK) == 0) ++report.programs;
  }
  if (may_remove) approx_bytes_.store(static_cast<std::int64_t>(total));
  return report;
}

std::size_t ArtifactCache::drop_dangling_entries() {
  if (state_ != CacheState::kReady) return 0;
  std::size_t dropped = 0;
  std::set<Hash128> present;  // programs found on disk during this walk
  for (const auto& f : scan(false)) {
    if (f.temporary || f.is_program) continue;
    std::optional<cache::IndexHeader> header = cache::peek_index(f.path);
    if (!header || present.count(header->program)) continue;
    // One a lookup refuses (another owner, writable by others) is left in
    // place, like any refused entry.
    if (!cache::check_entry_stat(header->st, f.path).ok()) continue;
    // NOTES: looked for after the entry was read. A store writes its
    // program before the entry naming it, so a program absent now was
    // removed after that entry was written: the entry names nothing. One
    // present (written again by a store of the same bytes) keeps it.
    struct stat st {};
    if (::lstat(program_path(header->program).c_str(), &st) == 0 || errno != ENOENT) {
      present.insert(header->program);
      continue;
    }
    if (cache::remove_if_unchanged(f.path, header->st.st_dev, header->st.st_ino)) ++dropped;
  }
  if (dropped > 0) {
    KILN_LOG(kWarn) << dropped << " artifact index entr" << (dropped == 1 ? "y" : "ies")
                    << " named a program that was damaged or is missing: removed (each is "
                       "compiled again when next needed)";
  }
  return dropped;
}

SweepReport ArtifactCache::verify(bool remove) {
  SweepReport report;
  std::vector<std::string> unlisted;
  std::vector<ArtifactFileInfo> files = scan(true, &unlisted);
  std::set<Hash128> healthy_programs;
  for (const auto& f : files) {
    if (f.is_program && f.problem.empty()) healthy_programs.insert(f.key);
  }
  for (auto& f : files) {
    if (f.temporary) continue;
    // An entry naming a program that is missing or broken is a miss for
    // every lookup: broken too. The program may have been written since
    // the listing (a store in progress), so look once more.
    if (!f.is_program && f.problem.empty() && !healthy_programs.count(f.program)) {
      cache::EntryContents program;
      cache::EntryCheck check =
          cache::read_entry(program_path(f.program), cache::EntryKind::kProgram, f.program, false,
                            cache::kMaxArtifactEntryBytes, &program);
      if (check.status != cache::EntryStatus::kOk) {
        f.problem = "entry " + f.key.hex() + " names program " + f.program.hex() + ", which is " +
                    (check.status == cache::EntryStatus::kMissing ? "missing" : "broken") +
                    ": a miss until it is compiled again (" + f.path.string() + ")";
      }
    }
    if (f.problem.empty()) {
      ++(f.is_program ? report.programs : report.entries);
      report.bytes += f.size;
      continue;
    }
    if (remove && state_ == CacheState::kReady) remove_file(f, report);
    report.broken.push_back(std::move(f));
  }
  // An unreadable directory is broken too: its entries were never checked.
  for (auto& problem : unlisted) {
    ArtifactFileInfo info;
    info.path = dir_;
    info.problem = std::move(problem);
    report.broken.push_back(std::move(info));
  }
  return report;
}

SweepReport ArtifactCache::clear() {
  SweepReport report;
  clear_memory();
  std::vector<std::string> unlisted;
  std::vector<ArtifactFileInfo> files = scan(false, &unlisted);
  for (const auto& problem : unlisted) note_failure(report, problem);
  if (state_ != CacheState::kReady) {
    for (const auto& f : files) {
      ++report.entries;
      report.bytes += f.size;
    }
    report.skipped =
        std::string("the cache is ") + cache_state_name(state_) + " (" + state_reason_ + ")";
    return report;
  }
  for (const auto& f : files) {
    if (!remove_file(f, report) && errno != ENOENT) {
      ++report.entries;
      report.bytes += f.size;
    }
  }
  approx_bytes_.store(static_cast<std::int64_t>(report.bytes));
  return report;
}

}  // namespace kiln
