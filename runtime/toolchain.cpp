// Joins the backends' probes into one report. The only file that knows which
// backends were compiled in (KILN_HAVE_CUDA / KILN_HAVE_LLVM).
#include "kiln/runtime/toolchain.hpp"

#include <nlohmann/json.hpp>

#if KILN_HAVE_CUDA
#include "cuda/probe.hpp"
#endif
#if KILN_HAVE_LLVM
#include "cpu/llvm_info.hpp"
#include "kiln/runtime/cpu.hpp"
#endif

namespace kiln {

namespace {

ToolchainReport probe() {
  ToolchainReport r;
#if KILN_HAVE_CUDA
  r.nvrtc = cuda::probe_nvrtc();
  r.cuda = cuda::probe_driver();
#else
  r.nvrtc.reason =
      "the CUDA backend is not built (configured with KILN_WITH_CUDA=OFF or no toolkit)";
  r.cuda.driver.reason = r.nvrtc.reason;
  r.cuda.devices_reason = r.nvrtc.reason;
#endif
#if KILN_HAVE_LLVM
  r.llvm = cpu::probe_llvm();
  if (auto device = cpu::open_device(); device.ok()) {
    const DeviceProperties& p = (*device)->properties();
    r.cpu = CpuDeviceStatus{true, p.name, p.arch, p.sm_count, p.l2_bytes, ""};
  } else {
    r.cpu.reason = device.error().message;
  }
#else
  r.cpu.reason = "the CPU backend is not built (configured with KILN_WITH_LLVM=OFF or no LLVM 19)";
  r.llvm.reason = "the CPU backend is not built (configured with KILN_WITH_LLVM=OFF or no LLVM 19)";
#endif
  r.fingerprint.kiln_version = kiln_version();
  r.fingerprint.nvrtc_version = r.nvrtc.available ? r.nvrtc.version : "absent";
  r.fingerprint.llvm_version = r.llvm.available ? r.llvm.version : "absent";
  r.fingerprint.codegen_hash = kiln_codegen_hash();
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
  return {{"nvrtc", component_json(nvrtc)},
          {"llvm", component_json(llvm)},
          {"cuda", cuda_json},
          {"cpu", cpu_json},
          {"fingerprint", fingerprint.to_json()}};
}

const ToolchainReport& toolchain_report() {
  static const ToolchainReport report = probe();
  return report;
}

const ToolchainFingerprint& current_toolchain() {
  return toolchain_report().fingerprint;
}

}  // namespace kiln
