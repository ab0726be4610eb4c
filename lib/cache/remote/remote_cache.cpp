// The remote tier (kiln/cache/remote_cache.hpp): synchronous bounded reads,
// asynchronous writes through a bounded queue, and a tier that steps aside
// for KILN_REMOTE_CACHE_RETRY_S after the server fails, so a dead or slow
// server costs one deadline per retry period, not one per lookup.
#include "kiln/cache/remote_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/core/log.hpp"
#include "remote/envelope.hpp"
#include "remote/redis_connection.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;

nlohmann::json RemoteCacheStats::to_json() const {
  return {{"hits", hits},
          {"misses", misses},
          {"refused", refused},
          {"unsigned_skipped", unsigned_skipped},
          {"errors", errors},
          {"skipped", skipped},
          {"writes", writes},
          {"dropped", dropped},
          {"bytes_read", bytes_read},
          {"bytes_written", bytes_written}};
}

bool remote_cache_built() {
#if defined(KILN_HAVE_HIREDIS) && defined(KILN_HAVE_OPENSSL)
  return true;
#else
  return false;
#endif
}

struct RemoteCache::Impl {
  explicit Impl(const RemoteCacheConfig& config) : reader(config), writer_connection(config) {}

  struct Write {
    RemoteKind kind;
    Hash128 key;
    std::string value;
  };

  std::mutex read_mutex;  // guards `reader`
  remote::Connection reader;

  std::mutex queue_mutex;  // guards everything down to `writer`
  std::condition_variable queue_changed;
  std::deque<Write> queue;
  bool writing = false;  // the writer holds a write it has taken off the queue
  bool stopping = false;
  pid_t owner = 0;  // the process that started the writer (a forked child starts its own)
  std::thread writer;
  remote::Connection writer_connection;  // used by the writer thread only

  std::mutex state_mutex;  // guards the next two
  Clock::time_point aside_until{};
  std::string aside_reason;

  std::atomic<std::uint64_t> hits{0}, misses{0}, refused{0}, unsigned_skipped{0}, errors{0},
      skipped{0}, writes{0}, dropped{0}, bytes_read{0}, bytes_written{0};
};

namespace {

std::string full_key(const RemoteCacheConfig& config, RemoteKind kind, const Hash128& key) {
  return config.prefix + static_cast<char>(kind) + ":" + key.hex();
}

// The redis-cli command that deletes `name` on this server: a bare
// `redis-cli DEL` would reach localhost:6379 db 0, not the server the
// entry is on. The password is never printed; --askpass prompts for it.
std::string del_command(const RemoteCacheConfig& config, const std::string& name) {
  std::string cmd = "redis-cli";
  if (!config.unix_path.empty()) {
    cmd += " -s " + config.unix_path;
  } else {
    cmd += " -h " + config.host + " -p " + std::to_string(config.port);
  }
  if (config.db != 0) cmd += " -n " + std::to_string(config.db);
  if (!config.user.empty()) cmd += " --user " + config.user;
  if (!config.password.empty()) cmd += " --askpass";
  return cmd + " DEL " + name;
}

}  // namespace

RemoteCache::RemoteCache(RemoteCacheConfig config)
    : config_(std::move(config)), impl_(std::make_unique<Impl>(config_)) {}

RemoteCache::~RemoteCache() {
  flush(config_.op_timeout);
  {
    std::lock_guard<std::mutex> lock(impl_->queue_mutex);
    impl_->stopping = true;
  }
  impl_->queue_changed.notify_all();
  if (impl_->writer.joinable()) {
    if (impl_->owner == getpid())
      impl_->writer.join();
    else
      impl_->writer.detach();  // inherited through fork: the thread does not exist here
  }
}

RemoteCache* RemoteCache::global() {
  // Leaked on purpose: the writer may still be busy while static objects
  // are destroyed at exit; `kiln tune` flushes explicitly before it returns.
  static RemoteCache* tier = []() -> RemoteCache* {
    Result<std::optional<RemoteCacheConfig>> config = RemoteCacheConfig::from_env();
    if (!config) {
      KILN_LOG(kWarn) << config.error().message << "; the remote cache tier is off";
      return nullptr;
    }
    if (!config->has_value()) return nullptr;
    if (!remote_cache_built()) {
      KILN_LOG(kWarn) << "KILN_REMOTE_CACHE is set but this Kiln was built without hiredis and "
                         "OpenSSL; install libhiredis-dev and libssl-dev (scripts/setup.sh) and "
                         "rebuild. The remote cache tier is off";
      return nullptr;
    }
    return new RemoteCache(std::move(**config));
  }();
  return tier;
}

