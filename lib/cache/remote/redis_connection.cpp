// The hiredis side of the remote tier; the only file that includes hiredis.
#include "remote/redis_connection.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#ifdef KILN_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#include "remote/envelope.hpp"

namespace kiln::remote {
namespace {

#ifdef KILN_HAVE_HIREDIS
timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::kString;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::kStatus;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      out.type = Reply::kNil;
  }
  return out;
}

// A server error reply in words: the server's own text, with the fix for
// the ones a user meets. kCorrupt when one key is at fault (WRONGTYPE),
// else a failure of the server or the login.
ErrorInfo server_error(const std::string& text, const std::string& where) {
  std::string message = "the remote cache " + where + " answered \"" + text + "\"";
  ErrorCode code = ErrorCode::kIo;
  if (text.rfind("NOAUTH", 0) == 0 || text.rfind("WRONGPASS", 0) == 0 ||
      text.find("invalid password") != std::string::npos ||
      text.find("invalid username-password") != std::string::npos) {
    message +=
        ": the password is wrong or missing; set it in KILN_REMOTE_CACHE "
        "(redis://:password@host) or KILN_REMOTE_CACHE_PASSWORD_FILE";
    code = ErrorCode::kInvalidArgument;
  } else if (text.rfind("WRONGTYPE", 0) == 0) {
    // One key's value, not the server: kCorrupt, like a damaged value, so
    // the tier refuses that entry and stays on.
    message +=
        ": the key holds a list, hash, set or other value that is not a string, which Kiln "
        "never writes";
    code = ErrorCode::kCorrupt;
  } else if (text.rfind("OOM", 0) == 0) {
    message +=
        ": the server is full (maxmemory with noeviction); raise maxmemory or "
        "set an eviction policy such as allkeys-lru";
  } else if (text.rfind("LOADING", 0) == 0 || text.rfind("BUSY", 0) == 0) {
    message += ": the server is not ready; Kiln retries later";
  }
  return make_error(code, message);
}

// Sets the socket's send and receive timeouts to what is left until
// `deadline`; false when nothing is left. Never 0, which means "no timeout".
bool arm_socket_deadline(int fd, std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  const timeval tv = to_timeval(left);
  return ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
         ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0;
}

// The size of the reply being read, as far as known: the length a bulk
// string announces in its header ("$200000000\r\n", before its bytes
// arrive), else what is buffered. Called after a read and before the
// reader parses it: the reader's cursor then lies on an item's first byte
// (a new reply, or an array's next element), never inside a header.
std::size_t announced_size(const redisReader& reader) {
  const std::size_t buffered = reader.len - reader.pos;
  if (buffered == 0 || reader.buf[reader.pos] != '$') return buffered;
  const char* start = reader.buf + reader.pos + 1;
  const void* end = std::memchr(start, '\r', buffered - 1);
  if (!end) return buffered;
  std::size_t size = 0;
  for (const char* p = start; p != end; ++p) {
    if (*p < '0' || *p > '9') return buffered;  // "$-1": nil
    if (size > kMaxValueBytes) break;           // large enough to refuse; no overflow
    size = size * 10 + static_cast<std::size_t>(*p - '0');
  }
  return std::max(size, buffered);
}
#endif

}  // namespace

#ifdef KILN_HAVE_HIREDIS
struct Connection::Handle {
  redisContext* context = nullptr;
  ~Handle() {
    if (context) redisFree(context);
  }
};
#else
struct Connection::Handle {};
#endif

Connection::Connection(const RemoteCacheConfig& config) : config_(config) {}
Connection::~Connection() = default;

bool Connection::connected() const {
  return handle_ != nullptr;
}
void Connection::close() {
  handle_.reset();
}

