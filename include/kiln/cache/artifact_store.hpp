// The compile stage's Artifact (kiln/compile/compile.hpp) in the artifact cache
// (kiln/cache/artifact_cache.hpp). The cache stays generic (bytes + JSON); this
// header is the one place that knows an entry's JSON is Artifact::to_json,
// so the compile engine and the tuner store and load through it.
#pragma once

#include <optional>
#include <string>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/compile/compile.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

// The entry the cache stores for `artifact`: its bytes and its metadata.
inline CachedArtifact to_cached(const Artifact& artifact) {
  CachedArtifact c;
  if (artifact.binary) c.binary = *artifact.binary;
  c.meta = artifact.to_json();
  return c;
}

// The Artifact an entry holds; kCorrupt (naming the field) when its
// metadata is not an Artifact's of this version or does not match the bytes.
inline Result<Artifact> from_cached(const CachedArtifact& cached) {
  try {
    return Artifact::from_json(cached.meta, cached.binary);
  } catch (const Error& e) {
    return e.info();
  }
}

// Looks `key` up and decodes it. An entry whose metadata does not decode is
// a miss (logged once): the caller recompiles and store_artifact replaces it.
inline std::optional<Artifact> lookup_artifact(ArtifactCache& cache, const Hash128& key) {
  std::shared_ptr<const CachedArtifact> hit = cache.lookup(key);
  if (!hit) return std::nullopt;
  Result<Artifact> artifact = from_cached(*hit);
  if (!artifact) {
    log_once(LogLevel::kWarn, "artifact-meta:" + key.hex(),
             "cached artifact " + key.hex() + " not used: " + artifact.error().message);
    return std::nullopt;
  }
  return std::move(*artifact);
}

// Stores `artifact` under its own key.
inline Result<StoreOutcome> store_artifact(ArtifactCache& cache, const Artifact& artifact) {
  return cache.store(artifact.key, to_cached(artifact));
}

}  // namespace kiln
