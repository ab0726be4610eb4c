// A backend: one compiler and the devices that run what it compiles, behind
// one interface, found by kind or name in one registration list
// (backends/backends.cpp). Adding a backend is a folder under backends/ that
// implements this interface plus one line in that list; nothing else in
// Kiln names the backends a build has.
//
//   const DeviceBackend& cpu = find_backend(DeviceKind::kCpu).value();
//   std::unique_ptr<Compiler> compiler = cpu.make_compiler();
//   auto device = cpu.open_device(0);
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "kiln/core/fingerprint.hpp"
#include "kiln/core/options.hpp"
#include "kiln/device/device.hpp"

namespace kiln {

struct ToolchainReport;

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // The kind of device it compiles for and runs on; its name is
  // device_kind_name(kind()) ("cpu", "cuda").
  virtual DeviceKind kind() const = 0;
  const char* name() const { return device_kind_name(kind()); }

  // Empty when it can compile and run here now; else why not, with the fix
  // ("no CUDA driver (...): install one or tune on the CPU backend").
  virtual std::string unavailable_reason() const = 0;
  // Its compiler and version, the part of the toolchain fingerprint it adds
  // to its own keys alone: "llvm 19.1.7", "nvrtc 13.0"; "absent" when the
  // compiler cannot be loaded.
  virtual std::string compiler_version() const = 0;

  // A compiler with the settings `options` give (KILN_PCH, KILN_NVRTC_FLAGS...).
  virtual std::unique_ptr<Compiler> make_compiler(const Options& options) const = 0;
  // The same with the environment's (Options::global()).
  std::unique_ptr<Compiler> make_compiler() const { return make_compiler(Options::global()); }
  // True when its compiles cannot be interrupted in this process (Clang):
  // tuning runs then compile in worker processes, killed at their deadline.
  virtual bool compiles_in_workers() const = 0;
  // The code its compiler emits by default.
  virtual BinaryFormat binary_format() const = 0;

  // How many devices this machine has (an error of code kUnavailable saying
  // why there are none).
  virtual Result<int> device_count() const = 0;
  // Device `index`; `cpu_threads` block runners on the CPU (0: one per
  // core), ignored elsewhere.
  virtual Result<std::unique_ptr<Device>> open_device(int index, int cpu_threads = 0) const = 0;
  // The arch code for `device` is compiled for ("host", "sm_90a"; KILN_ARCH
  // overrides it where the backend honours it).
  virtual std::string arch_of(const Device& device) const = 0;
  // The arch when no device is named: KILN_ARCH, else the first device's.
  // Cheap: it opens no other backend (no LLVM JIT for a CUDA arch).
  virtual Result<std::string> default_arch() const = 0;

  // Fills its parts of `kiln info`'s report (compiler, devices or why not).
  virtual void report(ToolchainReport& report) const = 0;

  // Kiln's version and codegen hash with compiler_version(): what this
  // backend's artifact and tuning keys carry.
  ToolchainFingerprint fingerprint() const {
    return ToolchainFingerprint::of(name(), compiler_version());
  }
};

// The backends this build has, in the order of the registration list.
const std::vector<const DeviceBackend*>& backends();
// The backend of `kind`, or an error (kUnavailable) saying this build lacks
// it and how to build it ("rebuild with KILN_WITH_CUDA=ON").
Result<const DeviceBackend*> find_backend(DeviceKind kind);
// The same by name ("cpu", "cuda"); an unknown name is kInvalidArgument.
Result<const DeviceBackend*> find_backend(std::string_view name);

}  // namespace kiln
