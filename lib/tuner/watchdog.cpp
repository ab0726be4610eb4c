#include "watchdog.hpp"

#include <algorithm>

namespace kiln::internal {

std::string Watchdog::timeout_reason() const {
  return "benchmark passed its deadline of " + std::to_string(rules_.bench_deadline_seconds) +
         " s and was abandoned (its worker is replaced)";
}

WatchOrders Watchdog::check(WatchClock::time_point now, const std::vector<WorkerWatch>& workers,
                            const std::string& worker_failure) {
  WatchOrders orders;
  // (1) Deadlines: a thread cannot be stopped, only left behind; the slot
  // gets a successor unless the run is stopping or the device is the
  // caller's.
  std::size_t alive = 0;
  for (const WorkerWatch& w : workers) {
    if (!w.alive) continue;
    if (!w.keeps_deadline && w.busy_since && now - *w.busy_since >= rules_.bench_deadline) {
      orders.abandon.push_back(w.slot);
      if (w.replaceable && !stopping_) {
        orders.replace.push_back(w.slot);
        ++alive;
      }
      continue;
    }
    ++alive;
  }
  // (2) No worker process started (a stale or broken worker executable):
  // threads instead, once. The next check judges the new workers.
  if (alive == 0 && !workers.empty() && rules_.may_fall_back && !fell_back_ && !stopping_) {
    fell_back_ = true;
    orders.fall_back = true;
    orders.next_check = now;
    return orders;
  }
  // (3) The caller interrupted, the budget, or no worker left: the run
  // stops (the crew closes the ready queue and cancels the compiles).
  if (!stopping_ && rules_.interrupted && rules_.interrupted()) interrupted_ = true;
  if (!stopping_ && (interrupted_ || now >= rules_.budget_deadline || alive == 0)) {
    stopping_ = true;
    orders.stop = interrupted_ ? "the run was interrupted before this config ran"
                  : now >= rules_.budget_deadline
                      ? "the tuning budget was spent before this config ran"
                  : !worker_failure.empty() ? "no benchmark worker is left: " + worker_failure
                  : workers.empty()         ? "no benchmark device could be opened"
                                            : "no benchmark worker is left (every one hung)";
  }
  // (4) The next moment a rule can fire without any worker saying so: the
  // earliest deadline of a config measuring now, the budget, or one
  // deadline from now (a config that starts after this check).
  orders.next_check = now + rules_.bench_deadline;
  if (!stopping_) orders.next_check = std::min(orders.next_check, rules_.budget_deadline);
  if (!stopping_ && rules_.interrupted)
    orders.next_check = std::min(orders.next_check, now + rules_.interrupt_poll);
  for (const WorkerWatch& w : workers) {
    if (w.alive && !w.keeps_deadline && w.busy_since) {
      orders.next_check = std::min(orders.next_check, *w.busy_since + rules_.bench_deadline);
    }
  }
  return orders;
}

}  // namespace kiln::internal
