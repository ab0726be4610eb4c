// The CUDA backend (NVRTC and the driver API, both dlopen'ed), registered
// in backends/backends.cpp.
#pragma once

#include "kiln/device/backend.hpp"

namespace kiln::cuda {

const DeviceBackend& backend();

}  // namespace kiln::cuda
