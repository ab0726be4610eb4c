// The compile pool: N workers take CompileUnits from one queue, compile each
// with failure isolation (kiln/compile/compile_engine.hpp) and hand back every unit's
// result the moment it finishes, through a callback or a completion queue.
// The autotuner consumes exactly this stream.
//
// Workers are threads; each owns a Compiler from the factory. Thread workers
// usually share one thread-safe compiler (NVRTC), but NVRTC's front end runs
// under a process-wide lock, so threads only overlap its back end. Process
// workers (include/kiln/compile/compile_worker.hpp: a WorkerProcessCompiler per worker
// thread) overlap front ends too.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "kiln/compile/compile_engine.hpp"

namespace kiln {

// Makes the compiler worker `index` uses. Called once per worker, on the
// constructing thread.
using CompilerFactory = std::function<std::shared_ptr<Compiler>(int index)>;

struct PoolOptions {
  int workers = 0;  // 0: Options::compile_threads (KILN_COMPILE_THREADS), else one per core
  CompileContext context;
};

struct CompletedUnit {
  std::uint64_t ticket = 0;  // what submit() returned
  int worker = 0;            // which worker compiled it
  UnitResult result;
};

struct PoolStats {
  std::uint64_t submitted = 0;
  std::uint64_t completed = 0;
  std::uint64_t programs = 0;   // compiler invocations, retries included
  std::uint64_t artifacts = 0;  // specializations that compiled
  std::uint64_t failed = 0;     // specializations that did not (cancelled included)
  double busy_seconds = 0;      // summed over workers
};

class CompilePool {
 public:
  using Callback = std::function<void(CompletedUnit)>;

  // `on_complete`, when given, is called on the worker thread as each unit
  // finishes (never under the pool's lock; it may submit more); otherwise
  // results queue up for next().
  // Never throws for want of threads: when fewer worker threads start than
  // asked (a process or memory limit), the pool runs with those, logs a
  // warning and says so in start_error(); when none starts, every unit
  // submitted completes at once (on the submitting thread) with kUnavailable
  // entries carrying that reason.
  CompilePool(CompilerFactory factory, PoolOptions options, Callback on_complete = {});
  // Every worker shares `compiler`, which must be thread-safe.
  CompilePool(std::shared_ptr<Compiler> compiler, PoolOptions options, Callback on_complete = {});
  // Cancels what is queued and running, then joins the workers.
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // Queues a unit. `cancel` cancels it alone (queued: it completes at once
  // with kCancelled entries; running: the compiler is asked to stop).
  std::uint64_t submit(CompileUnit unit, CancelToken cancel = CancelToken());
  std::vector<std::uint64_t> submit_all(std::vector<CompileUnit> units);

  // The next finished unit, in completion order; blocks while units are
  // still queued or running; nullopt when none is left (or a callback takes
  // the results).
  std::optional<CompletedUnit> next();

  // Cancels every queued and running unit; each still completes (with
  // kCancelled entries), so next() drains normally.
  void cancel_all();
  // Blocks until nothing is queued or running.
  void wait_idle();

  int workers() const { return static_cast<int>(threads_.size()); }
  // Why fewer workers run than were asked for; empty when all started.
  const std::string& start_error() const { return start_error_; }
  PoolStats stats() const;

 private:
  struct Job {
    std::uint64_t ticket;
    CompileUnit unit;
    CancelToken cancel;
  };
  void work(int index, std::shared_ptr<Compiler> compiler);
  // Counts, delivers (callback or queue) and releases one finished unit.
  void complete(CompletedUnit done, std::uint64_t ticket, double busy);

  const CompileContext context_;
  const Callback callback_;

  mutable std::mutex mutex_;
  std::condition_variable work_ready_;  // jobs_ non-empty or stopping_
  std::condition_variable done_ready_;  // done_ non-empty or pending_ == 0
  std::deque<Job> jobs_;
  std::deque<CompletedUnit> done_;
  std::map<std::uint64_t, CancelToken> running_;  // by ticket: the units being compiled
  std::uint64_t next_ticket_ = 1;
  std::uint64_t pending_ = 0;  // submitted, not yet delivered to callback/queue
  bool stopping_ = false;
  PoolStats stats_;
  std::vector<std::thread> threads_;
  std::string start_error_;  // set by the constructor only
};

// The most workers a pool runs (KILN_COMPILE_THREADS has the same bound).
inline constexpr int kMaxCompileWorkers = 1024;

// Worker count for `requested`: itself when > 0, else Options::compile_threads
// when > 0, else std::thread::hardware_concurrency() (at least 1); never more
// than kMaxCompileWorkers (a larger request is clamped, with a warning).
int resolve_workers(int requested, const Options& options = Options::global());

}  // namespace kiln
