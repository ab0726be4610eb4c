// A directory made read-only for real, for the tests of what a read-only
// cache does. Tests run as root on CI, and root ignores permission bits, so
// the ways are tried in an order that binds root too:
//   1. a read-only bind mount in a private mount namespace (only the child
//      process that runs Kiln sees it; EROFS even for root);
//   2. for a user other than root, mode 0500 on every directory;
//   3. the immutable attribute (chattr +i) on every directory (EPERM even
//      for root; needs CAP_LINUX_IMMUTABLE and ext4, xfs, btrfs...).
// Each way is checked by trying to create a file; when none holds, the
// test skips with the reasons.
#pragma once

#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace kiln::testing {

class ReadOnlyDir {
 public:
  explicit ReadOnlyDir(std::filesystem::path dir) : dir_(std::move(dir)) {
    if (probe_in_child([this] { return bind_read_only(); })) {
      how_ = "read-only bind mount";
      in_child_ = [this] { return bind_read_only(); };
      return;
    }
    if (::geteuid() != 0) {
      set_dir_modes(0500);
      if (!can_write()) {
        how_ = "mode 0500";
        undo_ = [this] { set_dir_modes(0700); };
        return;
      }
      set_dir_modes(0700);
      why_not_ += "mode 0500 did not stop writes; ";
    } else {
      why_not_ += "root ignores mode bits; ";
    }
    std::string immutable = set_immutable(true);
    if (immutable.empty() && !can_write()) {
      how_ = "chattr +i";
      undo_ = [this] { set_immutable(false); };
      return;
    }
    set_immutable(false);
    why_not_ += "chattr +i: " + (immutable.empty() ? "did not stop writes" : immutable);
  }
  ~ReadOnlyDir() {
    if (undo_) undo_();
  }
  ReadOnlyDir(const ReadOnlyDir&) = delete;
  ReadOnlyDir& operator=(const ReadOnlyDir&) = delete;

  bool ok() const { return !how_.empty(); }
  const std::string& how() const { return how_; }
  // Why no way held (for KILN_SKIP).
  std::string why_not() const { return "no read-only directory could be made: " + why_not_; }
  // Runs in the child before exec (see run_with_deadline); empty unless the
  // way is a mount the child must make in its own namespace.
  const std::function<bool()>& in_child() const { return in_child_; }

 private:
  bool bind_read_only() const {
    return ::unshare(CLONE_NEWNS) == 0 &&
           ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
           ::mount(dir_.c_str(), dir_.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0 &&
           ::mount(nullptr, dir_.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0;
  }

  // Whether `setup` works and then stops writes, tried in a child process
  // so that the namespace it makes dies with it.
  bool probe_in_child(const std::function<bool()>& setup) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(setup() && !can_write() ? 0 : 1);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
    why_not_ += "bind mount refused (no CAP_SYS_ADMIN?); ";
    return false;
  }

  bool can_write() const {
    const std::filesystem::path probe = dir_ / ".kiln-write-probe";
    int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return false;
    ::close(fd);
    ::unlink(probe.c_str());
    return true;
  }

  std::vector<std::filesystem::path> dirs() const {
    std::vector<std::filesystem::path> out{dir_};
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_, ec)) {
      if (e.is_directory() && !e.is_symlink()) out.push_back(e.path());
    }
    return out;
  }

  void set_dir_modes(mode_t mode) const {
    for (const auto& d : dirs()) ::chmod(d.c_str(), mode);
  }

  // "" when every directory took the flag, else the first error.
  std::string set_immutable(bool on) const {
    std::string error;
    // Deepest first on the way off does not matter; on the way on, the
    // listing must happen before the root is frozen (it is: dirs() first).
    for (const auto& d : dirs()) {
      int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      int flags = 0;
      if (fd < 0 || ::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
        if (error.empty()) error = std::strerror(errno);
      } else {
        flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
        if (::ioctl(fd, FS_IOC_SETFLAGS, &flags) != 0 && error.empty())
          error = std::strerror(errno);
      }
      if (fd >= 0) ::close(fd);
    }
    return error;
  }

  std::filesystem::path dir_;
  std::string how_, why_not_;
  std::function<bool()> in_child_;
  std::function<void()> undo_;
};

}  // namespace kiln::testing
