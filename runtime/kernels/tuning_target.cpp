// Opening a backend for tuning: its compiler, the toolchain fingerprint,
// the arch, and the devices. KILN_KERNELS_CPU / KILN_KERNELS_CUDA say which
// backends this build has (runtime/kernels/CMakeLists.txt).
#include "kiln/kernels/tuning_target.hpp"

#include "kiln/core/log.hpp"
#include "tuner/bench_worker.hpp"

#if KILN_KERNELS_CPU
#include "kiln/runtime/cpu.hpp"
#endif
#if KILN_KERNELS_CUDA
#include "kiln/core/options.hpp"
#include "kiln/runtime/cuda.hpp"
#include "kiln/runtime/nvrtc.hpp"
#include "kiln/runtime/toolchain.hpp"
#endif

namespace kiln {

bool cpu_backend_built() {
  return KILN_KERNELS_CPU != 0;
}

bool cuda_backend_built() {
  return KILN_KERNELS_CUDA != 0;
}

Result<int> cuda_device_count() {
#if KILN_KERNELS_CUDA
  auto count = cuda::device_count();
  if (!count.ok()) return count.error();
  if (*count == 0) {
    return make_error(ErrorCode::kUnavailable, "the CUDA driver reports no device");
  }
  return *count;
#else
  return make_error(ErrorCode::kUnavailable, "this kiln was built without the CUDA backend");
#endif
}

DeviceIdentity device_identity(const Device& device) {
  const DeviceProperties& p = device.properties();
  return DeviceIdentity{p.arch, p.name, p.cc_major, p.cc_minor};
}

namespace {

// The benchmark devices by reference; device 0 when none are named.
std::vector<DeviceRef> device_refs(BackendKind kind, const std::vector<int>& indices) {
  std::vector<DeviceRef> refs;
  const DeviceKind dk = kind == BackendKind::kCuda ? DeviceKind::kCuda : DeviceKind::kCpu;
  for (int i : indices) refs.push_back(DeviceRef{dk, i});
  if (refs.empty()) refs.push_back(DeviceRef{dk, 0});
  return refs;
}

Result<TuningTarget> open_cpu(const ToolchainFingerprint& toolchain,
                              const std::vector<int>& indices) {
#if KILN_KERNELS_CPU
  for (int i : indices) {
    if (i != 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        "no cpu:" + std::to_string(i) + ": this machine has 1 CPU device (0)");
    }
  }
  auto device = cpu::open_device(0);
  if (!device.ok()) return device.error();
  const auto refs = device_refs(BackendKind::kCpu, indices);
  TuningTarget t;
  t.kind = BackendKind::kCpu;
  t.device = std::move(*device);
  t.backend.compiler = std::shared_ptr<Compiler>(cpu::make_compiler());
  // Clang in this process cannot be interrupted; a compile worker process
  // is killed at its compile deadline, so a hung compile never holds the
  // run (docs/reliability.md). In process when no worker executable is found
  // or KILN_WORKER names one that does not work (the benchmark plan refuses
  // that unless the run benchmarks in threads).
  if (auto factory = process_compilers("cpu"); factory.ok()) {
    t.backend.compiler_factory = std::move(*factory);
  } else {
    log_once(LogLevel::kInfo, "compiles-in-process",
             "compiling in this process: " + factory.error().message);
  }
  t.backend.toolchain = toolchain;
  t.backend.arch = "host";
  t.backend.format = BinaryFormat::kCpuObject;
  // A fresh device per benchmark worker (and for one replacing a worker
  // whose config hung), with as many block runners as the caller's.
  t.backend.bench.open_device = [](int) { return cpu::open_device(0); };
  t.backend.bench.workers = static_cast<int>(refs.size());
  if (refs.size() > 1) t.backend.bench.devices = refs;
  for (const auto& r : refs) t.devices.push_back(r.index);
  return t;
#else
  (void)toolchain;
  (void)indices;
  return make_error(ErrorCode::kUnavailable,
                    "this kiln was built without the CPU backend: rebuild with KILN_WITH_LLVM=ON "
                    "(needs LLVM/Clang 19)");
#endif
}

Result<TuningTarget> open_cuda(const ToolchainFingerprint& toolchain,
                               const std::vector<int>& indices) {
  auto count = cuda_device_count();
  if (!count.ok()) {
    return make_error(ErrorCode::kUnavailable,
                      "no CUDA device (" + count.error().message +
                          "): tune on a machine with one, or on the CPU backend");
  }
#if KILN_KERNELS_CUDA
  const auto refs = device_refs(BackendKind::kCuda, indices);
  for (const auto& r : refs) {
    if (r.index >= *count) {
      return make_error(ErrorCode::kInvalidArgument, "no " + r.to_string() + ": this machine has " +
                                                         std::to_string(*count) +
                                                         " CUDA device(s), numbered from 0");
    }
  }
  auto device = cuda::open_device(refs.front().index);
  if (!device.ok()) return device.error();
  // The arch of the device that runs the benchmarks, unless KILN_ARCH says
  // otherwise (kiln/core/options.hpp).
  const std::string arch =
      Options::global().arch.empty() ? (*device)->properties().arch : Options::global().arch;
  TuningTarget t;
  t.kind = BackendKind::kCuda;
  t.device = std::move(*device);
  t.backend.compiler = std::shared_ptr<Compiler>(cuda::make_compiler());
  t.backend.toolchain = toolchain;
  t.backend.arch = arch;
  t.backend.format = BinaryFormat::kCubin;
  std::vector<DeviceRef> devs = refs;
  t.backend.bench.open_device = [devs](int slot) {
    return cuda::open_device(devs.at(static_cast<std::size_t>(slot)).index);
  };
  t.backend.bench.workers = static_cast<int>(devs.size());
  t.backend.bench.devices = devs;
  for (const auto& r : devs) t.devices.push_back(r.index);
  return t;
#else
  (void)toolchain;
  (void)indices;
  return count.error();
#endif
}

}  // namespace

Result<TuningTarget> open_tuning_target(BackendKind kind, const ToolchainFingerprint& toolchain,
                                        const std::vector<int>& devices) {
  return kind == BackendKind::kCuda ? open_cuda(toolchain, devices) : open_cpu(toolchain, devices);
}

Result<TuningTarget> open_tuning_target(BackendKind kind) {
  return open_tuning_target(kind, current_toolchain());
}

}  // namespace kiln
