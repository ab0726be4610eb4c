// A backend: one compiler and the devices that run what it compiles, behind
// one interface, found by its name in one registration list
// (backends/backends.cpp). Adding a backend is a folder under backends/ that
// implements this interface plus one line in that list; nothing else in
// Kiln names the backends a build has. tests/backends/conformance_test.cpp
// holds every registered backend to this contract.
//
//   const DeviceBackend& cpu = find_backend("cpu").value();
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

// Kernels in a backend's source language for the conformance suite
// (tests/backends/conformance_test.cpp), which holds every registered
// backend to this interface. `source` defines `entry`, taking (float* x,
// long n) and adding 1.0f to x[i] for i < n when launched over grid
// {ceil(n / kChunk), 1, 1} and block {kChunk, 1, 1}; `broken` is a source
// its compiler must reject with a log.
struct BackendProbe {
  static constexpr int kChunk = 64;
  std::string source;
  std::string entry = "kiln_probe";
  std::string broken;
  // An arch its compiler targets with no device present ("sm_80"), so a
  // machine without one still compile-checks it; empty: default_arch().
  std::string offline_arch;
  // False for a device that times launches without running them (replay):
  // the suite then checks memory and events but not the result.
  bool runs_code = true;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // Its registered name ("cpu", "cuda", "replay"), unique in the list: the
  // backend of the devices it opens (DeviceRef::backend), the word on the
  // command line, in worker arguments and in the toolchain fingerprint.
  virtual const char* name() const = 0;

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
  // True when tuning runs compile in worker processes (when the worker
  // program is found): a compile that crashes costs its group, and one past
  // its deadline is killed (Clang cannot be interrupted in process).
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
  // Its conformance kernels (above).
  virtual BackendProbe probe() const = 0;

  // Kiln's version and codegen hash with compiler_version(): what this
  // backend's artifact and tuning keys carry.
  ToolchainFingerprint fingerprint() const {
    return ToolchainFingerprint::of(name(), compiler_version());
  }
};

// The backends this build has, in the order of the registration list, then
// those registered at run time. A snapshot: safe while others register.
std::vector<const DeviceBackend*> backends();
// Adds `backend` (it must outlive every use: a static) for the rest of the
// process: an application's own backend is its code plus this one call.
// Throws kiln::Error (kInvalidArgument) when its name is empty, not lower
// case letters and '_', or already registered.
void register_backend(const DeviceBackend& backend);
// The backend registered as `name`. A backend this build was made without
// is an error of code kUnavailable saying how to build it ("rebuild with
// KILN_WITH_CUDA=ON"); a name no build knows is kInvalidArgument naming
// the ones this build has.
Result<const DeviceBackend*> find_backend(std::string_view name);
// Whether `name` is a backend this build has or one a build may have (so a
// spec naming "cuda" reads on a CPU-only build, and fails when it runs).
bool is_backend_name(std::string_view name);

}  // namespace kiln
