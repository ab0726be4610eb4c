// `kiln compile` and `kiln bench compile` as a user runs them (a real
// process): usage errors, and a one-config smoke run of the benchmark.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_command.hpp"
#include "skip.hpp"

namespace {

// `kiln ARGS`, stdout and stderr together.
kiln::testing::CommandRun run(const std::string& args) {
  return kiln::testing::run_command(std::string(KILN_CLI_PATH) + " " + args + " 2>&1");
}

TEST(KilnCompileCli, UnknownKernelNamesTheShippedOnes) {
  auto r = run("compile --kernel no_such --arch sm_80");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("gemm_f16"), std::string::npos) << r.out;
}

TEST(KilnCompileCli, KernelIsRequired) {
  auto r = run("compile --arch sm_80");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--kernel"), std::string::npos) << r.out;
}

#if KILN_BACKEND_CUDA
TEST(KilnBenchCli, SmokeRunReportsEveryVariantRoundsRatiosAndTheFloor) {
  auto r =
      run("bench compile --kernel gemm_f16 --max-configs 2 --rounds 2 --arch sm_80 --json "
          "2>/dev/null");
  if (r.out.find("NVRTC not found") != std::string::npos) KILN_SKIP(Skip::kCudaToolkit) << r.out;
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto report = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  const auto& k = report.at("kernels").at("gemm_f16");
  EXPECT_EQ(k.at("configs"), 2);
  EXPECT_EQ(report.at("rounds"), 2);
  std::vector<std::string> names;
  for (const auto& v : k.at("variants")) {
    names.push_back(v.at("name"));
    EXPECT_EQ(v.at("ok"), 2);
    EXPECT_GT(v.at("wall_seconds").get<double>(), 0.0);
    EXPECT_EQ(v.at("round_seconds").size(), 2u) << v.dump();
    EXPECT_GT(v.at("speedup_vs_naive").get<double>(), 0.0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "threads", "grouping", "pch", "kiln",
                                             "kiln+processes"}));
  EXPECT_TRUE(k.contains("naive_over_kiln"));
  EXPECT_TRUE(k.contains("processes_over_threads"));
  // Two configs in one program against two programs: the floor is there
  // unless grouping happened to be no faster, which the report then says.
  EXPECT_TRUE(k.contains("floor")) << k.dump();
}
#endif

}  // namespace
