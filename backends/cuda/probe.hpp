// Fills the CUDA parts of a ToolchainReport (only built with KILN_HAVE_CUDA).
#pragma once

#include "kiln/backends/toolchain.hpp"

namespace kiln::cuda {

ComponentStatus probe_nvrtc();
CudaDriverStatus probe_driver();

}  // namespace kiln::cuda
