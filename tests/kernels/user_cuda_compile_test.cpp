// A user's CUDA kernel, from its spec through real NVRTC compiles: what
// `kiln tune --template` does before benchmarking, checked where there is
// no GPU (NVRTC compiles for any arch without one).
#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/compile/compile_run.hpp"
#include "kiln/kernels/kernel_description.hpp"
#if KILN_BACKEND_CUDA
#include "kiln/backends/nvrtc.hpp"
#include "skip.hpp"
#endif

namespace kiln {
namespace {

using UserCuda = testing::CliTest;

TEST_F(UserCuda, EveryConfigOfTheSpecCompilesWithNvrtc) {
#if !KILN_BACKEND_CUDA
  KILN_SKIP(Skip::kCudaToolkit) << "the CUDA backend is not built";
#else
  (void)testing::write_cuda_user_kernel(dir_);
  KernelDescription k =
      load_user_kernel(dir_ / "scale.cu", dir_ / "scale.json", "scale<{BLOCK},{ITEMS}>").value();
  EXPECT_EQ(k.backend, "cuda");
  EXPECT_EQ(k.dims, (std::vector<std::string>{"N"}));
  const TunableKernel t = k.tunable({{"N", 1000}});
  const LaunchGeometry g =
      t.launch(Config{{"BLOCK", std::int64_t{128}}, {"ITEMS", std::int64_t{4}}}, {});
  EXPECT_EQ(g.grid, (Dim3{2, 1, 1}));
  EXPECT_EQ(g.block, (Dim3{128, 1, 1}));

  CompileRunSettings settings;
  settings.arch = "sm_80";
  settings.workers = 2;
  settings.context = {current_toolchain("cuda"), CacheEnvRegistry::global().snapshot()};
  auto compiler = std::shared_ptr<Compiler>(cuda::make_compiler());
  settings.factory = [compiler](int) { return compiler; };
  CompileRun run = compile_all(t.tmpl, t.tmpl.specialize_all(), settings);
  EXPECT_EQ(run.ok, 6u);
  EXPECT_EQ(run.failed, 0u);
  for (const auto& unit : run.units)
    for (const auto& e : unit.entries) EXPECT_TRUE(e.ok()) << e.error().describe();
#endif
}

}  // namespace
}  // namespace kiln
