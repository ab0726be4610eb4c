// An application-style kernel. The kernel is declared once, next to its
// config space, as a small callable object (the C++ counterpart of a
// Python `@autotune` decorator); the application then simply calls it.
// The first call of a shape tunes; later calls are served from the
// tuner's in-memory table; a later process is served from the tuning cache
// on disk (KILN_CACHE_DIR) and compiles nothing: with `--expect-warm` the
// program asserts that from the statistics.
#include <cstdio>
#include <cstring>
#include <vector>

#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/kernels/tuning_target.hpp"

using namespace kiln;

// (1) One Kiln per process: the CPU backend, the caches and a tuner.
struct Runtime {
  TuningTarget target = open_tuning_target("cpu").value();
  ArtifactCache artifacts{Options::global()};
  TuningCache tunings{Options::global()};
  Autotuner tuner{target.backend, &artifacts, &tunings};
};
Runtime& runtime() {
  static Runtime instance;
  return instance;
}

// (2) The "decorator": a kernel plus its space, called like a function.
class AutotunedKernel {
 public:
  explicit AutotunedKernel(TunableKernel kernel) : kernel_(std::move(kernel)) {}
  // Tunes on the first call of a shape, then launches the winner.
  Result<TuneResult> operator()(const ArgList& args) const {
    return runtime().tuner.run(kernel_, args, *runtime().target.device);
  }
  KernelStats stats() const { return runtime().tuner.statistics().kernel(kernel_.tmpl.name); }

 private:
  TunableKernel kernel_;
};

// (3) The declaration: z = a * x + y, BLOCK elements per block, in CHUNK-
// element strips; declared once, at namespace scope.
const AutotunedKernel saxpy([] {
  TunableKernel k;
  k.tmpl.name = "example_saxpy";
  k.tmpl.source = R"(#include "kiln/cpu_kernel.h"
template <int BLOCK, int CHUNK>
void saxpy(const kiln::cpu::BlockContext& ctx, float a, const float* x, const float* y,
           float* z, int n) {
  const int end = ((int)ctx.block_idx.x + 1) * BLOCK < n ? ((int)ctx.block_idx.x + 1) * BLOCK : n;
  for (int c = (int)ctx.block_idx.x * BLOCK; c < end; c += CHUNK)
    for (int i = c; i < c + CHUNK && i < end; ++i) z[i] = a * x[i] + y[i];
})";
  k.tmpl.entry = "saxpy<{BLOCK},{CHUNK}>";
  k.tmpl.space.param("BLOCK", {4096, 65536}).param("CHUNK", {64, 1024});
  k.launch = [](const Config& c, const ArgList& args) {
    const auto n = std::get<std::int32_t>(find_arg(args, "n").scalar);
    LaunchGeometry g;
    g.grid.x = static_cast<std::uint32_t>((n + c.get_int("BLOCK") - 1) / c.get_int("BLOCK"));
    return g;
  };
  k.outputs = {"z"};
  return k;
}());

int main(int argc, char** argv) {
  const bool expect_warm = argc > 1 && std::strcmp(argv[1], "--expect-warm") == 0;
  const std::int32_t n = 1 << 18;
  std::vector<float> x(n, 2.0f), y(n, 1.0f), z(n);
  auto tensor = [&](const char* name, std::vector<float>& v) {
    return Arg::of_tensor(name, v.data(), TensorArg::contiguous(DType::kF32, {n}));
  };

  // (4) The application calls the kernel many times; `a` changes every
  // call but stays out of the problem key (in_key = false).
  for (int call = 0; call < 10; ++call) {
    const float a = float(call);
    auto r = saxpy({Arg::of_scalar("a", a, false), tensor("x", x), tensor("y", y), tensor("z", z),
                    Arg::of_scalar("n", n)});
    if (!r.ok() || z[n - 1] != a * 2.0f + 1.0f) {
      std::fprintf(stderr, "call %d failed: %s\n", call,
                   r.ok() ? "wrong result" : r.error().describe().c_str());
      return 1;
    }
    std::printf("call %d: config %s from %s\n", call, r->config.to_string().c_str(),
                kiln::source_name(r->source));
  }

  // (5) Only the first call looked beyond memory; a warm process tunes
  // nothing and compiles nothing (every call's code is an artifact hit).
  const KernelStats s = saxpy.stats();
  std::printf(
      "stats: %llu cache hit(s), %llu miss(es), %llu compiled (%llu from the artifact "
      "cache), %llu benchmarked\n",
      (unsigned long long)s.cache_hits, (unsigned long long)s.cache_misses,
      (unsigned long long)s.compiled, (unsigned long long)s.artifact_hits,
      (unsigned long long)s.benchmarked);
  if (s.cache_misses > 1 || s.cache_hits < 9) {
    std::fprintf(stderr, "expected one tuning at most and 9 hits from memory\n");
    return 1;
  }
  if (expect_warm &&
      (s.cache_misses != 0 || s.compiled != 0 || s.artifact_hits != 10 || s.benchmarked)) {
    std::fprintf(stderr, "expected a warm process: no tuning, nothing compiled\n");
    return 1;
  }
  if (expect_warm) std::printf("warm start: served from the tuning cache on disk\n");
  return 0;
}
