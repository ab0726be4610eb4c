// The hiredis side of the remote tier; the only file that includes hiredis.
#include "remote/redis_connection.hpp"

#include <sys/time.h>

#include <cstring>

#ifdef KILN_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

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
// the ones a user meets.
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
  } else if (text.rfind("OOM", 0) == 0) {
    message +=
        ": the server is full (maxmemory with noeviction); raise maxmemory or "
        "set an eviction policy such as allkeys-lru";
  } else if (text.rfind("LOADING", 0) == 0 || text.rfind("BUSY", 0) == 0) {
    message += ": the server is not ready; Kiln retries later";
  }
  return make_error(code, message);
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
  redisSetTimeout(handle->context, to_timeval(config_.op_timeout));
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
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  auto* raw = static_cast<redisReply*>(redisCommandArgv(
      handle_->context, static_cast<int>(argv.size()), argv.data(), lengths.data()));
  const std::string where = config_.redacted();
  if (!raw) {
    const int err = handle_->context->err;
    std::string why = handle_->context->errstr;
    handle_.reset();
    if (err == REDIS_ERR_IO && (why.find("Resource temporarily unavailable") != std::string::npos ||
                                why.find("timed out") != std::string::npos))
      return make_error(ErrorCode::kTimeout,
                        "the remote cache " + where + " did not answer " + args[0] + " within " +
                            std::to_string(config_.op_timeout.count()) +
                            " ms (KILN_REMOTE_CACHE_OP_TIMEOUT_MS): the server is slow or stuck");
    return make_error(ErrorCode::kIo, "the connection to the remote cache " + where +
                                          " failed during " + args[0] + ": " + why);
  }
  std::unique_ptr<redisReply, void (*)(void*)> reply(raw, freeReplyObject);
  if (reply->type == REDIS_REPLY_ERROR)
    return server_error(std::string(reply->str, reply->len), where);
  return convert(reply.get());
#else
  return make_error(ErrorCode::kUnavailable, "built without hiredis");
#endif
}

}  // namespace kiln::remote
