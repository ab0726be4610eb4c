// A folder kept beside a tuning cache's records (remembered failures,
// tuning journals): writable where the cache is, read-only where it is,
// and none where the cache has no directory or is off.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "kiln/cache/tuning_cache.hpp"

namespace kiln::internal {

struct BesideCache {
  std::filesystem::path dir;
  bool read_only = false;
};

inline std::optional<BesideCache> beside_cache(const TuningCache& cache, std::string_view name) {
  if (cache.dir().empty()) return std::nullopt;
  switch (cache.state()) {
    case CacheState::kReady:
      return BesideCache{cache.dir() / name, false};
    case CacheState::kReadOnly:
      return BesideCache{cache.dir() / name, true};
    default:
      return std::nullopt;
  }
}

}  // namespace kiln::internal
