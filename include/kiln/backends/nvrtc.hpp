// The CUDA backend's compiler (NVRTC, loaded with dlopen), for code outside
// the runtime: tools, benchmarks, a DSL. Only linked where the CUDA backend
// is built; such builds define KILN_BACKEND_CUDA=1.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "kiln/core/options.hpp"

namespace kiln::cuda {

struct NvrtcSettings {
  // Automatic precompiled headers (-pch), keyed by option set: Options::pch
  // (KILN_PCH). A PCH lives only inside this process's NVRTC.
  bool pch = true;
  // --split-compile=N: NVVM and ptxas split a program's kernels over N
  // threads (0: off). Helps big groups on idle cores.
  int split_compile = 0;
  // Code-changing options added to every program (KILN_NVRTC_FLAGS); they
  // enter the artifact key through code_options().
  std::vector<std::string> extra_options;
  // The toolkit's headers (cuda_fp16.h, <cuda/std/...>) are found here.
  std::vector<std::string> system_include_dirs;

  // From Kiln's options: pch, KILN_NVRTC_FLAGS split at spaces, and
  // <cuda_home>/include plus <cuda_home>/include/cccl.
  static NvrtcSettings from_options(const Options& options);
};

// A thread-safe NVRTC compiler (CUBIN for sm_XX, PTX for compute_XX or on
// request). It constructs even where NVRTC is absent; compile() then returns
// kUnavailable with the paths tried.
std::unique_ptr<Compiler> make_compiler(
    NvrtcSettings settings = NvrtcSettings::from_options(Options::global()));

// The arch to compile for when none is given: Options::arch (KILN_ARCH),
// else the first device's ("sm_90"), else an error naming the fix.
Result<std::string> default_arch();

}  // namespace kiln::cuda
