// The CUDA device on a real GPU (label `gpu`): every test skips cleanly
// where there is no driver or no device. Kernels are compiled with NVRTC
// for the device's own arch.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cuda/delay_kernel.hpp"
#include "kiln/backends/cuda.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

constexpr const char* kKernels = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void reverse_via_shared(const float* in, float* out, int n) {
  extern __shared__ float stage[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) stage[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = stage[n - 1 - i];
}
// 16 KiB static + the dynamic: the sum, not the dynamic part, decides the opt-in.
extern "C" __global__ void static_plus_dynamic(float* out, int n) {
  __shared__ float fixed[4096];
  extern __shared__ float dyn[];
  for (int i = threadIdx.x; i < 4096; i += blockDim.x) fixed[i] = 1.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) dyn[i] = 2.0f;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = fixed[4095] + dyn[n - 1];
}
)";

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = cuda::open_device(0);
    if (!device) KILN_SKIP(Skip::kGpu) << "no CUDA device: " << device.error().message;
    device_ = std::move(*device);
    auto cubin =
        cuda::compile_builtin_cubin(kKernels, "kiln_gpu_test.cu", device_->properties().arch);
    ASSERT_TRUE(cubin.ok()) << cubin.error().describe();
    binary_ = std::make_shared<const std::string>(std::move(*cubin));
  }
  LoadedKernel load(const std::string& symbol) {
    Artifact a;
    a.kernel = a.entry = a.lowered_name = symbol;
    a.config = Config{{"TEST", std::int64_t{1}}};
    a.format = BinaryFormat::kCubin;
    a.arch = device_->properties().arch;
    a.binary = binary_;
    auto kernel = device_->load(a);
    EXPECT_TRUE(kernel.ok()) << kernel.error().describe();
    return kernel.ok() ? std::move(*kernel) : LoadedKernel();
  }
  Buffer upload(const std::vector<float>& host) {
    auto buffer = device_->allocate(host.size() * sizeof(float)).value();
    EXPECT_TRUE(device_->copy_to_device(buffer.data(), host.data(), buffer.size()).ok());
    // The copy is on the legacy default stream, which does not order work on
    // the (non-blocking) streams the tests launch on: wait for it here.
    EXPECT_TRUE(device_->synchronize().ok());
    return buffer;
  }
  std::vector<float> download(const Buffer& buffer) {
    std::vector<float> host(buffer.size() / sizeof(float));
    EXPECT_TRUE(device_->copy_to_host(host.data(), buffer.data(), buffer.size()).ok());
    return host;
  }

  std::unique_ptr<Device> device_;
  std::shared_ptr<const std::string> binary_;
};

TEST_F(CudaDeviceTest, PropertiesComeFromTheDriver) {
  const DeviceProperties& p = device_->properties();
  EXPECT_EQ(p.ref.to_string(), "cuda:0");
  EXPECT_EQ(p.arch, "sm_" + std::to_string(p.cc_major * 10 + p.cc_minor));
  EXPECT_GT(p.sm_count, 0);
  EXPECT_GT(p.l2_bytes, 0u);
  EXPECT_GE(p.shared_per_block_optin, p.shared_per_block);
  EXPECT_GT(p.total_memory, 0u);
  std::printf("device: %s %s, %d SMs, L2 %zu bytes, smem %zu/%zu\n", p.name.c_str(), p.arch.c_str(),
              p.sm_count, p.l2_bytes, p.shared_per_block, p.shared_per_block_optin);
}

TEST_F(CudaDeviceTest, SaxpyOnAStreamMatchesTheHost) {
  auto kernel = load("saxpy");
  const int n = 10000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = std::sin(i * 0.1f), y[i] = static_cast<float>(i);
  auto dx = upload(x), dy = upload(y);
  auto stream = device_->create_stream().value();
  LaunchConfig c;
  c.grid = {(n + 255) / 256, 1, 1};
  c.block = {256, 1, 1};
  c.stream = &stream;
  auto s =
      device_->launch(kernel, c, KernelArgs::of(2.0f, dx.as<const float>(), dy.as<float>(), n));
  ASSERT_TRUE(s.ok()) << s.error().describe();
  ASSERT_TRUE(device_->synchronize(&stream).ok());
  auto out = download(dy);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], 2.0f * x[i] + y[i]) << i;
}

TEST_F(CudaDeviceTest, MoreThan48KiBOfSharedMemoryIsOptedIn) {
  const std::size_t want = 64 * 1024;
  if (device_->properties().shared_per_block_optin < want)
    KILN_SKIP(Skip::kGpu) << "device lacks 64 KiB of shared memory per block";
  auto kernel = load("reverse_via_shared");
  const int n = static_cast<int>(want / sizeof(float));
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i);
  auto din = upload(in);
  auto dout = device_->allocate(want).value();
  LaunchConfig c;
  c.block = {512, 1, 1};
  c.shared_bytes = want;
  auto s = device_->launch(kernel, c, KernelArgs::of(din.as<const float>(), dout.as<float>(), n));
  ASSERT_TRUE(s.ok()) << s.error().describe();
  auto out = download(dout);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<float>(n - 1 - i)) << i;
}

