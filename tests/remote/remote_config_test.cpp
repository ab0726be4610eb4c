// The remote tier's settings and its value format, in process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/remote_cache.hpp"
#include "remote/envelope.hpp"

namespace kiln {
namespace {

TEST(RemoteUrl, ReadsHostPortDbAndCredentials) {
  Result<RemoteCacheConfig> c =
      RemoteCacheConfig::parse_url("redis://alice:s%40cret@cache.lan:7000/3");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->host, "cache.lan");
  EXPECT_EQ(c->port, 7000);
  EXPECT_EQ(c->db, 3);
  EXPECT_EQ(c->user, "alice");
  EXPECT_EQ(c->password, "s@cret");
  // The password never appears where a URL is shown.
  EXPECT_EQ(c->redacted().find("s@cret"), std::string::npos);
  EXPECT_EQ(c->url.find("cret"), std::string::npos);
  EXPECT_NE(c->redacted().find("***"), std::string::npos);
}

TEST(RemoteUrl, DefaultsAndPasswordOnlyAndUnixSockets) {
  Result<RemoteCacheConfig> plain = RemoteCacheConfig::parse_url("redis://localhost");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->port, 6379);
  EXPECT_EQ(plain->db, 0);
  Result<RemoteCacheConfig> pw = RemoteCacheConfig::parse_url("redis://:pw@h:1/");
  ASSERT_TRUE(pw.ok());
  EXPECT_EQ(pw->password, "pw");
  EXPECT_TRUE(pw->user.empty());
  Result<RemoteCacheConfig> sock = RemoteCacheConfig::parse_url("unix:///run/redis.sock");
  ASSERT_TRUE(sock.ok());
  EXPECT_EQ(sock->unix_path, "/run/redis.sock");
}

TEST(RemoteUrl, MalformedUrlsNameTheProblemAndTheForm) {
  for (const char* bad : {"http://h", "redis://", "redis://h:0", "redis://h:99999", "redis://h:x",
                          "redis://h/db", "unix://relative"}) {
    Result<RemoteCacheConfig> c = RemoteCacheConfig::parse_url(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.error().message.find("KILN_REMOTE_CACHE"), std::string::npos) << bad;
    EXPECT_NE(c.error().message.find("redis://"), std::string::npos) << bad;
  }
}

TEST(RemoteUrl, BracketedIpv6Addresses) {
  Result<RemoteCacheConfig> c = RemoteCacheConfig::parse_url("redis://[::1]:16380/2");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, 16380);
  EXPECT_EQ(c->db, 2);
  EXPECT_EQ(c->redacted(), "redis://[::1]:16380/2");
  Result<RemoteCacheConfig> no_port = RemoteCacheConfig::parse_url("redis://u:p@[fe80::2]");
  ASSERT_TRUE(no_port.ok()) << no_port.error().message;
  EXPECT_EQ(no_port->host, "fe80::2");
  EXPECT_EQ(no_port->port, 6379);
  for (const char* bad : {"redis://[::1", "redis://[::1]x", "redis://[::1]:", "redis://[::1]:0"}) {
    Result<RemoteCacheConfig> r = RemoteCacheConfig::parse_url(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("KILN_REMOTE_CACHE"), std::string::npos) << bad;
  }
}

