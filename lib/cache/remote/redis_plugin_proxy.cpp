// Connection and hmac_sha256 in the `kiln` command (kiln_cache_redis_lazy):
// each call goes to the Redis plugin (redis_plugin.hpp), loaded on the
// first command sent, found as kiln/core/plugin.hpp says. Without the
// plugin every command fails with the loader's message and the fix, which
// the remote tier reports as it does an unreachable server.
#include "kiln/core/plugin.hpp"
#include "remote/envelope.hpp"
#include "remote/redis_plugin.hpp"

namespace kiln::remote {
namespace {

// The plugin's table, or why there is none (load_plugin keeps the answer).
Result<const RedisPluginApi*> api() {
  Result<void*> entry = load_plugin(Plugin::kRedis, reinterpret_cast<const void*>(&api));
  if (!entry) return entry.error();
  const RedisPluginApi* table = reinterpret_cast<const RedisPluginApi* (*)()>(*entry)();
  if (table->version != kRedisPluginVersion) {
    return make_error(ErrorCode::kUnavailable,
                      "the remote cache's Redis plugin has table version " +
                          std::to_string(table->version) + ", this kiln " +
                          std::to_string(kRedisPluginVersion) +
                          ": rebuild the kiln_redis_plugin target with this kiln");
  }
  return table;
}

}  // namespace

struct Connection::Handle {
  void* real = nullptr;  // the plugin's Connection
};

Connection::Connection(const RemoteCacheConfig& config) : config_(config) {}
// A handle exists only once the table was found (run()).
Connection::~Connection() {
  if (handle_) (*api())->destroy(handle_->real);
}

bool Connection::connected() const {
  return handle_ && (*api())->connected(handle_->real);
}

void Connection::close() {
  if (handle_) (*api())->close(handle_->real);
}

Result<Reply> Connection::run(const std::vector<std::string>& args) {
  Result<const RedisPluginApi*> table = api();
  if (!table) return table.error();
  if (!handle_) handle_ = std::make_unique<Handle>(Handle{(*table)->open(config_)});
  return (*table)->run(handle_->real, args);
}

// Only sealing a value to write, or opening one read, signs: without the
// plugin nothing is read or written (run() fails first), so the empty
// signature never reaches the server.
std::string hmac_sha256(const std::string& secret, const std::string& data) {
  Result<const RedisPluginApi*> table = api();
  return table ? (*table)->hmac(secret, data) : std::string();
}

}  // namespace kiln::remote
