// The remote cache tier: compiled artifacts and tuning records shared
// through a server speaking Redis's protocol (Redis, Valkey, KeyDB), behind
// the memory and local-disk tiers (docs/distributed.md).
//
// Lookups go memory -> disk -> remote; a remote hit is checked (envelope
// checksum, the key it was written under, the signature when a secret is
// set) and written to local disk, so the next process is warm without the
// network. Stores go to the server asynchronously through a bounded queue:
// tuning never waits on the network. Every wait is bounded (connect and op
// deadlines); a server that is down, slow, full or refuses the password
// gives one warning naming the cause and the tier steps aside for a while,
// tuning going on with the local tiers.
//
// Configured from the environment (RemoteCacheConfig::from_env):
//   KILN_REMOTE_CACHE            redis://[[user]:password@]host[:port][/db] | unix:///path
//   KILN_REMOTE_CACHE_PREFIX     key namespace (default "kiln:")
//   KILN_REMOTE_CACHE_MODE       read | write | readwrite (default)
//   KILN_REMOTE_CACHE_SECRET_FILE   HMAC-SHA256 key: entries are signed, unsigned
//                                or badly signed entries refused
//   KILN_REMOTE_CACHE_TRUST      "unsigned": load unsigned artifacts without a secret
//   KILN_REMOTE_CACHE_PASSWORD_FILE  the server password (else from the URL)
//   KILN_REMOTE_CACHE_CONNECT_TIMEOUT_MS (default 1000), KILN_REMOTE_CACHE_OP_TIMEOUT_MS
//   (default 2000), KILN_REMOTE_CACHE_RETRY_S (default 30: how long the tier
//   steps aside after a failure), KILN_REMOTE_CACHE_QUEUE (default 256 writes),
//   KILN_REMOTE_CACHE_FLUSH_MS (default 5000: how long `kiln` waits at exit
//   for queued writes)
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/cache/cache_tier.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/hash.hpp"

namespace kiln {

struct CachedArtifact;

enum class RemoteMode { kRead, kWrite, kReadWrite };

struct RemoteCacheConfig {
  std::string url;  // as given, for messages; the password is never in it (see redacted())
  std::string host;
  int port = 6379;
  std::string unix_path;  // set for unix:// URLs
  std::string user;
  std::string password;  // never printed, logged or traced
  int db = 0;
  std::string prefix = "kiln:";
  RemoteMode mode = RemoteMode::kReadWrite;
  std::string secret;  // HMAC key; empty: unsigned
  bool trust_unsigned = false;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds op_timeout{2000};
  std::chrono::seconds retry_after{30};
  std::chrono::milliseconds flush_timeout{5000};  // how long `kiln` waits for queued writes at exit
  std::size_t queue_limit = 256;

  // The URL with any password replaced by "***".
  std::string redacted() const;
  // Whether artifacts read from the server may be loaded.
  bool loads_artifacts() const { return !secret.empty() || trust_unsigned; }
  bool reads() const { return mode != RemoteMode::kWrite; }
  bool writes() const { return mode != RemoteMode::kRead; }

  // nullopt when KILN_REMOTE_CACHE is unset or empty; an error naming the
  // variable and the fix when a setting is malformed.
  static Result<std::optional<RemoteCacheConfig>> from_env();
  // Parses a redis:// or unix:// URL into host/port/db/user/password.
  static Result<RemoteCacheConfig> parse_url(const std::string& url);
};

struct RemoteCacheStats {
  std::uint64_t hits = 0;              // entries served (artifacts and records)
  std::uint64_t misses = 0;            // keys the server did not hold
  std::uint64_t refused = 0;           // entries that failed a check (checksum, key, signature)
  std::uint64_t unsigned_skipped = 0;  // artifacts not loaded: unsigned and not trusted
  std::uint64_t errors = 0;            // operations that failed (down, slow, full, auth)
  std::uint64_t skipped = 0;           // operations not tried while the tier stood aside
  std::uint64_t writes = 0;            // entries written
  std::uint64_t dropped = 0;           // writes dropped: queue full or server failing
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  nlohmann::json to_json() const;
};

// What the remote tier holds under one key kind (its keys' letter).
using RemoteKind = TierEntryKind;

// One of the cache tiers (kiln/cache/cache_tier.hpp): the built-in list
// holds global() when it is on.
class RemoteCache : public CacheTier {
 public:
  explicit RemoteCache(RemoteCacheConfig config);
  ~RemoteCache() override;  // flushes with the op deadline, then stops the writer
  RemoteCache(const RemoteCache&) = delete;
  RemoteCache& operator=(const RemoteCache&) = delete;

  // The process's tier, made from the environment on first use; nullptr
  // when KILN_REMOTE_CACHE is unset or malformed (one warning says why).
  static RemoteCache* global();

  const RemoteCacheConfig& config() const { return config_; }

  std::string name() const override { return "remote"; }
  // The verified payload stored under `key`, or nullopt (miss, refused,
  // server failing: counted, and warned about once per cause).
  std::optional<std::string> get(RemoteKind kind, const Hash128& key) override;
  // Queues a write (returns at once); dropped and counted when the queue
  // is full or the tier is read-only.
  void put(RemoteKind kind, const Hash128& key, std::string payload) override;
  // Waits until every queued write is done or `deadline` passes; returns
  // how many writes were still queued (0: all done).
  std::size_t flush(std::chrono::milliseconds deadline);

  // Artifacts: the payload every tier holds (encode_tier_artifact).
  static std::string encode_artifact(const CachedArtifact& artifact);
  static Result<CachedArtifact> decode_artifact(const std::string& payload);

  // Synchronous operations for `kiln cache remote` (ping, stats, ls,
  // verify): each bounded by the op deadline.
  Result<std::string> ping();  // the server's version
  // Every key under the prefix: kind, local key, size.
  struct Listed {
    RemoteKind kind;
    Hash128 key;
    std::string raw_key;  // without the prefix
    std::uint64_t bytes = 0;
    std::string problem;  // filled by verify: why the entry is refused
  };
  Result<std::vector<Listed>> list(bool verify);
  // Reads one entry synchronously with its full verdict (for verify/pull).
  Result<std::string> fetch(RemoteKind kind, const Hash128& key);
  // Writes one entry synchronously (for push).
  Status write_now(RemoteKind kind, const Hash128& key, const std::string& payload);

  RemoteCacheStats stats() const;
  // "connected", "not connected yet", or why the tier stands aside.
  std::string state() const;

  struct Impl;  // lib/cache/remote/remote_cache.cpp

 private:
  RemoteCacheConfig config_;
  std::unique_ptr<Impl> impl_;
};

// Whether this build has the remote tier (hiredis and OpenSSL found).
bool remote_cache_built();

}  // namespace kiln
