// Early stop's bars alone (StopBars, measure.hpp): where a config's timed
// repetitions end, by how many it has and how fast its fastest was.
#include <gtest/gtest.h>

#include "measure.hpp"

namespace kiln::internal {
namespace {

MeasureOptions defaults() {
  MeasureOptions o;
  o.early_stop = 1.5;
  o.early_stop_reps = 3;
  return o;
}

TEST(StopBars, TheClearlySlowerBarComesDownAFactorPerRepetitionToEarlyStopReps) {
  const MeasureOptions o = defaults();
  const StopBars bars{1.0, false};  // the best median 1 s
  // One repetition: stopped only above 1.5^3 = 3.375x the best.
  EXPECT_FALSE(stop_early(bars, o, 1, 3.3));
  EXPECT_TRUE(stop_early(bars, o, 1, 3.4));
  // Two: above 2.25x.
  EXPECT_FALSE(stop_early(bars, o, 2, 2.2));
  EXPECT_TRUE(stop_early(bars, o, 2, 2.3));
  // Three and on: above 1.5x, or above the best itself: it cannot win.
  EXPECT_TRUE(stop_early(bars, o, 3, 1.6));
  EXPECT_TRUE(stop_early(bars, o, 3, 1.01));
  EXPECT_FALSE(stop_early(bars, o, 3, 0.99));
  EXPECT_FALSE(stop_early(bars, o, 11, 0.99)) << "a config that may win gets every repetition";
}

TEST(StopBars, AScreenEndsEveryConfigAtEarlyStopRepsAndNotBefore) {
  const MeasureOptions o = defaults();
  const StopBars screen{1.0, true};
  EXPECT_FALSE(stop_early(screen, o, 2, 0.5)) << "faster than the best: measured on";
  EXPECT_TRUE(stop_early(screen, o, 3, 0.5)) << "the finalists measure it again";
  // Before any config was measured there is no best, but the screen holds.
  EXPECT_FALSE(stop_early(StopBars{0, true}, o, 2, 7.0));
  EXPECT_TRUE(stop_early(StopBars{0, true}, o, 3, 7.0));
}

TEST(StopBars, UnsetBarsMeasureInFull) {
  const MeasureOptions o = defaults();
  for (int reps = 1; reps < 100; ++reps) EXPECT_FALSE(stop_early(StopBars{}, o, reps, 1e9));
}

}  // namespace
}  // namespace kiln::internal
