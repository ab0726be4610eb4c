// The CPU backend as a plugin (the Python package's libkiln_cpu_backend.so):
// the one symbol the proxy in the registration list looks up
// (cpu_plugin_proxy.cpp). Everything else the backend needs it takes from
// the shared libkiln it links, so both sides share one Kiln.
#include "cpu/cpu_backend.hpp"
#include "cpu/llvm_info.hpp"

extern "C" __attribute__((visibility("default"))) const kiln::DeviceBackend*
kiln_cpu_backend_plugin() {
  // The light half, in the loading program, asks for the JIT and LLVM's
  // view of the host through this (cpu/runtime/cpu_runtime.hpp).
  kiln::cpu::provide_toolchain(&kiln::cpu::llvm_toolchain());
  return &kiln::cpu::backend();
}
