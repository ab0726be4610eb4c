// The file primitives both caches stand on: whole-file reads, atomic
// replacement (temporary file + fsync + rename + fsync of the directory) and
// an advisory lock on a sidecar file. POSIX only.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/cache/checked_read.hpp"
#include "kiln/core/error.hpp"

namespace kiln::cache {

// Temporary files start with this prefix; readers and listings skip them.
inline constexpr std::string_view kTempPrefix = ".tmp-";

// Writes `bytes` to `path` so that a reader sees either the old file or the
// whole new one, never a part: write a temporary file in the same
// directory, fsync it, rename it over `path`, fsync the directory. The file
// gets mode 0600 when the cache owns it; a path the user named (kUser) gets
// the mode of the file it replaces, else 0666 less the umask, in both cases
// without group or others' write (Kiln loads no table they can write). On
// failure the temporary file is
// removed and the error names the path and errno. A FIFO, device, socket or directory at `path` is
// refused (check_write_target), never replaced; `owner` words the error.
[[nodiscard]] Status atomic_write(const std::filesystem::path& path, std::string_view bytes,
                                  PathOwner owner = PathOwner::kCache);

// Renames `path` to "<path>.<tag>-<UTC time>" in its directory (a counter
// appended should that name be taken) and returns the new name: a file no
// reader can use, kept rather than overwritten. kIo naming errno.
Result<std::filesystem::path> move_aside(const std::filesystem::path& path, std::string_view tag);

// Called after each chunk an atomic_write puts in its temporary file. Tests
// install one to stop a writer half way and kill it; nullptr (the default)
// costs one atomic load per chunk.
using WriteProgressHook = void (*)(const std::filesystem::path& temp_path, std::size_t written,
                                   std::size_t total);
void set_write_progress_hook(WriteProgressHook hook);

// An exclusive flock(2) on `path` (created 0600 when absent), released on
// destruction or when the process dies, so a killed holder never leaves a
// stale lock. The lock file must be a regular file (a FIFO or device there
// is refused, never opened for blocking). Move-only.
class FileLock {
 public:
  // How long acquire() waits for another holder by default. A saver holds
  // the lock for milliseconds; one that is stopped (SIGSTOP, a debugger) or
  // hung while holding it, or any process that flocks the file and sleeps,
  // must not hang every later save forever.
  static constexpr std::chrono::milliseconds kDefaultWait{60'000};

  // Waits up to `wait` for the lock. kTimeout naming the path when another
  // process held it all that time, kIo when the file cannot be opened,
  // kInvalidArgument when it is not a regular file.
  static Result<FileLock> acquire(const std::filesystem::path& path,
                                  std::chrono::milliseconds wait = kDefaultWait);
  // Returns nullopt at once when another process holds it, or the error
  // that kept it from being tried (read-only file system, a FIFO there...).
  static Result<std::optional<FileLock>> try_acquire(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// "open /x/y: Permission denied" from errno.
std::string errno_text(const char* what, const std::filesystem::path& path);

}  // namespace kiln::cache
