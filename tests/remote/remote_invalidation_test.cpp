// A remote entry stands for the kernel that made it, like every other kind
// of remembered state (issue 54): a machine whose header on disk differs
// from the pusher's gets none of its artifacts and compiles its own; a
// machine whose header is the pusher's is warm from the tier. Real `kiln`
// processes, a real redis-server on a loopback port of the test's own.
#include <gtest/gtest.h>

#include <fstream>

#include "remote_test_util.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

// The user-kernel example under `machine`, with its spec naming inc/ as an
// include directory and the template including inc/version.h, which holds
// `version`. (One directory for every machine: an include directory's path
// is one of the compile's options, so the same kernel at another path is
// another artifact key.)
std::string write_kernel(const Machine& machine, const std::string& version) {
  // The source tree, from the docs directory this suite is given.
  const std::string example = std::string(KILN_DOCS_DIR) + "/../examples/user_kernel/";
  const fs::path dir = machine.dir() / "kernel";
  fs::create_directories(dir / "inc");
  std::ifstream source(example + "transpose.cpp");
  std::ofstream(dir / "transpose.cpp") << "#include \"version.h\"\n" << source.rdbuf();
  std::ifstream spec_file(example + "space.json");
  nlohmann::json spec = nlohmann::json::parse(spec_file);
  spec["include_dirs"] = {"inc"};
  std::ofstream(dir / "space.json") << spec.dump(1);
  std::ofstream(dir / "inc" / "version.h") << "// " << version << "\n";
  return "tune --template " + (dir / "transpose.cpp").string() + " --space " +
         (dir / "space.json").string() +
         " --entry 'example::transpose<{TILE},{STAGED}>' --shape M=40,N=72 --json";
}

TEST(RemoteInvalidation, AnotherHeaderGetsNoneOfThePushersEntriesTheSameHeaderGetsThemAll) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  ASSERT_TRUE(server.running());
  Machine a, b, c, keys, source;
  const std::string env = "KILN_REMOTE_CACHE=" + server.url() +
                          " KILN_REMOTE_CACHE_SECRET_FILE=" + keys.file("secret", "team-key\n");
  auto kiln = [&](const Machine& m, const std::string& args) {
    DeadlineRun run = run_with_deadline("env KILN_CACHE_DIR=" + m.dir().string() +
                                        " KILN_RANK= RANK= LOCAL_RANK= KILN_RETUNE= " + env + " " +
                                        KILN_CLI_PATH " " + args);
    nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
    EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.out << run.err;
    return report;
  };
  const nlohmann::json pushed = kiln(a, write_kernel(source, "v1"));
  ASSERT_FALSE(pushed.is_discarded());
  ASSERT_GT(pushed["stats"]["compiled"].get<int>(), 0);
  kiln(a, "cache remote push");

  // The header now says v2: nothing of A's answers for it on B.
  const nlohmann::json other = kiln(b, write_kernel(source, "v2"));
  ASSERT_FALSE(other.is_discarded());
  EXPECT_EQ(other["source"], "tuned");
  EXPECT_EQ(other["stats"]["artifact_hits"], 0) << other.dump(2);
  EXPECT_EQ(other["stats"]["compiled"], pushed["stats"]["compiled"]);
  EXPECT_EQ(other["remote_cache"]["hits"], 0) << other["remote_cache"].dump();

  // The header as A had it: C is warm from the tier, nothing compiled.
  const nlohmann::json same = kiln(c, write_kernel(source, "v1"));
  ASSERT_FALSE(same.is_discarded());
  EXPECT_EQ(same["stats"]["compiled"], 0) << same.dump(2);
  EXPECT_GT(same["remote_cache"]["hits"].get<int>(), 0) << same["remote_cache"].dump();
}

}  // namespace
}  // namespace kiln::testing
