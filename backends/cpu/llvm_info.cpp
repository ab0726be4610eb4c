#include "llvm_info.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <mutex>
#include <string_view>
#include <vector>

#include "host_jit.hpp"
#include "kiln/core/hash.hpp"

namespace kiln::cpu {

// The light half keys artifacts with the version baked in at configure
// time: it must be the one this half links, or a warm run would miss.
static_assert(std::string_view(LLVM_VERSION_STRING) == std::string_view(KILN_LLVM_VERSION),
              "KILN_LLVM_VERSION (backends/cpu/CMakeLists.txt) is not the LLVM this build links");

ComponentStatus probe_llvm() {
  ComponentStatus s;
  s.built = true;
  s.available = true;
  s.version = LLVM_VERSION_STRING;
  // The CPU the JIT will target: part of what "the device" means on the CPU.
  s.location = std::string("libLLVM " LLVM_VERSION_STRING ", host cpu ") + linked_host_cpu().name;
  return s;
}

std::string host_triple() {
  return llvm::sys::getProcessTriple();
}

HostCpu llvm_host_cpu() {
  std::vector<std::string> enabled;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    if (feature.getValue()) enabled.push_back(feature.getKey().str());
  }
  std::sort(enabled.begin(), enabled.end());
  Hasher h;
  for (const auto& f : enabled) h.field(f);
  return {llvm::sys::getHostCPUName().str(), host_triple(), h.finish().hex()};
}

namespace {

Result<std::shared_ptr<CodeModule>> jit_link(const std::string& object, const std::string& label) {
  auto jit = HostJit::shared();
  if (!jit) return jit.error();
  auto module = (*jit)->load(object, label);
  if (!module) return module.error();
  return std::shared_ptr<CodeModule>(std::move(*module));
}

}  // namespace

const CpuToolchain& llvm_toolchain() {
  static const CpuToolchain toolchain{&jit_link, &llvm_host_cpu};
  return toolchain;
}

Result<const CpuToolchain*> linked_toolchain() {
  return &llvm_toolchain();
}

const HostCpu& linked_host_cpu() {
  static const HostCpu host = [] {
    auto found = host_cpu(&linked_toolchain);
    if (!found) throw Error(found.error());
    return *found;
  }();
  return host;
}

void ensure_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

}  // namespace kiln::cpu
