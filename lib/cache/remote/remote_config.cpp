// RemoteCacheConfig: the KILN_REMOTE_CACHE* variables and the server URL.
#include <cerrno>
#include <cstdlib>
#include <string>

#include "kiln/cache/remote_cache.hpp"
#include "kiln/core/input_file.hpp"

namespace kiln {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Percent-decoding for the user and password parts of a URL.
std::string url_decode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const std::string hex = text.substr(i + 1, 2);
      char* end = nullptr;
      const long v = std::strtol(hex.c_str(), &end, 16);
      if (end == hex.c_str() + 2) {
        out.push_back(static_cast<char>(v));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

ErrorInfo bad_url(const std::string& url, const std::string& what) {
  return make_error(
      ErrorCode::kInvalidArgument,
      "KILN_REMOTE_CACHE is malformed: " + what +
          "; use redis://[[user]:password@]host[:port][/db] or unix:///path/to/socket",
      {{"url", url}});
}

// Reads a small secret file (a password or an HMAC key), without a final
// newline. Every kiln command that reads the remote settings comes here,
// so the read never waits and is bounded: a FIFO, a device (/dev/zero) or
// a directory is refused unread, like anything over 4 KiB.
Result<std::string> read_secret(const char* variable, const std::string& path) {
  const std::string what = std::string("file named by ") + variable;
  Result<std::string> contents = internal::read_input_file(path, what, 4096);
  if (!contents) {
    ErrorInfo error = contents.error();
    error.message += " (it must be a regular file holding only the secret; or unset " +
                     std::string(variable) + ")";
    return error;
  }
  std::string value = std::move(*contents);
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
  if (value.empty())
    return make_error(ErrorCode::kInvalidArgument,
                      std::string(variable) + " names " + path + ", which is empty");
  return value;
}

// A positive integer of at most `most`: a larger one would overflow the
// clock arithmetic it feeds (a deadline of now + 10^10 s wraps and fires at
// once) or be refused by hiredis as an invalid timeout.
Result<long> positive(const char* variable, long fallback, long most) {
  const std::string text = env(variable);
  if (text.empty()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || v <= 0 || v > most)
    return make_error(ErrorCode::kInvalidArgument, std::string(variable) + "=" + text +
                                                       " is not a positive integer up to " +
                                                       std::to_string(most));
  return v;
}

}  // namespace

std::string RemoteCacheConfig::redacted() const {
  if (!unix_path.empty()) return "unix://" + unix_path;
  std::string out = "redis://";
  if (!user.empty() || !password.empty()) out += user + (password.empty() ? "" : ":***") + "@";
  const bool v6 = host.find(':') != std::string::npos;
  return out + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/" +
         std::to_string(db);
}

Result<RemoteCacheConfig> RemoteCacheConfig::parse_url(const std::string& url) {
  RemoteCacheConfig config;
  if (url.rfind("unix://", 0) == 0) {
    config.unix_path = url.substr(7);
    if (config.unix_path.empty() || config.unix_path[0] != '/')
      return bad_url(url, "a unix:// URL needs an absolute socket path");
    config.url = url;
    return config;
  }
  if (url.rfind("redis://", 0) != 0) return bad_url(url, "the scheme is not redis:// or unix://");
  std::string rest = url.substr(8);
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string credentials = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const auto colon = credentials.find(':');
    if (colon == std::string::npos) {
      config.password = url_decode(credentials);  // redis://password@host, as redis-cli reads it
    } else {
      config.user = url_decode(credentials.substr(0, colon));
      config.password = url_decode(credentials.substr(colon + 1));
    }
  }
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty()) {
      char* end = nullptr;
      const long v = std::strtol(db.c_str(), &end, 10);
      if (end == db.c_str() || *end != '\0' || v < 0 || v > 1000000)
        return bad_url(url, "the database \"" + db + "\" is not a number");
      config.db = static_cast<int>(v);
    }
  }
  // An IPv6 address is bracketed, as in any URL: redis://[::1]:6380.
  std::string port;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) return bad_url(url, "the IPv6 address has no closing ]");
    const std::string after = rest.substr(close + 1);
    if (!after.empty() && after.front() != ':')
      return bad_url(url, "\"" + after + "\" follows the IPv6 address, where :PORT belongs");
    if (!after.empty()) port = after.substr(1);
    rest = rest.substr(1, close - 1);
    if (!after.empty() && port.empty()) port = "(none)";
  } else if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    port = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (port.empty()) port = "(none)";
  }
  if (!port.empty()) {
    char* end = nullptr;
    const long v = std::strtol(port.c_str(), &end, 10);
    if (end == port.c_str() || *end != '\0' || v <= 0 || v > 65535)
      return bad_url(url, "the port \"" + port + "\" is not a number from 1 to 65535");
    config.port = static_cast<int>(v);
  }
  if (rest.empty()) return bad_url(url, "no host");
  config.host = rest;
  config.url = config.redacted();
  return config;
}

