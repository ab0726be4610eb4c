// `kiln compile` fills the artifact cache ahead of use: a later `kiln tune`
// of the same kernel compiles nothing, every config's artifact served from
// what `kiln compile` stored. The real executable in child processes, real
// Clang compiles on the CPU backend.
#include "cli_runner.hpp"

namespace kiln {
namespace {

using testing::CliRun;
using CompileFillsCache = testing::CliTest;

TEST_F(CompileFillsCache, TuneAfterCompileCompilesNothing) {
  CliRun compiled = kiln("compile --kernel fused_add_rmsnorm --json");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  const nlohmann::json c = compiled.json();
  EXPECT_EQ(c["kernel"], "fused_add_rmsnorm_cpu");
  EXPECT_EQ(c["arch"], "host");
  EXPECT_EQ(c["format"], "cpu_shared_object");
  EXPECT_EQ(c["failed"], 0);
  ASSERT_GT(c["ok"].get<int>(), 0);
  EXPECT_EQ(c["stored"], c["ok"]) << "every compiled config is stored";

  CliRun tuned = kiln("tune --kernel fused_add_rmsnorm --shape rows=8,hidden=64 --json");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const nlohmann::json t = tuned.json();
  EXPECT_EQ(t["source"], "tuned");
  EXPECT_GT(t["stats"]["benchmarked"].get<int>(), 0);
  EXPECT_EQ(t["stats"]["compiled"], 0) << t["stats"].dump();
  EXPECT_EQ(t["stats"]["artifact_hits"], t["stats"]["configs"]) << t["stats"].dump();
}

// Without the compile, the same tune compiles: the test above is not
// passing for another reason (a cache shared between tests).
TEST_F(CompileFillsCache, TuneOnAnEmptyCacheCompiles) {
  CliRun tuned = kiln("tune --kernel fused_add_rmsnorm --shape rows=8,hidden=64 --json");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_GT(tuned.json()["stats"]["compiled"].get<int>(), 0) << tuned.out;
}

TEST_F(CompileFillsCache, HelpListsEveryShippedKernel) {
  CliRun help = kiln("compile --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const char* name :
       {"gemm_f32", "fused_add_rmsnorm", "gemm_f16", "gemm_bf16", "gemm_f16_cccl"}) {
    EXPECT_NE(help.out.find(name), std::string::npos) << name << "\n" << help.out;
  }
}

}  // namespace
}  // namespace kiln
