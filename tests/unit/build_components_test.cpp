// Whether this build has the backends whose tests are compiled only with
// them: without LLVM (or the CUDA toolkit) whole test files are left out of
// the build, which no test can report as a skip of its own. These tests do:
// a build that quietly lost LLVM, which scripts/setup.sh installs, fails
// the full test command (scripts/skip_report.py) instead of going green
// with the CPU backend untested. Components whose tests are built anyway
// (hiredis, Open MPI, libzip) skip in those tests.
#include <gtest/gtest.h>

#include "skip.hpp"

namespace kiln {
namespace {

TEST(BuildComponents, TheCpuBackendIsBuiltWithLlvm) {
  if (!KILN_TEST_HAVE_LLVM)
    KILN_SKIP(Skip::kLlvm) << "built without LLVM/Clang 19: the CPU backend's tests are left out";
}

TEST(BuildComponents, TheCudaBackendIsBuiltWithTheToolkit) {
  if (!KILN_TEST_HAVE_CUDA)
    KILN_SKIP(Skip::kCudaToolkit)
        << "built without the CUDA toolkit (no nvrtc.h/cuda.h at $CUDA_HOME or /usr/local/cuda): "
           "the NVRTC tests are left out";
}

}  // namespace
}  // namespace kiln
