// Where a tuning run compiles and measures: a backend (compiler, toolchain,
// arch, benchmark devices) plus the device the call's arguments live on.
// `kiln tune` opens one; an application embedding Kiln may too.
//
//   auto target = open_tuning_target(BackendKind::kCpu);
//   Autotuner tuner(target->backend, &artifacts, &tunings);
//   tuner.tune(kernel, args, *target->device);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/cache/tuning_record.hpp"
#include "kiln/tuner/device_identity.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {

// The backend a run compiles with is the kind of device it runs on: one
// choice, one enum (kiln/core/tensor.hpp).
using BackendKind = DeviceKind;
inline const char* backend_kind_name(BackendKind kind) {
  return device_kind_name(kind);  // "cpu", "cuda"
}
// "cpu", "cuda"; nullopt for anything else.
inline std::optional<BackendKind> parse_backend_kind(std::string_view name) {
  return parse_device_kind(name);
}

// Which backends this build has, and whether a CUDA device is present.
bool cpu_backend_built();
bool cuda_backend_built();
// The number of CUDA devices, or why there are none (no backend built, no
// driver, no device): an error of code kUnavailable.
Result<int> cuda_device_count();

struct TuningTarget {
  BackendKind kind = BackendKind::kCpu;
  Backend backend;
  std::unique_ptr<Device> device;  // the call's arguments live here
  std::vector<int> devices;        // CUDA: the benchmark devices
};

// Opens the backend and its devices; `toolchain` enters every key
// (kiln::current_toolchain(kind), kiln/backends/toolchain.hpp). CPU: the host with one
// block runner per hardware thread. CUDA: `devices` (empty: device 0), one benchmark worker
// per device, arguments on the first. Errors (kUnavailable) say what is
// missing and the fix, e.g. "no CUDA device (...): tune on a machine with
// one, or on the CPU backend".
// `cpu_threads`: block runners of each CPU device (0: one per hardware thread).
Result<TuningTarget> open_tuning_target(BackendKind kind, const ToolchainFingerprint& toolchain,
                                        const std::vector<int>& devices = {}, int cpu_threads = 0);
// The same with this build's toolchain for `kind` (kiln::current_toolchain(kind)).
Result<TuningTarget> open_tuning_target(BackendKind kind);

}  // namespace kiln
