// The CPU backend through the whole of Kiln's compile path, for real: the
// shipped CPU templates specialised, grouped, compiled with failure
// isolation, keyed, stored in the on-disk artifact cache, and a warm run (a
// fresh cache object, then a fresh process) loading and running them
// without compiling, checked against the reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cpu_test_util.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/cache/artifact_store.hpp"
#include "kiln/compile/compile_engine.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;

class CpuPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_cpu_pipeline_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    options_ = Options::from_env(Environment().set("KILN_CACHE_DIR", dir_.string()));
    context_.toolchain = {kiln_version(), "absent", cpu::make_compiler()->version(),
                          kiln_codegen_hash()};
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  Options options_;
  CompileContext context_;
};

TEST_F(CpuPipelineTest, ShippedGemmCompilesCachesAndRunsWarmWithoutCompiling) {
  const KernelTemplate t = cpu::gemm_f32_tiled_template();
  std::vector<Specialization> specs;
  for (auto [bm, bn, bk] : {std::tuple{8, 16, 16}, {16, 64, 64}, {32, 32, 256}}) {
    specs.push_back(t.specialize(
        Config{{"BM", std::int64_t{bm}}, {"BN", std::int64_t{bn}}, {"BK", std::int64_t{bk}}}));
  }
  GroupOptions grouping;
  grouping.group_size = 2;
  grouping.arch = cpu::host_arch();
  grouping.format = BinaryFormat::kCpuObject;
  auto units = group(t, specs, grouping);
  ASSERT_EQ(units.size(), 2u);

  // (1) Cold: compile and store.
  auto compiler = cpu::make_compiler();
  std::vector<Artifact> stored;
  {
    ArtifactCache cache(options_);
    for (const auto& unit : units) {
      UnitResult result = compile_isolated(*compiler, unit, CancelToken(), context_);
      for (auto& entry : result.entries) {
        ASSERT_TRUE(entry.ok()) << entry.error().describe();
        ASSERT_TRUE(store_artifact(cache, *entry).ok());
        stored.push_back(*entry);
      }
    }
  }
  ASSERT_EQ(stored.size(), 3u);

  // (2) Warm, in process: a new cache object reads the disk; no compiler.
  ArtifactCache warm(options_);
  auto device = cpu::open_device(2).value();
  for (const Artifact& a : stored) {
    SCOPED_TRACE(a.entry);
    auto hit = lookup_artifact(warm, a.key);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->format, BinaryFormat::kCpuObject);
    auto kernel = device->load(*hit);
    ASSERT_TRUE(kernel.ok()) << kernel.error().describe();
    const int m = 45, n = 70, k = 300;
    auto ha = test::ramp(m * k, 0.3f, 0.0f), hb = test::ramp(k * n, 0.2f, 0.1f);
    std::vector<float> hc(m * n, 0.0f);
    LaunchConfig config;
    config.grid = cpu::gemm_f32_tiled_grid(hit->config, m, n);
    auto s =
        device->launch(*kernel, config,
                       KernelArgs::of(static_cast<const float*>(ha.data()),
                                      static_cast<const float*>(hb.data()), hc.data(), m, n, k));
    ASSERT_TRUE(s.ok()) << s.error().describe();
    EXPECT_LE(test::tolerance_ratio(hc, test::reference_gemm(ha, hb, m, n, k), 1e-3, 1e-4), 1.0);
  }

  // (3) Warm, in a fresh process that has no compiler at all.
  const Artifact& a = stored[1];
  std::string command = std::string(KILN_CPU_OBJECT_RUNNER) + " cache " + dir_.string() + " " +
                        a.key.hex() + " " + std::to_string(a.config.get_int("BM")) + " " +
                        std::to_string(a.config.get_int("BN"));
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[512] = {};
  std::string output;
  while (std::fgets(line, sizeof line, pipe)) output += line;
  EXPECT_EQ(::pclose(pipe), 0) << output;
  EXPECT_EQ(output.rfind("ok ", 0), 0u) << output;
}

