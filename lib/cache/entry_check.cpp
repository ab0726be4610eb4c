#include "entry_check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "dir_safety.hpp"
#include "json_guard.hpp"
#include "kiln/cache/checked_read.hpp"

namespace kiln::cache {

EntryCheck read_entry(const std::filesystem::path& path, EntryKind kind, const Hash128& name,
                      bool touch, std::uint64_t max_bytes, EntryContents* out) {
  EntryCheck check;
  // Never blocks (a FIFO or device there is refused unopened or opened
  // O_NONBLOCK), never follows a link planted in the cache, never reads
  // more than the cap.
  const char* what = kind == EntryKind::kIndex ? "an artifact entry" : "an artifact program";
  Result<CheckedFile> file = CheckedFile::open(path, ReadRule{what, max_bytes, PathOwner::kCache});
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
  Result<DecodedEntry> decoded = decode_entry(*bytes, kind, name);
  nlohmann::json meta;
  if (decoded && kind == EntryKind::kIndex) {
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
    out->program = decoded->program;
    out->payload.assign(decoded->payload);
    out->meta = std::move(meta);
  }
  check.status = EntryStatus::kOk;
  return check;
}

std::optional<IndexHeader> peek_index(const std::filesystem::path& path) {
  Result<CheckedFile> file = CheckedFile::open(
      path, ReadRule{"an artifact entry", kMaxArtifactEntryBytes, PathOwner::kCache});
  if (!file) return std::nullopt;
  std::string header(kEntryHeaderSize, '\0');
  ssize_t n = ::pread(file->fd(), header.data(), header.size(), 0);
  if (n != static_cast<ssize_t>(header.size())) return std::nullopt;
  std::optional<Hash128> program = peek_program(header);
  if (!program) return std::nullopt;
  return IndexHeader{*program, file->stat()};
}

bool remove_if_unchanged(const std::filesystem::path& path, std::uint64_t device,
                         std::uint64_t inode) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && st.st_dev == device && st.st_ino == inode &&
         ::unlink(path.c_str()) == 0;
}

}  // namespace kiln::cache
