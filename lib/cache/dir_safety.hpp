// Who may have written what the cache is about to trust. A cached CUBIN is
// code that will run, so a directory other users can write, or an entry
// another user owns, is refused rather than read.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/options.hpp"

namespace kiln::cache {

// Creates `dir` and its missing parents with mode 0700, then checks `dir`
// with check_private_dir. Existing parents are left as they are.
[[nodiscard]] Status ensure_private_dir(const std::filesystem::path& dir);

// kInvalidArgument naming the path and the fix when `dir` is not a
// directory owned by this user, or group or others can write it.
[[nodiscard]] Status check_private_dir(const std::filesystem::path& dir);

// The same checks for an entry file the caller has opened and fstat'ed.
[[nodiscard]] Status check_entry_stat(const struct stat& st, const std::filesystem::path& path);

// The state a cache directory `dir` under options.cache_dir opens in:
// disabled, read-only (creates nothing, still refuses an unsafe existing
// directory) or ready (creates it 0700); refused, with a warning naming
// `what`, the path and the fix, when a safety check fails.
struct OpenedDir {
  CacheState state = CacheState::kReady;
  std::string reason;
};
OpenedDir open_cache_dir(const Options& options, const std::filesystem::path& dir,
                         const char* what);

}  // namespace kiln::cache
