// The file primitives both caches stand on: whole-file reads, atomic
// replacement (temporary file + fsync + rename + fsync of the directory) and
// an advisory lock on a sidecar file. POSIX only.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/error.hpp"

namespace kiln::cache {

// Temporary files start with this prefix; readers and listings skip them.
inline constexpr std::string_view kTempPrefix = ".tmp-";

// Reads a whole file. kNotFound when it does not exist, kIo otherwise.
Result<std::string> read_whole_file(const std::filesystem::path& path);
// Reads the rest of an open descriptor; `path` only names it in errors.
Result<std::string> read_whole_fd(int fd, const std::filesystem::path& path);

// Writes `bytes` to `path` so that a reader sees either the old file or the
// whole new one, never a part: write a temporary file in the same
// directory, fsync it, rename it over `path`, fsync the directory. The file
// gets mode 0600. On failure the temporary file is removed and the error
// names the path and errno.
std::optional<ErrorInfo> atomic_write(const std::filesystem::path& path, std::string_view bytes);

// Called after each chunk an atomic_write puts in its temporary file. Tests
// install one to stop a writer half way and kill it; nullptr (the default)
// costs one atomic load per chunk.
using WriteProgressHook = void (*)(const std::filesystem::path& temp_path, std::size_t written,
                                   std::size_t total);
void set_write_progress_hook(WriteProgressHook hook);

// An exclusive flock(2) on `path` (created 0600 when absent), released on
// destruction or when the process dies, so a killed holder never leaves a
// stale lock. Move-only.
class FileLock {
 public:
  // Blocks until the lock is held. kIo when the file cannot be opened.
  static Result<FileLock> acquire(const std::filesystem::path& path);
  // Returns nullopt at once when another process holds it.
  static std::optional<FileLock> try_acquire(const std::filesystem::path& path);

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
