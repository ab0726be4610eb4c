// A BLAS library opened at run time (dlopen) as a baseline for `kiln bench
// gemm`: OpenBLAS (Debian's, or numpy's bundled copy with its prefixed ILP64
// symbols), BLIS and MKL, each behind one row-major sgemm call. Opened only
// inside a `kiln bench blas-worker` process (blas_worker.hpp): a library
// reads the variable that forces its kernel once, when it loads, so a run
// with the variable and one without it need a process each.
#pragma once

#include <string>

#include "kiln/core/error.hpp"

namespace kiln::tool {

enum class BlasFlavor { kOpenBlas, kBlis, kMkl };

// "OpenBLAS", "BLIS", "MKL".
const char* blas_flavor_name(BlasFlavor flavor);
// The variable that forces the flavor's kernel set when it loads:
// OPENBLAS_CORETYPE, BLIS_ARCH_TYPE, MKL_ENABLE_INSTRUCTIONS.
const char* blas_kernel_variable(BlasFlavor flavor);
// How wide a vector ISA the named kernel set uses (OpenBLAS's core names,
// BLIS's architectures, MKL's code branches; any case), to tell a forced
// lesser kernel from the native one: 1 scalar/SSE/SSE2, 2 SSE3, 3 SSSE3,
// 4 SSE4, 5 AVX, 6 AVX with FMA, 7 AVX2, 8 AVX-512; 0 for a name this
// table lacks.
int blas_kernel_isa_level(const std::string& kernel);

struct BlasLibrary {
  BlasFlavor flavor = BlasFlavor::kOpenBlas;
  std::string library;  // the file that was opened, through its links
  std::string version;  // "0.3.21"
  std::string kernel;   // the kernel set it runs: "Haswell" (OpenBLAS), "zen3" (BLIS), "AVX2" (MKL)
  std::string config;   // its build options (OpenBLAS's config string), "" when it has none
  bool int64 = false;   // an ILP64 interface (64-bit sizes), as numpy's OpenBLAS

  // Sets its thread count, keeping this thread's CPU affinity (OpenBLAS may
  // bind the calling thread to one core).
  void use_threads(int threads) const;
  // Row-major C[m,n] = A[m,k] * B[k,n], contiguous.
  void gemm(const float* a, const float* b, float* c, int m, int n, int k) const;

  // Filled by open_blas_library from the library's own symbols.
  void* sgemm = nullptr;  // cblas_sgemm (32- or 64-bit sizes, as int64 says)
  void (*set_threads_int)(int) = nullptr;
  void (*set_threads_long)(long) = nullptr;  // BLIS takes a dim_t
};

// Opens `name` (a path, or a library name the dynamic loader searches for)
// and finds which BLAS it is from its symbols. kUnavailable naming the file
// and the loader's reason when it does not open, or the symbols it lacks
// when it is no BLAS this knows.
Result<BlasLibrary> open_blas_library(const std::string& name);

}  // namespace kiln::tool
