// The machine's fp32 FMA peak, measured: `kiln bench gemm` prints each
// GFLOP/s figure as a fraction of it, so a ratio against a slow baseline
// cannot pass for a fast kernel (docs/benchmarks.md).
#pragma once

#include <string>

namespace kiln::tool {

struct FmaPeak {
  double gflops = 0;  // 0: not measured (no FMA unit this loop knows)
  std::string isa;    // "avx512" or "avx2": the loop that ran fastest
  int threads = 0;
};

// Runs independent chains of fp32 FMAs (as many in flight as two FMA ports
// need to hide their latency) on `threads` threads at once, the AVX-512 and
// the AVX2 loop where the CPU has them, and keeps the best of many tries
// of about 20 ms (0.4 s a loop).
FmaPeak measure_fma_peak(int threads);

}  // namespace kiln::tool
