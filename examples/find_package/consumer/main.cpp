// Kiln from an installation: find_package(kiln), link kiln::kiln, tune.
//
// This program is built outside Kiln's tree against an installed Kiln (see
// ../run_consumer.cmake). It (1) opens the caches and a CPU device, (2)
// declares a small kernel template with a two-parameter config space, (3)
// tunes it for one call, (4) checks the winner's result.
#include <cstdio>
#include <vector>

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/tuner/tuner.hpp"

constexpr const char* kSource = R"(
#include "kiln/cpu_kernel.h"
template <int UNROLL, int BLOCKS>
void scale(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n) {
  const int per = (n + BLOCKS - 1) / BLOCKS;
  const int lo = static_cast<int>(ctx.block_idx.x) * per;
  const int hi = lo + per < n ? lo + per : n;
  int i = lo;
  for (; i + UNROLL <= hi; i += UNROLL)
    for (int u = 0; u < UNROLL; ++u) y[i + u] = 2.0f * x[i + u];
  for (; i < hi; ++i) y[i] = 2.0f * x[i];
})";

int main() {
  // (1) Caches under KILN_CACHE_DIR (or the user's cache), a 1-thread CPU device.
  kiln::ArtifactCache artifacts;
  kiln::TuningCache tunings;
  auto device = kiln::cpu::open_device(1);
  if (!device.ok()) {
    std::fprintf(stderr, "no CPU device: %s\n", device.error().describe().c_str());
    return 1;
  }
  kiln::Backend backend;
  backend.compiler = std::shared_ptr<kiln::Compiler>(kiln::cpu::make_compiler());
  backend.toolchain = kiln::current_toolchain("cpu");
  backend.arch = "host";
  backend.format = kiln::BinaryFormat::kCpuObject;

  // (2) The kernel: a template, its space, its launch rule, its output.
  kiln::TunableKernel kernel;
  kernel.tmpl.name = "consumer_scale";
  kernel.tmpl.source = kSource;
  kernel.tmpl.entry = "scale<{UNROLL},{BLOCKS}>";
  kernel.tmpl.space.param("UNROLL", {1, 4}).param("BLOCKS", {1, 4});
  kernel.launch = [](const kiln::Config& c, const kiln::ArgList&) {
    kiln::LaunchGeometry g;
    g.grid = kiln::Dim3{static_cast<unsigned>(c.get_int("BLOCKS")), 1, 1};
    return g;
  };
  kernel.outputs = {"y"};

  // (3) One call, tuned on the first use (served from the cache afterwards).
  const int n = 1 << 14;
  std::vector<float> x(n, 1.5f), y(n, 0.0f);
  kiln::ArgList args = {
      kiln::Arg::of_tensor("x", x.data(), kiln::TensorArg::contiguous(kiln::DType::kF32, {n})),
      kiln::Arg::of_tensor("y", y.data(), kiln::TensorArg::contiguous(kiln::DType::kF32, {n})),
      kiln::Arg::of_scalar("n", n)};
  kiln::Autotuner tuner(backend, &artifacts, &tunings);
  kiln::TuneOptions options;
  options.pipeline.progress = false;
  auto best = tuner.run(kernel, args, **device, options);
  if (!best.ok()) {
    std::fprintf(stderr, "tuning failed: %s\n", best.error().describe().c_str());
    return 1;
  }

  // (4) The winner ran once for real: check it.
  for (int i = 0; i < n; ++i) {
    if (y[i] != 3.0f) {
      std::fprintf(stderr, "wrong result at %d: %f\n", i, y[i]);
      return 1;
    }
  }
  std::printf("installed Kiln %s tuned %s: best %s (%s)\n",
              kiln::current_toolchain("cpu").kiln_version.c_str(), kernel.tmpl.name.c_str(),
              best->config.to_string().c_str(), kiln::source_name(best->source));
  return 0;
}
