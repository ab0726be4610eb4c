#include "kiln/cache/file_io.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>
#include <thread>

namespace kiln::cache {

namespace {

std::atomic<WriteProgressHook> g_write_hook{nullptr};

// Chunks small enough that a test can stop a writer between two of them.
constexpr std::size_t kWriteChunk = 256 * 1024;

// A name no other writer (thread or process) picks: pid plus 64 random bits.
std::filesystem::path temp_path_for(const std::filesystem::path& path) {
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   (static_cast<std::uint64_t>(getpid()) << 32)};
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, "%d-%016llx", static_cast<int>(getpid()),
                static_cast<unsigned long long>(rng()));
  return path.parent_path() / (std::string(kTempPrefix) + path.filename().string() + "-" + suffix);
}

ErrorInfo io_error(const char* what, const std::filesystem::path& path) {
  return make_error(ErrorCode::kIo, errno_text(what, path), {{"path", path.string()}});
}

[[nodiscard]] bool write_all(int fd, std::string_view bytes, const std::filesystem::path& temp) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    std::size_t n = std::min(kWriteChunk, bytes.size() - done);
    ssize_t w = ::write(fd, bytes.data() + done, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(w);
    if (auto hook = g_write_hook.load(std::memory_order_relaxed)) hook(temp, done, bytes.size());
  }
  return true;
}

}  // namespace

std::string errno_text(const char* what, const std::filesystem::path& path) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(errno);
}

void set_write_progress_hook(WriteProgressHook hook) {
  g_write_hook.store(hook);
}

Status atomic_write(const std::filesystem::path& path, std::string_view bytes, PathOwner owner) {
  if (Status target = check_write_target(path, owner); !target.ok()) return target;
  const std::filesystem::path temp = temp_path_for(path);
  // A cache's files are this user's alone. A file the user named (an
  // export) is theirs: made as any program makes one, 0666 less the umask,
  // or with the mode of the file it replaces (exports came out 0600, so a
  // colleague could not read a shared results file). Never writable by
  // group or others, though: Kiln refuses to load a tuning table they could
  // write (check_entry_stat), and an export must load as a shipped table.
  constexpr mode_t kOthersWrite = S_IWGRP | S_IWOTH;
  mode_t mode = 0600;
  std::optional<mode_t> replaced;
  if (owner == PathOwner::kUser) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      replaced = st.st_mode & 07777 & ~kOthersWrite;
    mode = 0666 & ~kOthersWrite;
  }
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return io_error("create", temp);
  if (replaced && ::fchmod(fd, *replaced) != 0) {
    ErrorInfo e = io_error("set the mode of", temp);
    ::close(fd);
    ::unlink(temp.c_str());
    return e;
  }
  // NOTES: fsync before rename, or a crash can leave the new name pointing
  // at a file whose blocks never reached the disk (a torn entry after reboot).
  if (!write_all(fd, bytes, temp) || ::fsync(fd) != 0) {
    ErrorInfo e = io_error("write", temp);
    ::close(fd);
    ::unlink(temp.c_str());
    return e;
  }
  if (::close(fd) != 0) {
    ErrorInfo e = io_error("close", temp);
    ::unlink(temp.c_str());
    return e;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    ErrorInfo e = io_error("rename into", path);
    ::unlink(temp.c_str());
    return e;
  }
  // The rename itself lives in the directory: sync it so the new name
  // survives a crash. Failure here loses durability, not correctness.
  int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return ok_status();
}

Result<std::filesystem::path> move_aside(const std::filesystem::path& path, std::string_view tag) {
  // A name per moment (and a counter for two in one second), so a file
  // moved aside earlier is never overwritten by a later one.
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  const std::string base = path.string() + "." + std::string(tag) + "-" + stamp;
  std::filesystem::path aside = base;
  for (int n = 1; ::access(aside.c_str(), F_OK) == 0 || errno != ENOENT; ++n) {
    if (n > 1000) return io_error("find a free name beside", path);
    aside = base + "-" + std::to_string(n);
  }
  if (::rename(path.c_str(), aside.c_str()) != 0) return io_error("move aside", path);
  int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return aside;
}

namespace {

// Opens (creating it 0600) a lock file and checks it is a regular file.
// O_NONBLOCK: opening a FIFO or a device planted there must not wait.
Result<int> open_lock_file(const std::filesystem::path& path) {
  int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
  if (fd < 0) {
    if (errno == ELOOP) {
      return make_error(ErrorCode::kInvalidArgument,
                        "refusing cache path " + path.string() +
                            ": it is a symbolic link; remove it: rm " + path.string(),
                        {{"path", path.string()}});
    }
    return io_error("open lock file", path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ErrorInfo e = io_error("stat lock file", path);
    ::close(fd);
    return e;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorCode::kInvalidArgument,
                      "refusing cache path " + path.string() + ": it is " +
                          file_type_name(st.st_mode) + ", not a regular file; remove it: rm " +
                          path.string(),
                      {{"path", path.string()}});
  }
  return fd;
}

}  // namespace

Result<FileLock> FileLock::acquire(const std::filesystem::path& path,
                                   std::chrono::milliseconds wait) {
  Result<int> fd = open_lock_file(path);
  if (!fd) return fd.error();
  // NOTES: polled with LOCK_NB, not a blocking flock, so the wait has a
  // bound; the back-off stays short because holders hold for milliseconds.
  const auto until = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::milliseconds(1);
  while (::flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      ErrorInfo e = io_error("lock", path);
      ::close(*fd);
      return e;
    }
    if (std::chrono::steady_clock::now() >= until) {
      ::close(*fd);
      return make_error(ErrorCode::kTimeout,
                        "gave up after " +
                            (wait.count() % 1000 == 0 ? std::to_string(wait.count() / 1000) + " s"
                                                      : std::to_string(wait.count()) + " ms") +
                            " waiting for the lock on " + path.string() +
                            ": another process holds it (stopped or hung?); find it with: fuser " +
                            path.string(),
                        {{"path", path.string()}});
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  return FileLock(*fd);
}

Result<std::optional<FileLock>> FileLock::try_acquire(const std::filesystem::path& path) {
  Result<int> fd = open_lock_file(path);
  if (!fd) return fd.error();
  if (::flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    ErrorInfo e = io_error("lock", path);
    const bool busy = errno == EWOULDBLOCK;
    ::close(*fd);
    if (busy) return std::optional<FileLock>();
    return e;
  }
  return std::optional<FileLock>(FileLock(*fd));
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor drops the flock
}

}  // namespace kiln::cache
