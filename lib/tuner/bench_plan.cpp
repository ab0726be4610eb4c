#include "bench_plan.hpp"

#include "host_args.hpp"
#include "kiln/bench_worker.hpp"
#include "kiln/error.hpp"
#include "kiln/log.hpp"

namespace kiln::internal {

std::string BenchPlan::describe() const {
  std::string list;
  for (const auto& d : devices) {
    list += (list.empty() ? "" : ", ") + d.to_string();
    if (d.kind == DeviceKind::kCpu) list += ":" + std::to_string(d.index);
  }
  const std::string n = std::to_string(devices.size());
  return n + (process ? " worker process(es)" : " worker thread(s)") +
         (home_only ? " on the caller's device" : " (" + list + ")");
}

BenchPlan plan_benchmarks(const Backend& backend, const ArgList& args, const Device& home) {
  BenchPlan plan;
  const DeviceRef home_ref = home.properties().ref;
  if (home_ref.kind == DeviceKind::kCpu) plan.cpu_threads = home.properties().sm_count;

  // (1) Processes or threads.
  if (backend.isolation != Isolation::kThread) {
    std::string why;
    if (auto bad = cannot_travel(args)) {
      why = *bad;
    } else if (auto exe = find_bench_worker(backend.worker_path); !exe.ok()) {
      why = exe.error().describe();
    } else {
      plan.process = true;
      plan.executable = *exe;
    }
    if (!plan.process && backend.isolation == Isolation::kProcess) {
      throw Error(ErrorCode::kInvalidArgument, "Isolation::kProcess cannot be used: " + why);
    }
    if (!plan.process) {
      log_once(LogLevel::kInfo, "isolation-threads:" + why,
               "benchmarking in threads, not worker processes: " + why);
    }
  }

  // (2) Devices, one worker each.
  if (!backend.devices.empty()) {
    if (!plan.process && !backend.open_device) {
      throw Error(ErrorCode::kInvalidArgument,
                  "Backend::devices needs Backend::open_device to open devices[slot] for thread "
                  "workers (or Isolation::kProcess, whose workers open their own)");
    }
    plan.devices = backend.devices;
  } else {
    const int slots = backend.open_device ? std::max(1, backend.bench_workers) : 1;
    plan.devices.assign(static_cast<std::size_t>(slots), home_ref);
    plan.home_only = !plan.process && !backend.open_device;
  }
  // Worker processes open their own devices: the ones open_device gives
  // (when there is no device list), on the CPU with as many threads.
  if (plan.process && backend.open_device) {
    const bool find_refs = backend.devices.empty();
    for (std::size_t i = 0; i < (find_refs ? plan.devices.size() : 1); ++i) {
      auto d = backend.open_device(static_cast<int>(i));
      if (!d.ok()) continue;  // that worker reports it when it tries
      if (find_refs) plan.devices[i] = (*d)->properties().ref;
      if (i == 0 && (*d)->properties().ref.kind == DeviceKind::kCpu) {
        plan.cpu_threads = (*d)->properties().sm_count;
      }
    }
  }
  plan.replicate = plan.process || !plan.home_only;
  return plan;
}

}  // namespace kiln::internal
