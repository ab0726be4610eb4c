// `kiln bench tune --json` run as a user would, on a tiny setting: the
// report's structure, and the warm start in a second process (the command
// re-runs itself over the cache its pipelined run filled) that is served
// from disk with no compile. Behaviour only: the timings are not judged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_command.hpp"

namespace {

using CliRun = kiln::testing::CommandRun;

// stdout only: the command's progress lines go to stderr.
CliRun run_kiln(const std::string& args) {
  return kiln::testing::run_command(std::string(KILN_CLI_PATH) + " " + args);
}

TEST(BenchTuneCli, JsonReportAndAWarmProcessThatCompilesNothing) {
  CliRun r = run_kiln("bench tune --json --max-configs 4 --size 16 --bench-ms 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws (fails) if not one JSON document

  EXPECT_EQ(j["benchmark"], "tune");
  EXPECT_EQ(j["configs"], 4);
  for (const char* key : {"backend", "size", "compile_threads", "bench_workers", "bench_threads",
                          "group_size", "target_seconds", "cores", "load_average"}) {
    EXPECT_TRUE(j["setup"].contains(key)) << key;
  }
  for (const char* key :
       {"compile_seconds", "benchmark_seconds", "compile_over_benchmark", "comparable"}) {
    EXPECT_TRUE(j["per_config"].contains(key)) << key;
  }
  // One pipelined and one compile-then-benchmark run, each from a cold
  // cache: every config compiled exactly once there (group size 1: one
  // program a config), none found in a cache left by another run.
  ASSERT_EQ(j["runs"].size(), 2u);
  int pipelined = 0;
  for (const auto& run : j["runs"]) {
    pipelined += run["pipeline"].get<bool>() ? 1 : 0;
    EXPECT_EQ(run["source"], "tuned");
    EXPECT_EQ(run["configs"], 4);
    EXPECT_EQ(run["compiler_calls"], 4);
    EXPECT_EQ(run["stats"]["benchmarked"], 4);
  }
  EXPECT_EQ(pipelined, 1);

  // The warm process: served from the tuning cache on disk, the winner's
  // artifact from the artifact cache, no compiler call at all.
  const auto& warm = j["warm"];
  EXPECT_EQ(warm["source"], "disk");
  EXPECT_EQ(warm["compiler_calls"], 0);
  EXPECT_EQ(warm["stats"]["compiled"], 0);
  EXPECT_EQ(warm["stats"]["artifact_hits"], 1);
  EXPECT_EQ(warm["stats"]["cache_hits"], 1);
  EXPECT_TRUE(j["warm_start_ok"].get<bool>());
  for (const auto& run : j["runs"]) {
    if (run["pipeline"].get<bool>()) {
      EXPECT_EQ(warm["best"], run["best"]) << "the cold winner";
    }
  }

  for (const char* key :
       {"pipelined_over_ideal_same_run", "pipelined_over_ideal_stages_alone",
        "serial_over_pipelined", "cold_over_warm_tune", "cold_over_warm_process"}) {
    EXPECT_GT(j["ratios"][key].get<double>(), 0.0) << key;
  }
  ASSERT_EQ(j["targets"].size(), 5u);
  for (const auto& t : j["targets"]) {
    for (const char* key : {"name", "value", "goal", "met", "applies"}) {
      EXPECT_TRUE(t.contains(key)) << key;
    }
  }
}

TEST(BenchTuneCli, TableIsTheDefaultOutput) {
  CliRun r = run_kiln("bench tune --max-configs 2 --size 16 --bench-ms 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("pipelined"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compile-then-benchmark"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warm, new process"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pipelined / ideal (same run)"), std::string::npos) << r.out;
}

TEST(BenchTuneCli, UnknownBackendIsAnError) {
  CliRun r = run_kiln("bench tune --backend nosuch --max-configs 2 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("cpu"), std::string::npos) << r.out;
}

}  // namespace
