// The CPU device's side of the Device interface: memory, launches over a
// grid with shared memory, argument checks, launch errors, streams, graph
// capture and replay, events, and handle ownership.
#include <gtest/gtest.h>

#include <thread>

#include "cpu_test_util.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {
namespace {

// y[i] = a * x[i] + y[i] over blocks of CHUNK elements, staged through the
// block's shared memory so a wrong per-block scratch shows in the result.
constexpr const char* kAxpySource = R"(#include "kiln/cpu_kernel.h"
template <int CHUNK>
void axpy(const kiln::cpu::BlockContext& ctx, float a, const float* x, float* y, long n) {
  float* stage = static_cast<float*>(ctx.shared);
  const long first = static_cast<long>(ctx.block_idx.x) * CHUNK;
  for (int i = 0; i < CHUNK && first + i < n; ++i) stage[i] = a * x[first + i];
  for (int i = 0; i < CHUNK && first + i < n; ++i) y[first + i] += stage[i];
}
)";

class CpuDeviceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Specialization s;
    s.kernel = "axpy";
    s.config = Config{{"CHUNK", std::int64_t{64}}};
    s.entry = "axpy<64>";
    unit_ = new CompileUnit(test::cpu_unit("axpy", kAxpySource, {s}));
    auto program = cpu::make_compiler()->compile(*unit_, CancelToken());
    ASSERT_TRUE(program.ok()) << program.error().describe();
    artifact_ = new Artifact(test::artifact_of(*unit_, *program, 0));
  }
  static void TearDownTestSuite() {
    delete artifact_;
    delete unit_;
  }
  void SetUp() override {
    auto d = cpu::open_device(2);
    ASSERT_TRUE(d.ok()) << d.error().describe();
    device_ = std::move(*d);
    auto k = device_->load(*artifact_);
    ASSERT_TRUE(k.ok()) << k.error().describe();
    kernel_ = std::move(*k);
  }
  LaunchConfig config_for(long n) const {
    LaunchConfig c;
    c.grid = {static_cast<std::uint32_t>((n + 63) / 64), 1, 1};
    c.shared_bytes = 64 * sizeof(float);
    return c;
  }

  static CompileUnit* unit_;
  static Artifact* artifact_;
  std::unique_ptr<Device> device_;
  LoadedKernel kernel_;
};
CompileUnit* CpuDeviceTest::unit_ = nullptr;
Artifact* CpuDeviceTest::artifact_ = nullptr;

TEST_F(CpuDeviceTest, PropertiesDescribeTheHost) {
  const DeviceProperties& p = device_->properties();
  EXPECT_EQ(p.ref.to_string(), "cpu");
  EXPECT_EQ(p.arch, cpu::host_arch());
  EXPECT_EQ(p.sm_count, 2);
  EXPECT_GT(p.l2_bytes, 0u);
  EXPECT_GE(p.shared_per_block_optin, p.shared_per_block);
  EXPECT_NE(p.name.find(p.arch), std::string::npos);
}

TEST_F(CpuDeviceTest, LaunchRunsEveryBlockWithItsOwnSharedMemory) {
  const long n = 1000;  // 16 blocks, the last one partial
  auto x = test::ramp(n, 0.1f, 1.0f);
  std::vector<float> y(n, 2.0f);
  auto s = device_->launch(kernel_, config_for(n),
                           KernelArgs::of(0.5f, static_cast<const float*>(x.data()), y.data(), n));
  ASSERT_TRUE(s.ok()) << s.error().describe();
  for (long i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], 2.0f + 0.5f * x[i]) << i;
}

TEST_F(CpuDeviceTest, LaunchesFromTwoThreadsTakeTurnsOnThePool) {
  // Two benchmark workers sharing one device: launches serialise on the
  // pool and each still sees its own blocks and shared memory.
  const long n = 700;
  auto x = test::ramp(n, 0.2f, 0.5f);
  std::vector<float> y[2] = {std::vector<float>(n, 0.0f), std::vector<float>(n, 0.0f)};
  std::string errors[2];
  auto work = [&](int t) {
    for (int rep = 0; rep < 40; ++rep) {
      auto s = device_->launch(kernel_, config_for(n),
                               KernelArgs::of(static_cast<float>(t + 1),
                                              static_cast<const float*>(x.data()), y[t].data(), n));
      if (!s) errors[t] = s.error().describe();
    }
  };
  std::thread other(work, 1);
  work(0);
  other.join();
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(errors[t], "");
    for (long i = 0; i < n; ++i) {
      float want = 0.0f;  // 40 launches, each adding a * x in float, as the kernel does
      for (int rep = 0; rep < 40; ++rep) want += static_cast<float>(t + 1) * x[i];
      ASSERT_FLOAT_EQ(y[t][i], want) << t << " " << i;
    }
  }
}

TEST_F(CpuDeviceTest, LaunchErrorsNameKernelConfigGridBlockAndSharedMemory) {
  std::vector<float> y(64);
  LaunchConfig c = config_for(64);
  c.block = {32, 1, 1};
  // n as an int where the kernel takes a long.
  auto wrong_type = device_->launch(kernel_, c, KernelArgs::of(1.0f, y.data(), y.data(), 64));
  ASSERT_FALSE(wrong_type.ok());
  const std::string& m = wrong_type.error().message;
  for (const char* part :
       {"axpy<64>", "CHUNK=64", "grid (1,1,1)", "block (32,1,1)", "shared memory 256 bytes",
        "argument 3 is i32", "(f32, ptr, ptr, i64)"}) {
    EXPECT_NE(m.find(part), std::string::npos) << "missing '" << part << "' in: " << m;
  }
  EXPECT_EQ(wrong_type.error().details.at("grid"), "(1,1,1)");

  auto too_few = device_->launch(kernel_, c, KernelArgs::of(1.0f, y.data()));
  ASSERT_FALSE(too_few.ok());
  EXPECT_NE(too_few.error().message.find("2 arguments"), std::string::npos);

  c.shared_bytes = device_->properties().shared_per_block_optin + 1;
  auto too_much = device_->launch(kernel_, c, KernelArgs::of(1.0f, y.data(), y.data(), 64L));
  ASSERT_FALSE(too_much.ok());
  EXPECT_NE(too_much.error().message.find("shared memory"), std::string::npos);
}

