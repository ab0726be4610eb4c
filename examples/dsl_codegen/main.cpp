// A DSL front end on Kiln. A tiny expression "language" builds an
// elementwise chain y = f(x) as a tree of C++ values; the program turns it
// into kernel source text at run time, hands that source to Kiln together
// with the knobs it exposes (elements per block, unroll factor), tunes it,
// launches the winner and checks the result against the same expression
// evaluated on the host. The winner is cached on disk: run the program
// again with the same KILN_CACHE_DIR and it is served from the cache with
// nothing compiled or measured (`--expect-warm` makes that an assertion).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/kernels/tuning_target.hpp"

using namespace kiln;

// (1) The DSL: an expression is its source text and its host meaning.
struct Expr {
  std::string code;
  std::function<float(float)> eval;
};
Expr var() {
  return {"v", [](float v) { return v; }};
}
Expr num(float c) {
  return {std::to_string(c) + "f", [c](float) { return c; }};
}
Expr operator*(Expr a, Expr b) {
  return {"(" + a.code + " * " + b.code + ")", [a, b](float v) { return a.eval(v) * b.eval(v); }};
}
Expr operator+(Expr a, Expr b) {
  return {"(" + a.code + " + " + b.code + ")", [a, b](float v) { return a.eval(v) + b.eval(v); }};
}
Expr relu(Expr a) {
  return {"__builtin_fmaxf(" + a.code + ", 0.0f)",
          [a](float v) { return std::fmax(a.eval(v), 0.0f); }};
}

// (2) Code generation: one CPU kernel over blocks of BLOCK elements, its
// inner loop unrolled UNROLL times; BLOCK and UNROLL stay template
// parameters so Kiln specialises them per config.
std::string generate(const Expr& e) {
  return R"(#include "kiln/cpu_kernel.h"
template <int BLOCK, int UNROLL>
void dsl_kernel(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n) {
  const int begin = (int)ctx.block_idx.x * BLOCK;
  const int end = begin + BLOCK < n ? begin + BLOCK : n;
  int i = begin;
  for (; i + UNROLL <= end; i += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) { const float v = x[i + u]; y[i + u] = )" +
         e.code + R"(; }
  }
  for (; i < end; ++i) { const float v = x[i]; y[i] = )" +
         e.code + R"(; }
})";
}

int main(int argc, char** argv) {
  const bool expect_warm = argc > 1 && std::strcmp(argv[1], "--expect-warm") == 0;
  const Expr expr = relu(var() * num(1.5f) + num(0.25f)) * var();

  // (3) The tunable kernel: generated source, entry with placeholders, the
  // config space, and the launch rule. The name carries the source's hash:
  // another expression is another kernel with its own tuning record.
  TunableKernel kernel;
  kernel.tmpl.source = generate(expr);
  kernel.tmpl.name = "dsl_" + hash128(kernel.tmpl.source).hex().substr(0, 12);
  kernel.tmpl.entry = "dsl_kernel<{BLOCK},{UNROLL}>";
  kernel.tmpl.space.param("BLOCK", {1024, 8192, 65536}).param("UNROLL", {1, 4, 8});
  kernel.launch = [](const Config& c, const ArgList& a) {
    const auto n = std::get<std::int32_t>(find_arg(a, "n").scalar);
    LaunchGeometry g;
    g.grid.x = static_cast<std::uint32_t>((n + c.get_int("BLOCK") - 1) / c.get_int("BLOCK"));
    return g;
  };
  kernel.outputs = {"y"};

  // (4) A call: host memory is device memory on the CPU backend.
  const std::int32_t n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (std::int32_t i = 0; i < n; ++i) x[i] = std::sin(0.001f * float(i));
  const ArgList args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
                        Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
                        Arg::of_scalar("n", n)};

  // (5) Tune (or look up) and launch, with the caches of KILN_CACHE_DIR.
  TuningTarget cpu = open_tuning_target("cpu").value();
  ArtifactCache artifacts(Options::global());
  TuningCache tunings(Options::global());
  Autotuner tuner(cpu.backend, &artifacts, &tunings);
  auto result = tuner.run(kernel, args, *cpu.device);
  if (!result.ok()) {
    std::fprintf(stderr, "tuning failed: %s\n", result.error().describe().c_str());
    return 1;
  }
  const KernelStats& s = result->stats;
  std::printf("kernel %s: y = %s\n", kernel.tmpl.name.c_str(), expr.code.c_str());
  std::printf(
      "config %s from %s; %llu configs measured, %llu compiled (%llu from the artifact "
      "cache)\n",
      result->config.to_string().c_str(), kiln::source_name(result->source),
      (unsigned long long)s.configs, (unsigned long long)s.compiled,
      (unsigned long long)s.artifact_hits);
  if (result->source == kiln::ResultSource::kTuned)
    std::printf("speedup of the winner over the default config: %.2fx\n",
                result->speedup_over_default());

  // (6) Check the launch against the host meaning of the same expression.
  for (std::int32_t i = 0; i < n; ++i) {
    const float want = expr.eval(x[i]);
    if (std::fabs(y[i] - want) > 1e-5f * (1 + std::fabs(want))) {
      std::fprintf(stderr, "y[%d] = %g, expected %g\n", i, y[i], want);
      return 1;
    }
  }
  std::printf("result checked: %d elements\n", n);

  // (7) A second process is warm: served from disk, nothing compiled.
  if (expect_warm) {
    if (result->source != kiln::ResultSource::kDisk || s.compiled != 0 || s.artifact_hits != 1) {
      // The winner's code too came from the artifact cache: nothing compiled.
      std::fprintf(stderr, "expected a warm start (source disk, nothing compiled)\n");
      return 1;
    }
    std::printf("warm start: served from the tuning cache on disk, nothing compiled\n");
  }
  return 0;
}