namespace {

// Whether the tier stands aside now (after a failure, for retry_after).
bool standing_aside(RemoteCache::Impl& impl) {
  std::lock_guard<std::mutex> lock(impl.state_mutex);
  return Clock::now() < impl.aside_until;
}

// A failure of the server or the connection: counted, warned about once per
// kind of cause, and the tier steps aside for a while.
void server_failed(RemoteCache::Impl& impl, const RemoteCacheConfig& config,
                   const ErrorInfo& error) {
  impl.errors++;
  {
    std::lock_guard<std::mutex> lock(impl.state_mutex);
    impl.aside_until = Clock::now() + config.retry_after;
    impl.aside_reason = error.message;
  }
  log_once(LogLevel::kWarn, std::string("remote-cache-failed:") + error_code_name(error.code),
           error.message +
               "; tuning goes on with the local caches (the remote tier is retried "
               "after " +
               std::to_string(config.retry_after.count()) + " s)");
}

// Why a value over the limit is not written (no reader would take it).
std::string unwritable(const Hash128& key, std::size_t size) {
  return "remote entry " + key.hex() + " is not written: " + std::to_string(size) +
         " bytes is over the " + std::to_string(remote::kMaxValueBytes) +
         "-byte limit of a remote entry (envelope.hpp)";
}

// A server error reply to a write (a full server): the write is lost, reads go on.
bool is_reply_error(const ErrorInfo& error) {
  return error.code == ErrorCode::kIo && error.message.find(" answered ") != std::string::npos;
}

}  // namespace

std::optional<std::string> RemoteCache::get(RemoteKind kind, const Hash128& key) {
  Impl& impl = *impl_;
  if (!config_.reads()) return std::nullopt;
  if (kind == RemoteKind::kArtifact && !config_.loads_artifacts()) {
    impl.unsigned_skipped++;
    log_once(LogLevel::kInfo, "remote-cache-unsigned",
             "remote artifacts are not loaded: no KILN_REMOTE_CACHE_SECRET_FILE to verify them "
             "(set one, or KILN_REMOTE_CACHE_TRUST=unsigned to load unsigned machine code); "
             "tuning records are still read");
    return std::nullopt;
  }
  if (standing_aside(impl)) {
    impl.skipped++;
    return std::nullopt;
  }
  Result<std::string> value = fetch(kind, key);
  if (!value) return std::nullopt;
  return std::move(*value);
}

namespace {

// An entry that cannot be loaded: counted and warned about once; the tier
// stays on (one bad value is not a failing server).
ErrorInfo entry_refused(RemoteCache::Impl& impl, ErrorInfo error) {
  impl.refused++;
  log_once(LogLevel::kWarn, "remote-cache-refused",
           error.message +
               " (counted in `kiln cache remote stats`; nothing refused is "
               "loaded, the entry is compiled or tuned again)");
  return error;
}

}  // namespace

Result<std::string> RemoteCache::fetch(RemoteKind kind, const Hash128& key) {
  Impl& impl = *impl_;
  const std::string name = full_key(config_, kind, key);
  Result<remote::Reply> reply = [&] {
    std::lock_guard<std::mutex> lock(impl.read_mutex);
    return impl.reader.run({"GET", name});
  }();
  if (!reply && reply.error().code == ErrorCode::kCorrupt) {
    // The value under this key (not the server) is at fault: a write of
    // the entry replaces it.
    return entry_refused(
        impl,
        make_error(ErrorCode::kCorrupt,
                   "remote entry " + name + " refused: " + reply.error().message + "; remove it (" +
                       del_command(config_, name) + ") or let the next write replace it"));
  }
  if (!reply) {
    server_failed(impl, config_, reply.error());
    return reply.error();
  }
  if (reply->type != remote::Reply::kString) {
    impl.misses++;
    return make_error(ErrorCode::kNotFound, "the remote cache has no entry " + key.hex());
  }
  impl.bytes_read += reply->text.size();
  Result<remote::Opened> opened = remote::open(reply->text, kind, key, config_.secret);
  if (!opened) return entry_refused(impl, opened.error());
  impl.hits++;
  return std::move(opened->payload);
}

