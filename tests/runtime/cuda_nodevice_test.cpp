// The CUDA backend's paths that need no GPU, run on every machine: a
// missing driver or device is a clear error value, and the delay kernel
// compiles through NVRTC to a CUBIN for any arch.
#include <gtest/gtest.h>

#include "cuda/delay_kernel.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/nvrtc_api.hpp"
#include "kiln/backends/cuda.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

TEST(CudaNoDevice, MissingDriverIsAnErrorValueNotACrash) {
  if (cuda::driver().ok())
    KILN_SKIP(Skip::kGpuPresent) << "a CUDA driver is installed; the gpu suite covers it";
  auto count = cuda::device_count();
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.error().code, ErrorCode::kUnavailable);
  // Either no libcuda at all, or the toolkit's stub: both say "no NVIDIA driver".
  EXPECT_NE(count.error().message.find("no NVIDIA driver"), std::string::npos)
      << count.error().describe();

  auto device = cuda::open_device(0);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(device.error().message, count.error().message);

  auto all = cuda::open_devices();
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().code, ErrorCode::kUnavailable);
}

TEST(CudaNoDevice, OutOfRangeIndexIsAnErrorValue) {
  auto count = cuda::device_count();
  if (!count.ok()) KILN_SKIP(Skip::kGpu) << count.error().message;
  auto device = cuda::open_device(*count + 3);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.error().message.find("out of range"), std::string::npos);
}

TEST(CudaNoDevice, DelayKernelCompilesToACubinWithNvrtc) {
  if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().message;
  auto cubin = cuda::compile_delay_kernel("sm_80");
  ASSERT_TRUE(cubin.ok()) << cubin.error().describe();
  ASSERT_GT(cubin->size(), 4u);
  EXPECT_EQ(cubin->substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(cubin->find(cuda::kDelayKernelSymbol), std::string::npos);
}

TEST(CudaNoDevice, DelayKernelForABadArchCarriesTheLog) {
  if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().message;
  auto cubin = cuda::compile_delay_kernel("sm_1");
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.error().code, ErrorCode::kCompileFailed);
  EXPECT_EQ(cubin.error().details.at("options"), "--gpu-architecture=sm_1");
  EXPECT_TRUE(cubin.error().details.count("log"));
}

}  // namespace
}  // namespace kiln
