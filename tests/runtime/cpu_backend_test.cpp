// The CPU backend end to end, for real: Clang compiles the shipped
// templates in memory, LLVM ORC links the objects, the CPU device runs
// them, and the results are checked against plain reference loops.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cpu/clang_compiler.hpp"
#include "cpu_test_util.hpp"
#include "kiln/backends/cpu.hpp"

namespace kiln {
namespace {

using test::GemmTile;

std::unique_ptr<Device> cpu_device(int threads = 2) {
  auto device = cpu::open_device(threads);
  EXPECT_TRUE(device.ok()) << device.error().describe();
  return std::move(*device);
}

// Runs entry `i` of `program` on `device` for an m x n x k problem and
// returns the worst tolerance ratio against the reference.
double run_gemm(Device& device, const Artifact& artifact, const GemmTile& t, int m, int n, int k) {
  auto kernel = device.load(artifact);
  EXPECT_TRUE(kernel.ok()) << kernel.error().describe();
  if (!kernel.ok()) return 1e9;
  auto a = test::ramp(static_cast<std::size_t>(m) * k, 0.37f, 0.1f);
  auto b = test::ramp(static_cast<std::size_t>(k) * n, 0.11f, -0.2f);
  auto da = device.allocate(a.size() * 4).value();
  auto db = device.allocate(b.size() * 4).value();
  auto dc = device.allocate(static_cast<std::size_t>(m) * n * 4).value();
  EXPECT_TRUE(device.copy_to_device(da.data(), a.data(), a.size() * 4).ok());
  EXPECT_TRUE(device.copy_to_device(db.data(), b.data(), b.size() * 4).ok());
  EXPECT_TRUE(device.fill(dc.data(), 0xff, dc.size()).ok());  // NaNs if a tile is skipped
  LaunchConfig config;
  config.grid = {static_cast<std::uint32_t>((n + t.bn - 1) / t.bn),
                 static_cast<std::uint32_t>((m + t.bm - 1) / t.bm), 1};
  auto status = device.launch(
      *kernel, config,
      KernelArgs::of(da.as<const float>(), db.as<const float>(), dc.as<float>(), m, n, k));
  EXPECT_TRUE(status.ok()) << status.error().describe();
  std::vector<float> c(static_cast<std::size_t>(m) * n);
  EXPECT_TRUE(device.copy_to_host(c.data(), dc.data(), c.size() * 4).ok());
  return test::tolerance_ratio(c, test::reference_gemm(a, b, m, n, k));
}

TEST(CpuBackend, GroupedGemmConfigsMatchTheReference) {
  const std::vector<GemmTile> tiles = {{8, 8, 4}, {16, 32, 16}, {32, 64, 64}};
  CompileUnit unit = test::gemm_unit(tiles);
  auto compiler = cpu::make_compiler();
  EXPECT_EQ(compiler->name(), "clang-orc");
  auto program = compiler->compile(unit, CancelToken());
  ASSERT_TRUE(program.ok()) << program.error().describe();
  EXPECT_EQ(program->format, BinaryFormat::kCpuObject);
  ASSERT_EQ(program->lowered_names.size(), tiles.size());
  EXPECT_EQ(program->binary->substr(0, 4),
            "\x7f"
            "ELF");
  auto device = cpu_device();
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    SCOPED_TRACE(unit.specializations[i].entry);
    // Ragged sizes: partial tiles on both edges and a partial k-slab.
    EXPECT_LE(run_gemm(*device, test::artifact_of(unit, *program, i), tiles[i], 70, 45, 33), 1.0);
    EXPECT_LE(run_gemm(*device, test::artifact_of(unit, *program, i), tiles[i], 64, 64, 64), 1.0);
  }
}

TEST(CpuBackend, FusedAddRmsNormWorksInPlace) {
  Specialization spec;
  spec.kernel = "fused_add_rmsnorm";
  spec.config = Config{{"ROWS", std::int64_t{2}}, {"VEC", std::int64_t{8}}};
  spec.entry = "kiln_cpu::fused_add_rmsnorm<2,8>";
  CompileUnit unit =
      test::cpu_unit(spec.kernel, test::read_template("cpu/fused_add_rmsnorm.cpp"), {spec});
  auto program = cpu::make_compiler()->compile(unit, CancelToken());
  ASSERT_TRUE(program.ok()) << program.error().describe();
  auto device = cpu_device();
  auto kernel = device->load(test::artifact_of(unit, *program, 0));
  ASSERT_TRUE(kernel.ok()) << kernel.error().describe();

  const int rows = 5, hidden = 77;  // odd: the VEC tail and a partial block
  const float eps = 1e-6f;
  auto x = test::ramp(rows * hidden, 0.3f, 0.5f);
  auto res = test::ramp(rows * hidden, 0.7f, -0.1f);
  auto w = test::ramp(hidden, 0.05f, 1.0f);
  std::vector<float> want_x(x.size()), want_res(x.size());
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int i = 0; i < hidden; ++i) {
      want_res[r * hidden + i] = res[r * hidden + i] + x[r * hidden + i];
      sum += double{want_res[r * hidden + i]} * want_res[r * hidden + i];
    }
    double scale = 1.0 / std::sqrt(sum / hidden + eps);
    for (int i = 0; i < hidden; ++i)
      want_x[r * hidden + i] = static_cast<float>(want_res[r * hidden + i] * scale * w[i]);
  }
  LaunchConfig config;
  config.grid = {3, 1, 1};
  auto s = device->launch(
      *kernel, config,
      KernelArgs::of(x.data(), res.data(), static_cast<const float*>(w.data()), rows, hidden, eps));
  ASSERT_TRUE(s.ok()) << s.error().describe();
  EXPECT_LE(test::tolerance_ratio(res, want_res), 1.0);
  EXPECT_LE(test::tolerance_ratio(x, want_x), 1.0);
}

