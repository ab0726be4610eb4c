// `kiln bench rows --json` run as a user would, on a tiny setting: both row
// kernels tuned, checked and timed beside every bandwidth pattern, and each
// figure what its own numbers say. The GB/s are not judged: no timed
// assertion.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "run_command.hpp"

namespace {

kiln::testing::CommandRun bench_rows(const std::string& args) {
  const auto cache =
      std::filesystem::temp_directory_path() / ("kiln_bench_rows_" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  auto r = kiln::testing::run_command("KILN_CACHE_DIR=" + cache.string() +
                                      " " KILN_CLI_PATH " bench rows " + args + " 2>&1");
  std::filesystem::remove_all(cache);
  return r;
}

TEST(BenchRowsCli, TimesBothRowKernelsAgainstTheBestBandwidthPattern) {
  // 1 MiB tensors of 200-float rows: 1,310 rows, none a multiple of 8.
  auto r = bench_rows("--mib 1 --cols 200 --rounds 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  const auto& bw = j["bandwidth"];
  EXPECT_EQ(bw["threads"], 2);
  EXPECT_EQ(bw["array_bytes"], 1 << 20);
  double best = 0;
  for (const char* name : {"read", "write", "copy", "memcpy", "update", "triad"}) {
    ASSERT_TRUE(bw["probes"].contains(name)) << bw.dump();
    EXPECT_GT(bw["probes"][name].get<double>(), 0) << name;
    best = std::max(best, bw["probes"][name].get<double>());
  }
  EXPECT_EQ(bw["gbps"].get<double>(), best) << "the baseline is the best pattern";
  EXPECT_EQ(bw["probes"][bw["best"].get<std::string>()].get<double>(), best);
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][0]["kernel"], "fused_add_rmsnorm");
  EXPECT_EQ(j["kernels"][1]["kernel"], "softmax_f32");
  for (const auto& k : j["kernels"]) {
    SCOPED_TRACE(k.dump());
    EXPECT_EQ(k["source"], "tuned");
    EXPECT_GE(k["configs_measured"].get<int>(), 1);
    const double gbps = k["bytes_per_call"].get<double>() / (k["median_ms"].get<double>() * 1e6);
    EXPECT_NEAR(k["gbps"].get<double>(), gbps, 1e-6 * gbps);
    EXPECT_NEAR(k["fraction_of_bandwidth"].get<double>(), gbps / best, 1e-6);
  }
  EXPECT_EQ(j["kernels"][1]["shape"], "rows=1310,cols=200");
  // softmax moves x and y once: 2 x 4 bytes an element.
  EXPECT_EQ(j["kernels"][1]["bytes_per_call"].get<double>(), 8.0 * 1310 * 200);
}

TEST(BenchRowsCli, BadSizesExitTwoNamingTheOption) {
  for (const std::string args : {"--mib 0", "--cols 0", "--rounds 0", "--threads 0"}) {
    auto r = bench_rows(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(args.substr(0, args.find(' '))), std::string::npos) << r.out;
  }
}

}  // namespace
