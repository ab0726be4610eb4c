// The remote tier end to end: real `kiln` processes, each with a cache
// directory of its own (a "machine"), sharing a real redis-server.
#include <gtest/gtest.h>

#include "remote_test_util.hpp"

namespace kiln::testing {
namespace {

TEST(RemoteTier, MachineBIsServedWhatMachineATunedWithNothingCompiled) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  ASSERT_TRUE(server.running());
  Machine a, b, secret_dir;
  const std::string env = "KILN_REMOTE_CACHE=" + server.url() + " KILN_REMOTE_CACHE_SECRET_FILE=" +
                          secret_dir.file("secret", "team-key\n");
  TuneRun first = tune_on(a, env);
  ASSERT_EQ(first.run.exit_code, 0) << first.run.err;
  EXPECT_GT(first.compiled(), 0);
  TuneRun second = tune_on(b, env);
  ASSERT_EQ(second.run.exit_code, 0) << second.run.err;
  EXPECT_EQ(second.compiled(), 0) << second.run.out;
  EXPECT_EQ(second.report["winner"]["config"], first.report["winner"]["config"]);
  EXPECT_EQ(second.warnings(), 0) << second.run.err;
  // The report counts what the tier served: the record and the winner's artifact.
  EXPECT_EQ(second.report["remote_cache"]["hits"], 2) << second.run.out;
  EXPECT_GT(second.report["remote_cache"]["bytes_read"].get<int>(), 0);
  EXPECT_EQ(second.report["remote_cache"]["refused"], 0);
  // B wrote what it was served to its own disk: warm again with the server gone.
  server.stop();
  TuneRun offline = tune_on(b, env);
  ASSERT_EQ(offline.run.exit_code, 0) << offline.run.err;
  EXPECT_EQ(offline.compiled(), 0);
  EXPECT_EQ(offline.warnings(), 0) << "B had everything locally: " << offline.run.err;
}

TEST(RemoteTier, UnsignedArtifactsAreNotLoadedUnlessTrustedButRecordsAre) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine a, b, c;
  const std::string env = "KILN_REMOTE_CACHE=" + server.url();
  ASSERT_EQ(tune_on(a, env).run.exit_code, 0);
  // No secret, no trust: the record is served (its winner is validated),
  // the winner's machine code is compiled here rather than loaded.
  TuneRun cautious = tune_on(b, env);
  ASSERT_EQ(cautious.run.exit_code, 0) << cautious.run.err;
  EXPECT_EQ(cautious.report["stats"]["cache_hits"], 1);
  EXPECT_EQ(cautious.report["stats"]["artifact_hits"], 0) << cautious.run.out;
  TuneRun trusting = tune_on(c, env + " KILN_REMOTE_CACHE_TRUST=unsigned");
  ASSERT_EQ(trusting.run.exit_code, 0);
  EXPECT_EQ(trusting.compiled(), 0);
  EXPECT_EQ(trusting.report["stats"]["artifact_hits"], 1) << trusting.run.out;
}

TEST(RemoteTier, AnotherSecretsEntriesAreRefusedCountedAndNotLoaded) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine a, b, c, keys;
  const std::string url = "KILN_REMOTE_CACHE=" + server.url();
  ASSERT_EQ(
      tune_on(a, url + " KILN_REMOTE_CACHE_SECRET_FILE=" + keys.file("a", "key-a")).run.exit_code,
      0);
  const std::string env_b = url + " KILN_REMOTE_CACHE_SECRET_FILE=" + keys.file("b", "key-b");
  TuneRun other = tune_on(b, env_b);
  ASSERT_EQ(other.run.exit_code, 0) << other.run.err;
  EXPECT_GT(other.compiled(), 0) << "nothing signed with another key may be used";
  EXPECT_EQ(other.warnings("signature"), 1) << other.run.err;
  EXPECT_GE(other.report["remote_cache"]["refused"].get<int>(), 1) << other.run.out;
  // verify names the entries a third key cannot vouch for, and exits 1.
  const std::string env_c = url + " KILN_REMOTE_CACHE_SECRET_FILE=" + keys.file("c", "key-c");
  DeadlineRun verify =
      run_with_deadline("env " + env_c + " " KILN_CLI_PATH " cache remote verify --json");
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  nlohmann::json v = nlohmann::json::parse(verify.out, nullptr, false);
  ASSERT_TRUE(v.is_object()) << verify.out;
  EXPECT_GT(v["broken"].get<int>(), 0);
}

