#include "openblas.hpp"

#include <dlfcn.h>
#include <sched.h>

#include <cstdlib>

#include "kiln/runtime/device.hpp"

namespace kiln::tool {

namespace {

constexpr int kRowMajor = 101, kNoTrans = 111;

}  // namespace

void OpenBlas::use_threads(int threads) const {
  cpu_set_t mask;
  const bool have_mask = sched_getaffinity(0, sizeof mask, &mask) == 0;
  set_num_threads(threads);
  if (have_mask) sched_setaffinity(0, sizeof mask, &mask);
}

void OpenBlas::gemm(const float* a, const float* b, float* c, int m, int n, int k) const {
  sgemm(kRowMajor, kNoTrans, kNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

Result<OpenBlas> open_openblas() {
  OpenBlas blas;
  if (const char* set = std::getenv("OPENBLAS_CORETYPE"); set && *set) {
    blas.coretype = set;
  } else {
    const DeviceTraits host = host_cpu_traits();
    if (host.vector_bits >= 512) blas.coretype = "SkylakeX";
    if (host.name == "avx2") blas.coretype = "Haswell";
    // Read by OpenBLAS when it loads: set before dlopen, for this process.
    if (!blas.coretype.empty()) setenv("OPENBLAS_CORETYPE", blas.coretype.c_str(), 0);
  }
  // OpenBLAS binds the thread that loads it to one core unless told not to;
  // every thread that thread starts later (Kiln's block runners) would
  // inherit it and share that core. The mask is restored after loading too.
  setenv("OPENBLAS_MAIN_FREE", "1", 0);
  cpu_set_t mask;
  const bool have_mask = sched_getaffinity(0, sizeof mask, &mask) == 0;
  std::string tried;
  void* handle = nullptr;
  for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      blas.library = name;
      break;
    }
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : name);
  }
  if (have_mask) sched_setaffinity(0, sizeof mask, &mask);
  if (!handle) {
    return make_error(ErrorCode::kUnavailable,
                      "OpenBLAS is not installed (" + tried +
                          "): install it (Debian: apt-get install libopenblas-dev) to compare "
                          "Kiln's GEMM with it",
                      {{"tried", tried}});
  }
  blas.sgemm = reinterpret_cast<OpenBlas::Sgemm>(dlsym(handle, "cblas_sgemm"));
  blas.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(handle, "openblas_set_num_threads"));
  if (!blas.sgemm || !blas.set_num_threads) {
    return make_error(ErrorCode::kUnavailable,
                      blas.library +
                          " lacks cblas_sgemm or openblas_set_num_threads: it is not "
                          "OpenBLAS; install libopenblas-dev");
  }
  if (auto name = reinterpret_cast<const char* (*)()>(dlsym(handle, "openblas_get_corename")))
    blas.core = name();
  if (auto config = reinterpret_cast<const char* (*)()>(dlsym(handle, "openblas_get_config")))
    blas.config = config();
  // NOTES: the handle stays open for the process: OpenBLAS's threads live in it.
  return blas;
}

}  // namespace kiln::tool
