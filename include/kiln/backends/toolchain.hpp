// What this build and this machine can compile and run with: which backends
// were built, which compilers and devices are present (or why not), and the
// toolchain fingerprint of each backend (kiln/device/backend.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/fingerprint.hpp"
#include "kiln/core/tensor.hpp"

namespace kiln {

struct ComponentStatus {
  bool built = false;      // compiled into this Kiln
  bool available = false;  // usable on this machine now
  std::string version;     // "13.0", "19.1.7"; empty when unavailable
  std::string location;    // the library that was loaded
  std::string reason;      // why it is unavailable (empty when available)
};

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  std::string arch;  // "sm_90"
  std::uint64_t total_memory = 0;
  int sm_count = 0;
};

struct CudaDriverStatus {
  ComponentStatus driver;  // version "13.0" from cuDriverGetVersion
  std::vector<CudaDeviceInfo> devices;
  std::string devices_reason;  // why `devices` is empty
};

// The CPU backend's device (the host, through LLVM ORC).
struct CpuDeviceStatus {
  bool available = false;
  std::string name;  // "host CPU znver3 (2 threads)"
  std::string arch;  // the LLVM host CPU name
  int threads = 0;
  std::uint64_t cache_bytes = 0;  // last-level cache
  std::string reason;             // why unavailable
};

struct ToolchainReport {
  ComponentStatus nvrtc;
  ComponentStatus llvm;
  CudaDriverStatus cuda;
  CpuDeviceStatus cpu;
  // Each built backend's fingerprint by name ("cpu", "cuda"): its keys
  // carry Kiln's version, the codegen hash and its own compiler alone.
  std::map<std::string, ToolchainFingerprint> fingerprints;

  nlohmann::json to_json() const;
};

// Probes once per process (thread-safe) and returns the same report after.
// It opens every backend (an LLVM JIT, the CUDA driver): code that needs
// one backend's fingerprint asks current_toolchain(backend).
const ToolchainReport& toolchain_report();
// The fingerprint of the keys of the backend named `backend`, probed once
// per backend per process; for a backend this build lacks, its compiler is
// "absent".
const ToolchainFingerprint& current_toolchain(std::string_view backend);

}  // namespace kiln