// Durations past what the clock arithmetic holds are refused by name: a
// retry period of 10^10 s wrapped around and kept a dead server in use,
// a flush timeout of 10^13 ms dropped every queued write at once.
TEST(RemoteEnv, DurationsAndCountsHaveAnUpperBoundASecretFileIsAFile) {
  ::setenv("KILN_REMOTE_CACHE", "redis://127.0.0.1:6379", 1);
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"KILN_REMOTE_CACHE_RETRY_S", "10000000000"},
      {"KILN_REMOTE_CACHE_FLUSH_MS", "99999999999999999999"},
      {"KILN_REMOTE_CACHE_CONNECT_TIMEOUT_MS", "3600001"},
      {"KILN_REMOTE_CACHE_OP_TIMEOUT_MS", "1e9"},
      {"KILN_REMOTE_CACHE_QUEUE", "0"}};
  for (const auto& [name, value] : cases) {
    ::setenv(name, value, 1);
    Result<std::optional<RemoteCacheConfig>> c = RemoteCacheConfig::from_env();
    ::unsetenv(name);
    ASSERT_FALSE(c.ok()) << name << "=" << value;
    EXPECT_NE(c.error().message.find(std::string(name) + "=" + value), std::string::npos)
        << c.error().message;
    EXPECT_NE(c.error().message.find("up to"), std::string::npos) << c.error().message;
  }
  ::setenv("KILN_REMOTE_CACHE_SECRET_FILE", "/", 1);
  Result<std::optional<RemoteCacheConfig>> dir = RemoteCacheConfig::from_env();
  ::unsetenv("KILN_REMOTE_CACHE_SECRET_FILE");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("KILN_REMOTE_CACHE_SECRET_FILE '/' is a directory"),
            std::string::npos)
      << dir.error().message;
  ::setenv("KILN_REMOTE_CACHE_RETRY_S", "86400", 1);
  Result<std::optional<RemoteCacheConfig>> most = RemoteCacheConfig::from_env();
  ::unsetenv("KILN_REMOTE_CACHE_RETRY_S");
  ::unsetenv("KILN_REMOTE_CACHE");
  ASSERT_TRUE(most.ok()) << most.error().message;
  EXPECT_EQ((*most)->retry_after, std::chrono::seconds(86400));
}

TEST(RemoteEnvelope, RoundTripsSignedAndUnsigned) {
  const Hash128 key = hash128("k");
  for (const std::string& secret : {std::string(), std::string("team secret")}) {
    const std::string value = remote::seal(RemoteKind::kArtifact, key, "payload bytes", secret);
    Result<remote::Opened> opened = remote::open(value, RemoteKind::kArtifact, key, secret);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    EXPECT_EQ(opened->payload, "payload bytes");
    EXPECT_EQ(opened->is_signed, !secret.empty());
  }
}

TEST(RemoteEnvelope, RefusesDamageAnotherKeyAnotherKindAndBadSignatures) {
  const Hash128 key = hash128("k");
  const std::string value = remote::seal(RemoteKind::kArtifact, key, "payload bytes", "s1");
  auto refused = [&](const std::string& v, RemoteKind kind, const Hash128& k, const std::string& s,
                     const std::string& why) {
    Result<remote::Opened> opened = remote::open(v, kind, k, s);
    ASSERT_FALSE(opened.ok()) << why;
    EXPECT_EQ(opened.error().code, ErrorCode::kCorrupt);
    EXPECT_NE(opened.error().message.find(why), std::string::npos) << opened.error().message;
  };
  refused(value.substr(0, value.size() - 5), RemoteKind::kArtifact, key, "s1", "truncated");
  std::string flipped = value;
  flipped[40] ^= 0x10;
  refused(flipped, RemoteKind::kArtifact, key, "s1", "checksum");
  refused(value, RemoteKind::kArtifact, hash128("other"), "s1", "another key");
  refused(value, RemoteKind::kRecord, key, "s1", "another kind");
  refused(value, RemoteKind::kArtifact, key, "s2", "signature");
  const std::string unsigned_value = remote::seal(RemoteKind::kArtifact, key, "x", "");
  refused(unsigned_value, RemoteKind::kArtifact, key, "s1", "unsigned");
  refused("garbage", RemoteKind::kArtifact, key, "", "not a Kiln remote entry");
}

TEST(RemoteArtifactPayload, KeepsBytesAndMetadata) {
  CachedArtifact a;
  a.binary = std::string("\0\1\2obj", 6);
  a.meta = {{"format", "elf"}, {"arch", "host"}};
  Result<CachedArtifact> back = RemoteCache::decode_artifact(RemoteCache::encode_artifact(a));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->binary, a.binary);
  EXPECT_EQ(back->meta, a.meta);
  EXPECT_FALSE(RemoteCache::decode_artifact("\xff\xff\xff\xff\xff\xff\xff\x7f{}").ok());
}

}  // namespace
}  // namespace kiln
