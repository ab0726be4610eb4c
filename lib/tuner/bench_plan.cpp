#include "bench_plan.hpp"

#include "host_args.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"
#include "worker_find.hpp"

namespace kiln::internal {

std::string BenchPlan::describe() const {
  std::string list;
  for (const auto& d : devices) {
    list += (list.empty() ? "" : ", ") + d.to_string();
    if (d.on_host()) list += ":" + std::to_string(d.index);
  }
  const std::string n = std::to_string(devices.size());
  return n + (process ? " worker process(es)" : " worker thread(s)") +
         (home_only ? " on the caller's device" : " (" + list + ")");
}

namespace {

// A worker process gets this long to start and answer its hello (LLVM's
// start-up on a loaded machine).
constexpr double kWorkerHelloSeconds = 60;

}  // namespace

namespace {

// A run with host hooks (TuneOptions::hooks) benchmarks in one thread on the
// caller's device with the caller's own arguments: a callable cannot cross
// into a worker process, and the hooks must see the buffers the kernel runs
// on (Triton users zero an output in pre_hook). kProcess cannot keep that.
Result<BenchPlan> plan_for_hooks(const BenchPlacement& placement, const DeviceRef& home) {
  if (placement.isolation == Isolation::kProcess) {
    return make_error(ErrorCode::kInvalidArgument,
                      "Isolation::kProcess cannot run the benchmark hooks (TuneOptions::hooks: "
                      "pre_run, post_run, benchmark; Python's pre_hook, post_hook, do_bench): "
                      "they are callables of this process. Use Isolation::kAuto or kThread "
                      "(benchmarks in threads: a crashing config ends the process), or drop "
                      "the hooks");
  }
  log_once(LogLevel::kInfo, "isolation-threads:hooks",
           "benchmarking in threads on the caller's device: the run has benchmark hooks "
           "(pre_run/post_run/benchmark), which cannot cross into a worker process; a config "
           "that crashes ends this process");
  BenchPlan plan;
  plan.devices = {home};
  plan.home_only = true;
  return plan;
}

}  // namespace

Result<BenchPlan> plan_benchmarks(const BenchPlacement& placement, const ArgList& args,
                                  const Device& home, bool host_hooks) {
  const DeviceRef home_ref = home.properties().ref;
  if (host_hooks) {
    auto plan = plan_for_hooks(placement, home_ref);
    if (plan.ok() && home_ref.on_host()) plan->cpu_threads = home.properties().sm_count;
    return plan;
  }
  BenchPlan plan;
  if (home_ref.on_host()) plan.cpu_threads = home.properties().sm_count;

  // (1) Processes or threads. A worker the user named, or kProcess, must
  // work: an error, never a silent loss of crash isolation. Arguments that
  // cannot be copied to a worker are an error too: threads only when the
  // caller asks for them. Only kAuto with no worker named and none that
  // works (a library in an application that did not install it)
  // benchmarks in threads, with a warning.
  if (placement.isolation != Isolation::kThread) {
    if (Status travels = can_travel(args); !travels.ok()) {
      ErrorInfo e = travels.error();
      e.message = (placement.isolation == Isolation::kProcess
                       ? "Isolation::kProcess cannot be used: "
                       : "benchmarks run in worker processes (Isolation::kAuto): ") +
                  e.message;
      return e;
    }
    if (auto exe = choose_bench_worker(placement.worker_path, kWorkerHelloSeconds); exe.ok()) {
      plan.process = true;
      plan.executable = *exe;
    } else if (placement.isolation == Isolation::kProcess ||
               worker_configured(placement.worker_path)) {
      return exe.error();
    } else {
      log_once(LogLevel::kWarn, "isolation-threads:no-worker",
               "benchmarking in threads, so a config that crashes ends this process: " +
                   exe.error().message);
    }
  }

  // (2) Devices, one worker each.
  if (!placement.devices.empty()) {
    if (!plan.process && !placement.open_device) {
      return make_error(ErrorCode::kInvalidArgument,
                        "BenchPlacement::devices needs BenchPlacement::open_device to open "
                        "devices[slot] for thread workers (or Isolation::kProcess, whose workers "
                        "open their own)");
    }
    plan.devices = placement.devices;
  } else {
    const int slots = placement.open_device ? std::max(1, placement.workers) : 1;
    plan.devices.assign(static_cast<std::size_t>(slots), home_ref);
    plan.home_only = !plan.process && !placement.open_device;
  }
  // Worker processes open their own devices: the ones open_device gives
  // (when there is no device list), on the CPU with as many threads.
  if (plan.process && placement.open_device) {
    const bool find_refs = placement.devices.empty();
    for (std::size_t i = 0; i < (find_refs ? plan.devices.size() : 1); ++i) {
      auto d = placement.open_device(static_cast<int>(i));
      if (!d.ok()) continue;  // that worker reports it when it tries
      if (find_refs) plan.devices[i] = (*d)->properties().ref;
      if (i == 0 && (*d)->properties().ref.on_host()) {
        plan.cpu_threads = (*d)->properties().sm_count;
      }
    }
  }
  plan.replicate = plan.process || !plan.home_only;
  return plan;
}

}  // namespace kiln::internal
