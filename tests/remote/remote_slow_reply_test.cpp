// A server that answers, but too slowly or too much: a reply that trickles
// in one byte at a time must still end at the op deadline
// (KILN_REMOTE_CACHE_OP_TIMEOUT_MS bounds the whole operation, not each
// read), and a value larger than any Kiln entry is refused from its
// header, without reading it.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "remote/envelope.hpp"
#include "remote_test_util.hpp"
#include "skip.hpp"

namespace kiln::testing {
namespace {

// A loopback server that answers every command with the header of a
// 1,000,000-byte bulk string and then sends one byte every 100 ms: each
// read gets a byte well within any per-read timeout, the reply never ends.
class TricklingServer {
 public:
  TricklingServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t size = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &size);
    port_ = ntohs(addr.sin_port);
    ::listen(listener_, 16);
    thread_ = std::thread([this] { serve(); });
  }
  ~TricklingServer() {
    stop_ = true;
    thread_.join();
    for (int fd : clients_) ::close(fd);
    ::close(listener_);
  }
  TricklingServer(const TricklingServer&) = delete;
  TricklingServer& operator=(const TricklingServer&) = delete;
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 100) == 1) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) continue;
        char request[4096];
        if (::recv(fd, request, sizeof request, 0) > 0)
          ::send(fd, "$1000000\r\n", 10, MSG_NOSIGNAL);
        clients_.push_back(fd);
      }
      for (int fd : clients_) ::send(fd, "x", 1, MSG_NOSIGNAL);
    }
  }

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> clients_;  // the serving thread's only
  std::thread thread_;
};

TEST(RemoteSlowReply, PingAgainstATricklingServerEndsAtTheOpDeadline) {
  if (!remote_cache_built()) KILN_SKIP(Skip::kHiredis) << "built without hiredis/OpenSSL";
  TricklingServer server;
  Machine a;
  // Bounded at 60 s for a 1 s limit: a hang is killed there and fails.
  DeadlineRun run = run_with_deadline(
      "env KILN_CACHE_DIR=" + a.dir().string() + " KILN_REMOTE_CACHE=" + server.url() +
          " KILN_REMOTE_CACHE_OP_TIMEOUT_MS=1000 " KILN_CLI_PATH " cache remote ping",
      std::chrono::seconds(60));
  EXPECT_FALSE(run.timed_out) << "kiln cache remote ping hung on a trickling server";
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("KILN_REMOTE_CACHE_OP_TIMEOUT_MS"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("did not answer PING within 1000 ms"), std::string::npos) << run.err;
}

TEST(RemoteSlowReply, TuneAgainstATricklingServerFinishesWithTheLocalTiers) {
  if (!remote_cache_built()) KILN_SKIP(Skip::kHiredis) << "built without hiredis/OpenSSL";
  TricklingServer server;
  Machine a;
  TuneRun t = tune_on(a, "KILN_REMOTE_CACHE=" + server.url() +
                             " KILN_REMOTE_CACHE_OP_TIMEOUT_MS=500 KILN_REMOTE_CACHE_FLUSH_MS=500");
  EXPECT_FALSE(t.run.timed_out) << "kiln tune hung on a trickling server";
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.warnings("did not answer"), 1) << t.run.err;
  EXPECT_GT(t.compiled(), 0);
}

TEST(RemoteSlowReply, AValueOverTheLimitIsRefusedUnreadAndTheTierStaysOn) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Result<RemoteCacheConfig> config = RemoteCacheConfig::parse_url(server.url());
  ASSERT_TRUE(config.ok());
  RemoteCache tier(*config);
  const Hash128 key = hash128(std::string("too large"));
  const std::string name = config->prefix + "t:" + key.hex();
  // A 200 MB string, made by the server itself in a moment.
  ASSERT_EQ(server.cli("SETRANGE " + name + " 199999999 x").out, "200000000\n");
  Result<std::string> oversized = tier.fetch(RemoteKind::kRecord, key);
  ASSERT_FALSE(oversized.ok());
  EXPECT_EQ(oversized.error().code, ErrorCode::kCorrupt) << oversized.error().message;
  EXPECT_NE(oversized.error().message.find("200000000 bytes, too large"), std::string::npos)
      << oversized.error().message;
  EXPECT_NE(oversized.error().message.find(std::to_string(remote::kMaxValueBytes)),
            std::string::npos)
      << oversized.error().message;
  // A problem of one entry, not of the server: the next lookup is tried.
  EXPECT_EQ(tier.state().find("standing aside"), std::string::npos) << tier.state();
  EXPECT_EQ(tier.fetch(RemoteKind::kRecord, hash128(std::string("absent"))).error().code,
            ErrorCode::kNotFound);
}

TEST(RemoteSlowReply, EnvelopeRefusalsSayTooShortTooLargeOrNotKiln) {
  const Hash128 key = hash128(std::string("k"));
  auto why = [&](const std::string& value) {
    Result<remote::Opened> opened = remote::open(value, RemoteKind::kRecord, key, "");
    return opened.ok() ? std::string("opened") : opened.error().message;
  };
  EXPECT_NE(why("short").find("5 bytes is too short"), std::string::npos) << why("short");
  const std::string huge(remote::kMaxValueBytes + 1, '\0');
  EXPECT_NE(why(huge).find("too large (the limit is " + std::to_string(remote::kMaxValueBytes)),
            std::string::npos)
      << why(huge);
  EXPECT_EQ(why(huge).find("too short"), std::string::npos);
  EXPECT_NE(why(std::string(100, 'x')).find("does not start with KILNRC1"), std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
