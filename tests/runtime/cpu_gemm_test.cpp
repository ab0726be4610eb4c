// The shipped CPU gemm_f32 (packed panels, register micro-tile, cache
// blocks): its config space bound to fabricated AVX2 and AVX-512 devices
// (not this host), and the kernel itself compiled for real at many configs
// and run at sizes that are not multiples of any tile, checked against a
// double-precision reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <tuple>

#include "cpu_test_util.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/compile/compile_engine.hpp"
#include "sanitized.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

DeviceTraits machine(const char* name, int vector_bits, int registers, std::size_t l1d,
                     std::size_t l2) {
  DeviceTraits d;
  d.name = name;
  d.vector_bits = vector_bits;
  d.vector_registers = registers;
  d.l1d_bytes = l1d;
  d.l2_bytes = l2;
  d.l3_bytes = 32 << 20;
  d.shared_per_block = 1 << 20;
  return d;
}

DeviceTraits avx2_laptop() {
  return machine("avx2", 256, 16, 32 << 10, 1 << 20);
}

DeviceTraits avx512_server() {
  return machine("avx512", 512, 32, 48 << 10, 2 << 20);
}

std::int64_t gemm_param(const Config& c, const char* name) {
  return c.get_int(name);
}

// What the constraints promise, checked config by config.
void expect_fits(const ConfigSpace& space, const DeviceTraits& d) {
  const std::int64_t v = d.vector_bits / 32;
  for (const Config& c : space.enumerate()) {
    const std::int64_t nv = gemm_param(c, "NR") / v;
    ASSERT_EQ(gemm_param(c, "NR") % v, 0) << c.to_string();
    ASSERT_LE(gemm_param(c, "MR") * nv + nv + 1, d.vector_registers) << c.to_string();
    ASSERT_LE(gemm_param(c, "KC") * gemm_param(c, "NR") * 4, static_cast<std::int64_t>(d.l1d_bytes))
        << c.to_string();
    ASSERT_LE(gemm_param(c, "MC") * gemm_param(c, "KC") * 4,
              static_cast<std::int64_t>(d.l2_bytes / 2))
        << c.to_string();
    ASSERT_LE(cpu::gemm_f32_shared_bytes(c), static_cast<std::int64_t>(d.shared_per_block))
        << c.to_string();
  }
}

std::set<std::pair<std::int64_t, std::int64_t>> tiles(const ConfigSpace& space) {
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  for (const Config& c : space.enumerate()) out.insert({gemm_param(c, "MR"), gemm_param(c, "NR")});
  return out;
}

TEST(CpuGemmSpace, OnAvx2AndAvx512EachKeepsTilesThatFitItsRegisters) {
  for (const DeviceTraits& d : {avx2_laptop(), avx512_server()}) {
    SCOPED_TRACE(d.summary());
    const KernelTemplate t = cpu::gemm_f32_template(d);
    EXPECT_GE(t.space.size(), 2000u) << "only a budgeted search can tune it";
    expect_fits(t.space, d);
    ASSERT_NE(t.space.device(), nullptr);
    EXPECT_TRUE(t.space.has_explicit_default());
    EXPECT_TRUE(t.space.contains(t.space.default_config()));
    EXPECT_EQ(t.space.default_config().get_int("NR"), 2 * (d.vector_bits / 32));
  }
  // The machines get different tiles: 14 x 32 needs 31 of AVX-512's 32
  // registers and would spill on AVX2; 4 x 24 is three whole AVX2 vectors
  // and a ragged AVX-512 one.
  const auto narrow = tiles(cpu::gemm_f32_template(avx2_laptop()).space);
  const auto wide = tiles(cpu::gemm_f32_template(avx512_server()).space);
  EXPECT_TRUE(wide.count({14, 32}));
  EXPECT_FALSE(narrow.count({14, 32}));
  EXPECT_TRUE(narrow.count({4, 24}));
  EXPECT_FALSE(wide.count({4, 24}));
  EXPECT_TRUE(narrow.count({14, 8}));
}

