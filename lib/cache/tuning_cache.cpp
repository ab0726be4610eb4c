#include "kiln/cache/tuning_cache.hpp"
#include "kiln/cache/cache_tier.hpp"
#include "kiln/core/log.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "dir_safety.hpp"
#include "kiln/cache/file_io.hpp"
#include "tuning_file.hpp"

namespace kiln {

namespace {

bool is_tuning_file_name(const std::string& name) {
  return name.rfind("tuning", 0) == 0 && name.size() > 5 && name.ends_with(".json");
}

// A file a dead saver left half written (atomic_write's temporary).
bool is_tuning_temp_name(const std::string& name) {
  return name.rfind(std::string(cache::kTempPrefix) + "tuning", 0) == 0;
}

// The files this cache reads: its one file (open_file), or every tuning
// file in its directory, sorted so merges happen in a stable order. A
// directory that cannot be listed is reported in `*problem`, not taken for
// an empty one.
std::vector<std::filesystem::path> tuning_files(
    const std::filesystem::path& dir, const std::filesystem::path& single, std::string* problem,
    bool (*wanted)(const std::string&) = is_tuning_file_name) {
  if (dir.empty()) return {single};
  std::vector<std::filesystem::path> paths;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (wanted(it->path().filename().string())) paths.push_back(it->path());
  }
  if (ec && ec != std::errc::no_such_file_or_directory && problem) {
    *problem = "cannot list " + dir.string() + ": " + ec.message();
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::filesystem::path lock_path(const std::filesystem::path& file) {
  return file.string() + ".lock";
}

}  // namespace

nlohmann::json TuningFileStatus::to_json() const {
  nlohmann::json j = {{"path", path.string()}, {"records", records}, {"skipped", skipped}};
  if (!problem.empty()) j["problem"] = problem;
  return j;
}

TuningCache::TuningCache(const Options& options) : dir_(options.cache_dir / "tuning") {
  write_path_ = dir_ / (options.rank >= 0 ? "tuning.rank" + std::to_string(options.rank) + ".json"
                                          : std::string("tuning.json"));
  cache::OpenedDir opened = cache::open_cache_dir(options, dir_, "tuning cache");
  state_ = opened.state;
  state_reason_ = std::move(opened.reason);
  reload();  // reads nothing when disabled or refused
}

TuningCache TuningCache::open_file(const std::filesystem::path& file, bool read_only) {
  TuningCache cache{FileTag{}};
  cache.write_path_ = file;
  if (read_only) {
    cache.state_ = CacheState::kReadOnly;
    cache.state_reason_ = "opened read-only";
  }
  cache.reload();
  return cache;
}

TuningCache::TuningCache(TuningCache&&) noexcept = default;
TuningCache& TuningCache::operator=(TuningCache&&) noexcept = default;
TuningCache::~TuningCache() = default;

void TuningCache::load_file_locked(const std::filesystem::path& path) {
  TuningFileStatus status;
  status.path = path;
  Result<cache::TuningFile> file = cache::load_tuning_file(path);
  if (!file) {
    if (file.error().code == ErrorCode::kNotFound) return;
    status.problem = file.error().message;
    log_once(LogLevel::kWarn, "tuning-file:" + path.string(), file.error().message);
  } else {
    status.records = file->records.size();
    status.skipped = file->problems;
    for (const auto& p : file->problems) log_once(LogLevel::kWarn, p, p);
    for (const auto& [id, record] : file->records) cache::merge_record(records_, record);
  }
  files_.push_back(std::move(status));
}

void TuningCache::reload() {
  std::lock_guard<std::mutex> lock(*mutex_);
  records_.clear();
  files_.clear();
  if (state_ == CacheState::kDisabled || state_ == CacheState::kRefused) return;
  std::string listing_problem;
  std::vector<std::filesystem::path> paths = tuning_files(dir_, write_path_, &listing_problem);
  if (!listing_problem.empty()) {
    log_once(LogLevel::kWarn, "tuning-dir:" + dir_.string(), listing_problem);
    files_.push_back(TuningFileStatus{dir_, 0, listing_problem, {}});
  }
  for (const auto& p : tables_) paths.push_back(p);
  for (const auto& p : paths) load_file_locked(p);
  for (const auto& [id, record] : pending_) {
    if (replacing_.count(id) != 0)
      records_[id] = record;
    else
      cache::merge_record(records_, record);
  }
}

Result<std::size_t> TuningCache::add_table(const std::filesystem::path& file) {
  Result<cache::TuningFile> table = cache::load_tuning_file(file);
  if (!table) return table.error();
  std::lock_guard<std::mutex> lock(*mutex_);
  tables_.push_back(file);
  TuningFileStatus status{file, table->records.size(), "", table->problems};
  files_.push_back(std::move(status));
  for (const auto& [id, record] : table->records) cache::merge_record(records_, record);
  return table->records.size();
}

std::optional<TuningRecord> TuningCache::lookup(const ProblemKey& problem,
                                                const TuningIdentity& present) const {
  TuningRecord probe;
  probe.problem = problem;
  probe.definition = present.definition;
  probe.device = present.device;
  probe.toolchain = present.toolchain;
  probe.env = present.env;
  const Hash128 want = probe.id();
  {
    std::lock_guard<std::mutex> lock(*mutex_);
    if (auto it = records_.find(want); it != records_.end()) return it->second;
  }
  if (std::optional<TuningRecord> tiered = lookup_tiers(want, present)) return tiered;
  std::lock_guard<std::mutex> lock(*mutex_);
  // A miss: say once why a record for this very problem was not served.
  // Keyed by the reason, so that the records of several earlier versions of
  // an edited kernel make one line, not one each.
  const std::string canonical = problem.canonical();
  for (const auto& [id, record] : records_) {
    if (record.problem.canonical() != canonical) continue;
    Status served = check_identity(record, present);
    if (served.ok()) continue;  // same identity under another id: nothing to say
    const std::string& why = served.error().message;
    // Another device's tuning of this very kernel (a shared cache holds
    // them) is expected, not a fault: not served, it seeds a warm start.
    const bool other_device = record.device != present.device &&
                              record.definition == present.definition &&
                              record.toolchain == present.toolchain && record.env == present.env;
    if (other_device) {
      log_once(LogLevel::kInfo, "tuning-other-device:" + want.hex() + ":" + why,
               "tuning record for " + canonical + " is another device's (" + why +
                   "): not served here; a warm start measures its fastest configs first");
      continue;
    }
    log_once(LogLevel::kWarn, "tuning-mismatch:" + want.hex() + ":" + why,
             "tuning record for " + canonical + " not used: " + why + " (it will be retuned)");
  }
  return std::nullopt;
}

std::optional<TuningRecord> TuningCache::lookup_tiers(const Hash128& want,
                                                      const TuningIdentity& present) const {
  if (dir_.empty() || state_ == CacheState::kDisabled || state_ == CacheState::kRefused)
    return std::nullopt;
  for (const std::shared_ptr<CacheTier>& tier : cache_tiers()) {
    std::optional<std::string> payload = tier->get(TierEntryKind::kRecord, want);
    if (!payload) continue;
    // The same checks as a record read from disk: its checksum and id, then
    // the identity it was made under (the tuner validates its config against
    // the space before serving it).
    std::optional<TuningRecord> record;
    std::string problem;
    try {
      nlohmann::json json = nlohmann::json::parse(*payload);
      record = TuningRecord::from_json(json);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (record && record->id() != want) problem = "it is the record of another problem";
    if (record && problem.empty()) {
      if (Status served = check_identity(*record, present); !served.ok())
        problem = served.error().message;
    }
    if (!problem.empty()) {
      log_once(LogLevel::kWarn, "tier-record-refused:" + tier->name() + ":" + want.hex(),
               "tuning record " + want.hex() + " from the " + tier->name() +
                   " cache tier not used: " + problem + " (it is tuned again)");
      continue;
    }
    // Written to local disk, so the next process is warm without the tier.
    // NOTES: lookup is const for its callers; the cache object itself is
    // never defined const (it is made by the tuner), and put/save lock as usual.
    auto* self = const_cast<TuningCache*>(this);
    self->put(*record);
    if (Result<StoreOutcome> saved = self->save(); !saved)
      KILN_LOG(kDebug) << tier->name()
                       << " tier record not written to disk: " << saved.error().message;
    return record;
  }
  return std::nullopt;
}

void TuningCache::put(TuningRecord record, PutMode mode) {
  if (record.created.empty()) record.created = utc_timestamp();
  std::lock_guard<std::mutex> lock(*mutex_);
  if (state_ == CacheState::kDisabled || state_ == CacheState::kRefused) return;
  if (mode == PutMode::kReplace) {
    const Hash128 id = record.id();
    records_[id] = record;
    pending_[id] = std::move(record);
    replacing_.insert(id);
    return;
  }
  cache::merge_record(records_, record);
  cache::merge_record(pending_, record);
}

std::size_t TuningCache::pending() const {
  std::lock_guard<std::mutex> lock(*mutex_);
  return pending_.size();
}

bool TuningCache::writable(std::string* why) const {
  std::string text;
  switch (state_) {
    case CacheState::kReady:
      return true;
    case CacheState::kReadOnly:
      text = dir_.empty() ? "the tuning file " + write_path_.string() + " was opened read-only"
                          : "the cache is read-only (" + state_reason_ + ")";
      break;
    case CacheState::kDisabled:
      text = "caching is disabled (" + state_reason_ + ")";
      break;
    case CacheState::kRefused:
      text = "the cache directory is refused: " + state_reason_;
      break;
  }
  if (why) *why = std::move(text);
  return false;
}

Result<StoreOutcome> TuningCache::save() {
  if (state_ == CacheState::kReadOnly) return StoreOutcome::kSkippedReadOnly;
  if (state_ != CacheState::kReady) return StoreOutcome::kSkippedDisabled;
  std::lock_guard<std::mutex> lock(*mutex_);
  if (pending_.empty()) return StoreOutcome::kWritten;
  // NOTES: read-merge-write under an exclusive flock, or two savers that
  // read the same old file would each write it back without the other's
  // records. Readers need no lock: the file is only ever renamed into place.
  Result<cache::FileLock> file_lock = cache::FileLock::acquire(lock_path(write_path_));
  if (!file_lock) return file_lock.error();
  cache::TuningFile file;
  Result<cache::TuningFile> current = cache::load_tuning_file(write_path_);
  if (current) {
    file = std::move(*current);
  } else if (current.error().code == ErrorCode::kCorrupt) {
    // A newer Kiln's file holds records this one cannot read but that one
    // serves: replacing it would lose them to whichever version saved last.
    if (current.error().details.count(std::string(cache::kNewerFormatDetail)) != 0)
      return make_error(ErrorCode::kUnavailable,
                        current.error().message +
                            "; not replaced, which would lose that Kiln's records: tune with "
                            "the newer Kiln, or give this one its own cache directory "
                            "(KILN_CACHE_DIR)",
                        {{"path", write_path_.string()}});
    // Unreadable here (an older format, or edited by hand): kept beside the
    // new file under another name, not read again, so nothing in it is lost.
    Result<std::filesystem::path> kept = cache::move_aside(write_path_, "unreadable");
    if (!kept) return kept.error();
    KILN_LOG(kWarn) << current.error().message << "; moved to " << kept->string()
                    << " and replaced";
  } else if (current.error().code != ErrorCode::kNotFound) {
    return current.error();
  }
  for (const auto& [id, record] : pending_) {
    if (replacing_.count(id) != 0)
      file.records[id] = record;
    else
      cache::merge_record(file.records, record);
  }
  const DeviceIdentity& device = pending_.begin()->second.device;
  file.header["device_name"] = device.name;
  file.header["compute_capability"] = device.compute_capability();
  const std::string text = cache::serialize_tuning_file(file);
  if (Status fits = cache::check_tuning_file_size(text, write_path_); !fits.ok())
    return fits.error();
  if (Status written = cache::atomic_write(write_path_, text); !written.ok())
    return written.error();
  for (const auto& [id, record] : file.records) {
    if (replacing_.count(id) == 0) cache::merge_record(records_, record);
  }
  const std::vector<std::shared_ptr<CacheTier>> tiers = cache_tiers();
  for (const auto& [id, record] : pending_) {
    if (tiers.empty()) break;
    const std::string payload = record.to_json().dump();
    for (const auto& tier : tiers) tier->put(TierEntryKind::kRecord, id, payload);
  }
  pending_.clear();
  replacing_.clear();
  return StoreOutcome::kWritten;
}

Result<std::size_t> TuningCache::export_table(const std::filesystem::path& file) const {
  if (state_ == CacheState::kDisabled || state_ == CacheState::kRefused) {
    std::string why;
    writable(&why);
    return make_error(ErrorCode::kUnavailable, "nothing exported: " + why,
                      {{"file", file.string()}});
  }
  cache::TuningFile table;
  {
    std::lock_guard<std::mutex> lock(*mutex_);
    table.records = records_;
  }
  table.header["exported_from"] = dir_.empty() ? write_path_.string() : dir_.string();
  if (!table.records.empty()) {
    const DeviceIdentity& device = table.records.begin()->second.device;
    table.header["device_name"] = device.name;
    table.header["compute_capability"] = device.compute_capability();
  }
  const std::string text = cache::serialize_tuning_file(table);
  if (Status fits = cache::check_tuning_file_size(text, file); !fits.ok()) return fits.error();
  if (Status written = cache::atomic_write(file, text, cache::PathOwner::kUser); !written.ok())
    return written.error();
  return table.records.size();
}

Result<std::size_t> TuningCache::import_table(const std::filesystem::path& file) {
  std::string why;
  if (!writable(&why)) {
    return make_error(ErrorCode::kUnavailable, "cannot import into the tuning cache: " + why,
                      {{"file", file.string()}});
  }
  // Not a regular file (/dev/zero, a FIFO) or over the tuning table cap:
  // refused before a byte is read.
  Result<cache::TuningFile> table = cache::load_user_table(file);
  if (!table) return table.error();
  {
    std::lock_guard<std::mutex> lock(*mutex_);
    files_.push_back(TuningFileStatus{file, table->records.size(), "", table->problems});
  }
  for (const auto& [id, record] : table->records) put(record);
  Result<StoreOutcome> saved = save();
  if (!saved) return saved.error();
  return table->records.size();
}

Result<std::size_t> TuningCache::clear() {
  std::string why;
  if (!writable(&why))
    return make_error(ErrorCode::kUnavailable, "cannot clear the tuning cache: " + why);
  std::lock_guard<std::mutex> lock(*mutex_);
  std::size_t removed = 0, failed = 0;
  std::string first_failure;
  std::string listing_problem;
  std::vector<std::filesystem::path> paths = tuning_files(dir_, write_path_, &listing_problem);
  // Temporary files of savers that died go too. Lock files stay: removing
  // one a saver holds would let the next saver lock a fresh file and race it.
  if (!dir_.empty()) {
    for (auto& p : tuning_files(dir_, write_path_, nullptr, is_tuning_temp_name))
      paths.push_back(p);
  }
  for (const auto& p : paths) {
    if (::unlink(p.c_str()) == 0) {
      ++removed;
    } else if (errno != ENOENT) {
      if (failed++ == 0) first_failure = cache::errno_text("remove", p);
    }
  }
  // The failures remembered beside the records (failed_configs.hpp) and
  // the journals of runs cut short (tuning_journal.hpp) go too: a cleared
  // cache tries every config again.
  std::error_code ignored;
  if (!dir_.empty()) std::filesystem::remove_all(dir_ / "failed", ignored);
  if (!dir_.empty()) std::filesystem::remove_all(dir_ / "journal", ignored);
  records_.clear();
  pending_.clear();
  replacing_.clear();
  files_.clear();
  if (!listing_problem.empty()) {
    return make_error(ErrorCode::kIo, "tuning cache not cleared: " + listing_problem,
                      {{"removed", std::to_string(removed)}});
  }
  if (failed > 0) {
    return make_error(ErrorCode::kIo,
                      "could not remove " + std::to_string(failed) + " of " +
                          std::to_string(failed + removed) +
                          " tuning files (first: " + first_failure + ")",
                      {{"removed", std::to_string(removed)}, {"failed", std::to_string(failed)}});
  }
  return removed;
}

std::vector<TuningRecord> TuningCache::records() const {
  std::lock_guard<std::mutex> lock(*mutex_);
  std::vector<TuningRecord> out;
  for (const auto& [id, record] : records_) out.push_back(record);
  return out;
}

std::vector<TuningFileStatus> TuningCache::files() const {
  std::lock_guard<std::mutex> lock(*mutex_);
  return files_;
}

}  // namespace kiln
