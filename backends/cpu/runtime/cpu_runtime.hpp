// The CPU backend's light half: what a run needs to load and launch CPU
// kernels and to compute their keys, with no LLVM or Clang in the process.
// The heavy half (backends/cpu/: Clang, LLVM ORC, LLD) compiles, and links
// the old relocatable objects; a program that links it (kiln_cpu) hands it
// over directly, a program that loads it as a plugin (the `kiln` command,
// the Python package) loads it the first time something needs it
// (a compile, an object to JIT, the host CPU's name not yet remembered).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/device/device.hpp"

namespace kiln::cpu {

// Code linked into the process: a dlopen'ed shared object, or an object
// file the JIT linked.
class CodeModule {
 public:
  virtual ~CodeModule() = default;
  // The address of `symbol`; an error naming it when the code lacks it.
  virtual Result<void*> lookup(const std::string& symbol) = 0;
};

// The host CPU as LLVM sees it: the name and feature hash enter every CPU
// artifact key (ClangCompiler::code_options), the name is the device's arch.
struct HostCpu {
  std::string name;           // "znver5", llvm::sys::getHostCPUName
  std::string triple;         // "x86_64-pc-linux-gnu", llvm::sys::getProcessTriple
  std::string features_hash;  // XXH3-128 hex of the enabled features, sorted
};

// What only LLVM can do, from the heavy half.
struct CpuToolchain {
  // Links a relocatable object (BinaryFormat::kCpuObject) with LLVM ORC.
  Result<std::shared_ptr<CodeModule>> (*link_object)(const std::string& object,
                                                     const std::string& label);
  // LLVM's answer for this host.
  HostCpu (*host_cpu)();
};

// Where the heavy half comes from: called only when it is needed.
using ToolchainSource = Result<const CpuToolchain*> (*)();

// The LLVM version the heavy half of this build links, baked in at
// configure time (the plugin is built by the same build; llvm_info.cpp
// checks at compile time that the two agree): the CPU toolchain
// fingerprint without loading LLVM.
const char* llvm_version();
// What a kernel may call, said whenever a load fails on a missing symbol
// (dlopen's RTLD_NOW, or the JIT's link). The C++ runtime is found only
// where the host exports it globally: from Python (extensions load
// privately) `throw` or std::vector fail to link.
inline constexpr const char* kKernelLinkFix =
    "a CPU kernel may call only its own code and the C functions the host process exports "
    "(libc, libm); do not rely on the C++ runtime (exceptions/throw, RTTI, std::vector and other "
    "allocating std types, iostreams): pass buffers in as arguments, keep the kernel header-only, "
    "or define the missing function in the kernel's source";
// The compiler's name in artifacts and keys.
inline constexpr const char* kCompilerName = "clang-orc";

// The host CPU, LLVM's answer, remembered per process and across
// processes (host_cpu.cpp says how); `source` is asked when no process
// has remembered it yet.
Result<HostCpu> host_cpu(ToolchainSource source);

// Exactly what ClangCompiler::code_options() returns (they enter the
// artifact key): computed here so that a warm run's keys need no LLVM.
// `extra`: the compiler's extra options, cpu_flag_options() by default.
std::vector<std::string> clang_code_options(const HostCpu& host,
                                            const std::vector<std::string>& extra);
// KILN_CPU_FLAGS, split at white space.
std::vector<std::string> cpu_flag_options();

// A shared object (BinaryFormat::kCpuSharedObject) loaded with dlopen
// (RTLD_LOCAL): checked to be an ELF shared object for this machine
// first, so that bytes of another kind are an error naming `label`, not a
// crash in the loader.
Result<std::shared_ptr<CodeModule>> load_shared_object(const std::string& bytes,
                                                       const std::string& label);

// The heavy half handing itself over when loaded as a plugin (its entry,
// backends/plugin/cpu_plugin_entry.cpp), and what it handed over (null
// before).
void provide_toolchain(const CpuToolchain* toolchain);
const CpuToolchain* provided_toolchain();

// The CPU device, its objects (kCpuObject) linked by `source`'s JIT.
Result<std::unique_ptr<Device>> open_host_device(int threads, ToolchainSource source);

}  // namespace kiln::cpu
