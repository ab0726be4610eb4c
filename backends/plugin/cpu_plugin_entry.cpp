// The CPU backend as a plugin (the Python package's libkiln_cpu_backend.so):
// the one symbol the proxy in the registration list looks up
// (cpu_plugin_proxy.cpp). Everything else the backend needs it takes from
// the shared libkiln it links, so both sides share one Kiln.
#include "cpu/cpu_backend.hpp"

extern "C" __attribute__((visibility("default"))) const kiln::DeviceBackend*
kiln_cpu_backend_plugin() {
  return &kiln::cpu::backend();
}
