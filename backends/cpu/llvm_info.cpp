#include "llvm_info.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "kiln/core/hash.hpp"

namespace kiln::cpu {

ComponentStatus probe_llvm() {
  ComponentStatus s;
  s.built = true;
  s.available = true;
  s.version = LLVM_VERSION_STRING;
  // The CPU the JIT will target: part of what "the device" means on the CPU.
  s.location = std::string("libLLVM " LLVM_VERSION_STRING ", host cpu ") + host_cpu_name();
  return s;
}

std::string host_cpu_name() {
  return llvm::sys::getHostCPUName().str();
}

std::string host_triple() {
  return llvm::sys::getProcessTriple();
}

const std::string& host_features_hash() {
  static const std::string hash = [] {
    std::vector<std::string> enabled;
    for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
      if (feature.getValue()) enabled.push_back(feature.getKey().str());
    }
    std::sort(enabled.begin(), enabled.end());
    Hasher h;
    for (const auto& f : enabled) h.field(f);
    return h.finish().hex();
  }();
  return hash;
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