namespace {

void writer_loop(RemoteCache::Impl& impl, const RemoteCacheConfig& config) {
  std::unique_lock<std::mutex> lock(impl.queue_mutex);
  for (;;) {
    impl.queue_changed.wait(lock, [&] { return impl.stopping || !impl.queue.empty(); });
    if (impl.queue.empty()) return;  // stopping with nothing left
    RemoteCache::Impl::Write write = std::move(impl.queue.front());
    impl.queue.pop_front();
    impl.writing = true;
    lock.unlock();
    if (standing_aside(impl)) {
      impl.dropped++;
    } else {
      const std::uint64_t size = write.value.size();
      Result<remote::Reply> reply =
          impl.writer_connection.run({"SET", full_key(config, write.kind, write.key), write.value});
      if (reply) {
        impl.writes++;
        impl.bytes_written += size;
      } else if (is_reply_error(reply.error())) {
        impl.dropped++;
        impl.errors++;
        log_once(LogLevel::kWarn, "remote-cache-write-refused",
                 reply.error().message + "; remote writes are dropped, tuning goes on");
      } else {
        impl.dropped++;
        server_failed(impl, config, reply.error());
      }
    }
    lock.lock();
    impl.writing = false;
    impl.queue_changed.notify_all();
  }
}

}  // namespace

void RemoteCache::put(RemoteKind kind, const Hash128& key, std::string payload) {
  Impl& impl = *impl_;
  if (!config_.writes()) return;
  std::string value = remote::seal(kind, key, payload, config_.secret);
  if (value.size() > remote::kMaxValueBytes) {
    // No reader would take it (see envelope.hpp).
    impl.dropped++;
    log_once(LogLevel::kWarn, "remote-cache-too-large",
             unwritable(key, value.size()) + " (the local caches hold it)");
    return;
  }
  std::lock_guard<std::mutex> lock(impl.queue_mutex);
  if (impl.owner != getpid()) {
    // First write of this process (or of a forked child, which inherits the
    // parent's queue but not its thread): start a writer of our own.
    if (impl.writer.joinable()) impl.writer.detach();
    impl.queue.clear();
    impl.writing = false;
    impl.writer_connection.close();
    impl.owner = getpid();
    impl.writer = std::thread(writer_loop, std::ref(impl), std::cref(config_));
  }
  if (impl.queue.size() >= config_.queue_limit) {
    impl.dropped++;
    log_once(LogLevel::kWarn, "remote-cache-queue-full",
             "the remote cache write queue is full (" + std::to_string(config_.queue_limit) +
                 " writes, KILN_REMOTE_CACHE_QUEUE): the server is slower than Kiln produces "
                 "entries; writes are dropped until it catches up");
    return;
  }
  impl.queue.push_back({kind, key, std::move(value)});
  impl.queue_changed.notify_all();
}

std::size_t RemoteCache::flush(std::chrono::milliseconds deadline) {
  Impl& impl = *impl_;
  std::unique_lock<std::mutex> lock(impl.queue_mutex);
  if (impl.owner != getpid()) return 0;  // nothing of ours queued
  impl.queue_changed.wait_for(lock, deadline, [&] { return impl.queue.empty() && !impl.writing; });
  const std::size_t left = impl.queue.size() + (impl.writing ? 1 : 0);
  if (left != 0)
    KILN_LOG(kWarn) << left << " remote cache write(s) not done within " << deadline.count()
                    << " ms; they are dropped (the local caches hold them)";
  return left;
}

std::string RemoteCache::encode_artifact(const CachedArtifact& artifact) {
  return encode_tier_artifact(artifact);
}

Result<CachedArtifact> RemoteCache::decode_artifact(const std::string& payload) {
  return decode_tier_artifact(payload);
}

Result<std::string> RemoteCache::ping() {
  std::lock_guard<std::mutex> lock(impl_->read_mutex);
  Result<remote::Reply> pong = impl_->reader.run({"PING"});
  if (!pong) return pong.error();
  Result<remote::Reply> info = impl_->reader.run({"INFO", "server"});
  if (!info) return info.error();
  std::string version = "unknown";
  if (const auto at = info->text.find("redis_version:"); at != std::string::npos) {
    const auto end = info->text.find_first_of("\r\n", at);
    version = info->text.substr(at + 14, end - at - 14);
  }
  return version;
}

