// Every skip in the suite says why in a form the full test command reads:
//   KILN_SKIP(Skip::kRedisServer) << "redis-server is not installed";
// prints "[skip:redis-server] redis-server is not installed". After each
// ctest and pytest stage, scripts/skip_report.py reads these tags from the
// results: a skip for a component scripts/setup.sh installs, or one with no
// known tag, fails `bash scripts/test.sh` (a machine without the component
// would otherwise go green with its features untested); the other classes
// are allowed and counted by reason at the end of the run. `--quick`
// allows every skip and still counts them.
// The tags must match CLASSES in scripts/skip_report.py, which keeps each
// class's policy and fix (tests/skips checks both, and that no test calls
// GTEST_SKIP without a class).
#pragma once

#include <gtest/gtest.h>

#include <string_view>

namespace kiln::testing {

enum class Skip {
  // A component scripts/setup.sh installs is missing: fails the full run.
  kLlvm,         // LLVM/Clang 19: the CPU backend (and its tests) not built
  kHiredis,      // hiredis/OpenSSL: the remote cache tier not built
  kRedisServer,  // no redis-server on PATH
  kMpi,          // Open MPI: Kiln built without MPI, or no mpirun on PATH
  kLibzip,       // libzip: zipped recorded spaces not built
  kOpenblas,     // OpenBLAS: `kiln bench gemm` cannot open it
  // Allowed, counted by reason. setup.sh cannot install the CUDA toolkit;
  // KILN_TEST_REQUIRE=cuda-toolkit (.ci/run sets it) makes its skips fail.
  kCudaToolkit,     // no CUDA toolkit (NVRTC), or one without the feature tested
  kGpu,             // no CUDA driver or device, or one without what the test needs
  kGpuPresent,      // a test of the no-device path, on a machine with one
  kRecordedSpaces,  // ../shared/recorded-spaces (outside the repository) absent
  kSanitizer,       // cannot run, or nothing to check, under this sanitizer
  kNotRoot,         // needs root
  kTuningOff,       // KILN_TUNING=0 in the environment
  kHost,            // a property of this machine: architecture, devices, privileges
};

constexpr std::string_view skip_tag(Skip s) {
  switch (s) {
    case Skip::kLlvm:
      return "[skip:llvm] ";
    case Skip::kHiredis:
      return "[skip:hiredis] ";
    case Skip::kRedisServer:
      return "[skip:redis-server] ";
    case Skip::kMpi:
      return "[skip:mpi] ";
    case Skip::kLibzip:
      return "[skip:libzip] ";
    case Skip::kOpenblas:
      return "[skip:openblas] ";
    case Skip::kCudaToolkit:
      return "[skip:cuda-toolkit] ";
    case Skip::kGpu:
      return "[skip:gpu] ";
    case Skip::kGpuPresent:
      return "[skip:gpu-present] ";
    case Skip::kRecordedSpaces:
      return "[skip:recorded-spaces] ";
    case Skip::kSanitizer:
      return "[skip:sanitizer] ";
    case Skip::kNotRoot:
      return "[skip:not-root] ";
    case Skip::kTuningOff:
      return "[skip:tuning-off] ";
    case Skip::kHost:
      return "[skip:host] ";
  }
  return "[skip:?] ";  // unreachable: -Wswitch names a missing case
}

}  // namespace kiln::testing

// Skips the current test with its class; stream the reason after it.
#define KILN_SKIP(cls) GTEST_SKIP() << ::kiln::testing::skip_tag(::kiln::testing::cls)
