// OpenBLAS, opened at run time (dlopen) for `kiln bench gemm`: Kiln builds
// and runs without it, and the command says how to install it when absent.
#pragma once

#include <string>

#include "kiln/core/error.hpp"

namespace kiln::tool {

struct OpenBlas {
  // cblas_sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
  Sgemm sgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
  std::string library;   // the file that was opened
  std::string core;      // openblas_get_corename(): the kernel set in use, "SkylakeX"
  std::string config;    // openblas_get_config(): version and build options
  std::string coretype;  // OPENBLAS_CORETYPE as set for it ("" when left to OpenBLAS)

  // Sets OpenBLAS's thread count, keeping this thread's CPU affinity (which
  // OpenBLAS may otherwise bind to one core).
  void use_threads(int threads) const;
  // Row-major C[m,n] = A[m,k] * B[k,n], contiguous.
  void gemm(const float* a, const float* b, float* c, int m, int n, int k) const;
};

// Opens libopenblas (Debian's libopenblas0 / libopenblas-dev). Its runtime
// CPU detection names some virtual CPUs wrongly (a generic "Intel Xeon
// Processor" runs its SSE3 "Prescott" kernels, 4x slower): unless the user
// set OPENBLAS_CORETYPE, it is set from the CPU's vector unit first
// (AVX-512: SkylakeX, AVX2: Haswell), so the comparison is against
// OpenBLAS at its best. kUnavailable with the install command when missing.
Result<OpenBlas> open_openblas();

}  // namespace kiln::tool
