// How a tuning run benchmarks: in worker processes or threads, on which
// devices, with how many workers. Decided once per run from the Backend and
// the call's arguments.
#pragma once

#include <string>
#include <vector>

#include "kiln/tuner/tuner.hpp"

namespace kiln::internal {

struct BenchPlan {
  bool process = false;    // worker processes (else threads)
  std::string executable;  // the worker, when `process`
  // One worker per slot. Processes open devices[slot] themselves; threads
  // call BenchPlacement::open_device(slot), or use the caller's device when
  // `home_only`.
  std::vector<DeviceRef> devices;
  bool home_only = false;
  // Worker processes on the CPU: as open_device's device, else the caller's.
  int cpu_threads = 0;
  // Whether a worker measures on a copy of the arguments (its device is
  // not the caller's device object).
  bool replicate = false;

  std::string describe() const;  // "2 worker processes (cpu:0, cpu:1)"
};

// An error value (kInvalidArgument) for what the caller must change:
// processes (Isolation::kProcess, or kAuto) with a raw pointer argument of
// unknown extent, naming it and the fixes (its size, a tensor, or
// Isolation::kThread: threads only when asked for); BenchPlacement::devices
// for threads without BenchPlacement::open_device. kUnavailable / kNotFound
// when processes are asked for (kProcess, or a worker named by
// BenchPlacement::worker_path or KILN_WORKER) and the worker is missing or
// does not answer its hello: the message names the setting and the fix.
// kAuto with no worker named and none found falls back to threads (a
// warning, once). `host_hooks` (TuneOptions::hooks set): one thread on the
// caller's device and arguments (logged), and kProcess is an error naming
// the fix.
[[nodiscard]] Result<BenchPlan> plan_benchmarks(const BenchPlacement& placement,
                                                const ArgList& args, const Device& home,
                                                bool host_hooks = false);

}  // namespace kiln::internal
