// Odd files planted where the caches expect regular ones: real FIFOs (with
// no writer, and with a writer that never closes), real device nodes and
// real sparse files claiming a terabyte. Each used to hang or exhaust a
// reader.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kiln::testing {

// Replaces whatever is at `path` with a FIFO; true when it could.
inline bool plant_fifo(const std::filesystem::path& path) {
  ::unlink(path.c_str());
  return ::mkfifo(path.c_str(), 0600) == 0;
}

// Holds a FIFO open for writing (and never closes it while alive), so a
// reader that opened it blocking would wait for data or EOF forever.
class FifoWriter {
 public:
  explicit FifoWriter(const std::filesystem::path& path)
      // O_RDWR: opening a FIFO for both never waits for the other end.
      : fd_(::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)) {}
  ~FifoWriter() {
    if (fd_ >= 0) ::close(fd_);
  }
  FifoWriter(const FifoWriter&) = delete;
  FifoWriter& operator=(const FifoWriter&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

// Replaces whatever is at `path` with a character device node equal to
// /dev/zero (endless zeros); false without CAP_MKNOD (not root) or where
// the file system refuses device nodes.
inline bool plant_dev_zero(const std::filesystem::path& path) {
  ::unlink(path.c_str());
  return ::mknod(path.c_str(), S_IFCHR | 0600, ::makedev(1, 5)) == 0;
}

// Replaces whatever is at `path` with a sparse regular file of `bytes`
// (a terabyte costs no disk); false where the file system refuses the size.
inline bool plant_sparse(const std::filesystem::path& path, off_t bytes) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = ::ftruncate(fd, bytes) == 0;
  ::close(fd);
  return ok;
}

inline bool is_fifo(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

inline constexpr off_t kOneTiB = off_t{1} << 40;

}  // namespace kiln::testing