// Stored once, loaded once: a group of four is one program on disk (four
// small index entries naming it), and a warm run that looks each entry up
// from a fresh cache object (four separate copies of the bytes) links the
// program once on the device.
TEST_F(CpuPipelineTest, WarmGroupIsStoredOnceAndLoadsItsProgramOnce) {
  const KernelTemplate t = cpu::gemm_f32_tiled_template();
  std::vector<Specialization> specs;
  for (auto [bm, bn] : {std::pair{8, 16}, {16, 16}, {16, 32}, {32, 32}}) {
    specs.push_back(t.specialize(
        Config{{"BM", std::int64_t{bm}}, {"BN", std::int64_t{bn}}, {"BK", std::int64_t{16}}}));
  }
  GroupOptions grouping;
  grouping.group_size = 4;
  grouping.arch = cpu::host_arch();
  grouping.format = BinaryFormat::kCpuObject;
  auto units = group(t, specs, grouping);
  ASSERT_EQ(units.size(), 1u);
  UnitResult result = compile_isolated(*cpu::make_compiler(), units[0], CancelToken(), context_);
  std::vector<Hash128> keys;
  {
    ArtifactCache cache(options_);
    for (auto& entry : result.entries) {
      ASSERT_TRUE(entry.ok()) << entry.error().describe();
      ASSERT_TRUE(store_artifact(cache, *entry).ok());
      keys.push_back(entry->key);
    }
    EXPECT_EQ(cache.stats().programs_written, 1u);
  }
  ArtifactCache warm(options_);
  std::size_t programs = 0, entries = 0;
  for (const auto& f : warm.scan(false)) (f.is_program ? programs : entries) += f.temporary ? 0 : 1;
  EXPECT_EQ(programs, 1u);
  EXPECT_EQ(entries, 4u);

  auto device = cpu::open_device(2).value();
  std::vector<LoadedKernel> kernels;
  for (const Hash128& key : keys) {
    auto hit = lookup_artifact(warm, key);
    ASSERT_TRUE(hit.has_value());
    auto kernel = device->load(*hit);
    ASSERT_TRUE(kernel.ok()) << kernel.error().describe();
    kernels.push_back(std::move(*kernel));
  }
  EXPECT_EQ(cpu::modules_loaded(*device), 1u) << "each entry linked its own copy of the program";
}

TEST_F(CpuPipelineTest, ShippedRmsNormDefaultConfigRunsInPlace) {
  const KernelTemplate t = cpu::fused_add_rmsnorm_template();
  const Config config = t.space.default_config();
  GroupOptions grouping;
  grouping.arch = "host";
  grouping.format = BinaryFormat::kCpuObject;
  auto units = group(t, {t.specialize(config)}, grouping);
  ASSERT_EQ(units.size(), 1u);
  UnitResult result = compile_isolated(*cpu::make_compiler(), units[0], CancelToken(), context_);
  ASSERT_TRUE(result.entries[0].ok()) << result.entries[0].error().describe();
  auto device = cpu::open_device(2).value();
  auto kernel = device->load(*result.entries[0]).value();

  const int rows = 9, hidden = 130;
  auto x = test::ramp(rows * hidden, 0.9f, 0.2f), res = test::ramp(rows * hidden, 0.4f, 0.0f);
  std::vector<float> w(hidden, 1.5f);
  std::vector<float> want(x.size());
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int i = 0; i < hidden; ++i) {
      double v = double{x[r * hidden + i]} + res[r * hidden + i];
      sum += v * v;
    }
    for (int i = 0; i < hidden; ++i) {
      double v = double{x[r * hidden + i]} + res[r * hidden + i];
      want[r * hidden + i] = static_cast<float>(v / std::sqrt(sum / hidden + 1e-5) * 1.5);
    }
  }
  LaunchConfig launch;
  launch.grid = cpu::fused_add_rmsnorm_grid(config, rows);
  ASSERT_TRUE(device
                  ->launch(kernel, launch,
                           KernelArgs::of(x.data(), res.data(), static_cast<const float*>(w.data()),
                                          rows, hidden, 1e-5f))
                  .ok());
  EXPECT_LE(test::tolerance_ratio(x, want), 1.0);
}

}  // namespace
}  // namespace kiln