Result<std::optional<RemoteCacheConfig>> RemoteCacheConfig::from_env() {
  const std::string url = env("KILN_REMOTE_CACHE");
  if (url.empty()) return std::optional<RemoteCacheConfig>();
  Result<RemoteCacheConfig> parsed = parse_url(url);
  if (!parsed) return parsed.error();
  RemoteCacheConfig config = std::move(*parsed);
  if (const std::string prefix = env("KILN_REMOTE_CACHE_PREFIX"); !prefix.empty())
    config.prefix = prefix;
  const std::string mode = env("KILN_REMOTE_CACHE_MODE");
  if (mode.empty() || mode == "readwrite") {
    config.mode = RemoteMode::kReadWrite;
  } else if (mode == "read") {
    config.mode = RemoteMode::kRead;
  } else if (mode == "write") {
    config.mode = RemoteMode::kWrite;
  } else {
    return make_error(ErrorCode::kInvalidArgument,
                      "KILN_REMOTE_CACHE_MODE=" + mode + " is not read, write or readwrite");
  }
  if (const std::string file = env("KILN_REMOTE_CACHE_PASSWORD_FILE"); !file.empty()) {
    Result<std::string> password = read_secret("KILN_REMOTE_CACHE_PASSWORD_FILE", file);
    if (!password) return password.error();
    config.password = std::move(*password);
  }
  if (const std::string file = env("KILN_REMOTE_CACHE_SECRET_FILE"); !file.empty()) {
    Result<std::string> secret = read_secret("KILN_REMOTE_CACHE_SECRET_FILE", file);
    if (!secret) return secret.error();
    config.secret = std::move(*secret);
  }
  const std::string trust = env("KILN_REMOTE_CACHE_TRUST");
  if (!trust.empty() && trust != "unsigned" && trust != "signed")
    return make_error(ErrorCode::kInvalidArgument,
                      "KILN_REMOTE_CACHE_TRUST=" + trust +
                          " is not \"unsigned\" (load unsigned artifacts) or \"signed\"");
  config.trust_unsigned = trust == "unsigned";
  constexpr long kHourMs = 3'600'000, kDayS = 86'400;
  Result<long> connect = positive("KILN_REMOTE_CACHE_CONNECT_TIMEOUT_MS", 1000, kHourMs);
  Result<long> op = positive("KILN_REMOTE_CACHE_OP_TIMEOUT_MS", 2000, kHourMs);
  Result<long> retry = positive("KILN_REMOTE_CACHE_RETRY_S", 30, kDayS);
  Result<long> queue = positive("KILN_REMOTE_CACHE_QUEUE", 256, 1'000'000);
  Result<long> flush = positive("KILN_REMOTE_CACHE_FLUSH_MS", 5000, kHourMs);
  for (const auto* r : {&connect, &op, &retry, &queue, &flush})
    if (!*r) return r->error();
  config.connect_timeout = std::chrono::milliseconds(*connect);
  config.op_timeout = std::chrono::milliseconds(*op);
  config.retry_after = std::chrono::seconds(*retry);
  config.queue_limit = static_cast<std::size_t>(*queue);
  config.flush_timeout = std::chrono::milliseconds(*flush);
  config.url = config.redacted();
  return std::optional<RemoteCacheConfig>(std::move(config));
}

}  // namespace kiln
