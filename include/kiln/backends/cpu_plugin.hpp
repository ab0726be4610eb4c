// The CPU backend in a build that keeps LLVM out of the process until it is
// needed (the Python package: `import kiln` must not load LLVM). The
// registration list holds this proxy; its first call that needs the real
// backend dlopens libkiln_cpu_backend.so, which carries Clang and LLVM.
#pragma once

#include "kiln/device/backend.hpp"

namespace kiln::internal {

const DeviceBackend& cpu_plugin_backend();
// Whether the plugin (and with it LLVM) is loaded in this process yet.
bool cpu_plugin_loaded();

}  // namespace kiln::internal
