#include "entry_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "dir_safety.hpp"
#include "entry_format.hpp"
#include "file_io.hpp"

namespace kiln::cache {

EntryCheck read_entry(const std::filesystem::path& path, const Hash128& key, bool touch,
                      CachedArtifact* out) {
  EntryCheck check;
  // O_NOFOLLOW: a symlink planted in the cache is refused, not followed.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return check;
    check.status = errno == ELOOP ? EntryStatus::kRefused : EntryStatus::kIoError;
    check.problem = errno == ELOOP ? "refusing cache path " + path.string() +
                                         ": it is a symbolic link; remove it: rm " + path.string()
                                   : errno_text("open", path);
    return check;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    check.status = EntryStatus::kIoError;
    check.problem = errno_text("stat", path);
    ::close(fd);
    return check;
  }
  check.device = st.st_dev;
  check.inode = st.st_ino;
  if (auto refused = check_entry_stat(st, path)) {
    check.status = EntryStatus::kRefused;
    check.problem = refused->message;
    ::close(fd);
    return check;
  }
  Result<std::string> bytes = read_whole_fd(fd, path);
  if (!bytes) {
    check.status = EntryStatus::kIoError;
    check.problem = bytes.error().message;
    ::close(fd);
    return check;
  }
  Result<DecodedEntry> decoded = decode_entry(*bytes, key);
  nlohmann::json meta;
  if (decoded) {
    meta = nlohmann::json::parse(decoded->meta_json, nullptr, /*allow_exceptions=*/false);
    if (meta.is_discarded()) {
      decoded = make_error(ErrorCode::kCorrupt, "corrupt cache entry: metadata is not JSON");
    }
  }
  if (!decoded) {
    check.status = EntryStatus::kCorrupt;
    check.problem = decoded.error().message + " (" + path.string() + ")";
    ::close(fd);
    return check;
  }
  // The LRU clock: mtime, set on every hit, because atime depends on how
  // the file system is mounted (noatime, relatime).
  if (touch) ::futimens(fd, nullptr);
  ::close(fd);
  if (out) {
    out->binary.assign(decoded->payload);
    out->meta = std::move(meta);
  }
  check.status = EntryStatus::kOk;
  return check;
}

}  // namespace kiln::cache
