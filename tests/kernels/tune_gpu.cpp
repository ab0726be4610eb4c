// `kiln tune` on a real GPU (ctest label `gpu`): the shipped tensor-core
// GEMMs tuned end to end through the CLI, checked against host code, then
// served warm from disk in a second process. Skipped without a device.
#include "cli_runner.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

using testing::CliRun;
using testing::count_status;
using TuneGpu = testing::CliTest;

TEST_F(TuneGpu, ShippedGemmsTuneAndStartWarm) {
  if (!cuda_device_count().ok()) KILN_SKIP(Skip::kGpu) << cuda_device_count().error().message;
  for (const char* kernel : {"gemm_f16", "gemm_bf16"}) {
    const std::string args = std::string("tune --kernel ") + kernel +
                             " --shape M=256,N=384,K=512 --max-configs 6 --json";
    CliRun cold = kiln(args);
    ASSERT_EQ(cold.exit_code, 0) << cold.err;
    const auto r = cold.json();
    EXPECT_EQ(r["backend"], "cuda");
    EXPECT_EQ(r["source"], "tuned");
    EXPECT_EQ(r["reference"], "user");
    EXPECT_EQ(r["reference_detail"], "host code (double precision)");
    EXPECT_EQ(count_status(r, "ok"), 6u) << r.dump(2);
    ASSERT_TRUE(testing::measured(r.at("winner")));
    EXPECT_GT(r["winner"].at("gflops").get<double>(), 0);
    CliRun warm = kiln(args);
    ASSERT_EQ(warm.exit_code, 0) << warm.err;
    EXPECT_EQ(warm.json()["source"], "disk");
    EXPECT_EQ(warm.json()["stats"]["compiled"], 0);
  }
  // A user's CUDA kernel, checked against its default config.
  CliRun user = kiln(testing::write_cuda_user_kernel(dir_) + " --json");
  ASSERT_EQ(user.exit_code, 0) << user.err;
  EXPECT_EQ(count_status(user.json(), "ok"), 6u) << user.out;
  // A shape the kernel cannot take is bad input.
  CliRun odd = kiln("tune --kernel gemm_f16 --shape M=64,N=60,K=64");
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_NE(odd.err.find("multiples of 8"), std::string::npos) << odd.err;
}

}  // namespace
}  // namespace kiln
