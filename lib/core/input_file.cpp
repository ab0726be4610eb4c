// read_input_file: see input_file.hpp.
#include "kiln/core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln::internal {

const char* file_type_name(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "an unknown kind of file";
  }
}

Result<std::string> read_input_file(const std::filesystem::path& path, const std::string& what,
                                    std::uint64_t max_bytes) {
  const std::string named = "the " + what + " '" + path.string() + "'";
  // O_NONBLOCK: opening a FIFO must not wait for a writer, and a procfs
  // file that blocks on read (/proc/kmsg) answers EAGAIN instead.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return make_error(ErrorCode::kNotFound,
                      "cannot read " + named + ": " + std::strerror(errno) + "; check the path",
                      {{"path", path.string()}});
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return make_error(ErrorCode::kNotFound, "cannot read " + named + ": " + why,
                      {{"path", path.string()}});
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(
        ErrorCode::kInvalidArgument,
        named + " is " + file_type_name(st.st_mode) + ", not a file; name the file itself",
        {{"path", path.string()}});
  }
  std::string bytes;
  char chunk[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const bool would_block = errno == EAGAIN || errno == EWOULDBLOCK;
      const std::string why = std::strerror(errno);
      ::close(fd);
      return make_error(ErrorCode::kInvalidArgument,
                        would_block ? named +
                                          " has nothing to read without waiting (a procfs or "
                                          "sysfs file?); name a file on disk"
                                    : "cannot read " + named + ": " + why,
                        {{"path", path.string()}});
    }
    if (n == 0) break;
    bytes.append(chunk, static_cast<std::size_t>(n));
    // Checked on what was read, not st_size: procfs files report 0.
    if (bytes.size() > max_bytes) {
      ::close(fd);
      return make_error(ErrorCode::kInvalidArgument,
                        named + " is larger than " + std::to_string(max_bytes) +
                            " bytes, more than any " + what + " Kiln reads; name the right file",
                        {{"path", path.string()}});
    }
  }
  ::close(fd);
  return bytes;
}

}  // namespace kiln::internal
