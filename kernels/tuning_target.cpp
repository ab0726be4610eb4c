// Opening a backend for tuning: its compiler, the toolchain fingerprint,
// the arch, and the devices, through the registered backend
// (kiln/device/backend.hpp) whichever it is.
#include "kiln/kernels/tuning_target.hpp"

#include <cctype>

#include "kiln/backends/toolchain.hpp"
#include "kiln/core/log.hpp"
#include "kiln/device/backend.hpp"
#include "kiln/tuner/bench_worker.hpp"

namespace kiln {

bool cpu_backend_built() {
  return find_backend("cpu").ok();
}

bool cuda_backend_built() {
  return find_backend("cuda").ok();
}

Result<int> cuda_device_count() {
  auto backend = find_backend("cuda");
  if (!backend.ok()) return backend.error();
  return (*backend)->device_count();
}

namespace {

// "no CUDA device (why): tune on a machine with one, or on the cpu backend".
ErrorInfo no_device(const std::string& name, const std::string& why) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // The others that can run here now (never a replay with no recording).
  std::string others;
  for (const DeviceBackend* b : backends()) {
    if (b->name() != name && b->unavailable_reason().empty())
      others += std::string(others.empty() ? "" : " or ") + b->name();
  }
  return make_error(ErrorCode::kUnavailable,
                    "no " + upper + " device (" + why + "): tune on a machine with one" +
                        (others.empty() ? "" : ", or on the " + others + " backend"));
}

}  // namespace

Result<TuningTarget> open_tuning_target(const std::string& name,
                                        const ToolchainFingerprint& toolchain,
                                        const std::vector<int>& indices, int cpu_threads) {
  auto found = find_backend(name);
  if (!found.ok()) return no_device(name, found.error().message);
  const DeviceBackend& backend = **found;
  auto count = backend.device_count();
  if (!count.ok()) return no_device(name, count.error().message);
  // The benchmark devices by reference; device 0 when none are named.
  std::vector<DeviceRef> refs;
  for (int i : indices) refs.push_back(DeviceRef{name, i});
  if (refs.empty()) refs.push_back(DeviceRef{name, 0});
  for (const auto& r : refs) {
    if (r.index >= *count) {
      return make_error(ErrorCode::kInvalidArgument,
                        "no " + r.to_string() + ": this machine has " + std::to_string(*count) +
                            " " + backend.name() + " device(s), numbered from 0");
    }
  }
  auto device = backend.open_device(refs.front().index, cpu_threads);
  if (!device.ok()) return device.error();
  TuningTarget t;
  t.backend_name = name;
  t.backend.compiler = std::shared_ptr<Compiler>(backend.make_compiler());
  // A compile that cannot be interrupted in this process runs in a compile
  // worker process, killed at its compile deadline, so a hung compile never
  // holds the run (docs/reliability.md). In process when no worker
  // executable is found or KILN_WORKER names one that does not work (the
  // benchmark plan refuses that unless the run benchmarks in threads).
  if (backend.compiles_in_workers()) {
    if (auto factory = process_compilers(backend.name()); factory.ok()) {
      t.backend.compiler_factory = std::move(*factory);
    } else {
      log_once(LogLevel::kInfo, "compiles-in-process",
               "compiling in this process: " + factory.error().message);
    }
  }
  t.backend.toolchain = toolchain;
  t.backend.arch = backend.arch_of(**device);
  t.backend.format = backend.binary_format();
  t.device = std::move(*device);
  // A fresh device per benchmark worker (and for one replacing a worker
  // whose config hung); on the CPU with as many block runners as the caller's.
  t.backend.bench.open_device = [&backend, refs, cpu_threads](int slot) {
    return backend.open_device(refs.at(static_cast<std::size_t>(slot)).index, cpu_threads);
  };
  t.backend.bench.workers = static_cast<int>(refs.size());
  t.backend.bench.devices = refs;
  for (const auto& r : refs) t.devices.push_back(r.index);
  return t;
}

Result<TuningTarget> open_tuning_target(const std::string& name) {
  return open_tuning_target(name, current_toolchain(name));
}

}  // namespace kiln
