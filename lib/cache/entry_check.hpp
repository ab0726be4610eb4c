// Opens and checks one artifact entry file: the ownership and permission
// checks (dir_safety) and the format checks (entry_format), in the order a
// lookup needs them. Shared by lookups and by `kiln cache verify`, so the
// two can never disagree about what is healthy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "kiln/cache/artifact_cache.hpp"

namespace kiln::cache {

enum class EntryStatus { kOk, kMissing, kRefused, kCorrupt, kIoError };

struct EntryCheck {
  EntryStatus status = EntryStatus::kMissing;
  std::string problem;       // why not kOk, naming the path and the fix
  std::uint64_t device = 0;  // identity of the file that was read, so a
  std::uint64_t inode = 0;   // discard never removes a newer replacement
};

// Reads `path` (entry of `key`) into `*out` when healthy. `touch` refreshes
// its last-use time on success (the LRU clock). Anything but a regular file
// (a FIFO, a device, a link) and a file over `max_bytes` is kRefused unread.
EntryCheck read_entry(const std::filesystem::path& path, const Hash128& key, bool touch,
                      std::uint64_t max_bytes, CachedArtifact* out);

}  // namespace kiln::cache
