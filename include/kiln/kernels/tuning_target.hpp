// Where a tuning run compiles and measures: a backend (compiler, toolchain,
// arch, benchmark devices) plus the device the call's arguments live on.
// `kiln tune` opens one; an application embedding Kiln may too.
//
//   auto target = open_tuning_target("cpu");
//   Autotuner tuner(target->backend, &artifacts, &tunings);
//   tuner.tune(kernel, args, *target->device);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/cache/tuning_record.hpp"
#include "kiln/device/backend.hpp"
#include "kiln/tuner/device_identity.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {

// `name` when it names a backend (one this build has, or one a build may
// have: "cpu", "cuda", "replay"); nullopt otherwise.
inline std::optional<std::string> parse_backend_name(std::string_view name) {
  if (!is_backend_name(name)) return std::nullopt;
  return std::string(name);
}

// Which backends this build has, and whether a CUDA device is present.
bool cpu_backend_built();
bool cuda_backend_built();
// The number of CUDA devices, or why there are none (no backend built, no
// driver, no device): an error of code kUnavailable.
Result<int> cuda_device_count();

struct TuningTarget {
  std::string backend_name = kHostBackend;  // the registered backend opened
  Backend backend;
  std::unique_ptr<Device> device;  // the call's arguments live here
  std::vector<int> devices;        // CUDA: the benchmark devices
};

// Opens the backend and its devices; `toolchain` enters every key
// (kiln::current_toolchain(name), kiln/backends/toolchain.hpp). CPU: the host with one
// block runner per hardware thread. CUDA: `devices` (empty: device 0), one benchmark worker
// per device, arguments on the first. Errors (kUnavailable) say what is
// missing and the fix, e.g. "no CUDA device (...): tune on a machine with
// one, or on the CPU backend".
// `cpu_threads`: block runners of each CPU device (0: one per hardware thread).
Result<TuningTarget> open_tuning_target(const std::string& name,
                                        const ToolchainFingerprint& toolchain,
                                        const std::vector<int>& devices = {}, int cpu_threads = 0);
// The same with this build's toolchain for `name` (kiln::current_toolchain(name)).
Result<TuningTarget> open_tuning_target(const std::string& name);

}  // namespace kiln
