// Joins the backends' probes into one report, and each backend's toolchain
// fingerprint. Which backends exist is the registration list's business
// (backends/backends.cpp); this file asks it.
#include "kiln/backends/toolchain.hpp"

#include <array>
#include <mutex>
#include <nlohmann/json.hpp>

#include "kiln/device/backend.hpp"

namespace kiln {

namespace {

ToolchainReport probe() {
  ToolchainReport r;
  // What a backend this build lacks leaves in place.
  for (DeviceKind kind : {DeviceKind::kCpu, DeviceKind::kCuda}) {
    auto backend = find_backend(kind);
    if (backend.ok()) continue;
    const std::string why = backend.error().message;
    if (kind == DeviceKind::kCuda) {
      r.nvrtc.reason = why;
      r.cuda.driver.reason = why;
      r.cuda.devices_reason = why;
    } else {
      r.llvm.reason = why;
      r.cpu.reason = why;
    }
  }
  for (const DeviceBackend* b : backends()) {
    b->report(r);
    r.fingerprints[b->name()] = current_toolchain(b->kind());
  }
  return r;
}

nlohmann::json component_json(const ComponentStatus& s) {
  nlohmann::json j = {{"built", s.built}, {"available", s.available}};
  if (s.available) {
    j["version"] = s.version;
    j["location"] = s.location;
  } else {
    j["reason"] = s.reason;
  }
  return j;
}

}  // namespace

nlohmann::json ToolchainReport::to_json() const {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : cuda.devices) {
    devices.push_back(
        {{"index", d.index},
         {"name", d.name},
         {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
         {"arch", d.arch},
         {"total_memory", d.total_memory},
         {"sm_count", d.sm_count}});
  }
  nlohmann::json cuda_json = {{"driver", component_json(cuda.driver)}, {"devices", devices}};
  if (devices.empty()) cuda_json["devices_reason"] = cuda.devices_reason;
  nlohmann::json cpu_json = {{"available", cpu.available}};
  if (cpu.available) {
    cpu_json.update({{"name", cpu.name},
                     {"arch", cpu.arch},
                     {"threads", cpu.threads},
                     {"cache_bytes", cpu.cache_bytes}});
  } else {
    cpu_json["reason"] = cpu.reason;
  }
  nlohmann::json fingerprint_json = nlohmann::json::object();
  for (const auto& [name, f] : fingerprints) fingerprint_json[name] = f.to_json();
  return {{"nvrtc", component_json(nvrtc)},
          {"llvm", component_json(llvm)},
          {"cuda", cuda_json},
          {"cpu", cpu_json},
          {"fingerprints", fingerprint_json}};
}

const ToolchainReport& toolchain_report() {
  static const ToolchainReport report = probe();
  return report;
}

const ToolchainFingerprint& current_toolchain(DeviceKind kind) {
  // One slot per kind, each probed on first use: a CUDA fingerprint never
  // opens the CPU backend, nor the other way round.
  static std::array<std::once_flag, 2> once;
  static std::array<ToolchainFingerprint, 2> fingerprints;
  const auto slot = static_cast<std::size_t>(kind);
  std::call_once(once.at(slot), [&] {
    auto backend = find_backend(kind);
    fingerprints[slot] = backend.ok() ? (*backend)->fingerprint()
                                      : ToolchainFingerprint::of(device_kind_name(kind), "absent");
  });
  return fingerprints[slot];
}

}  // namespace kiln
