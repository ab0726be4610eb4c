// A benchmark worker in a child process (kiln-bench-worker), through the
// ProcessBench API (process_bench.hpp): crash isolation, and a deadline
// the child cannot ignore (it is killed). It borrows nothing from the
// caller: the call travels to the child as a message.
#pragma once

#include <memory>

#include "benchmark_worker.hpp"
#include "process_bench.hpp"

namespace kiln::internal {

class ProcessWorker : public BenchWorker {
 public:
  ProcessWorker(std::string executable, std::shared_ptr<const Message> call, DeviceRef device,
                int threads, double deadline_seconds);

  Status start() override;
  Measurement measure(const Artifact& artifact, const LaunchGeometry& geometry,
                      const StopBars& stop, Outputs* captured, nlohmann::json* trace_args) override;
  bool keeps_deadline() const override { return true; }
  bool borrows_caller_device() const override { return false; }
  std::string where() const override { return device_.to_string() + ", process"; }

 private:
  DeviceRef device_;
  double deadline_seconds_;
  ProcessBench bench_;
};

}  // namespace kiln::internal
