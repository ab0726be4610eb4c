// A benchmark worker of a tuning run, from the tuner's side: something that
// measures one compiled config at a time on one device. Two kinds:
//   ThreadWorker  (thread_worker.hpp): measures in this process, on a
//                 device of its own (a replica of the call's arguments) or
//                 on the caller's device;
//   ProcessWorker (process_worker.hpp): a kiln-bench-worker child process
//                 (process_bench.hpp; the child's side is bench_worker.hpp).
// The crew (bench_crew.hpp) runs each on a thread of its own, feeds it from
// the ready queue and lets the watchdog decide about it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "kiln/compile/compile_engine.hpp"
#include "kiln/tuner/measurement.hpp"
#include "measure.hpp"

namespace kiln::internal {

class BenchWorker {
 public:
  virtual ~BenchWorker() = default;

  // Gets ready to measure; called on the worker's own thread, so a process
  // start overlaps the compiles. An error says why this worker cannot
  // measure (the slot is then given up).
  virtual Status start() = 0;

  // Measures one config. Never throws for the config's own failure. A
  // thread worker returns only when the kernel ends (a hung one may never);
  // a worker that keeps_deadline() returns by the deadline. `captured`: the
  // outputs of the checked run, when they are judged afterwards;
  // `trace_args`: what to add to the config's trace span;
  // `stop`: early stop's bars (MeasureInputs).
  virtual Measurement measure(const Artifact& artifact, const LaunchGeometry& geometry,
                              const StopBars& stop, Outputs* captured,
                              nlohmann::json* trace_args) = 0;

  // Whether measure() keeps the benchmark deadline itself (a process kills
  // its child), so the watchdog never abandons it.
  virtual bool keeps_deadline() const = 0;

  // Whether it measures on the caller's device and tensors. Such a worker
  // cannot be replaced (the device is held by its kernel) and must end
  // before the run returns: the caller owns what it uses.
  virtual bool borrows_caller_device() const = 0;

  // Where it measures, for the trace ("cpu:0, replica", "cuda:1, process").
  virtual std::string where() const = 0;
};

}  // namespace kiln::internal
