// A benchmark worker in a thread of this process (Isolation::kThread, or
// kAuto when no worker process can run). It cannot be stopped: a config
// that hangs is abandoned by the watchdog and its thread let go, so the
// worker owns everything it touches (a device opened for it, the call's
// arguments replicated onto it, the call's data shared) and may outlive
// the run safely. Without Backend::open_device it measures on the caller's
// device and tensors: borrowed, so the run waits for it before returning.
// One thing no copy can own: a raw pointer scalar argument travels as its
// value, so a hung kernel may still read through it (which is also why
// such a call cannot go to a worker process: host_args.hpp).
#pragma once

#include <memory>
#include <optional>

#include "benchmark_worker.hpp"
#include "call_state.hpp"
#include "host_args.hpp"
#include "kiln/device/device.hpp"

namespace kiln::internal {

// What every thread worker of a run reads, shared by them: a worker left
// running after the run keeps it alive.
struct ThreadCall {
  Reference reference;
  TuneOptions options;
  // For a worker on the caller's device only: the caller's arguments and
  // their state (bound to `args`).
  ArgList args;
  std::optional<CallState> state;
  // For workers on devices of their own: the arguments as the first run
  // sees them, copied to the host, and their state (rebound per replica).
  std::optional<HostArgs> host;
};

class ThreadWorker : public BenchWorker {
 public:
  // On a device of its own: the call's arguments are replicated onto it.
  static Result<std::unique_ptr<ThreadWorker>> on_own_device(
      std::unique_ptr<Device> device, std::shared_ptr<const ThreadCall> call);
  // On the caller's `device`, with the call's own arguments.
  static std::unique_ptr<ThreadWorker> on_caller_device(Device& device,
                                                        std::shared_ptr<const ThreadCall> call);

  Status start() override { return ok_status(); }
  Measurement measure(const Artifact& artifact, const LaunchGeometry& geometry,
                      const StopBars& stop, Outputs* captured, nlohmann::json* trace_args) override;
  bool keeps_deadline() const override { return false; }
  bool borrows_caller_device() const override { return owned_ == nullptr; }
  std::string where() const override;

 private:
  explicit ThreadWorker(std::shared_ptr<const ThreadCall> call) : call_(std::move(call)) {}

  std::shared_ptr<const ThreadCall> call_;
  std::unique_ptr<Device> owned_;
  Device* device_ = nullptr;
  std::optional<ReplicaArgs> replica_;  // the call's arguments on owned_
  std::optional<CallState> state_;      // bound to replica_
};

}  // namespace kiln::internal
