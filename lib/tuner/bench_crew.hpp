// The benchmark workers of one tuning run, each on a thread of its own:
// takes an artifact from the ready queue, measures it, records the result;
// and carries out the watchdog's orders (abandon, replace, fall back to
// threads, stop).
//
// Locks: each worker has a small lock of its own, shared with the watchdog
// side only (who owns the config being measured: the worker when it
// finishes first, the watchdog when the deadline passes first). None is
// held across a measurement, a store or any other I/O.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "benchmark_worker.hpp"
#include "kiln/device/clock.hpp"
#include "ready_queue.hpp"
#include "result_ledger.hpp"
#include "tuner/trace.hpp"
#include "watchdog.hpp"

namespace kiln::internal {

// What every worker thread reads; shared, so a worker left behind by a
// hung config keeps it alive (it holds nothing the caller owns).
struct CrewFeed {
  std::shared_ptr<ReadyQueue> queue;
  std::shared_ptr<ResultLedger> ledger;
  TunableKernel kernel;  // the launch rule: each config's geometry
  ArgList args;          // descriptors for the launch rule
  std::shared_ptr<TraceRecorder> trace;
  bool capture_outputs = false;  // outputs are judged after the run
  double early_stop = 0;         // MeasureOptions::early_stop (0: off)
  bool screen = false;           // StopBars::screen
  // The run's clock (borrowed, never null; PipelineInputs::clock): each
  // benchmark is timed on it, and a worker is done with a config on it only
  // once the result is recorded, so that on a replay's simulated time a
  // refill the result asks for (PipelineInputs::refill) joins the run at
  // the moment the result landed.
  PipelineClock* clock = &real_clock();
};

// Where workers come from (pipeline.cpp): the kind the run benchmarks in.
class WorkerSource {
 public:
  virtual ~WorkerSource() = default;
  virtual Result<std::unique_ptr<BenchWorker>> make(int slot) = 0;
  // Switches to thread workers; returns how many slots they take.
  virtual int fall_back_to_threads() = 0;
};

class BenchCrew {
 public:
  BenchCrew(std::shared_ptr<const CrewFeed> feed, WorkerSource& source);
  // Waits for the workers (finish()).
  ~BenchCrew();
  BenchCrew(const BenchCrew&) = delete;
  BenchCrew& operator=(const BenchCrew&) = delete;

  // Starts a worker in `slot`; false (worker_failure() says why) when none
  // could be made.
  bool start(int slot);

  std::vector<WorkerWatch> watch() const;
  std::string worker_failure() const;

  // Carries out what the watchdog decided. `cancel_compiles` is called on
  // a stop, after the ready queue is closed.
  void obey(const WatchOrders& orders, const Watchdog& dog,
            const std::function<void()>& cancel_compiles);

  // The run is over: workers leave, and their threads are joined. A worker
  // abandoned on the caller's device is waited for (it still uses what the
  // caller owns); one on a device of its own is let go.
  void finish();

 private:
  struct Slot;

  std::shared_ptr<const CrewFeed> feed_;
  WorkerSource& source_;
  struct Failure;
  static void loop(std::shared_ptr<const CrewFeed> feed, std::shared_ptr<Slot> slot,
                   std::shared_ptr<Failure> note);

  // Only the thread that runs the pipeline starts, abandons and joins.
  std::vector<std::shared_ptr<Slot>> slots_;
  // Why the last worker could not start; written by worker threads too.
  std::shared_ptr<Failure> failure_;
  bool finished_ = false;
};

}  // namespace kiln::internal
