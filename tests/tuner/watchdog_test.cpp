// The watchdog's rules, one at a time: it decides from the workers' state
// and the time alone, so each rule is checked with exact times and no
// thread, sleep or timing.
#include "watchdog.hpp"

#include <gtest/gtest.h>

namespace kiln::internal {
namespace {

// `s` seconds after an arbitrary start.
WatchClock::time_point watch_time(int s) {
  return WatchClock::time_point() + std::chrono::hours(1) + std::chrono::seconds(s);
}

WatchRules two_second_rules() {
  WatchRules r;
  r.bench_deadline = std::chrono::seconds(2);
  r.bench_deadline_seconds = 2;
  return r;
}

WorkerWatch busy_thread(int slot, WatchClock::time_point since) {
  WorkerWatch w;
  w.slot = slot;
  w.busy_since = since;
  return w;
}

TEST(Watchdog, AThreadPastItsDeadlineIsAbandonedAndReplaced) {
  Watchdog dog(two_second_rules());
  std::vector<WorkerWatch> workers = {busy_thread(0, watch_time(0)), busy_thread(1, watch_time(1))};
  WatchOrders early = dog.check(watch_time(1), workers, "");
  EXPECT_TRUE(early.abandon.empty());
  EXPECT_FALSE(early.acted());
  EXPECT_EQ(early.next_check, watch_time(2)) << "the first deadline, not a poll";

  WatchOrders late = dog.check(watch_time(2), workers, "");
  EXPECT_EQ(late.abandon, std::vector<int>{0});
  EXPECT_EQ(late.replace, std::vector<int>{0});
  EXPECT_FALSE(late.stop.has_value()) << "a successor takes the slot";
  EXPECT_NE(dog.timeout_reason().find("deadline of 2.0"), std::string::npos);
}

// The caller's interrupt (Python's Ctrl-C) is asked at every check, and the
// run waits no longer than the poll for it; once it says so, the run stops
// and it is not asked again.
TEST(Watchdog, AnInterruptStopsTheRunAndIsPolledWhileWaiting) {
  WatchRules rules = two_second_rules();
  int asked = 0;
  bool pressed = false;
  rules.interrupted = [&] {
    ++asked;
    return pressed;
  };
  Watchdog dog(rules);
  const std::vector<WorkerWatch> workers = {busy_thread(0, watch_time(0))};
  WatchOrders quiet = dog.check(watch_time(0), workers, "");
  EXPECT_FALSE(quiet.acted());
  EXPECT_EQ(quiet.next_check, watch_time(0) + rules.interrupt_poll) << "polls, not the deadline";
  EXPECT_FALSE(dog.interrupted());
  pressed = true;
  WatchOrders stop = dog.check(watch_time(0), workers, "");
  ASSERT_TRUE(stop.stop.has_value());
  EXPECT_NE(stop.stop->find("interrupted"), std::string::npos) << *stop.stop;
  EXPECT_TRUE(dog.interrupted());
  EXPECT_TRUE(dog.stopping());
  dog.check(watch_time(1), workers, "");
  EXPECT_EQ(asked, 2) << "not asked again once stopping";
}

TEST(Watchdog, AWorkerProcessKeepsItsOwnDeadline) {
  Watchdog dog(two_second_rules());
  WorkerWatch process = busy_thread(0, watch_time(0));
  process.keeps_deadline = true;
  WatchOrders o = dog.check(watch_time(60), {process}, "");
  EXPECT_TRUE(o.abandon.empty());
  EXPECT_FALSE(o.acted());
}

TEST(Watchdog, AHungWorkerOnTheCallersDeviceIsNotReplacedAndTheRunStops) {
  Watchdog dog(two_second_rules());
  WorkerWatch home = busy_thread(0, watch_time(0));
  home.replaceable = false;
  WatchOrders o = dog.check(watch_time(3), {home}, "");
  EXPECT_EQ(o.abandon, std::vector<int>{0});
  EXPECT_TRUE(o.replace.empty());
  ASSERT_TRUE(o.stop.has_value());
  EXPECT_EQ(*o.stop, "no benchmark worker is left (every one hung)");
}

TEST(Watchdog, NoWorkerProcessStartedFallsBackToThreadsOnce) {
  WatchRules rules = two_second_rules();
  rules.may_fall_back = true;
  Watchdog dog(rules);
  WorkerWatch dead;
  dead.alive = false;
  WatchOrders first = dog.check(watch_time(0), {dead}, "no kiln-bench-worker");
  EXPECT_TRUE(first.fall_back);
  EXPECT_FALSE(first.stop.has_value());
  // The thread workers could not start either: the run stops, saying why.
  WatchOrders second = dog.check(watch_time(0), {dead}, "cannot open cpu:1");
  EXPECT_FALSE(second.fall_back);
  ASSERT_TRUE(second.stop.has_value());
  EXPECT_EQ(*second.stop, "no benchmark worker is left: cannot open cpu:1");
  EXPECT_TRUE(dog.stopping());
}

TEST(Watchdog, WithoutFallBackNoWorkerStopsTheRun) {
  Watchdog dog(two_second_rules());
  WatchOrders none = dog.check(watch_time(0), {}, "");
  ASSERT_TRUE(none.stop.has_value());
  EXPECT_EQ(*none.stop, "no benchmark device could be opened");
  EXPECT_FALSE(dog.check(watch_time(0), {}, "").stop.has_value()) << "a run stops once";
}

TEST(Watchdog, TheBudgetStopsTheRunAndStopsReplacement) {
  WatchRules rules = two_second_rules();
  rules.budget_deadline = watch_time(5);
  Watchdog dog(rules);
  WorkerWatch idle;
  WatchOrders before = dog.check(watch_time(4), {idle}, "");
  EXPECT_FALSE(before.stop.has_value());
  EXPECT_EQ(before.next_check, watch_time(5)) << "wakes for the budget";
  WatchOrders spent = dog.check(watch_time(5), {busy_thread(0, watch_time(4))}, "");
  ASSERT_TRUE(spent.stop.has_value());
  EXPECT_EQ(*spent.stop, "the tuning budget was spent before this config ran");
  // Stopping: a config that hangs now is still abandoned, not replaced.
  WatchOrders after = dog.check(watch_time(7), {busy_thread(0, watch_time(4))}, "");
  EXPECT_EQ(after.abandon, std::vector<int>{0});
  EXPECT_TRUE(after.replace.empty());
  EXPECT_FALSE(after.stop.has_value());
}

}  // namespace
}  // namespace kiln::internal
