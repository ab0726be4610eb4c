// The value stored under a remote key: what it is, the key it was written
// for, its payload, a checksum, and (with a secret) an HMAC-SHA256 over all
// of it. Read back, a value is refused when it is truncated, corrupted,
// written for another key (a value copied or renamed onto this key), or
// signed with another secret; an unsigned value is refused when a secret
// is set (someone without the secret wrote it).
#pragma once

#include <cstddef>
#include <string>

#include "kiln/cache/remote_cache.hpp"

namespace kiln::remote {

// The largest value Kiln writes or reads under a key: the tuning file's
// limit (docs/caching.md), far above any compiled kernel. A larger value
// is refused from the size its reply announces, before it is read, and is
// never written.
constexpr std::size_t kMaxValueBytes = std::size_t{64} << 20;

std::string seal(RemoteKind kind, const Hash128& key, const std::string& payload,
                 const std::string& secret);

struct Opened {
  std::string payload;
  bool is_signed = false;
};
// kCorrupt naming what failed: the size (too short, or over
// kMaxValueBytes), the magic, the checksum, the key, the signature (or its
// absence when a secret is set).
Result<Opened> open(const std::string& value, RemoteKind kind, const Hash128& key,
                    const std::string& secret);

// HMAC-SHA256 of `data` under `secret` (32 raw bytes); the one place that
// calls OpenSSL.
std::string hmac_sha256(const std::string& secret, const std::string& data);

}  // namespace kiln::remote
