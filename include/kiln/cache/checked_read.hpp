// The one way the caches read a file: without blocking, only a regular
// file, and never more than a stated cap. A FIFO opened for reading waits
// for a writer (and then for it to close), a device such as /dev/zero never
// ends, and a sparse file can claim a terabyte: any of them planted in place
// of a cache entry, a tuning file or a table to import would hang or exhaust
// the process that reads it. Each is refused with an error naming the path,
// what it is and the fix, before a byte is read.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "kiln/core/error.hpp"

namespace kiln::internal {
const char* file_type_name(mode_t mode);  // include/kiln/core/input_file.hpp
}  // namespace kiln::internal

namespace kiln::cache {

// The caps (docs/caching.md). A tuning file holds JSON records of a few KiB
// each; an artifact entry holds one compiled kernel, also never more than
// Options::cache_max_bytes (the cache refuses to store a larger one).
inline constexpr std::uint64_t kMaxTuningFileBytes = 64ull << 20;
inline constexpr std::uint64_t kMaxArtifactEntryBytes = 1ull << 30;

// Whose path is read, which decides whether a symbolic link is followed and
// what the fix in an error says.
enum class PathOwner {
  kCache,  // a path inside the cache: never followed through a link; fix: rm it
  kUser,   // a path the user named (kiln cache import FILE): links followed
};

struct ReadRule {
  const char* what;         // "a tuning table": names the cap in the error
  std::uint64_t max_bytes;  // files larger than this are refused unread
  PathOwner owner = PathOwner::kCache;
};

// "a FIFO", "a directory"...: one text for the caches and the input files.
using internal::file_type_name;

// "64 MiB", "1 GiB", "512 KiB", "100 bytes": exact when the value is a
// whole number of the unit, as the caps are.
std::string byte_count_text(std::uint64_t bytes);

// An open descriptor on a regular file no larger than its rule's cap.
// Move-only; closes on destruction.
class CheckedFile {
 public:
  // kNotFound when `path` does not exist; kInvalidArgument (the path
  // refused: not a regular file, a link inside the cache, over the cap),
  // naming the path, what it is and the fix; kIo when the system refuses.
  // The type is judged from lstat/stat before opening (opening some devices
  // has effects) and again from fstat of what was opened (the path may
  // have been swapped in between); the open is O_NONBLOCK, so even a swapped
  // in FIFO cannot make it wait.
  static Result<CheckedFile> open(const std::filesystem::path& path, const ReadRule& rule);

  CheckedFile(CheckedFile&& other) noexcept;
  CheckedFile& operator=(CheckedFile&& other) noexcept;
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;
  ~CheckedFile();

  int fd() const { return fd_; }
  const struct stat& stat() const { return st_; }
  // The whole file. Reads at most the cap: a file that grew past it since
  // it was opened is refused like one that was too large from the start.
  Result<std::string> read_all();

 private:
  CheckedFile(int fd, const struct stat& st, const std::filesystem::path& path,
              const ReadRule& rule)
      : fd_(fd), st_(st), path_(path), rule_(rule) {}
  int fd_ = -1;
  struct stat st_ {};
  std::filesystem::path path_;
  ReadRule rule_;
};

// CheckedFile::open, then read_all.
Result<std::string> read_checked_file(const std::filesystem::path& path, const ReadRule& rule);

// kInvalidArgument when `path` exists and is something a writer must not
// replace: a FIFO, a device, a socket, a directory. Renaming a new file over
// one would neither block nor write through it, but would silently replace
// what someone put there (as root, `kiln cache export /dev/null` would have
// replaced the device); a regular file or a symbolic link is fine.
[[nodiscard]] Status check_write_target(const std::filesystem::path& path, PathOwner owner);

}  // namespace kiln::cache
