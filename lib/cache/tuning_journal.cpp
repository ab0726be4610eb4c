#include "kiln/cache/tuning_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>

#include "beside_cache.hpp"

#include "dir_safety.hpp"
#include "json_guard.hpp"
#include "kiln/cache/checked_read.hpp"
#include "kiln/cache/file_io.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

namespace {

// A journal holds one line per config measured: a few MiB at most.
constexpr std::uint64_t kMaxJournalBytes = 64ull << 20;

// The entry of one line, or null when the line is not one of `key`'s.
nlohmann::json entry_of(const std::string& line, const std::string& key) {
  nlohmann::json j = cache::parse_shallow_json(line);
  if (j.is_discarded() || !cache::field_equals(j, "format", kJournalFormat) ||
      !cache::field_equals(j, "format_version", kJournalFormatVersion) ||
      !cache::field_equals(j, "key", key))
    return nullptr;
  auto entry = j.find("entry");
  if (entry == j.end() || !entry->is_object() || !entry->contains("config")) return nullptr;
  return std::move(*entry);
}

// Whether the file open at `fd` ends in the middle of a line (a writer
// killed mid-write).
bool ends_torn(int fd) {
  struct stat st {};
  char last = '\n';
  return ::fstat(fd, &st) == 0 && st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 &&
         last != '\n';
}

}  // namespace

TuningJournal::TuningJournal(std::filesystem::path dir, bool read_only)
    : dir_(std::move(dir)), read_only_(read_only) {}

TuningJournal TuningJournal::beside(const TuningCache& cache) {
  const std::optional<internal::BesideCache> at = internal::beside_cache(cache, "journal");
  return at ? TuningJournal(at->dir, at->read_only) : TuningJournal();
}

std::filesystem::path TuningJournal::file_for(const FailureKey& key) const {
  return dir_ / (key.id().hex() + ".jsonl");
}

std::vector<nlohmann::json> TuningJournal::read(const FailureKey& key) const {
  if (!enabled()) return {};
  const auto path = file_for(key);
  auto text = cache::read_checked_file(path, {"a tuning journal", kMaxJournalBytes});
  if (!text.ok()) {
    if (text.error().code != ErrorCode::kNotFound)
      log_once(LogLevel::kWarn, "journal:" + path.string(),
               "tuning journal not used: " + text.error().message);
    return {};
  }
  const std::string hex = key.id().hex();
  std::map<std::string, nlohmann::json> last;  // by the config's JSON text
  std::vector<std::string> order;
  std::size_t bad = 0;
  for (std::size_t at = 0; at < text->size();) {
    std::size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    const std::string line = text->substr(at, end - at);
    at = end + 1;
    nlohmann::json entry = entry_of(line, hex);
    if (entry.is_null()) {
      bad += !line.empty();
      continue;
    }
    const std::string config = entry["config"].dump();
    if (!last.count(config)) order.push_back(config);
    last[config] = std::move(entry);
  }
  if (bad > 0)
    log_once(LogLevel::kWarn, "journal-lines:" + path.string(),
             "tuning journal " + path.string() + ": " + std::to_string(bad) +
                 " unreadable line(s) skipped (a tuner killed mid-write); their configs are "
                 "measured again");
  std::vector<nlohmann::json> out;
  for (const auto& config : order) out.push_back(std::move(last[config]));
  return out;
}

Status TuningJournal::append(const FailureKey& key, const nlohmann::json& entry) const {
  if (!writable()) return ok_status();
  Status made = cache::ensure_private_dir(dir_);
  if (!made.ok()) return made;
  const auto path = file_for(key);
  std::string line = nlohmann::json{{"format", kJournalFormat},
                                    {"format_version", kJournalFormatVersion},
                                    {"key", key.id().hex()},
                                    {"entry", entry}}
                         .dump() +
                     "\n";
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return make_error(ErrorCode::kIo, cache::errno_text("open", path));
  // NOTES: the lock orders whole lines of concurrent tuners, and a torn
  // last line is ended before this one, so a killed writer costs its own
  // line alone.
  ::flock(fd, LOCK_EX);
  if (ends_torn(fd)) line.insert(0, "\n");
  const ssize_t wrote = ::write(fd, line.data(), line.size());
  const int saved = errno;
  ::close(fd);
  if (wrote != static_cast<ssize_t>(line.size())) {
    errno = wrote < 0 ? saved : ENOSPC;
    return make_error(ErrorCode::kIo, cache::errno_text("append to", path));
  }
  return ok_status();
}

Status TuningJournal::remove(const FailureKey& key) const {
  if (!writable()) return ok_status();
  const auto path = file_for(key);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return make_error(ErrorCode::kIo, cache::errno_text("remove", path));
  return ok_status();
}

}  // namespace kiln
