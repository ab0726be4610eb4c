// The CUDA backend (NVRTC and the driver API, both dlopen'ed), registered
// in runtime/backends.cpp.
#pragma once

#include "kiln/runtime/backend.hpp"

namespace kiln::cuda {

const DeviceBackend& backend();

}  // namespace kiln::cuda
