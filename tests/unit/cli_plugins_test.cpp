// The `kiln` command loads its heavy libraries (LLVM and Clang, Open MPI,
// hiredis and OpenSSL, libzip) only when a command needs them
// (kiln/core/plugin.hpp): what the real process maps is read from the
// dynamic loader's own trace (LD_DEBUG=files), which names every object it
// maps ("generating link map"), at start and by dlopen alike, in kiln and
// in any process it starts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "run_command.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

// The objects the loader mapped for `kiln ARGS` (their file= names), and
// the exit status.
struct Loaded {
  int exit_code = -1;
  std::set<std::string> files;
  std::string trace;
};

Loaded run_traced(const std::string& args, const std::string& env = "") {
  // The trace goes to stderr; kiln's own output is dropped.
  const auto run = testing::run_command("env LD_DEBUG=files " + env + " " KILN_CLI_PATH " " + args +
                                        " 2>&1 >/dev/null");
  Loaded out{run.exit_code, {}, run.out};
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("file=");
    if (at == std::string::npos || line.find("generating link map") == std::string::npos) continue;
    const auto end = line.find_first_of(" [;", at + 5);
    std::string file = line.substr(at + 5, end - at - 5);
    out.files.insert(file.substr(file.rfind('/') + 1));
  }
  return out;
}

const char* const kHeavy[] = {"libLLVM", "libclang-cpp", "libmpi",
                              "libicu",  "libhiredis",   "libzip"};

void expect_light(const std::string& args) {
  const Loaded l = run_traced(args);
  ASSERT_EQ(l.exit_code, 0) << args << "\n" << l.trace.substr(0, 4000);
  // The trace works (else an empty list would pass): libc is always loaded.
  ASSERT_TRUE(l.files.count("libc.so.6")) << "LD_DEBUG=files traced nothing for kiln " << args;
  for (const std::string& file : l.files) {
    for (const char* heavy : kHeavy) {
      EXPECT_NE(file.rfind(heavy, 0), 0u) << "kiln " << args << " mapped " << file;
    }
  }
}

TEST(CliPlugins, HelpMapsNoCompilerMpiOrRedis) {
  expect_light("--help");
  expect_light("--version");
}

TEST(CliPlugins, InfoWithoutToolchainMapsNoCompilerMpiOrRedis) {
  expect_light("info --no-toolchain");
  expect_light("info --no-toolchain --json");
}

TEST(CliPlugins, InfoWithoutToolchainStillSaysTheRest) {
  const auto r = testing::run_command(KILN_CLI_PATH " info --no-toolchain --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = r.json();
  EXPECT_FALSE(j["cache_dir"].get<std::string>().empty());
  EXPECT_TRUE(j.contains("remote_cache"));
  EXPECT_TRUE(j.contains("distributed"));
  EXPECT_FALSE(j.contains("fingerprints")) << "the toolchain section was left in";
}

// The full `kiln info` loads the CPU backend plugin, and LLVM with it: the
// trace sees a dlopen'ed library, so the tests above can fail.
TEST(CliPlugins, ToolchainSectionLoadsTheCpuPlugin) {
  if (!KILN_TEST_HAVE_LLVM) KILN_SKIP(Skip::kLlvm) << "the CPU backend is not built";
  const Loaded l = run_traced("info");
  ASSERT_EQ(l.exit_code, 0) << l.trace.substr(0, 4000);
  EXPECT_TRUE(l.files.count("libkiln_cpu_backend.so")) << l.trace.substr(0, 4000);
  bool llvm = false;
  for (const std::string& file : l.files) llvm = llvm || file.rfind("libLLVM", 0) == 0;
  EXPECT_TRUE(llvm);
}

// A plugin that is not there is an error naming the path tried and the fix.
TEST(CliPlugins, MissingCpuPluginNamesThePathAndTheFix) {
  if (!KILN_TEST_HAVE_LLVM) KILN_SKIP(Skip::kLlvm) << "the CPU backend is not built";
  const auto r = testing::run_command(
      "env KILN_CPU_BACKEND_PLUGIN=/nonexistent/libkiln_cpu_backend.so " KILN_CLI_PATH
      " info --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string reason = r.json()["llvm"]["reason"].get<std::string>();
  EXPECT_NE(reason.find("/nonexistent/libkiln_cpu_backend.so"), std::string::npos) << reason;
  EXPECT_NE(reason.find("kiln_cpu_plugin"), std::string::npos) << reason;
}

// What this kiln was built with, from the part of `kiln info` that loads
// nothing.
nlohmann::json light_info(const std::string& env = "") {
  const auto r =
      testing::run_command("env " + env + " " KILN_CLI_PATH " info --no-toolchain --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return r.json();
}

TEST(CliPlugins, MissingMpiPluginNamesThePathAndTheFix) {
  if (!light_info()["distributed"]["mpi"].get<bool>())
    KILN_SKIP(Skip::kMpi) << "Kiln was built without MPI";
  const auto r =
      testing::run_command("env KILN_MPI_PLUGIN=/nonexistent/libkiln_mpi.so " KILN_CLI_PATH
                           " tune --kernel gemm_f32_tiled --backend cpu --shape M=64,N=64,K=64 "
                           "--distributed independent 2>&1");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/libkiln_mpi.so"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kiln_mpi_plugin"), std::string::npos) << r.out;
}

// The remote tier without its plugin is off for the run, saying why; the
// rest of kiln works.
TEST(CliPlugins, MissingRedisPluginNamesThePathAndTheFix) {
  if (!light_info()["remote_cache"]["built"].get<bool>())
    KILN_SKIP(Skip::kHiredis) << "Kiln was built without hiredis and OpenSSL";
  const nlohmann::json remote = light_info(
      "KILN_REMOTE_CACHE=redis://127.0.0.1:1 "
      "KILN_REDIS_PLUGIN=/nonexistent/libkiln_redis.so")["remote_cache"];
  const std::string state = remote["state"].get<std::string>();
  EXPECT_NE(state.find("/nonexistent/libkiln_redis.so"), std::string::npos) << state;
  EXPECT_NE(state.find("kiln_redis_plugin"), std::string::npos) << state;
}

// Asked to, the light `kiln info` reaches the Redis plugin (and hiredis):
// the remote tier's one PING loads it, no sooner.
TEST(CliPlugins, TheRemoteTierLoadsTheRedisPluginWhenSet) {
  if (!light_info()["remote_cache"]["built"].get<bool>())
    KILN_SKIP(Skip::kHiredis) << "Kiln was built without hiredis and OpenSSL";
  const Loaded l = run_traced("info --no-toolchain", "KILN_REMOTE_CACHE=redis://127.0.0.1:1");
  ASSERT_EQ(l.exit_code, 0) << l.trace.substr(0, 4000);
  EXPECT_TRUE(l.files.count("libkiln_redis.so"));
  bool hiredis = false;
  for (const std::string& file : l.files) hiredis = hiredis || file.rfind("libhiredis", 0) == 0;
  EXPECT_TRUE(hiredis);
}

}  // namespace
}  // namespace kiln