TEST(CpuGemmSpace, SmallerCachesCutTheBlocks) {
  DeviceTraits small = avx2_laptop();
  small.l1d_bytes = 16 << 10;
  small.l2_bytes = 256 << 10;
  const ConfigSpace space = cpu::gemm_f32_template(small).space;
  EXPECT_LT(space.size(), cpu::gemm_f32_template(avx2_laptop()).space.size());
  expect_fits(space, small);
}

TEST(CpuGemmSpace, AnSseOnlyMachineStillHasASpace) {
  const DeviceTraits sse = machine("sse", 128, 16, 32 << 10, 1 << 20);
  const ConfigSpace space = cpu::gemm_f32_template(sse).space;
  EXPECT_GT(space.size(), 0u);
  expect_fits(space, sse);
}

TEST(CpuGemmSpace, TheHostSpaceIsBoundToTheHostAndHashesItsDevice) {
  const KernelTemplate host = cpu::gemm_f32_template();
  ASSERT_NE(host.space.device(), nullptr);
  EXPECT_GT(host.space.size(), 0u);
  EXPECT_TRUE(host.space.contains(host.space.default_config()));
  // Two devices, two definitions: records tuned on one are not served to
  // the other.
  EXPECT_NE(cpu::gemm_f32_template(avx2_laptop()).space.to_json(),
            cpu::gemm_f32_template(avx512_server()).space.to_json());
}

TEST(CpuGemmSpace, TheUnboundSpaceRefusesToEnumerateAndSaysHowToBind) {
  const ConfigSpace unbound = cpu::gemm_f32_space();
  EXPECT_EQ(unbound.device(), nullptr);
  try {
    (void)unbound.size();
    FAIL() << "an unbound device constraint was ignored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("for_device"), std::string::npos) << e.what();
  }
  const ConfigSpace bound = unbound.for_device(avx2_laptop());
  EXPECT_THROW((void)bound.for_device(avx512_server()), Error) << "bound twice";
}

// ---------------------------------------------------------------- the kernel