TEST(RemoteTier, ReadModeWritesNothingAndWriteModeReadsNothing) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine a, b;
  const std::string url = "KILN_REMOTE_CACHE=" + server.url() + " KILN_REMOTE_CACHE_TRUST=unsigned";
  ASSERT_EQ(tune_on(a, url + " KILN_REMOTE_CACHE_MODE=read").run.exit_code, 0);
  EXPECT_EQ(server.cli("DBSIZE").out, "0\n") << "a reader wrote";
  ASSERT_EQ(tune_on(a, url + " KILN_REMOTE_CACHE_MODE=write", "rows=8,hidden=128").run.exit_code,
            0);
  EXPECT_NE(server.cli("DBSIZE").out, "0\n") << "a writer wrote nothing";
  TuneRun writer_only = tune_on(b, url + " KILN_REMOTE_CACHE_MODE=write", "rows=8,hidden=128");
  EXPECT_GT(writer_only.compiled(), 0) << "a write-only machine read the server";
}

TEST(RemoteTier, PrefixesKeepTeamsApart) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine a, b;
  const std::string url = "KILN_REMOTE_CACHE=" + server.url() + " KILN_REMOTE_CACHE_TRUST=unsigned";
  ASSERT_EQ(tune_on(a, url + " KILN_REMOTE_CACHE_PREFIX=team1:").run.exit_code, 0);
  EXPECT_NE(server.cli("--scan --pattern 'team1:*'").out, "");
  TuneRun other_team = tune_on(b, url + " KILN_REMOTE_CACHE_PREFIX=team2:");
  EXPECT_GT(other_team.compiled(), 0);
  // A prefix is a literal, not a pattern: "team?:" lists neither team's keys.
  auto ls = [&](const std::string& prefix) {
    DeadlineRun r = run_with_deadline("env KILN_CACHE_DIR=" + a.dir().string() + " " + url +
                                      " KILN_REMOTE_CACHE_PREFIX='" + prefix +
                                      "' " KILN_CLI_PATH " cache remote ls --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["count"].get<int>();
  };
  EXPECT_GT(ls("team1:"), 0);
  EXPECT_EQ(ls("team?:"), 0);
  EXPECT_EQ(ls("team[12]:"), 0);
}

TEST(RemoteCli, PushPullPingLsAndTheRedactedPassword) {
  KILN_REQUIRE_REDIS();
  RedisServer server({"--requirepass", "hunter2"});
  Machine a, b;
  ASSERT_EQ(tune_on(a, "").run.exit_code, 0);  // A tuned with no remote tier at all
  const std::string remote =
      "KILN_REMOTE_CACHE=redis://:hunter2@127.0.0.1:" + std::to_string(server.port()) +
      " KILN_REMOTE_CACHE_TRUST=unsigned";
  auto kiln = [&](const Machine& m, const std::string& args) {
    return run_with_deadline("env KILN_CACHE_DIR=" + m.dir().string() + " " + remote +
                             " " KILN_CLI_PATH " " + args);
  };
  DeadlineRun ping = kiln(a, "cache remote ping");
  EXPECT_EQ(ping.exit_code, 0) << ping.err;
  DeadlineRun push = kiln(a, "cache remote push --json");
  ASSERT_EQ(push.exit_code, 0) << push.err;
  EXPECT_GT(nlohmann::json::parse(push.out)["artifacts"].get<int>(), 0);
  DeadlineRun ls = kiln(a, "cache remote ls --json");
  ASSERT_EQ(ls.exit_code, 0);
  EXPECT_GT(nlohmann::json::parse(ls.out)["count"].get<int>(), 1);
  DeadlineRun pull = kiln(b, "cache remote pull --json");
  ASSERT_EQ(pull.exit_code, 0) << pull.err;
  // B, offline, is warm from what it pulled.
  TuneRun offline = tune_on(b, "");
  EXPECT_EQ(offline.compiled(), 0) << offline.run.out;
  DeadlineRun info = kiln(a, "info");
  DeadlineRun info_json = kiln(a, "info --json");
  EXPECT_NE(info.out.find("connected"), std::string::npos) << info.out;
  for (const DeadlineRun* r : {&ping, &push, &ls, &pull, &info, &info_json}) {
    EXPECT_EQ(r->out.find("hunter2"), std::string::npos) << r->out;
    EXPECT_EQ(r->err.find("hunter2"), std::string::npos) << r->err;
  }
}

TEST(RemoteCli, WithoutATierTheCommandsSayHowToSetOne) {
  DeadlineRun r = run_with_deadline("env -u KILN_REMOTE_CACHE " KILN_CLI_PATH " cache remote ping");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("KILN_REMOTE_CACHE"), std::string::npos) << r.err;
  DeadlineRun bad =
      run_with_deadline("env KILN_REMOTE_CACHE=http://x " KILN_CLI_PATH " cache remote ping");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("redis://"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kiln::testing
