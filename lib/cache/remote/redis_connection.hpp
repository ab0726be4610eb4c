// One connection to a Redis-protocol server, with a deadline on the
// connect and on every operation. Not thread-safe: the remote tier owns one
// for its lookups and one for its writer, each under its own lock.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/cache/remote_cache.hpp"

namespace kiln::remote {

// A reply reduced to what Kiln uses.
struct Reply {
  enum Type { kNil, kString, kInteger, kArray, kStatus } type = kNil;
  std::string text;  // kString, kStatus
  long long integer = 0;
  std::vector<Reply> elements;
};

class Connection {
 public:
  explicit Connection(const RemoteCacheConfig& config);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one command (binary-safe arguments). Connects (AUTH, SELECT) first
  // when not connected. A server error reply, a timeout or a broken
  // connection is an error whose message names the cause in words a user
  // can act on (never the password); the connection is dropped after a
  // timeout or I/O failure, so the next call reconnects. The deadline
  // (KILN_REMOTE_CACHE_OP_TIMEOUT_MS) bounds the whole operation, however
  // slowly the server sends; a reply over envelope.hpp's kMaxValueBytes is
  // refused (kCorrupt) from its header, unread, and the connection dropped.
  Result<Reply> run(const std::vector<std::string>& args);
  bool connected() const;
  void close();

 private:
  Status connect();
  // The error for `command` when the deadline passed, or when hiredis
  // failed (read from the context); both drop the connection.
  ErrorInfo timed_out(const std::string& command);
  ErrorInfo failed(const std::string& command);
  struct Handle;
  const RemoteCacheConfig& config_;
  std::unique_ptr<Handle> handle_;
};

}  // namespace kiln::remote
