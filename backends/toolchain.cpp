// Joins the backends' probes into one report, and each backend's toolchain
// fingerprint. Which backends exist is the registration list's business
// (backends/backends.cpp); this file asks it.
#include "kiln/backends/toolchain.hpp"

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "kiln/device/backend.hpp"

namespace kiln {

namespace {

ToolchainReport probe() {
  ToolchainReport r;
  // The report's fixed sections (its JSON shape, `kiln info`) say why when
  // this build lacks the backend that fills them.
  if (auto cuda = find_backend("cuda"); !cuda.ok()) {
    r.nvrtc.reason = r.cuda.driver.reason = r.cuda.devices_reason = cuda.error().message;
  }
  if (auto cpu = find_backend("cpu"); !cpu.ok()) r.llvm.reason = r.cpu.reason = cpu.error().message;
  for (const DeviceBackend* b : backends()) {
    b->report(r);
    r.fingerprints[b->name()] = current_toolchain(b->name());
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

const ToolchainFingerprint& current_toolchain(std::string_view backend) {
  // Each probed on first use: a CUDA fingerprint never opens the CPU
  // backend, nor the other way round. The map's nodes never move, so the
  // reference outlives the lock.
  static std::mutex mutex;
  static std::map<std::string, ToolchainFingerprint, std::less<>> fingerprints;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = fingerprints.find(backend); it != fingerprints.end()) return it->second;
  auto found = find_backend(backend);
  ToolchainFingerprint f = found.ok() ? (*found)->fingerprint()
                                      : ToolchainFingerprint::of(std::string(backend), "absent");
  return fingerprints.emplace(std::string(backend), std::move(f)).first->second;
}

}  // namespace kiln
