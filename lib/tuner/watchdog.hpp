// The watchdog of a tuning run decides, from what the benchmark workers are
// doing and the time, what must happen now: abandon a thread worker whose
// config passed its benchmark deadline (the config is recorded as a
// timeout), start a fresh worker in its slot, benchmark in threads when no
// worker process starts (Isolation::kAuto), and stop the run when the
// budget is spent or no worker is left.
//
// It only decides; it holds no worker, lock or thread (the crew carries
// its orders out: bench_crew.hpp). So each rule can be tested alone, and
// the run waits for the next change or deadline instead of polling.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::internal {

using WatchClock = std::chrono::steady_clock;

// Fixed for one run.
struct WatchRules {
  WatchClock::duration bench_deadline = std::chrono::seconds(10);
  double bench_deadline_seconds = 10;  // for the messages
  WatchClock::time_point budget_deadline = WatchClock::time_point::max();
  // Worker processes under Isolation::kAuto: when none of them starts,
  // benchmark in threads rather than not at all (once).
  bool may_fall_back = false;
  // Asked at every check and at least every interrupt_poll until the run
  // stops (TuneOptions::pipeline.interrupted): true stops it.
  std::function<bool()> interrupted;
  WatchClock::duration interrupt_poll = std::chrono::milliseconds(50);
};

// One benchmark worker as the watchdog sees it at a check.
struct WorkerWatch {
  int slot = 0;
  bool alive = true;  // started or starting, and not given up on
  // A worker process keeps the deadline itself (it kills its child): it is
  // never abandoned from here.
  bool keeps_deadline = false;
  // False for a worker on the caller's device: a hung kernel holds that
  // device, so no successor could measure there.
  bool replaceable = true;
  std::optional<WatchClock::time_point> busy_since;  // measuring a config since then
};

struct WatchOrders {
  std::vector<int> abandon;           // slots whose config passed the deadline
  std::vector<int> replace;           // slots that get a fresh worker (abandoned ones)
  bool fall_back = false;             // start thread workers in every slot
  std::optional<std::string> stop;    // why the run stops now
  WatchClock::time_point next_check;  // look again then, if nothing happens sooner

  bool acted() const { return !abandon.empty() || fall_back || stop.has_value(); }
};

class Watchdog {
 public:
  explicit Watchdog(WatchRules rules) : rules_(rules) {}

  // `workers`: every worker started so far; `worker_failure`: why the last
  // worker could not start (empty when none failed).
  WatchOrders check(WatchClock::time_point now, const std::vector<WorkerWatch>& workers,
                    const std::string& worker_failure);

  bool stopping() const { return stopping_; }
  bool interrupted() const { return interrupted_; }
  const WatchRules& rules() const { return rules_; }
  // The message of a config abandoned at its deadline.
  std::string timeout_reason() const;

 private:
  WatchRules rules_;
  bool stopping_ = false;
  bool interrupted_ = false;
  bool fell_back_ = false;
};

}  // namespace kiln::internal