namespace {

// `text` as a SCAN MATCH pattern that matches only itself: a prefix of
// "team?:" or "kiln[1]:" would otherwise list other prefixes' keys.
std::string glob_literal(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

Result<std::vector<RemoteCache::Listed>> RemoteCache::list(bool verify) {
  std::vector<Listed> out;
  std::string cursor = "0";
  do {
    Result<remote::Reply> page = [&] {
      std::lock_guard<std::mutex> lock(impl_->read_mutex);
      return impl_->reader.run(
          {"SCAN", cursor, "MATCH", glob_literal(config_.prefix) + "*", "COUNT", "1000"});
    }();
    if (!page) return page.error();
    if (page->type != remote::Reply::kArray || page->elements.size() != 2)
      return make_error(ErrorCode::kIo, "the remote cache answered SCAN with an unexpected reply");
    cursor = page->elements[0].text;
    for (const auto& element : page->elements[1].elements) {
      // The pattern is escaped; the prefix is checked again all the same.
      if (element.text.rfind(config_.prefix, 0) != 0) continue;
      Listed item;
      item.raw_key = element.text.substr(config_.prefix.size());
      std::optional<Hash128> key;
      if (item.raw_key.size() == 34 && item.raw_key[1] == ':' &&
          (item.raw_key[0] == 'a' || item.raw_key[0] == 't'))
        key = Hash128::from_hex(std::string_view(item.raw_key).substr(2));
      if (!key) continue;  // not a Kiln key (another tool under the same prefix)
      item.kind = static_cast<RemoteKind>(item.raw_key[0]);
      item.key = *key;
      Result<remote::Reply> size = [&] {
        std::lock_guard<std::mutex> lock(impl_->read_mutex);
        return impl_->reader.run({"STRLEN", element.text});
      }();
      if (!size && size.error().code == ErrorCode::kCorrupt) {
        // A key Kiln did not write (WRONGTYPE): broken for verify, left
        // out of ls and stats with one warning naming it.
        const std::string problem =
            size.error().message + "; remove it: " + del_command(config_, element.text);
        if (!verify) {
          log_once(LogLevel::kWarn, "remote-cache-list-skipped",
                   "remote key " + element.text + " is skipped: " + problem);
          continue;
        }
        item.problem = problem;
        out.push_back(std::move(item));
        continue;
      }
      if (!size) return size.error();
      item.bytes = static_cast<std::uint64_t>(size->integer);
      if (verify) {
        Result<std::string> entry = fetch(item.kind, item.key);
        if (!entry) {
          if (entry.error().code != ErrorCode::kCorrupt) return entry.error();
          item.problem = entry.error().message;
        } else if (item.kind == RemoteKind::kArtifact) {
          Result<CachedArtifact> artifact = decode_artifact(*entry);
          if (!artifact) item.problem = artifact.error().message;
        }
      }
      out.push_back(std::move(item));
    }
  } while (cursor != "0");
  return out;
}

Status RemoteCache::write_now(RemoteKind kind, const Hash128& key, const std::string& payload) {
  const std::string value = remote::seal(kind, key, payload, config_.secret);
  if (value.size() > remote::kMaxValueBytes)
    return make_error(ErrorCode::kInvalidArgument, unwritable(key, value.size()));
  std::lock_guard<std::mutex> lock(impl_->read_mutex);
  Result<remote::Reply> reply = impl_->reader.run({"SET", full_key(config_, kind, key), value});
  if (!reply) return reply.error();
  impl_->writes++;
  impl_->bytes_written += value.size();
  return ok_status();
}

RemoteCacheStats RemoteCache::stats() const {
  const Impl& i = *impl_;
  return {i.hits,    i.misses, i.refused, i.unsigned_skipped, i.errors,
          i.skipped, i.writes, i.dropped, i.bytes_read,       i.bytes_written};
}

std::string RemoteCache::state() const {
  {
    std::lock_guard<std::mutex> lock(impl_->state_mutex);
    if (Clock::now() < impl_->aside_until) return "standing aside: " + impl_->aside_reason;
  }
  std::lock_guard<std::mutex> lock(impl_->read_mutex);
  return impl_->reader.connected() ? "connected" : "not connected yet";
}

}  // namespace kiln
