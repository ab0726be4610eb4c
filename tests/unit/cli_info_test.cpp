// The `kiln` executable, run as a user would: `kiln info --json` and usage errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_command.hpp"

namespace {

using CliRun = kiln::testing::CommandRun;

// `kiln ARGS` after the environment prefix `env`, stdout and stderr together.
CliRun run_kiln(const std::string& args, const std::string& env = "") {
  return kiln::testing::run_command(env + std::string(KILN_CLI_PATH) + " " + args + " 2>&1");
}

TEST(CliInfo, JsonHasEveryField) {
  CliRun r = run_kiln("info --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws (fails) if not valid JSON
  EXPECT_EQ(j["kiln_version"], "0.1.0");
  // One fingerprint per built backend, each with its own compiler alone.
  EXPECT_EQ(j["fingerprints"].contains("cpu"), static_cast<bool>(KILN_TEST_HAVE_LLVM));
  EXPECT_EQ(j["fingerprints"].contains("cuda"), static_cast<bool>(KILN_TEST_HAVE_CUDA));
  for (const auto& [name, fingerprint] : j["fingerprints"].items()) {
    for (const char* part : {"kiln_version", "codegen_hash", "backend", "compiler", "hash"}) {
      EXPECT_TRUE(fingerprint.contains(part)) << name << ": " << part;
    }
    EXPECT_EQ(fingerprint["backend"], name);
  }
  EXPECT_TRUE(j["cuda"]["driver"].contains("available"));
  if (j["cuda"]["devices"].empty()) {
    EXPECT_FALSE(j["cuda"]["devices_reason"].get<std::string>().empty());
  }
  EXPECT_FALSE(j["cache_dir"].get<std::string>().empty());
  // Both backends and their devices are listed.
  EXPECT_TRUE(j["cpu"].contains("available"));
  if (KILN_TEST_HAVE_LLVM) {
    EXPECT_TRUE(j["cpu"]["available"].get<bool>()) << j["cpu"].dump();
    EXPECT_GT(j["cpu"]["threads"].get<int>(), 0);
  }
  EXPECT_TRUE(j["cache_env"].contains("KILN_NVRTC_FLAGS"));
}

TEST(CliInfo, ReflectsTheEnvironment) {
  CliRun r = run_kiln("info --json");
  ASSERT_EQ(r.exit_code, 0);
  CliRun r2 = run_kiln("info --json");  // same environment, same fingerprint
  EXPECT_EQ(nlohmann::json::parse(r.out)["fingerprints"],
            nlohmann::json::parse(r2.out)["fingerprints"]);
  CliRun r3 = run_kiln("info --json", "env KILN_CACHE_DIR=/tmp/kiln-cli-test KILN_ARCH=sm_80 ");
  ASSERT_EQ(r3.exit_code, 0) << r3.out;
  nlohmann::json j = nlohmann::json::parse(r3.out);
  EXPECT_EQ(j["cache_dir"], "/tmp/kiln-cli-test");
  EXPECT_EQ(j["cache_env"]["KILN_ARCH"], "sm_80");
}

TEST(CliInfo, TextNamesEachPart) {
  CliRun r = run_kiln("info");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* s :
       {"Toolchain fingerprint", "nvrtc", "llvm", "CUDA driver", "CPU device", "Cache dir"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
}

TEST(CliUsage, UnknownSubcommandExitsTwo) {
  CliRun r = run_kiln("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("frobnicate"), std::string::npos) << r.out;
}

TEST(CliUsage, UnknownFlagExitsTwo) {
  EXPECT_EQ(run_kiln("info --no-such-flag").exit_code, 2);
  EXPECT_EQ(run_kiln("--no-such-flag").exit_code, 2);
  EXPECT_EQ(run_kiln("").exit_code, 2);
}

TEST(CliUsage, HelpAndVersionExitZero) {
  EXPECT_EQ(run_kiln("--help").exit_code, 0);
  CliRun v = run_kiln("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("0.1.0"), std::string::npos);
}

}  // namespace
