// The NVRTC backend for real: CUBIN for sm_80 and sm_90a, PTX, lowered
// names, logs on failure, refused options and cancellation.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cuda/nvrtc_api.hpp"
#include "cuda/nvrtc_compiler.hpp"
#include "kiln/compile/compile_engine.hpp"
#include "skip.hpp"
#include "test_kernels.hpp"

namespace kiln {
namespace {

class Nvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().describe();
  }
  CompileUnit unit(const std::vector<std::int64_t>& ns, const std::string& arch,
                   BinaryFormat format = BinaryFormat::kCubin) {
    auto t = test::scale_kernel();
    std::vector<Specialization> specs;
    for (auto n : ns) specs.push_back(t.specialize(Config{{"N", n}}));
    auto units = group(t, specs, GroupOptions{ns.size(), arch, format});
    EXPECT_EQ(units.size(), 1u);
    return units.at(0);
  }
  cuda::NvrtcCompiler compiler_{[] {
    auto s = cuda::NvrtcSettings::from_options(Options::global());
    s.pch = false;
    return s;
  }()};
};

TEST_F(Nvrtc, CubinForSm80AndSm90aIsAValidElfForThatArch) {
  for (auto [arch, sm] : {std::pair{"sm_80", 80}, std::pair{"sm_90a", 90}}) {
    auto program = compiler_.compile(unit({1, 2}, arch), CancelToken());
    ASSERT_TRUE(program.ok()) << program.error().describe();
    EXPECT_EQ(program->format, BinaryFormat::kCubin);
    auto elf = test::elf_info(*program->binary);
    EXPECT_TRUE(elf.elf64);
    EXPECT_EQ(elf.machine, test::kEmCuda);
    EXPECT_EQ(elf.sm, sm) << std::hex << elf.flags;
    ASSERT_EQ(program->lowered_names.size(), 2u);
    for (const auto& name : program->lowered_names) {
      EXPECT_EQ(name.rfind("_Z", 0), 0u) << name;  // mangled
      EXPECT_NE(program->binary->find(name), std::string::npos) << name;
    }
    EXPECT_NE(program->lowered_names[0], program->lowered_names[1]);
  }
}

TEST_F(Nvrtc, PtxOnRequestTargetsTheArch) {
  auto program = compiler_.compile(unit({3}, "sm_90a", BinaryFormat::kPtx), CancelToken());
  ASSERT_TRUE(program.ok()) << program.error().describe();
  EXPECT_EQ(program->format, BinaryFormat::kPtx);
  EXPECT_NE(program->binary->find(".target sm_90a"), std::string::npos);
  EXPECT_NE(program->binary->find(".entry " + program->lowered_names[0]), std::string::npos);
  EXPECT_NE(program->binary->back(), '\0');
}

TEST_F(Nvrtc, FailureIsAValueWithLogOptionsAndResult) {
  auto program = compiler_.compile(unit({13}, "sm_80"), CancelToken());
  ASSERT_FALSE(program.ok());
  const ErrorInfo& e = program.error();
  EXPECT_EQ(e.code, ErrorCode::kCompileFailed);
  EXPECT_NE(e.details.at("log").find("kiln-test: N must not be 13"), std::string::npos);
  EXPECT_NE(e.details.at("options").find("-arch=sm_80"), std::string::npos);
  EXPECT_NE(e.message.find("error"), std::string::npos) << e.message;
}

TEST_F(Nvrtc, ArchAndFormatMismatchesAreExplained) {
  auto cubin_virtual = compiler_.compile(unit({1}, "compute_90"), CancelToken());
  ASSERT_FALSE(cubin_virtual.ok());
  EXPECT_EQ(cubin_virtual.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(cubin_virtual.error().message.find("sm_90"), std::string::npos);
  auto cpu = compiler_.compile(unit({1}, "sm_90", BinaryFormat::kCpuObject), CancelToken());
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(cpu.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(Nvrtc, RefusesOptionsThatPoisonTheProcess) {
  auto u = unit({1}, "sm_80");
  u.options.push_back("--Ofast-compile=mid");
  auto r = compiler_.compile(u, CancelToken());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("Ofast-compile"), std::string::npos);

  const auto trace = std::filesystem::temp_directory_path() / "kiln-test-trace";
  std::ofstream(trace.string() + ".json") << "{}";
  auto v = unit({1}, "sm_80");
  v.options.push_back("--fdevice-time-trace=" + trace.string());
  auto t = compiler_.compile(v, CancelToken());
  std::filesystem::remove(trace.string() + ".json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("remove it first"), std::string::npos) << t.error().message;
}

TEST_F(Nvrtc, CancelledBeforeStartCompilesNothing) {
  CancelToken cancel;
  cancel.cancel();
  auto r = compiler_.compile(unit({1}, "sm_80"), cancel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
}

TEST_F(Nvrtc, FlowCallbackCancelsARunningCompile) {
  if (!(*cuda::nvrtc())->SetFlowCallback)
    KILN_SKIP(Skip::kCudaToolkit) << "this NVRTC has no flow callback";
  // Measured with NVRTC 13.0: the flow callback is first asked after the
  // front end, so the cancel lands at the start of NVVM. <cuda/std/limits>
  // keeps the front end (~0.3 s) longer than the 30 ms before the cancel.
  auto u = unit({1, 2, 3, 4, 5, 6, 7}, "sm_90a");
  u.source = "#include <cuda/std/limits>\n" + u.source;
  CancelToken cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cancel.cancel();
  });
  auto r = compiler_.compile(u, cancel);
  canceller.join();
  ASSERT_FALSE(r.ok()) << "compile finished before the cancel: make the unit heavier";
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled) << r.error().describe();
}

TEST_F(Nvrtc, DeadlineCancels) {
  CancelToken cancel;
  cancel.set_deadline(CancelToken::Clock::now() - std::chrono::seconds(1));
  auto r = compiler_.compile(unit({1}, "sm_80"), cancel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
}

TEST_F(Nvrtc, BlameReadsTheInstantiationFromTheLog) {
  auto u = unit({1, 2, 13, 4}, "sm_80");
  auto r = compiler_.compile(u, CancelToken());
  ASSERT_FALSE(r.ok());
  auto blamed = compiler_.blame(u, r.error().details.at("log"));
  ASSERT_EQ(blamed.size(), 1u) << r.error().details.at("log");
  EXPECT_EQ(blamed[0], 2u);
  EXPECT_TRUE(compiler_.blame(u, "no instantiation here").empty());
}

}  // namespace
}  // namespace kiln
