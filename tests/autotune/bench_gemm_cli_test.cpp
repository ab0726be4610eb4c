// `kiln bench gemm --json` run as a user would, on a tiny setting: the
// report's structure, every side checked, the baseline the fastest correct
// BLAS at its native kernel. Skips when no BLAS is installed (the command
// then says how to install one, exit 3). The GFLOP/s are not judged: no
// timed assertion.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "run_command.hpp"
#include "skip.hpp"

namespace {

// Which kernel variables the tests clear, so that the machine's own
// settings do not change what they check.
constexpr const char* kClearKernelVariables =
    "env -u OPENBLAS_CORETYPE -u BLIS_ARCH_TYPE -u MKL_ENABLE_INSTRUCTIONS ";

std::filesystem::path fresh_cache(const std::string& name) {
  const auto cache = std::filesystem::temp_directory_path() /
                     ("kiln_bench_gemm_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  return cache;
}

// Runs `kiln bench gemm ARGS --json` over a fresh cache with `env` before
// it and parses its report into `j`; sets `skipped` instead when no BLAS is
// installed (exit 3, which must say how to install one).
void bench_gemm(const std::string& env, const std::string& args, nlohmann::json* j, bool* skipped) {
  const auto cache = fresh_cache("run");
  const std::string command = kClearKernelVariables + env + " KILN_CACHE_DIR=" + cache.string() +
                              " " KILN_CLI_PATH " bench gemm " + args + " --json";
  kiln::testing::CommandRun r = kiln::testing::run_command(command);
  std::filesystem::remove_all(cache);
  *skipped = r.exit_code == 3;
  if (*skipped) {
    kiln::testing::CommandRun why = kiln::testing::run_command(command + " 2>&1");
    std::filesystem::remove_all(cache);
    EXPECT_NE(why.out.find("apt-get install libopenblas-dev"), std::string::npos) << why.out;
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.out;
  *j = nlohmann::json::parse(r.out);
}

TEST(BenchGemmCli, ComparesTheTunedGemmWithTheFastestBlasOnTheSameSizes) {
  nlohmann::json j;
  bool skipped = false;
  ASSERT_NO_FATAL_FAILURE(bench_gemm("", "--sizes 48,37 --max-configs 3 --rounds 1", &j, &skipped));
  if (skipped) KILN_SKIP(Skip::kOpenblas) << "no BLAS is installed";
  EXPECT_EQ(j["threads"], 2);
  ASSERT_FALSE(j["blas"].empty());
  ASSERT_EQ(j["sizes"].size(), 2u);
  for (const auto& row : j["sizes"]) {
    SCOPED_TRACE(row.dump());
    EXPECT_GT(row["kiln_gflops"].get<double>(), 0);
    EXPECT_GT(row["baseline_gflops"].get<double>(), 0);
    EXPECT_NEAR(row["ratio"].get<double>(),
                row["kiln_gflops"].get<double>() / row["baseline_gflops"].get<double>(), 1e-9);
    // Both checked against a double reference (inputs in [-1, 1), K <= 48).
    EXPECT_LT(row["kiln_max_abs_err"].get<double>(), 1e-3);
    EXPECT_TRUE(row["kiln_correct"].get<bool>());
    EXPECT_EQ(row["blas"].size(), j["blas"].size()) << "every library at every size";
    EXPECT_LE(row["configs_measured"].get<int>(), 3);
    EXPECT_EQ(row["source"], "tuned");
    EXPECT_GE(row["space_size"].get<int>(), 1);
  }
  EXPECT_EQ(j["sizes"][1]["size"], 37) << "sizes in the order asked";
}

// The headline ratio is against the fastest library that computed the size
// correctly at its native kernel, and every figure names the kernel it ran
// and its fraction of the fp32 FMA peak the run measured (issue 54: the
// ratio was against one OpenBLAS, whatever kernel the environment gave it).
TEST(BenchGemmCli, TheBaselineIsTheFastestCorrectBlasAndEveryFigureNamesItsKernel) {
  nlohmann::json j;
  bool skipped = false;
  ASSERT_NO_FATAL_FAILURE(bench_gemm("", "--sizes 40 --max-configs 2 --rounds 1", &j, &skipped));
  if (skipped) KILN_SKIP(Skip::kOpenblas) << "no BLAS is installed";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_GT(j["fma_peak"]["gflops"].get<double>(), 0) << j["fma_peak"];
    EXPECT_EQ(j["fma_peak"]["threads"], 2);
  }
  for (const auto& run : j["blas"]) {
    SCOPED_TRACE(run.dump());
    EXPECT_FALSE(run["kernel"].get<std::string>().empty());
    EXPECT_TRUE(std::filesystem::exists(run["library"].get<std::string>()));
    EXPECT_EQ(run["run"], "native") << "no kernel variable is set";
    EXPECT_TRUE(run["eligible"].get<bool>());
  }
  for (const auto& missing : j["blas_unavailable"]) EXPECT_FALSE(missing["why"].empty());
  const nlohmann::json& row = j["sizes"][0];
  double fastest = 0;
  for (const auto& side : row["blas"]) {
    SCOPED_TRACE(side.dump());
    EXPECT_FALSE(side["kernel"].get<std::string>().empty());
    if (!side["correct"].get<bool>()) continue;
    fastest = std::max(fastest, side["gflops"].get<double>());
    if (j["fma_peak"]["gflops"].get<double>() > 0) {
      EXPECT_NEAR(side["peak_fraction"].get<double>(),
                  side["gflops"].get<double>() / j["fma_peak"]["gflops"].get<double>(), 1e-9);
    }
  }
  EXPECT_EQ(row["baseline_gflops"].get<double>(), fastest) << row.dump();
  EXPECT_FALSE(row["baseline_kernel"].get<std::string>().empty());
  if (j["fma_peak"]["gflops"].get<double>() > 0) {
    EXPECT_NEAR(row["kiln_peak_fraction"].get<double>(),
                row["kiln_gflops"].get<double>() / j["fma_peak"]["gflops"].get<double>(), 1e-9);
  }
}

// OPENBLAS_CORETYPE forcing a lesser kernel than the CPU runs (as on the
// AVX-512 VM whose environment set Haswell): that run is reported, with its
// kernel, and the library is run again natively in another process, which
// is the baseline (the command ratioed against the forced kernel).
TEST(BenchGemmCli, AForcedLesserOpenBlasKernelIsReportedAndTheNativeOneIsTheBaseline) {
  nlohmann::json j;
  bool skipped = false;
  ASSERT_NO_FATAL_FAILURE(
      bench_gemm("OPENBLAS_CORETYPE=Prescott",
                 "--blas libopenblas.so.0 --sizes 32 --max-configs 2 --rounds 1", &j, &skipped));
  if (skipped) KILN_SKIP(Skip::kOpenblas) << "OpenBLAS is not installed";
  ASSERT_GE(j["blas"].size(), 1u) << j.dump();
  const nlohmann::json& native = j["blas"][0];
  EXPECT_EQ(native["run"], "native");
  EXPECT_EQ(native["flavor"], "OpenBLAS");
  if (native["isa_level"].get<int>() <= 2)
    KILN_SKIP(Skip::kHost) << "OpenBLAS's native kernel here is SSE3 already";
  ASSERT_EQ(j["blas"].size(), 2u) << j.dump();
  const nlohmann::json& forced = j["blas"][1];
  EXPECT_EQ(forced["run"], "environment");
  EXPECT_EQ(forced["value"], "Prescott");
  EXPECT_EQ(forced["set_by"], "environment");
  EXPECT_EQ(forced["kernel"], "Prescott");
  EXPECT_EQ(forced["library"], native["library"]) << "the same library, in another process";
  EXPECT_FALSE(forced["eligible"].get<bool>());
  EXPECT_NE(forced["note"].get<std::string>().find(
                "OPENBLAS_CORETYPE=Prescott from the environment forces Prescott (SSE3), a lesser "
                "ISA than this library's native " +
                native["kernel"].get<std::string>()),
            std::string::npos)
      << forced["note"];
  EXPECT_NE(native["note"].get<std::string>().find(
                "its native kernel: run again without OPENBLAS_CORETYPE=Prescott from the "
                "environment, which forces a lesser one ([2])"),
            std::string::npos)
      << native["note"];
  const nlohmann::json& row = j["sizes"][0];
  EXPECT_EQ(row["baseline"], native["id"]) << row.dump();
  EXPECT_EQ(row["baseline_kernel"], native["kernel"]);
  ASSERT_EQ(row["blas"].size(), 2u);
  EXPECT_EQ(row["blas"][1]["kernel"], "Prescott");
  EXPECT_GT(row["blas"][1]["gflops"].get<double>(), 0) << "the forced run is measured too";
}

// A forced kernel the CPU cannot run (AVX-512 SkylakeX on an AVX2 machine)
// ends only its own worker, by SIGILL, reported at the size; the native run
// is the baseline. Where SkylakeX is the native kernel, the environment's
// run is the same one and is not repeated.
TEST(BenchGemmCli, AForcedKernelTheCpuLacksEndsOnlyItsOwnWorker) {
  nlohmann::json j;
  bool skipped = false;
  ASSERT_NO_FATAL_FAILURE(
      bench_gemm("OPENBLAS_CORETYPE=SkylakeX",
                 "--blas libopenblas.so.0 --sizes 24 --max-configs 1 --rounds 1", &j, &skipped));
  if (skipped) KILN_SKIP(Skip::kOpenblas) << "OpenBLAS is not installed";
  const nlohmann::json& row = j["sizes"][0];
  EXPECT_EQ(row["baseline"], 1) << row.dump();
  if (j["blas"].size() == 1) {
    EXPECT_NE(j["blas"][0]["note"].get<std::string>().find(
                  "OPENBLAS_CORETYPE=SkylakeX from the environment gives this same kernel"),
              std::string::npos)
        << j["blas"][0];
    return;
  }
  ASSERT_EQ(j["blas"].size(), 2u) << j.dump();
  EXPECT_EQ(j["blas"][1]["kernel"], "SkylakeX");
  const nlohmann::json& forced = row["blas"][1];
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) {
    EXPECT_FALSE(forced["correct"].get<bool>()) << forced;
    EXPECT_NE(forced["failed"].get<std::string>().find("ended at size 24: killed by signal SIGILL"),
              std::string::npos)
        << forced;
  }
}

// --blas names one library: one that is no file is a usage error naming the
// flag; one that is a library but no BLAS says what it lacks.
TEST(BenchGemmCli, ABlasThatIsNoFileOrNoBlasIsAClearError) {
  kiln::testing::CommandRun missing = kiln::testing::run_command(
      KILN_CLI_PATH " bench gemm --sizes 8 --blas /nonexistent/libopenblas.so.0 2>&1");
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_NE(missing.out.find("--blas /nonexistent/libopenblas.so.0: no such file"),
            std::string::npos)
      << missing.out;
  kiln::testing::CommandRun no_blas = kiln::testing::run_command(
      KILN_CLI_PATH " bench gemm --sizes 8 --max-configs 1 --blas libc.so.6 2>&1");
  EXPECT_EQ(no_blas.exit_code, 3) << no_blas.out;
  EXPECT_NE(no_blas.out.find("is not a BLAS kiln bench gemm knows: it needs cblas_sgemm"),
            std::string::npos)
      << no_blas.out;
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
  EXPECT_NE(r.out.find("'x' is neither a size nor an MxNxK shape"), std::string::npos) << r.out;
}

// Each item of --sizes a size or an MxNxK shape: an empty last item, a sign
// or a space were taken (512, ran 512; " 8" and "+8" ran 8 where "8 " was
// refused) and a size named twice ran twice.
TEST(BenchGemmCli, EverySizeItemIsDigitsAndNamedOnce) {
  for (const char* bad : {"512,", "' 8'", "+8", "8,,16", ",8", "8x16", "8x0x4", "8x16x", "x8x8",
                          "8x16x4x2", "8X16X4"}) {
    kiln::testing::CommandRun r = kiln::testing::run_command(
        std::string(KILN_CLI_PATH " bench gemm --max-configs 1 --rounds 1 --sizes ") + bad +
        " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("is neither a size nor an MxNxK shape of numbers from 1 to 16384"),
              std::string::npos)
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
  kiln::testing::CommandRun same = kiln::testing::run_command(
      KILN_CLI_PATH " bench gemm --max-configs 1 --rounds 1 --sizes 8x16x4,8x16x4 2>&1");
  EXPECT_EQ(same.exit_code, 2) << same.out;
  EXPECT_NE(same.out.find("8x16x4 is given twice"), std::string::npos) << same.out;
}

// A skinny problem (M far below N and K, a decode step's GEMM) by MxNxK:
// every side runs and is checked at that shape, and the row names it.
TEST(BenchGemmCli, AnMxNxKShapeRunsEverySideAtThatShape) {
  nlohmann::json j;
  bool skipped = false;
  ASSERT_NO_FATAL_FAILURE(
      bench_gemm("", "--sizes 5x72x40,24 --max-configs 2 --rounds 1", &j, &skipped));
  if (skipped) KILN_SKIP(Skip::kOpenblas) << "no BLAS is installed";
  ASSERT_EQ(j["sizes"].size(), 2u);
  const nlohmann::json& skinny = j["sizes"][0];
  SCOPED_TRACE(skinny.dump());
  EXPECT_EQ(skinny["shape"], "5x72x40");
  EXPECT_EQ(skinny["m"], 5);
  EXPECT_EQ(skinny["n"], 72);
  EXPECT_EQ(skinny["k"], 40);
  EXPECT_FALSE(skinny.contains("size")) << "size is M=N=K alone";
  EXPECT_TRUE(skinny["kiln_correct"].get<bool>());
  EXPECT_LT(skinny["kiln_max_abs_err"].get<double>(), 1e-3);
  for (const auto& side : skinny["blas"]) {
    EXPECT_TRUE(side["correct"].get<bool>()) << side.dump();
    EXPECT_LT(side["max_abs_err"].get<double>(), 1e-3) << side.dump();
  }
  EXPECT_GT(skinny["baseline_gflops"].get<double>(), 0);
  EXPECT_EQ(j["sizes"][1]["shape"], "24");
  EXPECT_EQ(j["sizes"][1]["size"], 24);
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
