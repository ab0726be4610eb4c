#include "process_worker.hpp"

namespace kiln::internal {

namespace {

// A worker process gets this long to start, open its device and take the
// call (LLVM's start-up or a CUDA context on a loaded machine).
constexpr double kWorkerStartSeconds = 60;

}  // namespace

ProcessWorker::ProcessWorker(std::string executable, std::shared_ptr<const Message> call,
                             DeviceRef device, int threads, double deadline_seconds)
    : device_(device),
      deadline_seconds_(deadline_seconds),
      bench_(std::move(executable), std::move(call), device, threads) {}

Status ProcessWorker::start() {
  return bench_.start(kWorkerStartSeconds);
}

Measurement ProcessWorker::measure(const Artifact& artifact, const LaunchGeometry& geometry,
                                   const StopBars& stop, Outputs* captured,
                                   nlohmann::json* trace_args) {
  Measurement m = bench_.measure(artifact, geometry, deadline_seconds_, captured, stop);
  (*trace_args)["pid"] = bench_.last_pid();
  return m;
}

}  // namespace kiln::internal
