// The delay (spin) kernel: occupies a stream for a set time so that the
// launches queued behind it start back to back on the GPU, and a timing
// measures the kernels rather than the host's launch overhead.
#pragma once

#include <string>

#include "kiln/core/error.hpp"

namespace kiln::cuda {

inline constexpr const char* kDelayKernelSymbol = "kiln_delay_ns";

// The CUDA C++ source: kiln_delay_ns(unsigned long long ns) spins on the
// GPU's nanosecond timer (%globaltimer), so no clock rate is needed.
const char* delay_kernel_source();

// A CUBIN of the delay kernel for `arch` ("sm_90"), compiled with NVRTC.
// The error carries NVRTC's log and options.
Result<std::string> compile_delay_kernel(const std::string& arch);

// A CUBIN of one of Kiln's own small kernels (extern "C" names, no
// headers) for `arch`: the delay kernel, and the GPU tests' kernels.
Result<std::string> compile_builtin_cubin(const char* source, const char* program_name,
                                          const std::string& arch);

}  // namespace kiln::cuda
