// The CPU backend (Clang and LLVM ORC on the host), registered in
// runtime/backends.cpp.
#pragma once

#include "kiln/runtime/backend.hpp"

namespace kiln::cpu {

const DeviceBackend& backend();

}  // namespace kiln::cpu
