// KILN_REMOTE_CACHE_SECRET_FILE and KILN_REMOTE_CACHE_PASSWORD_FILE are read
// by every kiln command that reads the remote settings. A FIFO there hung
// them all (waiting for a writer), /dev/zero grew memory without bound:
// anything but a regular file of at most 4 KiB is refused unread, naming
// the variable, the path and what it is; the tier is off, the run goes on.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "remote_test_util.hpp"
#include "skip.hpp"

namespace kiln::testing {
namespace {

// `kiln info --json` with `variable` naming `path`; bounded at 30 s.
DeadlineRun info_with_secret(const Machine& m, const std::string& variable,
                             const std::string& path) {
  return run_with_deadline(
      "env KILN_CACHE_DIR=" + m.dir().string() +
          " KILN_REMOTE_CACHE=redis://127.0.0.1:" + std::to_string(free_port()) + " " + variable +
          "=" + path + " " KILN_CLI_PATH " info --json",
      std::chrono::seconds(30));
}

TEST(RemoteSecretFile, FifoAndDevZeroAreRefusedUnreadByName) {
  if (!remote_cache_built()) KILN_SKIP(Skip::kHiredis) << "built without hiredis/OpenSSL";
  Machine m;
  const std::string fifo = (m.dir() / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> files[] = {{fifo, "is a FIFO"},
                                                       {"/dev/zero", "is a character device"}};
  for (const char* variable :
       {"KILN_REMOTE_CACHE_SECRET_FILE", "KILN_REMOTE_CACHE_PASSWORD_FILE"}) {
    for (const auto& [path, what] : files) {
      DeadlineRun run = info_with_secret(m, variable, path);
      ASSERT_FALSE(run.timed_out) << variable << "=" << path << ": kiln info hung";
      ASSERT_EQ(run.exit_code, 0) << variable << "=" << path << ": " << run.err;
      const nlohmann::json j = nlohmann::json::parse(run.out, nullptr, false);
      ASSERT_TRUE(j.is_object()) << run.out;
      const std::string state = j["remote_cache"]["state"].get<std::string>();
      EXPECT_EQ(state.rfind("off: ", 0), 0u) << state;
      EXPECT_NE(state.find(variable), std::string::npos) << state;
      EXPECT_NE(state.find("'" + path + "' " + what), std::string::npos) << state;
      EXPECT_NE(state.find("regular file"), std::string::npos) << state;
    }
  }
}

TEST(RemoteSecretFile, TuneGoesOnWithTheTierOffAndOneWarning) {
  if (!remote_cache_built()) KILN_SKIP(Skip::kHiredis) << "built without hiredis/OpenSSL";
  Machine a;
  const std::string fifo = (a.dir() / "secret-fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  TuneRun t = tune_on(a, "KILN_REMOTE_CACHE=redis://127.0.0.1:" + std::to_string(free_port()) +
                             " KILN_REMOTE_CACHE_SECRET_FILE=" + fifo);
  EXPECT_FALSE(t.run.timed_out) << "kiln tune hung on a FIFO secret file";
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.warnings("KILN_REMOTE_CACHE_SECRET_FILE"), 1) << t.run.err;
  EXPECT_EQ(t.warnings("the remote cache tier is off"), 1) << t.run.err;
  EXPECT_GT(t.compiled(), 0);
}

TEST(RemoteSecretFile, OverFourKibibytesIsRefusedWithTheLimit) {
  Machine m;
  ::setenv("KILN_REMOTE_CACHE", "redis://127.0.0.1:6379", 1);
  ::setenv("KILN_REMOTE_CACHE_PASSWORD_FILE", m.file("big", std::string(5000, 'p')).c_str(), 1);
  Result<std::optional<RemoteCacheConfig>> big = RemoteCacheConfig::from_env();
  ::setenv("KILN_REMOTE_CACHE_PASSWORD_FILE", m.file("ok", "pw\n").c_str(), 1);
  Result<std::optional<RemoteCacheConfig>> ok = RemoteCacheConfig::from_env();
  ::unsetenv("KILN_REMOTE_CACHE_PASSWORD_FILE");
  ::unsetenv("KILN_REMOTE_CACHE");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("larger than 4096 bytes"), std::string::npos)
      << big.error().message;
  EXPECT_NE(big.error().message.find("KILN_REMOTE_CACHE_PASSWORD_FILE"), std::string::npos);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ((*ok)->password, "pw");
}

}  // namespace
}  // namespace kiln::testing
