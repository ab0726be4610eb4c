// `kiln bench gemm --json` run as a user would, on a tiny setting: the
// report's structure and the two results agreeing. Skips when OpenBLAS is
// not installed (the command then says how to install it, exit 3). The
// GFLOP/s are not judged: no timed assertion.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "run_command.hpp"
#include "skip.hpp"

namespace {

TEST(BenchGemmCli, ComparesTheTunedGemmWithOpenBlasOnTheSameCall) {
  const auto cache =
      std::filesystem::temp_directory_path() / ("kiln_bench_gemm_" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  // stderr joins stdout only when the command fails: its message is checked.
  const std::string command = "KILN_CACHE_DIR=" + cache.string() +
                              " " KILN_CLI_PATH
                              " bench gemm --sizes 48,37 --max-configs 3 --rounds 1 --json";
  kiln::testing::CommandRun r = kiln::testing::run_command(command);
  if (r.exit_code == 3) {
    kiln::testing::CommandRun why = kiln::testing::run_command(command + " 2>&1");
    EXPECT_NE(why.out.find("apt-get install libopenblas-dev"), std::string::npos) << why.out;
    std::filesystem::remove_all(cache);
    KILN_SKIP(Skip::kOpenblas) << "OpenBLAS is not installed: " << why.out;
  }
  std::filesystem::remove_all(cache);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_FALSE(j["openblas"]["library"].get<std::string>().empty());
  ASSERT_EQ(j["sizes"].size(), 2u);
  for (const auto& row : j["sizes"]) {
    SCOPED_TRACE(row.dump());
    EXPECT_GT(row["kiln_gflops"].get<double>(), 0);
    EXPECT_GT(row["openblas_gflops"].get<double>(), 0);
    EXPECT_NEAR(row["ratio"].get<double>(),
                row["kiln_gflops"].get<double>() / row["openblas_gflops"].get<double>(), 1e-9);
    // Both computed the same C (inputs in [-1, 1), K <= 48 products).
    EXPECT_LT(row["max_abs_diff"].get<double>(), 1e-3);
    EXPECT_LE(row["configs_measured"].get<int>(), 3);
    EXPECT_EQ(row["source"], "tuned");
    EXPECT_GE(row["space_size"].get<int>(), 1);
  }
  EXPECT_EQ(j["sizes"][1]["size"], 37) << "sizes in the order asked";
}

// More threads than the machine has is measured, and said: the device line
// counts them as cores.
TEST(BenchGemmCli, MoreThreadsThanTheMachineHasAreNamedAsOversubscribed) {
  const unsigned hardware = std::thread::hardware_concurrency();
  if (hardware == 0 || hardware >= 1024)
    KILN_SKIP(Skip::kHost) << "hardware threads unknown or too many";
  const auto cache = std::filesystem::temp_directory_path() /
                     ("kiln_bench_gemm_over_" + std::to_string(::getpid()));
  const auto err = cache.string() + ".err";
  std::filesystem::remove_all(cache);
  const std::string threads = std::to_string(hardware + 1);
  kiln::testing::CommandRun r = kiln::testing::run_command(
      "KILN_CACHE_DIR=" + cache.string() + " " KILN_CLI_PATH " bench gemm --sizes 16 --threads " +
      threads + " --max-configs 1 --rounds 1 --json 2>" + err);
  std::filesystem::remove_all(cache);
  const std::string text = kiln::testing::run_command("cat " + err).out;
  std::filesystem::remove(err);
  if (r.exit_code == 3) KILN_SKIP(Skip::kOpenblas) << "OpenBLAS is not installed";
  ASSERT_EQ(r.exit_code, 0) << text;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["threads"], hardware + 1);
  EXPECT_EQ(j["hardware_threads"], hardware);
  EXPECT_NE(text.find("--threads " + threads + " is more than the " + std::to_string(hardware) +
                      " hardware threads"),
            std::string::npos)
      << text;
}

TEST(BenchGemmCli, ABadSizeIsAUsageError) {
  kiln::testing::CommandRun r =
      kiln::testing::run_command(KILN_CLI_PATH " bench gemm --sizes 512,x 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("'x' is not a size"), std::string::npos) << r.out;
}

// Each item of --sizes a size: an empty last item, a sign or a space were
// taken (512, ran 512; " 8" and "+8" ran 8 where "8 " was refused) and a
// size named twice ran twice.
TEST(BenchGemmCli, EverySizeItemIsDigitsAndNamedOnce) {
  for (const char* bad : {"512,", "' 8'", "+8", "8,,16", ",8"}) {
    kiln::testing::CommandRun r = kiln::testing::run_command(
        std::string(KILN_CLI_PATH " bench gemm --max-configs 1 --rounds 1 --sizes ") + bad +
        " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("is not a size from 1 to 16384"), std::string::npos)
        << bad << ": " << r.out;
  }
  kiln::testing::CommandRun twice = kiln::testing::run_command(
      KILN_CLI_PATH " bench gemm --max-configs 1 --rounds 1 --sizes 8,16,8 2>&1");
  EXPECT_EQ(twice.exit_code, 2) << twice.out;
  EXPECT_NE(twice.out.find("--sizes: 8 is given twice in '8,16,8': name each size once"),
            std::string::npos)
      << twice.out;
  kiln::testing::CommandRun empty =
      kiln::testing::run_command(KILN_CLI_PATH " bench gemm --sizes '' 2>&1");
  EXPECT_EQ(empty.exit_code, 2) << empty.out;
  EXPECT_NE(empty.out.find("--sizes is empty: give M=N=K sizes"), std::string::npos) << empty.out;
}

// An unknown --search offers auto, the default, with the strategies.
TEST(BenchGemmCli, AnUnknownSearchOffersAutoToo) {
  kiln::testing::CommandRun r =
      kiln::testing::run_command(KILN_CLI_PATH " bench gemm --sizes 8 --search simplex 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown search strategy 'simplex': use auto (the default) or one of "
                       "exhaustive"),
            std::string::npos)
      << r.out;
}

}  // namespace
