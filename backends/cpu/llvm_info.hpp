// The LLVM this Kiln was built against and the host it targets (only built
// with KILN_HAVE_LLVM).
#pragma once

#include <string>

#include "kiln/backends/toolchain.hpp"
#include "runtime/cpu_runtime.hpp"

namespace kiln::cpu {

ComponentStatus probe_llvm();

// The host CPU as LLVM sees it, asked now (host_cpu() remembers it):
// name "znver3"; triple "x86_64-pc-linux-gnu"; XXH3-128 hex of the enabled
// CPU features, sorted: two hosts with the same CPU name but different
// features (a VM masking AVX-512) must not share object code.
HostCpu llvm_host_cpu();
// The process's target triple, "x86_64-pc-linux-gnu".
std::string host_triple();
// This half's LLVM, for the light half (runtime/cpu_runtime.hpp).
const CpuToolchain& llvm_toolchain();
// &llvm_toolchain(), as a ToolchainSource: the program links this half.
Result<const CpuToolchain*> linked_toolchain();
// host_cpu(linked_toolchain), thrown as kiln::Error when it fails.
const HostCpu& linked_host_cpu();
// Registers the native target, its asm printer and parser, once per process
// (thread-safe). Must run before any TargetMachine or LLJIT is made, under
// llvm_in_use() (it writes the target registry, as a link does).
void ensure_native_target();

}  // namespace kiln::cpu
