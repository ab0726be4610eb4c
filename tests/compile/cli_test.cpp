// `kiln compile` and `kiln bench compile` as a user runs them (a real
// process): usage errors, and a one-config smoke run of the benchmark.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct Output {
  int status = -1;
  std::string text;
};

Output run(const std::string& args) {
  Output out;
  const std::string cmd = std::string(KILN_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), pipe)) out.text += buf.data();
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(KilnCompileCli, UnknownKernelNamesTheShippedOnes) {
  auto out = run("compile --kernel no_such --arch sm_80");
  EXPECT_NE(out.status, 0);
  EXPECT_NE(out.text.find("gemm_f16"), std::string::npos) << out.text;
}

TEST(KilnCompileCli, KernelIsRequired) {
  auto out = run("compile --arch sm_80");
  EXPECT_EQ(out.status, 2) << out.text;
  EXPECT_NE(out.text.find("--kernel"), std::string::npos) << out.text;
}

#if KILN_BACKEND_CUDA
TEST(KilnBenchCli, OneConfigSmokeRunReportsEveryVariantAndRatios) {
  auto out = run("bench compile --kernel gemm_f16 --max-configs 1 --arch sm_80 --json 2>/dev/null");
  if (out.text.find("NVRTC not found") != std::string::npos) GTEST_SKIP() << out.text;
  ASSERT_EQ(out.status, 0) << out.text;
  auto report = nlohmann::json::parse(out.text.substr(out.text.find('{')));
  const auto& k = report.at("kernels").at("gemm_f16");
  EXPECT_EQ(k.at("configs"), 1);
  std::vector<std::string> names;
  for (const auto& v : k.at("variants")) {
    names.push_back(v.at("name"));
    EXPECT_EQ(v.at("ok"), 1);
    EXPECT_GT(v.at("wall_seconds").get<double>(), 0.0);
    EXPECT_GT(v.at("speedup_vs_naive").get<double>(), 0.0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "threads", "grouping", "pch", "kiln"}));
  EXPECT_TRUE(k.contains("naive_over_kiln"));
}
#endif

}  // namespace