TEST(CpuBackend, CompileErrorCarriesClangDiagnostics) {
  CompileUnit unit =
      test::cpu_unit("broken",
                     "#include \"kiln/cpu_kernel.h\"\n"
                     "template <int N> void broken(const kiln::cpu::BlockContext&, float* y) {\n"
                     "  y[0] = undefined_thing * N;\n}\n",
                     {});
  Specialization s;
  s.kernel = "broken";
  s.config = Config{{"N", std::int64_t{4}}};
  s.entry = "broken<4>";
  unit.specializations = {s};
  auto program = cpu::make_compiler()->compile(unit, CancelToken());
  ASSERT_FALSE(program.ok());
  const ErrorInfo& e = program.error();
  EXPECT_EQ(e.code, ErrorCode::kCompileFailed);
  EXPECT_NE(e.details.at("log").find("use of undeclared identifier 'undefined_thing'"),
            std::string::npos)
      << e.details.at("log");
  // The diagnostic points into the template's own file, at its line.
  EXPECT_NE(e.details.at("log").find("broken.cpp:3:"), std::string::npos) << e.details.at("log");
  // Named as the user knows it, not by the compiler's in-memory root.
  EXPECT_EQ(e.details.at("log").find("/kiln-unit"), std::string::npos) << e.details.at("log");
  EXPECT_NE(e.details.at("options").find("-O3"), std::string::npos);
}

TEST(CpuBackend, WrongKernelSignatureIsACompileErrorNamingTheEntry) {
  CompileUnit unit =
      test::cpu_unit("nocontext", "template <int N> void nocontext(float* y) { y[0] = N; }\n", {});
  Specialization s;
  s.kernel = "nocontext";
  s.entry = "nocontext<1>";
  unit.specializations = {s};
  auto program = cpu::make_compiler()->compile(unit, CancelToken());
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.error().details.at("log").find("nocontext<1>"), std::string::npos)
      << program.error().details.at("log");
}

TEST(CpuBackend, OneCompilerAndOneDeviceServeTwoThreadsAtOnce) {
  // The compile pool's use: one Compiler shared by workers, and benchmark
  // workers loading into one device while others compile.
  auto compiler = cpu::make_compiler();
  auto device = cpu_device();
  const std::vector<GemmTile> tiles = {{8, 16, 8}, {16, 8, 16}, {24, 24, 8}, {8, 32, 32}};
  std::vector<Artifact> artifacts(tiles.size());
  std::vector<std::string> errors(tiles.size());
  auto work = [&](std::size_t first) {
    for (std::size_t i = first; i < tiles.size(); i += 2) {
      CompileUnit unit = test::gemm_unit({tiles[i]});
      auto program = compiler->compile(unit, CancelToken());
      if (!program) {
        errors[i] = program.error().describe();
        continue;
      }
      artifacts[i] = test::artifact_of(unit, *program, 0);
      auto kernel = device->load(artifacts[i]);
      if (!kernel) errors[i] = kernel.error().describe();
    }
  };
  std::thread other(work, 0);
  work(1);
  other.join();
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    ASSERT_EQ(errors[i], "") << i;
    EXPECT_LE(run_gemm(*device, artifacts[i], tiles[i], 50, 41, 19), 1.0) << i;
  }
}

