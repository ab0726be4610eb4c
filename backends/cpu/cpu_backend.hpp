// The CPU backend (Clang and LLVM ORC on the host), registered in
// backends/backends.cpp.
#pragma once

#include "kiln/device/backend.hpp"

namespace kiln::cpu {

const DeviceBackend& backend();

}  // namespace kiln::cpu
