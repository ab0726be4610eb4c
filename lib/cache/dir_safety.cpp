#include "dir_safety.hpp"

#include <unistd.h>

#include <cerrno>

#include "kiln/cache/file_io.hpp"
#include "kiln/core/log.hpp"

namespace kiln::cache {

namespace {

ErrorInfo refused(const std::filesystem::path& path, const std::string& why,
                  const std::string& fix) {
  return make_error(ErrorCode::kInvalidArgument,
                    "refusing cache path " + path.string() + ": " + why + "; " + fix,
                    {{"path", path.string()}});
}

std::string owner_text(uid_t uid) {
  return "uid " + std::to_string(uid);
}

}  // namespace

Status ensure_private_dir(const std::filesystem::path& dir) {
  if (dir.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the cache directory is empty; set KILN_CACHE_DIR or HOME");
  }
  // mkdir -p, component by component, so each directory Kiln creates gets
  // 0700 regardless of the umask's group and other bits.
  std::filesystem::path built;
  for (const auto& part : dir) {
    built /= part;
    if (::mkdir(built.c_str(), 0700) != 0 && errno != EEXIST) {
      return make_error(ErrorCode::kIo, errno_text("create directory", built),
                        {{"path", built.string()}});
    }
  }
  return check_private_dir(dir);
}

Status check_private_dir(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    return make_error(ErrorCode::kIo, errno_text("stat", dir), {{"path", dir.string()}});
  }
  if (S_ISLNK(st.st_mode)) {
    // Follow a symlinked cache root (a common way to put it on scratch),
    // but judge the directory it points to.
    if (::stat(dir.c_str(), &st) != 0) {
      return make_error(ErrorCode::kIo, errno_text("stat", dir), {{"path", dir.string()}});
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return refused(dir, "it is not a directory", "remove it or point KILN_CACHE_DIR elsewhere");
  }
  if (st.st_uid != ::geteuid()) {
    return refused(dir,
                   "it is owned by " + owner_text(st.st_uid) + ", not by this user (" +
                       owner_text(::geteuid()) + ")",
                   "point KILN_CACHE_DIR at a directory you own");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return refused(dir, "group or others can write it (a cached kernel is code that will run)",
                   "run: chmod go-w " + dir.string());
  }
  return ok_status();
}

Status check_entry_stat(const struct stat& st, const std::filesystem::path& path) {
  if (!S_ISREG(st.st_mode)) {
    return refused(
        path, std::string("it is ") + file_type_name(st.st_mode) + ", not a regular file",
        std::string("remove it: ") + (S_ISDIR(st.st_mode) ? "rm -rf " : "rm ") + path.string());
  }
  if (st.st_uid != ::geteuid()) {
    return refused(path, "it is owned by " + owner_text(st.st_uid) + ", not by this user",
                   "remove it: rm " + path.string());
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return refused(path, "group or others can write it", "remove it: rm " + path.string());
  }
  return ok_status();
}

OpenedDir open_cache_dir(const Options& options, const std::filesystem::path& dir,
                         const char* what) {
  if (options.cache_disabled) return {CacheState::kDisabled, "KILN_CACHE_DISABLE is set"};
  OpenedDir opened;
  Status problem = ok_status();
  if (options.cache_read_only) {
    opened = {CacheState::kReadOnly, "KILN_CACHE_READ_ONLY is set"};
    // Nothing is created, but an existing directory others can write is
    // still refused: reading from it is the dangerous part.
    if (::access(dir.c_str(), F_OK) == 0) {
      problem = check_private_dir(options.cache_dir);
      if (problem.ok()) problem = check_private_dir(dir);
    }
  } else {
    problem = ensure_private_dir(dir);
    if (problem.ok()) problem = check_private_dir(options.cache_dir);
  }
  if (!problem.ok()) {
    opened = {CacheState::kRefused, problem.error().message};
    log_once(LogLevel::kWarn, std::string(what) + "-refused:" + dir.string(),
             std::string(what) + " off: " + problem.error().message);
  }
  return opened;
}

}  // namespace kiln::cache
