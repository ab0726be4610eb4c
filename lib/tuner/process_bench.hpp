// The tuner's side of one benchmark worker process (include/kiln/tuner/bench_worker.hpp):
// starts it, sends it the call, measures configs through it, and turns a
// worker that dies or passes its deadline into that config's failure. The
// next measure() starts a fresh worker.
//
// Healthy workers outlive their tuning run in a small process-wide idle
// set (by executable, device and thread count), so the next run (an
// search round, the next kernel) does not pay a process start and a
// device open again. An idle worker gets the new call before measuring.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "bench_call.hpp"
#include "kiln/process/worker_process.hpp"
#include "kiln/tuner/measurement.hpp"

namespace kiln::internal {

class ProcessBench {
 public:
  // `call` is the message every worker of this run gets first.
  ProcessBench(std::string executable, std::shared_ptr<const Message> call, DeviceRef device,
               int threads);
  ~ProcessBench();  // a healthy worker goes back to the idle set
  ProcessBench(const ProcessBench&) = delete;
  ProcessBench& operator=(const ProcessBench&) = delete;

  // Takes an idle worker or starts one, and sends it the call; an error
  // (with the worker's reason) when it cannot be started within `timeout_s`.
  Status start(double timeout_s);

  // Never throws: a worker that dies while measuring gives kCrashed with
  // its exit (the signal), one that passes `deadline_s` is killed and gives
  // kTimeout, one whose device became unusable gives kCrashed with the
  // device's error. In each case the worker is gone; the next call starts
  // a fresh one.
  // `captured`: where the outputs of the checked run go, when the call
  // asked the worker for them (BenchCall::capture_outputs).
  // `stop`: early stop's bars (MeasureInputs), none by default.
  Measurement measure(const Artifact& artifact, const LaunchGeometry& geometry, double deadline_s,
                      Outputs* captured = nullptr, const StopBars& stop = {});

  pid_t pid() const { return process_.pid(); }
  // The worker that measured (or died on) the last config, for the trace.
  pid_t last_pid() const { return last_pid_; }
  int starts() const { return starts_; }  // processes this slot started (reuse excluded)

 private:
  std::string executable_;
  std::shared_ptr<const Message> call_;
  std::string pool_key_;
  WorkerProcess process_;
  int starts_ = 0;
  pid_t last_pid_ = -1;
  double start_timeout_s_ = 60;
};

// Before a run: checks that `executable` starts and answers the hello of a
// benchmark worker within `timeout_s` (a message in words otherwise),
// unless a worker of it idles already. The worker started waits idle for
// the run, so the check costs no extra process.
Status greet_bench_worker(const std::string& executable, double timeout_s);

// Kills every idle worker (tests; the idle set also ends with the process).
void clear_idle_bench_workers();

}  // namespace kiln::internal