Status Connection::connect() {
#ifdef KILN_HAVE_HIREDIS
  auto handle = std::make_unique<Handle>();
  const timeval connect_tv = to_timeval(config_.connect_timeout);
  handle->context = config_.unix_path.empty()
                        ? redisConnectWithTimeout(config_.host.c_str(), config_.port, connect_tv)
                        : redisConnectUnixWithTimeout(config_.unix_path.c_str(), connect_tv);
  const std::string where = config_.redacted();
  if (!handle->context)
    return make_error(ErrorCode::kIo, "cannot allocate a connection to " + where);
  if (handle->context->err) {
    std::string why = handle->context->errstr;
    return make_error(ErrorCode::kIo, "cannot connect to the remote cache " + where + ": " + why +
                                          " (is the server running? the connect deadline is " +
                                          std::to_string(config_.connect_timeout.count()) +
                                          " ms, KILN_REMOTE_CACHE_CONNECT_TIMEOUT_MS)");
  }
  redisEnableKeepAlive(handle->context);
  handle_ = std::move(handle);
  if (!config_.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!config_.user.empty()) auth.push_back(config_.user);
    auth.push_back(config_.password);
    Result<Reply> r = run(auth);
    if (!r) {
      handle_.reset();
      return r.error();
    }
  }
  if (config_.db != 0) {
    Result<Reply> r = run({"SELECT", std::to_string(config_.db)});
    if (!r) {
      handle_.reset();
      return r.error();
    }
  }
  return ok_status();
#else
  return make_error(ErrorCode::kUnavailable,
                    "this Kiln was built without hiredis, so KILN_REMOTE_CACHE cannot be used; "
                    "install libhiredis-dev (scripts/setup.sh) and rebuild");
#endif
}

Result<Reply> Connection::run(const std::vector<std::string>& args) {
  if (!handle_) {
    if (Status c = connect(); !c.ok()) return c.error();
  }
#ifdef KILN_HAVE_HIREDIS
  // NOTES: hiredis's own blocking call (redisCommandArgv) waits up to the
  // socket timeout for each read, and a server that sends one byte a second
  // never lets it expire. The exchange is driven here instead: before each
  // write and read the socket timeout is set to what is left of one
  // deadline for the whole operation.
  const auto deadline = std::chrono::steady_clock::now() + config_.op_timeout;
  redisContext* context = handle_->context;
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  if (redisAppendCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data()) !=
      REDIS_OK)
    return failed(args[0]);
  for (int done = 0; !done;) {
    if (!arm_socket_deadline(context->fd, deadline)) return timed_out(args[0]);
    if (redisBufferWrite(context, &done) != REDIS_OK) return failed(args[0]);
  }
  void* raw = nullptr;
  for (;;) {
    if (redisGetReplyFromReader(context, &raw) != REDIS_OK) return failed(args[0]);
    if (raw) break;
    if (!arm_socket_deadline(context->fd, deadline)) return timed_out(args[0]);
    if (redisBufferRead(context) != REDIS_OK) return failed(args[0]);
    if (const std::size_t size = announced_size(*context->reader); size > kMaxValueBytes) {
      handle_.reset();  // the rest of the reply is never read
      return make_error(ErrorCode::kCorrupt,
                        "the remote cache " + config_.redacted() + " answered " + args[0] +
                            " with " + std::to_string(size) + " bytes, too large for a Kiln " +
                            "entry (the limit is " + std::to_string(kMaxValueBytes) +
                            " bytes); it was not read");
    }
  }
  std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(raw),
                                                     freeReplyObject);
  if (reply->type == REDIS_REPLY_ERROR)
    return server_error(std::string(reply->str, reply->len), config_.redacted());
  return convert(reply.get());
#else
  return make_error(ErrorCode::kUnavailable, "built without hiredis");
#endif
}

#ifdef KILN_HAVE_HIREDIS
ErrorInfo Connection::timed_out(const std::string& command) {
  handle_.reset();  // a reply may still arrive: the connection cannot be reused
  return make_error(ErrorCode::kTimeout,
                    "the remote cache " + config_.redacted() + " did not answer " + command +
                        " within " + std::to_string(config_.op_timeout.count()) +
                        " ms (KILN_REMOTE_CACHE_OP_TIMEOUT_MS): the server is slow or stuck");
}

ErrorInfo Connection::failed(const std::string& command) {
  const int err = handle_->context->err;
  const std::string why = handle_->context->errstr;
  // A read or write that waited out the socket timeout (set to the time
  // left) is the deadline passing.
  if (err == REDIS_ERR_IO && (why.find("Resource temporarily unavailable") != std::string::npos ||
                              why.find("timed out") != std::string::npos))
    return timed_out(command);
  handle_.reset();
  return make_error(ErrorCode::kIo, "the connection to the remote cache " + config_.redacted() +
                                        " failed during " + command + ": " + why);
}
#endif

}  // namespace kiln::remote