// Configs of the host's space: a seeded sample, the default, and the one
// with the most edge cases (the tallest tile, no packing, most row chunks).
std::vector<Config> sample_configs(const ConfigSpace& space, std::size_t count) {
  std::vector<Config> all = space.enumerate();
  std::mt19937_64 rng(18);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<Config> out(all.begin(), all.begin() + std::min(count, all.size()));
  auto score = [](const Config& c) {
    return gemm_param(c, "MR") * 100 - gemm_param(c, "PACK") * 10 + gemm_param(c, "GM");
  };
  const Config extreme =
      *std::max_element(all.begin(), all.end(),
                        [&](const Config& a, const Config& b) { return score(a) < score(b); });
  for (const Config& c : {extreme, space.default_config()}) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

using Shape = std::array<int, 3>;  // M, N, K

// Compiles `configs` of the host's template for real and runs each at every
// shape into a C filled with garbage (overwritten, not added to), checked
// against a double-precision reference. Returns the runs checked.
std::size_t expect_right(const KernelTemplate& t, const std::vector<Config>& configs,
                         const std::vector<Shape>& shapes) {
  std::vector<Specialization> specs;
  for (const Config& c : configs) specs.push_back(t.specialize(c));
  GroupOptions grouping;
  grouping.group_size = 8;
  grouping.arch = cpu::host_arch();
  grouping.format = BinaryFormat::kCpuObject;
  CompileContext context;
  context.toolchain = {kiln_version(), "absent", cpu::make_compiler()->version(),
                       kiln_codegen_hash()};
  auto compiler = cpu::make_compiler();
  auto device = cpu::open_device(2).value();

  std::vector<std::vector<float>> as, bs, wants;
  for (const auto& [m, n, k] : shapes) {
    as.push_back(test::ramp(static_cast<std::size_t>(m) * k, 0.37f, 0.0f));
    bs.push_back(test::ramp(static_cast<std::size_t>(k) * n, 0.23f, 0.1f));
    wants.push_back(test::reference_gemm(as.back(), bs.back(), m, n, k));
  }
  std::size_t checked = 0;
  for (const CompileUnit& unit : group(t, specs, grouping)) {
    UnitResult result = compile_isolated(*compiler, unit, CancelToken(), context);
    for (auto& entry : result.entries) {
      EXPECT_TRUE(entry.ok()) << entry.error().describe();
      if (!entry.ok()) continue;
      SCOPED_TRACE(entry->config.to_string());
      auto kernel = device->load(*entry);
      EXPECT_TRUE(kernel.ok()) << kernel.error().describe();
      if (!kernel.ok()) continue;
      for (std::size_t s = 0; s < shapes.size(); ++s) {
        const auto& [m, n, k] = shapes[s];
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
        std::vector<float> c(static_cast<std::size_t>(m) * n, 99.0f);
        LaunchConfig launch;
        launch.grid = cpu::gemm_f32_grid(entry->config, m, n);
        launch.shared_bytes = static_cast<std::size_t>(cpu::gemm_f32_shared_bytes(entry->config));
        auto st = device->launch(
            *kernel, launch,
            KernelArgs::of(static_cast<const float*>(as[s].data()),
                           static_cast<const float*>(bs[s].data()), c.data(), m, n, k));
        EXPECT_TRUE(st.ok()) << st.error().describe();
        EXPECT_LE(test::tolerance_ratio(c, wants[s], 1e-4, 1e-4), 1.0);
        ++checked;
      }
    }
  }
  return checked;
}

// Under TSan these two took 9 and 14 s in LLVM's compiles, the JIT-compiled
// kernels and the reference GEMM, none of which TSan sees or can race: the
// block pool they run on has its own tests there.
TEST(CpuGemmKernel, ManyConfigsAreRightAtSizesThatAreNoMultipleOfAnyTile) {
  KILN_SKIP_UNDER_TSAN("LLVM compiles and JIT-compiled kernels");
  const KernelTemplate t = cpu::gemm_f32_template();
  const std::vector<Config> configs = sample_configs(t.space, 14);
  // K=515 takes two KC slices at every KC, N=600 two NC panels at NC=512.
  const std::vector<Shape> shapes = {
      {1, 1, 1}, {7, 9, 5}, {37, 53, 29}, {130, 75, 300}, {61, 600, 515}};
  EXPECT_EQ(expect_right(t, configs, shapes), configs.size() * shapes.size());
}

// Every micro-tile of the host's space, packed and in place, with edge tiles
// in both directions: the tiles with the most accumulators are the ones
// whose edge store once kept them in memory, and the ones a tuner now picks.
TEST(CpuGemmKernel, EveryTileIsRightWithEdgeTilesOnBothSides) {
  KILN_SKIP_UNDER_TSAN("LLVM compiles and JIT-compiled kernels");
  const KernelTemplate t = cpu::gemm_f32_template();
  std::vector<Config> configs;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  for (const Config& c : t.space.enumerate()) {
    // One config per (MR, NR, PACK): the smallest KC, so K=129 and 257 take
    // two and three slices, and two row chunks.
    if (gemm_param(c, "KC") != 128 || gemm_param(c, "GM") != 2) continue;
    if (seen.insert({gemm_param(c, "MR"), gemm_param(c, "NR"), gemm_param(c, "PACK")}).second)
      configs.push_back(c);
  }
  ASSERT_GE(configs.size(), 8u);
  const std::vector<Shape> shapes = {{1, 1, 1}, {7, 7, 7}, {129, 129, 129}, {1000, 513, 257}};
  EXPECT_EQ(expect_right(t, configs, shapes), configs.size() * shapes.size());
}

}  // namespace
}  // namespace kiln
