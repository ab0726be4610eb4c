#include "llvm_info.hpp"

#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>

namespace kiln::cpu {

ComponentStatus probe_llvm() {
  ComponentStatus s;
  s.built = true;
  s.available = true;
  s.version = LLVM_VERSION_STRING;
  // The CPU the JIT will target: part of what "the device" means on the CPU.
  s.location =
      std::string("libLLVM " LLVM_VERSION_STRING ", host cpu ") + llvm::sys::getHostCPUName().str();
  return s;
}

}  // namespace kiln::cpu
