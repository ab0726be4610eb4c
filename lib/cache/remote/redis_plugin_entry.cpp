// The Redis plugin's one exported symbol (redis_plugin.hpp).
#include "remote/envelope.hpp"
#include "remote/redis_plugin.hpp"

namespace kiln::remote {
namespace {

const RedisPluginApi kApi = {
    kRedisPluginVersion,
    [](const RemoteCacheConfig& config) -> void* { return new Connection(config); },
    [](void* c) { delete static_cast<Connection*>(c); },
    [](void* c, const std::vector<std::string>& args) {
      return static_cast<Connection*>(c)->run(args);
    },
    [](const void* c) { return static_cast<const Connection*>(c)->connected(); },
    [](void* c) { static_cast<Connection*>(c)->close(); },
    [](const std::string& secret, const std::string& data) { return hmac_sha256(secret, data); },
};

}  // namespace
}  // namespace kiln::remote

extern "C" __attribute__((visibility("default"))) const kiln::remote::RedisPluginApi*
kiln_redis_plugin() {
  return &kiln::remote::kApi;
}
