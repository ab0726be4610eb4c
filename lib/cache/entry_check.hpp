// Opens and checks one file of the artifact cache, an index entry or a
// program: the ownership and permission checks (dir_safety) and the format
// checks (entry_format), in the order a lookup needs them. Shared by
// lookups and by `kiln cache verify`, so the two can never disagree about
// what is healthy.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "entry_format.hpp"
#include "kiln/cache/artifact_cache.hpp"

namespace kiln::cache {

enum class EntryStatus { kOk, kMissing, kRefused, kCorrupt, kIoError };

struct EntryCheck {
  EntryStatus status = EntryStatus::kMissing;
  std::string problem;       // why not kOk, naming the path and the fix
  std::uint64_t device = 0;  // identity of the file that was read, so a
  std::uint64_t inode = 0;   // discard never removes a newer replacement
};

// What a healthy file holds.
struct EntryContents {
  Hash128 program;      // the program an index entry names; a program's own name
  nlohmann::json meta;  // an index entry's metadata (a program has none)
  std::string payload;  // a program's bytes (an index entry has none)
};

// Reads `path` (the `kind` file named `name`) into `*out` when healthy.
// `touch` refreshes its last-use time on success (the LRU clock). Anything
// but a regular file (a FIFO, a device, a link) and a file over `max_bytes`
// is kRefused unread.
EntryCheck read_entry(const std::filesystem::path& path, EntryKind kind, const Hash128& name,
                      bool touch, std::uint64_t max_bytes, EntryContents* out);

// The program an index entry names, from its header alone (no checksum):
// what prune counts references by, and how a repair finds the entries
// naming a program it discarded. `st` is the file that was read (fstat), so
// a removal can make sure it takes that file and no newer replacement.
// nullopt when unreadable or not a version 2 index entry.
struct IndexHeader {
  Hash128 program;
  struct stat st {};
};
std::optional<IndexHeader> peek_index(const std::filesystem::path& path);

// Removes `path` only while it is still the file (`device`, `inode`) that
// was read: a writer may have renamed a good replacement into place since.
// Whether it was removed.
bool remove_if_unchanged(const std::filesystem::path& path, std::uint64_t device,
                         std::uint64_t inode);

}  // namespace kiln::cache
