#include "kiln/cache/checked_read.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "kiln/cache/file_io.hpp"

namespace kiln::cache {

namespace {

ErrorInfo refused(const std::filesystem::path& path, PathOwner owner, const std::string& why,
                  const std::string& fix) {
  const std::string head =
      owner == PathOwner::kCache ? "refusing cache path " : std::string("cannot read ");
  return make_error(ErrorCode::kInvalidArgument, head + path.string() + ": " + why + "; " + fix,
                    {{"path", path.string()}});
}

std::string remove_fix(const std::filesystem::path& path, mode_t mode) {
  return std::string("remove it: ") + (S_ISDIR(mode) ? "rm -rf " : "rm ") + path.string();
}

// The type and size checks every reader applies, to a stat of the path and
// again to an fstat of the descriptor.
Status check_stat(const struct stat& st, const std::filesystem::path& path, const ReadRule& rule) {
  const bool cache = rule.owner == PathOwner::kCache;
  if (S_ISLNK(st.st_mode)) {
    return refused(path, rule.owner, "it is a symbolic link", remove_fix(path, st.st_mode));
  }
  if (!S_ISREG(st.st_mode)) {
    return refused(path, rule.owner,
                   std::string("it is ") + file_type_name(st.st_mode) + ", not a regular file",
                   cache ? remove_fix(path, st.st_mode)
                         : std::string("name a regular file holding ") + rule.what);
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > rule.max_bytes) {
    return refused(path, rule.owner,
                   "it is " + byte_count_text(size) + ", larger than the " +
                       byte_count_text(rule.max_bytes) + " limit for " + rule.what,
                   cache ? remove_fix(path, st.st_mode) : std::string("name a smaller file"));
  }
  return ok_status();
}

ErrorInfo stat_error(const char* what, const std::filesystem::path& path) {
  if (errno == ENOENT) return make_error(ErrorCode::kNotFound, "no file " + path.string());
  return make_error(ErrorCode::kIo, errno_text(what, path), {{"path", path.string()}});
}

}  // namespace

std::string byte_count_text(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  std::uint64_t whole = bytes;
  while (whole >= 1024 && whole % 1024 == 0 && unit < 5) whole /= 1024, ++unit;
  if (unit > 0 || bytes < 1024) return std::to_string(whole) + " " + units[unit];
  // Not a whole number of KiB: one decimal of the largest fitting unit.
  double v = static_cast<double>(bytes);
  unit = 0;
  while (v >= 1024 && unit < 5) v /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", v, units[unit]);
  return text;
}

Result<CheckedFile> CheckedFile::open(const std::filesystem::path& path, const ReadRule& rule) {
  const bool cache = rule.owner == PathOwner::kCache;
  struct stat st {};
  if ((cache ? ::lstat(path.c_str(), &st) : ::stat(path.c_str(), &st)) != 0) {
    return stat_error("stat", path);
  }
  if (Status checked = check_stat(st, path, rule); !checked.ok()) return checked.error();
  // NOTES: O_NONBLOCK, or a FIFO swapped in after the stat above would
  // block the open until some writer appeared; O_NOCTTY, so a terminal
  // never becomes this process's controlling one.
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (cache ? O_NOFOLLOW : 0);
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    if (errno == ELOOP && cache) {
      return refused(path, rule.owner, "it is a symbolic link", "remove it: rm " + path.string());
    }
    return stat_error("open", path);
  }
  if (::fstat(fd, &st) != 0) {
    ErrorInfo e = stat_error("stat", path);
    ::close(fd);
    return e;
  }
  if (Status checked = check_stat(st, path, rule); !checked.ok()) {
    ::close(fd);
    return checked.error();
  }
  return CheckedFile(fd, st, path, rule);
}

CheckedFile::CheckedFile(CheckedFile&& other) noexcept
    : fd_(other.fd_), st_(other.st_), path_(std::move(other.path_)), rule_(other.rule_) {
  other.fd_ = -1;
}

CheckedFile& CheckedFile::operator=(CheckedFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    st_ = other.st_;
    path_ = std::move(other.path_);
    rule_ = other.rule_;
    other.fd_ = -1;
  }
  return *this;
}

CheckedFile::~CheckedFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> CheckedFile::read_all() {
  std::string out;
  out.reserve(std::min(static_cast<std::uint64_t>(st_.st_size), rule_.max_bytes));
  char buffer[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorCode::kIo, errno_text("read", path_), {{"path", path_.string()}});
    }
    if (n == 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > rule_.max_bytes) {
      return refused(path_, rule_.owner,
                     "it grew past the " + byte_count_text(rule_.max_bytes) + " limit for " +
                         rule_.what + " while it was read",
                     rule_.owner == PathOwner::kCache ? "remove it: rm " + path_.string()
                                                      : std::string("name a smaller file"));
    }
  }
}

Result<std::string> read_checked_file(const std::filesystem::path& path, const ReadRule& rule) {
  Result<CheckedFile> file = CheckedFile::open(path, rule);
  if (!file) return file.error();
  return file->read_all();
}

Status check_write_target(const std::filesystem::path& path, PathOwner owner) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return ok_status();  // absent: nothing to replace
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return ok_status();
  const std::string why = std::string("it is ") + file_type_name(st.st_mode) +
                          ", not a regular file, and writing would replace it";
  return make_error(ErrorCode::kInvalidArgument,
                    (owner == PathOwner::kCache ? "refusing cache path " : "cannot write ") +
                        path.string() + ": " + why + "; " +
                        (owner == PathOwner::kCache ? remove_fix(path, st.st_mode)
                                                    : std::string("name a regular file")),
                    {{"path", path.string()}});
}

}  // namespace kiln::cache
