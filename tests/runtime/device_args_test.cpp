// The backend-independent parts of the Device interface: typed argument
// lists, launch geometry text and the launch error's evidence.
#include <gtest/gtest.h>

#include <cstring>

#include "kiln/device/device.hpp"

namespace kiln {
namespace {

TEST(KernelArgs, PacksValuesWithTheirTypes) {
  float x = 0;
  const double* cp = nullptr;
  auto args = KernelArgs::of(&x, cp, 7, 8u, std::int64_t{-9}, std::uint64_t{10}, 1.5f, 2.5, true);
  ASSERT_EQ(args.size(), 9u);
  EXPECT_EQ(args.signature(), "(ptr, ptr, i32, u32, i64, u64, f32, f64, bool)");
  EXPECT_EQ(args.type(2), ArgType::kI32);
  EXPECT_EQ(args.type(8), ArgType::kBool);
  // kernelParams[i] points at a value of the argument's own width.
  auto params = args.param_pointers();
  ASSERT_EQ(params.size(), 9u);
  float* p = nullptr;
  std::memcpy(&p, params[0], sizeof p);
  EXPECT_EQ(p, &x);
  EXPECT_EQ(*static_cast<int*>(params[2]), 7);
  EXPECT_EQ(*static_cast<std::int64_t*>(params[4]), -9);
  EXPECT_EQ(*static_cast<float*>(params[6]), 1.5f);
  EXPECT_EQ(*static_cast<double*>(params[7]), 2.5);
  EXPECT_TRUE(*static_cast<bool*>(params[8]));
}

TEST(KernelArgs, EmptyListHasNoParams) {
  KernelArgs args;
  EXPECT_TRUE(args.empty());
  EXPECT_EQ(args.signature(), "()");
  EXPECT_TRUE(args.param_pointers().empty());
}

TEST(Dim3, CountsAndPrints) {
  Dim3 d{4, 3, 2};
  EXPECT_EQ(d.count(), 24u);
  EXPECT_EQ(d.to_string(), "(4,3,2)");
  EXPECT_EQ(Dim3{}.count(), 1u);
}

TEST(LaunchError, NamesKernelConfigGridBlockAndSharedMemory) {
  LoadedKernel kernel(nullptr, "gemm<64,64,8>", "BK=8,BM=64,BN=64");
  LaunchConfig config;
  config.grid = {16, 8, 1};
  config.block = {256, 1, 1};
  config.shared_bytes = 65536;
  ErrorInfo e = launch_error(kernel, config, "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(e.code, ErrorCode::kLaunchFailed);
  EXPECT_EQ(e.message,
            "launch of kernel gemm<64,64,8> [BK=8,BM=64,BN=64] failed: grid (16,8,1) block "
            "(256,1,1) shared memory 65536 bytes: CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(e.details.at("kernel"), "gemm<64,64,8>");
  EXPECT_EQ(e.details.at("config"), "BK=8,BM=64,BN=64");
  EXPECT_EQ(e.details.at("block"), "(256,1,1)");
  EXPECT_EQ(e.details.at("shared_bytes"), "65536");
}

}  // namespace
}  // namespace kiln
