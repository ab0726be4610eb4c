// Launching on a caller's own CUDA stream and context (Device::wrap_stream,
// label `gpu`): the work is queued on the caller's stream, in the stream's
// context, and the caller's stream outlives Kiln's handle. Every test skips
// cleanly where there is no driver or no device.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cuda/delay_kernel.hpp"
#include "cuda/driver_api.hpp"
#include "kiln/backends/cuda.hpp"
#include "kiln/tuner/tuner.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

class CallerStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = cuda::open_device(0);
    if (!device) KILN_SKIP(Skip::kGpu) << "no CUDA device: " << device.error().message;
    device_ = std::move(*device);
    api_ = *cuda::driver();
    auto cubin =
        cuda::compile_builtin_cubin(kSaxpy, "kiln_stream_test.cu", device_->properties().arch);
    ASSERT_TRUE(cubin.ok()) << cubin.error().describe();
    Artifact a;
    a.kernel = a.entry = a.lowered_name = "saxpy";
    a.config = Config{{"TEST", std::int64_t{1}}};
    a.format = BinaryFormat::kCubin;
    a.arch = device_->properties().arch;
    a.binary = std::make_shared<const std::string>(std::move(*cubin));
    auto kernel = device_->load(a);
    ASSERT_TRUE(kernel.ok()) << kernel.error().describe();
    kernel_ = std::move(*kernel);
  }

  // y = 2x + y on `stream` for n floats at device addresses x and y,
  // through launch_with_resets (what TuneResult::launch runs): y is zeroed
  // on the stream first, so the result is 2x.
  void saxpy_with_reset(Stream& stream, void* x, void* y, int n) {
    TunableKernel tunable;
    tunable.reset_to_zero = {"y"};
    const auto count = static_cast<std::int64_t>(n);
    ArgList args = {Arg::of_scalar("a", 2.0f, false),
                    Arg::of_tensor("x", x, TensorArg::contiguous(DType::kF32, {count})),
                    Arg::of_tensor("y", y, TensorArg::contiguous(DType::kF32, {count})),
                    Arg::of_scalar("n", n)};
    LaunchGeometry g;
    g.grid = {static_cast<std::uint32_t>((n + 255) / 256), 1, 1};
    g.block = {256, 1, 1};
    Status st = launch_with_resets(*device_, kernel_, tunable, g, args, &stream);
    ASSERT_TRUE(st.ok()) << st.error().describe();
  }

  std::unique_ptr<Device> device_;
  const cuda::DriverApi* api_ = nullptr;
  LoadedKernel kernel_;
};

TEST_F(CallerStreamTest, WorkIsQueuedOnTheCallersStreamWhichOutlivesTheHandle) {
  CUcontext primary = nullptr;
  CUdevice dev = 0;
  ASSERT_EQ(api_->DeviceGet(&dev, 0), CUDA_SUCCESS);
  ASSERT_EQ(api_->DevicePrimaryCtxRetain(&primary, dev), CUDA_SUCCESS);
  ASSERT_EQ(api_->CtxSetCurrent(primary), CUDA_SUCCESS);
  CUstream mine = nullptr;
  ASSERT_EQ(api_->StreamCreate(&mine, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);

  const int n = 5000;
  std::vector<float> x(n), y(n, 7.0f);
  for (int i = 0; i < n; ++i) x[i] = std::cos(i * 0.01f);
  {
    auto stream = device_->wrap_stream(reinterpret_cast<std::uintptr_t>(mine));
    ASSERT_TRUE(stream.ok()) << stream.error().describe();
    auto dx = device_->allocate(n * sizeof(float)).value();
    auto dy = device_->allocate(n * sizeof(float)).value();
    ASSERT_TRUE(device_->copy_to_device(dx.data(), x.data(), dx.size(), &*stream).ok());
    ASSERT_TRUE(device_->copy_to_device(dy.data(), y.data(), dy.size(), &*stream).ok());
    saxpy_with_reset(*stream, dx.data(), dy.data(), n);
    // Ordered on the caller's stream: the caller's own synchronisation sees it.
    ASSERT_EQ(api_->StreamSynchronize(mine), CUDA_SUCCESS);
    ASSERT_TRUE(device_->copy_to_host(y.data(), dy.data(), dy.size(), &*stream).ok());
    for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], 2.0f * x[i]) << i;
  }
  // Kiln's handle is gone; the caller's stream is not.
  EXPECT_EQ(api_->StreamSynchronize(mine), CUDA_SUCCESS);
  EXPECT_EQ(api_->StreamDestroy(mine), CUDA_SUCCESS);
  api_->DevicePrimaryCtxRelease(dev);
}

