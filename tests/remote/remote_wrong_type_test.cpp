// A key under the prefix that holds a list or a hash (another tool, or a
// mistake) is one bad entry, not a failing server: the server answers
// WRONGTYPE for that key only. It was taken for a server fault, and the
// whole tier stepped aside for every run, dropping every write.
#include <gtest/gtest.h>

#include "remote_test_util.hpp"

namespace kiln::testing {
namespace {

// The keys under `pattern` on `server`, one per line of redis-cli's output.
std::vector<std::string> keys_matching(const RedisServer& server, const std::string& pattern) {
  const std::string text = server.cli("--scan --pattern '" + pattern + "'").out;
  std::vector<std::string> keys;
  for (std::size_t s = 0, e; (e = text.find('\n', s)) != std::string::npos; s = e + 1)
    keys.push_back(text.substr(s, e - s));
  return keys;
}

// `kiln cache remote <command>` against `server`, bounded at 60 s.
DeadlineRun remote_command(const Machine& m, const RedisServer& server,
                           const std::string& command) {
  return run_with_deadline("env KILN_CACHE_DIR=" + m.dir().string() + " KILN_REMOTE_CACHE=" +
                           server.url() + " " KILN_CLI_PATH " cache remote " + command);
}

TEST(RemoteWrongType, AListAtATuningKeyIsRefusedNamedAndReplacedByTheNextWrite) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine a, b;
  const std::string env = "KILN_REMOTE_CACHE=" + server.url();
  ASSERT_EQ(tune_on(a, env).run.exit_code, 0);
  const std::vector<std::string> records = keys_matching(server, "kiln:t:*");
  ASSERT_EQ(records.size(), 1u);
  const std::string key = records[0];
  // The server holds only a list where B's tuning record belongs.
  server.cli("FLUSHALL");
  ASSERT_EQ(server.cli("RPUSH " + key + " a b").out, "2\n");
  TuneRun t = tune_on(b, env);
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.warnings(), 1) << t.run.err;
  EXPECT_EQ(
      t.warnings("redis-cli -h 127.0.0.1 -p " + std::to_string(server.port()) + " DEL " + key), 1)
      << t.run.err;
  EXPECT_EQ(t.warnings("retried after"), 0) << "the tier stepped aside: " << t.run.err;
  const nlohmann::json& stats = t.report["remote_cache"];
  EXPECT_EQ(stats["errors"], 0) << stats;
  EXPECT_EQ(stats["refused"], 1) << stats;
  EXPECT_EQ(stats["dropped"], 0) << stats;
  EXPECT_GT(stats["writes"].get<int>(), 0) << stats;
  // B's write replaced the list with its record, and every entry verifies.
  EXPECT_EQ(server.cli("TYPE " + key).out, "string\n");
  DeadlineRun verify = remote_command(b, server, "verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST(RemoteWrongType, VerifyNamesAHashLsAndStatsSkipItAndSucceed) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine a;
  ASSERT_EQ(tune_on(a, "KILN_REMOTE_CACHE=" + server.url()).run.exit_code, 0);
  const std::size_t entries = keys_matching(server, "kiln:*").size();
  ASSERT_GT(entries, 0u);
  const std::string key = "kiln:t:0123456789abcdef0123456789abcdef";
  ASSERT_EQ(server.cli("HSET " + key + " f v").out, "1\n");

  // The hint names the test's server (a bare `redis-cli DEL` reaches port 6379).
  const std::string del = "redis-cli -h 127.0.0.1 -p " + std::to_string(server.port()) + " DEL ";
  DeadlineRun verify = remote_command(a, server, "verify");
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("BROKEN"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find(del + key), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find(std::to_string(entries + 1) + " entries, 1 broken"), std::string::npos)
      << verify.out;

  DeadlineRun ls = remote_command(a, server, "ls");
  EXPECT_EQ(ls.exit_code, 0) << ls.out << ls.err;
  EXPECT_EQ(ls.out.find("0123456789abcdef0123456789abcdef"), std::string::npos) << ls.out;
  EXPECT_NE(ls.err.find(del + key), std::string::npos) << ls.err;

  DeadlineRun stats = remote_command(a, server, "stats --json");
  EXPECT_EQ(stats.exit_code, 0) << stats.out << stats.err;
  const nlohmann::json j = nlohmann::json::parse(stats.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << stats.out;
  EXPECT_EQ(j["artifacts"].get<std::size_t>() + j["tuning_records"].get<std::size_t>(), entries);
}

}  // namespace
}  // namespace kiln::testing
