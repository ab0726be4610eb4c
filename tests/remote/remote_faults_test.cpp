// Every fault of the server the issue names: each gives at most one warning
// naming its cause, the tune goes on with the local tiers and succeeds,
// nothing wrong is loaded, and every wait is bounded (run_with_deadline
// kills a hang and fails the test).
#include <gtest/gtest.h>

#include <thread>

#include "remote_test_util.hpp"

namespace kiln::testing {
namespace {

// Short deadlines so a fault costs little; the bound is what is tested.
const std::string kFast =
    " KILN_REMOTE_CACHE_CONNECT_TIMEOUT_MS=300 KILN_REMOTE_CACHE_OP_TIMEOUT_MS=300 "
    "KILN_REMOTE_CACHE_TRUST=unsigned";

TEST(RemoteFaults, ServerDownAtStart) {
  KILN_REQUIRE_REDIS();
  Machine a;
  TuneRun t =
      tune_on(a, "KILN_REMOTE_CACHE=redis://127.0.0.1:" + std::to_string(free_port()) + kFast);
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_FALSE(t.run.timed_out);
  EXPECT_EQ(t.warnings(), 1) << t.run.err;
  EXPECT_EQ(t.warnings("cannot connect"), 1) << t.run.err;
  EXPECT_GT(t.compiled(), 0);
}

TEST(RemoteFaults, ServerKilledMidRunThenRestarted) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine a, b, c;
  const std::string env = "KILN_REMOTE_CACHE=" + server.url() + kFast;
  // Killed while A tunes: A finishes from its local tiers.
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    server.stop();
  });
  TuneRun during = tune_on(a, env, "rows=8,hidden=256");
  killer.join();
  ASSERT_EQ(during.run.exit_code, 0) << during.run.err;
  EXPECT_LE(during.warnings(), 1) << during.run.err;
  // Restarted (empty, as a crashed cache without persistence comes back):
  // the next processes use it again.
  ASSERT_TRUE(server.start());
  ASSERT_EQ(tune_on(b, env).run.exit_code, 0);
  TuneRun after = tune_on(c, env);
  ASSERT_EQ(after.run.exit_code, 0) << after.run.err;
  EXPECT_EQ(after.compiled(), 0) << "C was not served what B wrote after the restart";
  EXPECT_EQ(after.warnings(), 0) << after.run.err;
}

TEST(RemoteFaults, SlowServerPastTheOpDeadline) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine a;
  // The server stops answering clients for 10 s: far past the 300 ms
  // deadline (it is killed before it would answer again).
  ASSERT_EQ(server.cli("CLIENT PAUSE 10000 ALL").out, "OK\n");
  TuneRun t = tune_on(a, "KILN_REMOTE_CACHE=" + server.url() + kFast);
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_FALSE(t.run.timed_out);
  EXPECT_EQ(t.warnings("did not answer"), 1) << t.run.err;
  EXPECT_LE(t.warnings(), 2) << t.run.err;  // the timeout, and the flush at exit giving up
  EXPECT_GT(t.compiled(), 0);
}

TEST(RemoteFaults, FullServerRefusesWritesAndTuningGoesOn) {
  KILN_REQUIRE_REDIS();
  RedisServer server({"--maxmemory-policy", "noeviction"});
  Machine a;
  // A limit below what the server already uses: every write is refused with OOM.
  ASSERT_EQ(server.cli("CONFIG SET maxmemory 1").out, "OK\n");
  TuneRun t = tune_on(a, "KILN_REMOTE_CACHE=" + server.url() + kFast);
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.warnings("full"), 1) << t.run.err;
  EXPECT_EQ(t.warnings(), 1) << t.run.err;
  EXPECT_EQ(server.cli("--scan --pattern 'kiln:*'").out, "");
}

TEST(RemoteFaults, WrongPasswordIsNamedAndNeverPrinted) {
  KILN_REQUIRE_REDIS();
  RedisServer server({"--requirepass", "right-one"});
  Machine a, pw;
  TuneRun t = tune_on(a, "KILN_REMOTE_CACHE=" + server.url() + kFast +
                             " KILN_REMOTE_CACHE_PASSWORD_FILE=" + pw.file("pw", "wrong-one\n"));
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.warnings("password"), 1) << t.run.err;
  EXPECT_EQ(t.warnings(), 1) << t.run.err;
  EXPECT_EQ(t.run.err.find("wrong-one"), std::string::npos);
  EXPECT_EQ(t.run.out.find("wrong-one"), std::string::npos);
}

// A, signed, fills the server; one value is then damaged in a given way,
// and B must refuse it (compile rather than load), warn once and succeed.
void damaged_value_is_refused(const std::string& how) {
  RedisServer server;
  Machine a, b, keys;
  const std::string env = "KILN_REMOTE_CACHE=" + server.url() + kFast +
                          " KILN_REMOTE_CACHE_SECRET_FILE=" + keys.file("k", "shared-key");
  ASSERT_EQ(tune_on(a, env).run.exit_code, 0);
  const std::string keys_out = server.cli("--scan --pattern 'kiln:a:*'").out;
  std::vector<std::string> artifacts;
  for (std::size_t s = 0, e; (e = keys_out.find('\n', s)) != std::string::npos; s = e + 1)
    artifacts.push_back(keys_out.substr(s, e - s));
  ASSERT_GE(artifacts.size(), 2u);
  // Damage every artifact, so whichever B needs is damaged.
  for (std::size_t i = 0; i < artifacts.size(); ++i) {
    const std::string& key = artifacts[i];
    if (how == "truncated") {
      server.cli(
          "EVAL \"return redis.call('SET', KEYS[1], string.sub(redis.call('GET', KEYS[1]), "
          "1, 100))\" 1 " +
          key);
    } else if (how == "corrupted") {
      server.cli("SETRANGE " + key + " 60 XXXX");
    } else {  // replaced by another key's value
      server.cli("COPY " + artifacts[(i + 1) % artifacts.size()] + " " + key + " REPLACE");
    }
  }
  TuneRun t = tune_on(b, env);
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_GT(t.compiled(), 0) << how << ": a damaged artifact was loaded";
  EXPECT_EQ(t.report["stats"]["artifact_hits"], 0) << how;
  EXPECT_EQ(t.warnings("refused"), 1) << how << ": " << t.run.err;
  EXPECT_EQ(t.report["winner"]["config"], tune_on(a, env).report["winner"]["config"]);
}

TEST(RemoteFaults, TruncatedValue) {
  KILN_REQUIRE_REDIS();
  damaged_value_is_refused("truncated");
}
TEST(RemoteFaults, CorruptedValue) {
  KILN_REQUIRE_REDIS();
  damaged_value_is_refused("corrupted");
}
TEST(RemoteFaults, AnotherKeysValue) {
  KILN_REQUIRE_REDIS();
  damaged_value_is_refused("replaced");
}

}  // namespace
}  // namespace kiln::testing
