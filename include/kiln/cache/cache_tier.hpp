// A cache tier behind the local disk: somewhere compiled artifacts and
// tuning records are kept beyond this machine's cache directory (the remote
// tier on a Redis server, kiln/cache/remote_cache.hpp, is one). The
// artifact and tuning caches ask every tier in cache_tiers() after a local
// disk miss and hand every tier what they store; they never name one.
//
// A tier only keeps bytes: the caches encode what they put (an artifact by
// encode_tier_artifact, a record as its JSON) and check what they get back
// the way they check their own files (an artifact must decode, a record
// must parse, carry the id it was asked for and match the identity in use),
// so a tier that returns garbage costs a warning and a miss, never a wrong
// kernel. A hit is written to local disk: the next process is warm without
// the tier. A tier whose bytes cross a trust boundary seals them itself, as
// the remote tier does (lib/cache/remote/envelope.cpp: checksum, the key it
// was written for, an HMAC signature).
//
// A new tier is one class plus one line: one register_cache_tier call for
// an application's, or one line in the built-in list of
// lib/cache/cache_tiers.cpp (docs/architecture.md, "Extending Kiln";
// tests/cache/extending_tier_test.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/hash.hpp"

namespace kiln {

struct CachedArtifact;

// What a tier holds under one key: a compiled artifact (by artifact key) or
// a tuning record (by record id). The letters are the remote tier's key
// names ("kiln:a:<hex>").
enum class TierEntryKind : char { kArtifact = 'a', kRecord = 't' };

class CacheTier {
 public:
  virtual ~CacheTier() = default;
  // One word for messages and ArtifactCacheStats::tier_hits ("remote").
  virtual std::string name() const = 0;
  // The payload put under (kind, key), or nullopt: not held, or the tier
  // cannot answer now (it says why itself, once). Called on tuning's
  // threads: bounded in time, and it must not throw.
  virtual std::optional<std::string> get(TierEntryKind kind, const Hash128& key) = 0;
  // Keeps `payload` under (kind, key). Called on tuning's threads after the
  // local store: it should not wait on a network (the remote tier queues),
  // and it must not throw; a payload it cannot keep is dropped.
  virtual void put(TierEntryKind kind, const Hash128& key, std::string payload) = 0;
};

// Adds `tier` behind the local disk, after the tiers registered before it
// (the built-in ones first); asked by every artifact and tuning cache of
// the process from then on. Thread-safe. Throws kiln::Error
// (kInvalidArgument) for a null tier, an empty name, or a name already
// registered (a tier is never replaced: caches may be using it).
void register_cache_tier(std::shared_ptr<CacheTier> tier);

// Every tier in the order lookups ask them: the built-in ones that are on
// (the remote tier when KILN_REMOTE_CACHE is set: RemoteCache::global()),
// then the registered ones. The first call makes the built-in ones from the
// environment.
std::vector<std::shared_ptr<CacheTier>> cache_tiers();

// An artifact as every tier holds it: the size of its metadata (8 bytes,
// little-endian), the metadata JSON, the binary.
std::string encode_tier_artifact(const CachedArtifact& artifact);
// kCorrupt naming what is wrong when `payload` is not such an encoding.
Result<CachedArtifact> decode_tier_artifact(const std::string& payload);

}  // namespace kiln