// A caller's stream (a framework's CUDA stream handle on a CPU tensor's
// call) is accepted and ignored: CPU work is synchronous and in order. The
// tuned kernel's launch with resets runs on it.
TEST_F(CpuDeviceTest, ACallersStreamIsAcceptedAndIgnored) {
  auto stream = device_->wrap_stream(0x1234);
  ASSERT_TRUE(stream.ok()) << stream.error().describe();
  const long n = 200;
  auto x = test::ramp(n, 0.1f, 1.0f);
  std::vector<float> y(n, 5.0f);
  TunableKernel tunable;
  tunable.reset_to_zero = {"y"};
  ArgList args = {Arg::of_scalar("a", 0.5f, false),
                  Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
                  Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
                  Arg::of_scalar("n", n)};
  LaunchConfig c = config_for(n);
  LaunchGeometry g{c.grid, c.block, c.shared_bytes};
  Status st = launch_with_resets(*device_, kernel_, tunable, g, args, &*stream);
  ASSERT_TRUE(st.ok()) << st.error().describe();
  for (long i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], 0.5f * x[i]) << i;
  EXPECT_TRUE(device_->synchronize(&*stream).ok());
}

TEST_F(CpuDeviceTest, MemoryCopiesAndFills) {
  auto a = device_->allocate(256).value();
  auto b = device_->allocate(256).value();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u);
  ASSERT_TRUE(device_->fill(a.data(), 7, 256).ok());
  ASSERT_TRUE(device_->copy(b.data(), a.data(), 256).ok());
  std::vector<unsigned char> host(256);
  ASSERT_TRUE(device_->copy_to_host(host.data(), b.data(), 256).ok());
  for (unsigned char v : host) ASSERT_EQ(v, 7);
  Buffer moved = std::move(a);
  EXPECT_FALSE(a.valid());
  EXPECT_EQ(moved.size(), 256u);
}

TEST_F(CpuDeviceTest, CapturedWorkRunsOnlyWhenTheGraphReplays) {
  const long n = 128;
  std::vector<float> x(n, 1.0f), y(n, 0.0f);
  auto stream = device_->create_stream().value();
  LaunchConfig c = config_for(n);
  c.stream = &stream;
  ASSERT_TRUE(device_->begin_capture(stream).ok());
  ASSERT_TRUE(device_->fill(y.data(), 0, n * sizeof(float), &stream).ok());
  ASSERT_TRUE(device_
                  ->launch(kernel_, c,
                           KernelArgs::of(3.0f, static_cast<const float*>(x.data()), y.data(), n))
                  .ok());
  y[0] = 42.0f;  // not yet overwritten: capture does not run
  auto graph = device_->end_capture(stream);
  ASSERT_TRUE(graph.ok()) << graph.error().describe();
  EXPECT_EQ(y[0], 42.0f);
  for (int rep = 0; rep < 3; ++rep) ASSERT_TRUE(device_->replay(*graph, &stream).ok());
  for (long i = 0; i < n; ++i) ASSERT_EQ(y[i], 3.0f) << i;  // fill then one axpy per replay
}

TEST_F(CpuDeviceTest, EventsTimeTheWorkBetweenThem) {
  auto start = device_->create_event().value();
  auto stop = device_->create_event().value();
  EXPECT_FALSE(device_->elapsed_ms(start, stop).ok());  // not recorded yet
  ASSERT_TRUE(device_->record(start).ok());
  ASSERT_TRUE(device_->delay(2000.0).ok());
  ASSERT_TRUE(device_->flush_caches({}).ok());
  ASSERT_TRUE(device_->record(stop).ok());
  ASSERT_TRUE(device_->synchronize().ok());
  auto ms = device_->elapsed_ms(start, stop);
  ASSERT_TRUE(ms.ok());
  EXPECT_GE(*ms, 2.0f);  // the delay spins at least as long as asked
}

TEST_F(CpuDeviceTest, HandlesOfAnotherDeviceAreMisuse) {
  auto other = cpu::open_device(1).value();
  auto foreign = other->create_stream().value();
  EXPECT_THROW((void)device_->begin_capture(foreign), Error);
  auto kernel_elsewhere = other->load(*artifact_).value();
  std::vector<float> y(64);
  EXPECT_THROW((void)device_->launch(kernel_elsewhere, config_for(64),
                                     KernelArgs::of(1.0f, y.data(), y.data(), 64L)),
               Error);
  LoadedKernel empty;
  EXPECT_THROW((void)device_->launch(empty, config_for(64), KernelArgs()), Error);
}

TEST_F(CpuDeviceTest, ArtifactsOfAnotherBackendAreRefused) {
  Artifact cubin = *artifact_;
  cubin.format = BinaryFormat::kCubin;
  auto kernel = device_->load(cubin);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().message.find("cubin"), std::string::npos);
  Artifact missing = *artifact_;
  missing.lowered_name = "kiln_entry_9";
  auto absent = device_->load(missing);
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().message.find("kiln_entry_9"), std::string::npos);
}

}  // namespace
}  // namespace kiln