TEST_F(CudaDeviceTest, StaticAndDynamicSharedMemoryTogetherAreOptedIn) {
  const std::size_t dynamic = 40 * 1024;  // + 16 KiB static = 56 KiB, past the 48 KiB default
  if (device_->properties().shared_per_block_optin < dynamic + 16 * 1024)
    KILN_SKIP(Skip::kGpu) << "device lacks 56 KiB of shared memory per block";
  auto kernel = load("static_plus_dynamic");
  auto out = device_->allocate(sizeof(float)).value();
  LaunchConfig c;
  c.block = {256, 1, 1};
  c.shared_bytes = dynamic;
  const int n = static_cast<int>(dynamic / sizeof(float));
  auto s = device_->launch(kernel, c, KernelArgs::of(out.as<float>(), n));
  ASSERT_TRUE(s.ok()) << s.error().describe();
  EXPECT_EQ(download(out)[0], 3.0f);
}

TEST_F(CudaDeviceTest, RejectedLaunchNamesKernelConfigGridBlockAndSharedMemory) {
  auto kernel = load("saxpy");
  auto dy = device_->allocate(16).value();
  LaunchConfig c;
  c.grid = {3, 1, 1};
  c.block = {4096, 1, 1};  // above every GPU's 1024 threads per block
  auto s =
      device_->launch(kernel, c, KernelArgs::of(1.0f, dy.as<const float>(), dy.as<float>(), 4));
  ASSERT_FALSE(s.ok());
  const std::string& m = s.error().message;
  for (const char* part : {"saxpy", "TEST=1", "grid (3,1,1)", "block (4096,1,1)",
                           "shared memory 0 bytes", "cuLaunchKernelEx", "CUDA_ERROR_"}) {
    EXPECT_NE(m.find(part), std::string::npos) << "missing '" << part << "' in: " << m;
  }
  ASSERT_TRUE(device_->synchronize().ok());  // a rejected launch does not poison the context
}

TEST_F(CudaDeviceTest, EventsTimeTheDelayKernel) {
  auto stream = device_->create_stream().value();
  // The first delay compiles and loads the kernel: keep that out of the timing.
  ASSERT_TRUE(device_->delay(1.0, &stream).ok());
  ASSERT_TRUE(device_->synchronize(&stream).ok());
  auto start = device_->create_event().value();
  auto stop = device_->create_event().value();
  ASSERT_TRUE(device_->record(start, &stream).ok());
  auto d = device_->delay(2000.0, &stream);
  ASSERT_TRUE(d.ok()) << d.error().describe();
  ASSERT_TRUE(device_->record(stop, &stream).ok());
  auto ms = device_->elapsed_ms(start, stop);
  ASSERT_TRUE(ms.ok()) << ms.error().describe();
  EXPECT_GE(*ms, 1.9f);
  EXPECT_LT(*ms, 1000.0f);
}

TEST_F(CudaDeviceTest, CapturedGraphReplays) {
  auto kernel = load("saxpy");
  const int n = 1024;
  std::vector<float> x(n, 1.0f), y(n, 0.0f);
  auto dx = upload(x), dy = upload(y);
  auto stream = device_->create_stream().value();
  LaunchConfig c;
  c.grid = {n / 128, 1, 1};
  c.block = {128, 1, 1};
  c.stream = &stream;
  ASSERT_TRUE(device_->begin_capture(stream).ok());
  ASSERT_TRUE(
      device_->launch(kernel, c, KernelArgs::of(0.5f, dx.as<const float>(), dy.as<float>(), n))
          .ok());
  // The default stream is outside the capture: a launch there is refused,
  // not run at once behind the graph's back.
  LaunchConfig stray = c;
  stray.stream = nullptr;
  auto refused =
      device_->launch(kernel, stray, KernelArgs::of(0.5f, dx.as<const float>(), dy.as<float>(), n));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("captures a stream"), std::string::npos);
  auto graph = device_->end_capture(stream);
  ASSERT_TRUE(graph.ok()) << graph.error().describe();
  ASSERT_TRUE(device_->synchronize(&stream).ok());
  EXPECT_EQ(download(dy)[0], 0.0f);  // captured, not run
  for (int rep = 0; rep < 4; ++rep) ASSERT_TRUE(device_->replay(*graph, &stream).ok());
  ASSERT_TRUE(device_->synchronize(&stream).ok());
  for (float v : download(dy)) ASSERT_EQ(v, 2.0f);
}

TEST_F(CudaDeviceTest, CacheFlushAndFillRun) {
  auto b = device_->allocate(1 << 20).value();
  const DeviceSpan touched[] = {{b.data(), b.size()}};
  ASSERT_TRUE(device_->flush_caches(touched).ok());
  ASSERT_TRUE(device_->flush_caches({}).ok());  // the L2 is flushed whole either way
  ASSERT_TRUE(device_->fill(b.data(), 0x3f, b.size()).ok());
  std::vector<unsigned char> host(b.size());
  ASSERT_TRUE(device_->copy_to_host(host.data(), b.data(), b.size()).ok());
  for (unsigned char v : host) ASSERT_EQ(v, 0x3f);
}

TEST(CudaDevices, EveryDeviceIsEnumeratedAndAddressable) {
  auto count = cuda::device_count();
  if (!count.ok() || *count == 0) KILN_SKIP(Skip::kGpu) << "no CUDA device";
  auto devices = cuda::open_devices();
  ASSERT_TRUE(devices.ok()) << devices.error().describe();
  ASSERT_EQ(static_cast<int>(devices->size()), *count);
  for (int i = 0; i < *count; ++i) {
    EXPECT_EQ((*devices)[i]->properties().ref.index, i);
    auto b = (*devices)[i]->allocate(256);
    EXPECT_TRUE(b.ok()) << b.error().describe();
  }
}

}  // namespace
}  // namespace kiln