TEST(CpuBackend, SourcesIncludingSystemHeadersCompileWithThePch) {
  // A template using the standard library: the precompiled common headers
  // serve its #includes; the result must match the compile without them.
  const GemmTile tile{16, 16, 8};
  CompileUnit unit = test::gemm_unit({tile});
  unit.source = "#include <algorithm>\n#include <cmath>\n" + unit.source;
  cpu::ClangSettings settings = cpu::ClangSettings::from_options();
  for (bool pch : {true, false}) {
    SCOPED_TRACE(pch ? "with PCH" : "without PCH");
    settings.pch = pch;
    cpu::ClangCompiler compiler(settings);
    auto program = compiler.compile(unit, CancelToken());
    ASSERT_TRUE(program.ok()) << program.error().describe();
    std::string options;
    for (const auto& o : program->options) options += o + " ";
    EXPECT_EQ(options.find("-include-pch") != std::string::npos, pch) << options;
    auto device = cpu_device();
    EXPECT_LE(run_gemm(*device, test::artifact_of(unit, *program, 0), tile, 40, 24, 12), 1.0);
  }
  // The shipped template includes no system header: no PCH to load.
  settings.pch = true;
  EXPECT_EQ(cpu::ClangCompiler(settings).driver_args(test::gemm_unit({tile})).size(),
            cpu::ClangCompiler(settings).driver_args(unit).size() - 2);
}

// An option the driver does not know (a KILN_CPU_FLAGS typo) fails the
// compile with the driver's diagnostic; the driver used to drop it with an
// error nobody read, and the artifact claimed the flag in its options. The
// PCH build and the plain compile alike, and a failed option set is not
// remembered as good for the next compile.
TEST(CpuBackend, AnOptionTheDriverDoesNotKnowFailsTheCompile) {
  CompileUnit unit = test::gemm_unit({GemmTile{16, 16, 8}});
  unit.source = "#include <cmath>\n" + unit.source;
  for (bool pch : {true, false}) {
    SCOPED_TRACE(pch ? "with PCH" : "without PCH");
    cpu::ClangSettings settings = cpu::ClangSettings::from_options();
    settings.pch = pch;
    settings.extra_options = {"-ffast-mth"};
    cpu::ClangCompiler compiler(settings);
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto program = compiler.compile(unit, CancelToken());
      ASSERT_FALSE(program.ok()) << "attempt " << attempt;
      EXPECT_EQ(program.error().code, ErrorCode::kCompileFailed);
      EXPECT_NE(program.error().details.at("log").find("unknown argument"), std::string::npos)
          << program.error().details.at("log");
    }
  }
}

TEST(CpuBackend, CancelledBeforeStartIsCancelled) {
  CancelToken cancel;
  cancel.cancel();
  auto program = cpu::make_compiler()->compile(test::gemm_unit({{8, 8, 8}}), cancel);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.error().code, ErrorCode::kCancelled);
}

TEST(CpuBackend, ObjectReloadsInAFreshJitAndAFreshProcess) {
  const GemmTile tile{16, 16, 8};
  CompileUnit unit = test::gemm_unit({tile});
  auto program = cpu::make_compiler()->compile(unit, CancelToken());
  ASSERT_TRUE(program.ok()) << program.error().describe();

  // (1) A second device has its own LLJIT: the bytes alone are enough.
  Artifact reloaded = test::artifact_of(unit, *program, 0);
  reloaded.binary = std::make_shared<const std::string>(*program->binary);
  auto fresh = cpu_device(1);
  EXPECT_LE(run_gemm(*fresh, reloaded, tile, 33, 17, 9), 1.0);

  // (2) A new process loads the object from disk, as a warm run would.
  auto path =
      std::filesystem::temp_directory_path() / ("kiln_gemm_" + std::to_string(::getpid()) + ".o");
  std::ofstream(path, std::ios::binary) << *program->binary;
  std::string command = std::string(KILN_CPU_OBJECT_RUNNER) + " " + path.string() + " " +
                        program->lowered_names[0] + " 16 16";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[256] = {};
  std::string output;
  while (std::fgets(line, sizeof line, pipe)) output += line;
  int rc = ::pclose(pipe);
  std::filesystem::remove(path);
  EXPECT_EQ(rc, 0) << output;
  EXPECT_EQ(output.rfind("ok ", 0), 0u) << output;
}

}  // namespace
}  // namespace kiln
