"""Kernel Tuner's side of the tuner-overhead comparison (bench/kernel_tuner_compare.sh).

Tunes the CPU GEMM template Kiln tunes as `gemm_f32_tiled`
(templates/cpu/gemm_f32_tiled.cpp, unchanged) over the same 60 configs
(BM x BN x BK, the same acc<=32KiB restriction) at M=N=K=SIZE with Kernel
Tuner's C backend: clang++ -O3 -march=native, a shared object per config,
the blocks of the grid spread over THREADS OpenMP threads (Kiln's CPU device
spreads them over as many block runners). The C function times its own
loop and returns milliseconds, which is how Kernel Tuner's C backend
measures. Prints one JSON line: wall time, best config and its time.
CACHE (optional): Kernel Tuner's cache file; a second run with the same
file is Kernel Tuner's warm start (every config read back, none compiled
or run; bench/warm_compare.sh). The wall time then counts from the start of
the process, imports included, as a new process's warm start does.
"""

import time

PROCESS_START = time.perf_counter()

import json  # noqa: E402
import pathlib  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
from kernel_tuner import tune_kernel  # noqa: E402

SIZE = int(sys.argv[1]) if len(sys.argv) > 1 else 512
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
CACHE = sys.argv[3] if len(sys.argv) > 3 else None
ROOT = pathlib.Path(__file__).resolve().parent.parent

template = (ROOT / "templates/cpu/gemm_f32_tiled.cpp").read_text()
template = template.replace('#include "kiln/cpu_kernel.h"', "")

# The block context of Kiln's CPU prelude (backends/cpu/clang_prelude.cpp),
# then the template, then a launcher that runs the grid like Kiln's device.
kernel = """
#include <omp.h>
// Kernel Tuner defines the parameters as macros; the template names its
// template parameters the same, so they are taken as constants first.
constexpr int TUNED_BM = BM, TUNED_BN = BN, TUNED_BK = BK;
#undef BM
#undef BN
#undef BK
namespace kiln::cpu {
struct Dim3 { unsigned x, y, z; };
struct BlockContext { Dim3 block_idx; Dim3 grid_dim; Dim3 block_dim; void* shared;
                      unsigned long shared_bytes; };
}
""" + template + """
extern "C" float gemm(const float* a, const float* b, float* c) {
  const int m = @SIZE@, n = @SIZE@, k = @SIZE@;
  const unsigned gx = (n + TUNED_BN - 1) / TUNED_BN, gy = (m + TUNED_BM - 1) / TUNED_BM;
  const double start = omp_get_wtime();
#pragma omp parallel for schedule(dynamic) num_threads(@THREADS@)
  for (long block = 0; block < (long)gx * gy; ++block) {
    kiln::cpu::BlockContext ctx{{(unsigned)(block % gx), (unsigned)(block / gx), 0},
                                {gx, gy, 1}, {1, 1, 1}, nullptr, 0};
    kiln_cpu::gemm_f32_tiled<TUNED_BM, TUNED_BN, TUNED_BK>(ctx, a, b, c, m, n, k);
  }
  return (float)((omp_get_wtime() - start) * 1e3);
}
""".replace("@SIZE@", str(SIZE)).replace("@THREADS@", str(THREADS))

rng = np.random.default_rng(0)
a = rng.uniform(-1, 1, (SIZE, SIZE)).astype(np.float32)
b = rng.uniform(-1, 1, (SIZE, SIZE)).astype(np.float32)
c = np.zeros((SIZE, SIZE), dtype=np.float32)
params = {"BM": [4, 8, 16, 32, 64], "BN": [16, 32, 64, 128], "BK": [16, 64, 256]}

call_start = time.perf_counter()
start = PROCESS_START if CACHE else call_start
results, env = tune_kernel(
    "gemm", kernel, (SIZE, SIZE), [a, b, c], params, lang="C", compiler="clang++",
    compiler_options=["-O3", "-march=native", "-fopenmp", "-std=c++20"],
    restrictions=["BM*BN*4<=32*1024"], strategy="brute_force",
    cache=CACHE, quiet=True, verbose=False)
end = time.perf_counter()
wall = end - start
best = min(results, key=lambda r: r["time"])
print(json.dumps({"tool": "kernel_tuner", "version": env.get("kernel_tuner_version", ""),
                  "configs": len(results), "wall_seconds": wall, "tune_kernel_seconds": end - call_start,
                  "best": {k: best[k] for k in params}, "best_ms": best["time"],
                  "compile_seconds": sum(r.get("compile_time", 0) for r in results) / 1e3,
                  "benchmark_seconds": sum(r.get("benchmark_time", 0) for r in results) / 1e3}))
