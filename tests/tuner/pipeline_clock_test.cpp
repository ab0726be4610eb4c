// The pipeline's real clock (kiln/device/clock.hpp): what every
// tuning run that names no clock of its own times its benchmarks on.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kiln/device/clock.hpp"

namespace kiln::internal {
namespace {

using Station = PipelineClock::Station;

TEST(RealClock, ReadsTheSteadyClockAndIsOneForEveryRun) {
  PipelineClock& clock = real_clock();
  EXPECT_EQ(&clock, &real_clock());
  EXPECT_TRUE(clock.measures_real_time());
  // The clock's two readings lie inside the steady clock's two, so its span
  // can be no longer than theirs, however slow the machine (no time bound).
  const auto real_before = std::chrono::steady_clock::now();
  const double before = clock.now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double seconds = clock.now() - before;
  const double real =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - real_before).count();
  EXPECT_GE(seconds, 0.020);
  EXPECT_LE(seconds, real + 1e-9);  // 1e-9: the readings' doubles, rounded
}

// The hand-offs a simulated clock needs change nothing here; spend() is
// time that passes.
TEST(RealClock, HandOffsDoNothingAndSpendSleeps) {
  PipelineClock& clock = real_clock();
  clock.add_workers(Station::kCompile, 2);
  clock.offer(Station::kCompile, 3);
  clock.take(Station::kCompile);
  const double before = clock.now();
  clock.spend(0.02, "a");
  EXPECT_GE(clock.now() - before, 0.02);
  clock.done();
  clock.remove_workers(Station::kCompile, 2);
  const double idle = clock.now();
  clock.spend(0, "b");
  clock.spend(-1, "c");
  EXPECT_LT(clock.now() - idle, 0.5);
}

}  // namespace
}  // namespace kiln::internal
