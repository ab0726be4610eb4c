// The Redis plugin (libkiln_redis.so): hiredis and OpenSSL, loaded by the
// `kiln` command when the remote tier is first used, so that a kiln run
// without KILN_REMOTE_CACHE maps neither (kiln/core/plugin.hpp). The
// plugin holds the real Connection and hmac_sha256 (redis_connection.cpp,
// hmac.cpp, built with hidden symbols so they never meet the proxy's
// namesakes); the program holds a proxy Connection (redis_plugin_proxy.cpp)
// that calls them through this table.
#pragma once

#include <string>
#include <vector>

#include "remote/redis_connection.hpp"

namespace kiln::remote {

// Bump kRedisPluginVersion on any change to the table: a plugin of
// another build is refused rather than called through a wrong layout.
constexpr int kRedisPluginVersion = 1;

struct RedisPluginApi {
  int version;
  void* (*open)(const RemoteCacheConfig& config);  // a new Connection
  void (*destroy)(void* connection);
  Result<Reply> (*run)(void* connection, const std::vector<std::string>& args);
  bool (*connected)(const void* connection);
  void (*close)(void* connection);
  std::string (*hmac)(const std::string& secret, const std::string& data);
};

}  // namespace kiln::remote
