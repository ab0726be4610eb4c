// A digest of the files under a unit's include directories, so that editing
// a header on disk changes the artifact key (a stale binary is never served).
#pragma once

#include <string>
#include <vector>

#include "kiln/core/hash.hpp"

namespace kiln::internal {

// Relative path and content hash of every regular file under each directory
// (recursively), in a stable order. Content hashes are memoised per process
// by (path, size, modification time), so a key costs one stat per file.
// A missing directory contributes its name only (the compile will fail and
// say so). Thread-safe.
Hash128 include_dirs_digest(const std::vector<std::string>& dirs);

}  // namespace kiln::internal