TEST_F(CallerStreamTest, AStreamInTheCallersOwnContextRunsThere) {
  // A context of the caller's own (not the primary one): the kernel is
  // loaded into it on first use. cuCtxCreate is not among Kiln's entry points.
  using CtxCreate = CUresult (*)(CUcontext*, unsigned, CUdevice);
  using CtxDestroy = CUresult (*)(CUcontext);
  using MemAlloc = CUresult (*)(CUdeviceptr*, std::size_t);
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto create = reinterpret_cast<CtxCreate>(::dlsym(lib, "cuCtxCreate_v2"));
  auto destroy = reinterpret_cast<CtxDestroy>(::dlsym(lib, "cuCtxDestroy_v2"));
  auto alloc = reinterpret_cast<MemAlloc>(::dlsym(lib, "cuMemAlloc_v2"));
  if (!create || !destroy || !alloc) KILN_SKIP(Skip::kGpu) << "this driver lacks cuCtxCreate_v2";
  CUdevice dev = 0;
  ASSERT_EQ(api_->DeviceGet(&dev, 0), CUDA_SUCCESS);
  CUcontext own = nullptr;
  ASSERT_EQ(create(&own, 0, dev), CUDA_SUCCESS);  // current on this thread now
  CUstream mine = nullptr;
  ASSERT_EQ(api_->StreamCreate(&mine, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  const int n = 1024;
  CUdeviceptr dx = 0, dy = 0;
  ASSERT_EQ(alloc(&dx, n * sizeof(float)), CUDA_SUCCESS);
  ASSERT_EQ(alloc(&dy, n * sizeof(float)), CUDA_SUCCESS);
  std::vector<float> x(n, 1.5f), y(n, 3.0f);
  {
    auto stream = device_->wrap_stream(reinterpret_cast<std::uintptr_t>(mine));
    ASSERT_TRUE(stream.ok()) << stream.error().describe();
    auto* px = reinterpret_cast<void*>(dx);
    auto* py = reinterpret_cast<void*>(dy);
    ASSERT_TRUE(device_->copy_to_device(px, x.data(), n * sizeof(float), &*stream).ok());
    saxpy_with_reset(*stream, px, py, n);
    ASSERT_TRUE(device_->copy_to_host(y.data(), py, n * sizeof(float), &*stream).ok());
    for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], 3.0f) << i;
  }
  kernel_ = LoadedKernel();  // unloads its module from `own` before `own` goes
  EXPECT_EQ(api_->StreamDestroy(mine), CUDA_SUCCESS);
  EXPECT_EQ(destroy(own), CUDA_SUCCESS);
}

TEST_F(CallerStreamTest, AStreamOfAnotherDeviceIsRefusedByName) {
  auto count = cuda::device_count();
  if (!count.ok() || *count < 2) KILN_SKIP(Skip::kGpu) << "needs two CUDA devices";
  CUdevice dev1 = 0;
  CUcontext ctx1 = nullptr;
  ASSERT_EQ(api_->DeviceGet(&dev1, 1), CUDA_SUCCESS);
  ASSERT_EQ(api_->DevicePrimaryCtxRetain(&ctx1, dev1), CUDA_SUCCESS);
  ASSERT_EQ(api_->CtxSetCurrent(ctx1), CUDA_SUCCESS);
  CUstream theirs = nullptr;
  ASSERT_EQ(api_->StreamCreate(&theirs, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  auto wrapped = device_->wrap_stream(reinterpret_cast<std::uintptr_t>(theirs));
  ASSERT_FALSE(wrapped.ok()) << "cuda:0 took a stream of cuda:1";
  EXPECT_EQ(wrapped.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(wrapped.error().message.find("belongs to cuda:1, not to cuda:0"), std::string::npos)
      << wrapped.error().message;
  EXPECT_EQ(api_->StreamDestroy(theirs), CUDA_SUCCESS);
  api_->DevicePrimaryCtxRelease(dev1);
}

}  // namespace
}  // namespace kiln
