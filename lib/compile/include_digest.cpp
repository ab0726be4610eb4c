#include "include_digest.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>

#include "kiln/core/input_file.hpp"
#include "kiln/core/log.hpp"

namespace kiln::internal {

namespace {

// Bounds that keep a pathological include dir (a whole /usr/include) from
// stalling every key; past them the digest covers names and sizes only.
constexpr std::size_t kMaxFiles = 20000;
constexpr std::uintmax_t kMaxFileBytes = 16u << 20;

struct Stamp {
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;
  Hash128 content;
};

std::mutex g_mutex;
std::map<std::string, Stamp> g_memo;  // absolute path -> last seen stamp

Hash128 content_hash(const std::filesystem::path& path, std::uintmax_t size,
                     std::int64_t mtime_ns) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_memo.find(path.string());
    if (it != g_memo.end() && it->second.size == size && it->second.mtime_ns == mtime_ns) {
      return it->second.content;
    }
  }
  // A bounded read that never waits: an include directory may hold a FIFO
  // or a link into /proc, which reports size 0 and can block forever. What
  // cannot be read whole counts by its name, size and time alone.
  Hash128 h;
  Result<std::string> bytes =
      size <= kMaxFileBytes ? read_input_file(path, "header", kMaxFileBytes)
                            : Result<std::string>(make_error(ErrorCode::kInvalidArgument, ""));
  if (bytes)
    h = hash128(*bytes);
  else
    h = Hasher().field("unread").field(static_cast<std::int64_t>(size)).field(mtime_ns).finish();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_memo[path.string()] = Stamp{size, mtime_ns, h};
  return h;
}

}  // namespace

Hash128 include_dirs_digest(const std::vector<std::string>& dirs) {
  Hasher h;
  h.field("kiln-include-dirs-v1");
  for (const auto& dir : dirs) {
    h.field(dir);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    std::vector<std::filesystem::path> files;
    for (auto it = std::filesystem::recursive_directory_iterator(
             dir, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(it->path());
      if (files.size() > kMaxFiles) break;
    }
    if (files.size() > kMaxFiles) {
      log_once(LogLevel::kWarn, "include-digest:" + dir,
               "include directory " + dir + " holds more than " + std::to_string(kMaxFiles) +
                   " files; only the first are folded into artifact keys");
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      struct stat st {};
      if (::stat(file.c_str(), &st) != 0) continue;
      std::int64_t mtime_ns =
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      h.field(std::filesystem::relative(file, dir, ec).string());
      h.field(content_hash(file, static_cast<std::uintmax_t>(st.st_size), mtime_ns));
    }
  }
  return h.finish();
}

}  // namespace kiln::internal
