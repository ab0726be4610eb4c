#include "entry_check.hpp"

#include <sys/stat.h>

#include "checked_read.hpp"
#include "dir_safety.hpp"
#include "entry_format.hpp"
#include "json_guard.hpp"

namespace kiln::cache {

EntryCheck read_entry(const std::filesystem::path& path, const Hash128& key, bool touch,
                      std::uint64_t max_bytes, CachedArtifact* out) {
  EntryCheck check;
  // Never blocks (a FIFO or device there is refused unopened or opened
  // O_NONBLOCK), never follows a link planted in the cache, never reads
  // more than the cap.
  Result<CheckedFile> file =
      CheckedFile::open(path, ReadRule{"an artifact entry", max_bytes, PathOwner::kCache});
  if (!file) {
    if (file.error().code == ErrorCode::kNotFound) return check;
    check.status = file.error().code == ErrorCode::kInvalidArgument ? EntryStatus::kRefused
                                                                    : EntryStatus::kIoError;
    check.problem = file.error().message;
    return check;
  }
  check.device = file->stat().st_dev;
  check.inode = file->stat().st_ino;
  if (Status refused = check_entry_stat(file->stat(), path); !refused.ok()) {
    check.status = EntryStatus::kRefused;
    check.problem = refused.error().message;
    return check;
  }
  Result<std::string> bytes = file->read_all();
  if (!bytes) {
    check.status = bytes.error().code == ErrorCode::kInvalidArgument ? EntryStatus::kRefused
                                                                     : EntryStatus::kIoError;
    check.problem = bytes.error().message;
    return check;
  }
  Result<DecodedEntry> decoded = decode_entry(*bytes, key);
  nlohmann::json meta;
  if (decoded) {
    meta = parse_shallow_json(decoded->meta_json);
    if (meta.is_discarded()) {
      decoded = make_error(ErrorCode::kCorrupt, "corrupt cache entry: metadata is not JSON");
    }
  }
  if (!decoded) {
    check.status = EntryStatus::kCorrupt;
    check.problem = decoded.error().message + " (" + path.string() + ")";
    return check;
  }
  // The LRU clock: mtime, set on every hit, because atime depends on how
  // the file system is mounted (noatime, relatime).
  if (touch) ::futimens(file->fd(), nullptr);
  if (out) {
    out->binary.assign(decoded->payload);
    out->meta = std::move(meta);
  }
  check.status = EntryStatus::kOk;
  return check;
}

}  // namespace kiln::cache
