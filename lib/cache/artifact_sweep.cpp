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
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/file_io.hpp"
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

namespace {

// The scanned files by kind; the entries are ordered oldest last use first,
// each with the program its header names (none when it does not read:
// damaged, version 1).
struct PruneSet {
  std::vector<ArtifactFileInfo> entries, stale;
  std::vector<std::optional<Hash128>> names;
  std::map<Hash128, ArtifactFileInfo> programs;
  // Each program's references, from the entries' headers.
  std::map<Hash128, std::size_t> refs;
};

PruneSet classify(std::vector<ArtifactFileInfo>& files, std::int64_t now_ns) {
  PruneSet set;
  for (auto& f : files) {
    if (f.is_program)
      set.programs.emplace(f.key, std::move(f));
    else if (!f.temporary)
      set.entries.push_back(std::move(f));
    else if (now_ns - f.last_use > kStaleTempSeconds * 1'000'000'000)
      set.stale.push_back(std::move(f));
  }
  set.names.resize(set.entries.size());
  // Oldest last use first; the path breaks ties so the order is stable.
  std::sort(set.entries.begin(), set.entries.end(), [](const auto& a, const auto& b) {
    return a.last_use != b.last_use ? a.last_use < b.last_use : a.path < b.path;
  });
  for (std::size_t i = 0; i < set.entries.size(); ++i) {
    if (auto header = cache::peek_index(set.entries[i].path)) set.names[i] = header->program;
  }
  return set;
}

// An entry naming a program that is gone (removed by hand, or a repair
// killed before it removed the entries) is a miss for good: stale, swept
// like a dead writer's file. Looked for once more, since a store writes
// its program before the entry and the listing may predate the program.
// The others count as references to their programs.
template <typename PathOf>
void drop_orphan_entries(PruneSet& set, const PathOf& program_path) {
  for (std::size_t i = 0; i < set.entries.size();) {
    struct stat st {};
    const auto& name = set.names[i];
    if (name && !set.programs.count(*name) && ::lstat(program_path(*name).c_str(), &st) != 0 &&
        errno == ENOENT) {
      set.stale.push_back(std::move(set.entries[i]));
      set.entries.erase(set.entries.begin() + static_cast<std::ptrdiff_t>(i));
      set.names.erase(set.names.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    if (name) ++set.refs[*name];
    ++i;
  }
}

// The bytes of every entry and program; a program no entry names, old
// enough not to be a store in progress, is stale.
std::uint64_t total_bytes(PruneSet& set, std::int64_t now_ns) {
  std::uint64_t total = 0;
  for (const auto& f : set.entries) total += f.size;
  for (const auto& [hash, f] : set.programs) {
    total += f.size;
    if (!set.refs.count(hash) && now_ns - f.last_use > kUnnamedProgramSeconds * 1'000'000'000)
      set.stale.push_back(f);
  }
  return total;
}

// The prune lock, or why not (in report.skipped).
std::optional<cache::FileLock> take_prune_lock(CacheState state, const std::string& state_reason,
                                               const std::filesystem::path& dir,
                                               SweepReport& report) {
  if (state != CacheState::kReady) {
    report.skipped =
        std::string("the cache is ") + cache_state_name(state) + " (" + state_reason + ")";
  } else if (auto taken = cache::FileLock::try_acquire(dir / ".prune.lock"); !taken) {
    report.skipped = "cannot take the prune lock: " + taken.error().message;
  } else if (!taken->has_value()) {
    report.skipped = "another process is pruning " + dir.string();
  } else {
    return std::move(*taken);
  }
  return std::nullopt;
}

void remove_stale(const PruneSet& set, std::uint64_t& total, std::set<Hash128>& dropped,
                  SweepReport& report) {
  for (const auto& f : set.stale) {
    if (remove_file(f, report) || errno == ENOENT) {
      if (f.is_program) total -= f.size, dropped.insert(f.key);
    }
  }
}

// The last entry naming this program is gone: so is the program, unless
// a writer touched it since the scan (it is about to name it again).
void drop_unnamed_program(const PruneSet& set, const Hash128& name, std::uint64_t& total,
                          std::set<Hash128>& dropped, SweepReport& report) {
  auto program = set.programs.find(name);
  if (program == set.programs.end() || dropped.count(program->first)) return;
  struct stat st {};
  if (::lstat(program->second.path.c_str(), &st) != 0 || mtime_ns(st) != program->second.last_use) {
    return;
  }
  if (remove_file(program->second, report) || errno == ENOENT) {
    total -= program->second.size;
    dropped.insert(program->first);
  }
}

// Entries removed oldest first until the cache fits max_bytes.
void evict_oldest(PruneSet& set, std::uint64_t max_bytes, std::uint64_t& total,
                  std::set<Hash128>& dropped, SweepReport& report) {
  for (std::size_t i = 0; i < set.entries.size(); ++i) {
    if (total <= max_bytes) break;
    // Gone already (another process pruned it) also counts as gone.
    if (!remove_file(set.entries[i], report) && errno != ENOENT) continue;
    total -= set.entries[i].size;
    if (!set.names[i] || --set.refs[*set.names[i]] > 0) continue;
    drop_unnamed_program(set, *set.names[i], total, dropped, report);
  }
}

// What is left on disk, counted after the removals.
void count_survivors(const PruneSet& set, const std::set<Hash128>& dropped, SweepReport& report) {
  for (const auto& f : set.entries) {
    if (::access(f.path.c_str(), F_OK) == 0) ++report.entries;
  }
  for (const auto& [hash, f] : set.programs) {
    if (!dropped.count(hash) && ::access(f.path.c_str(), F_OK) == 0) ++report.programs;
  }
}

}  // namespace

SweepReport ArtifactCache::prune(std::uint64_t max_bytes) {
  SweepReport report;
  std::vector<std::string> unlisted;
  std::vector<ArtifactFileInfo> files = scan(false, &unlisted);
  for (const auto& problem : unlisted) note_failure(report, problem);
  const std::int64_t now_ns = static_cast<std::int64_t>(std::time(nullptr)) * 1'000'000'000;
  PruneSet set = classify(files, now_ns);
  drop_orphan_entries(set, [this](const Hash128& h) { return program_path(h); });
  std::uint64_t total = total_bytes(set, now_ns);
  // The lock is only needed (and only its failure reported) when there is
  // something to remove: a read-only cache already under the bound is fine.
  std::optional<cache::FileLock> lock;
  if (total > max_bytes || !set.stale.empty()) {
    lock = take_prune_lock(state_, state_reason_, dir_, report);
  }
  const bool may_remove = lock.has_value();
  std::set<Hash128> dropped;
  if (may_remove) {
    remove_stale(set, total, dropped, report);
    evict_oldest(set, max_bytes, total, dropped, report);
  }
  report.bytes = total;
  count_survivors(set, dropped, report);
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
