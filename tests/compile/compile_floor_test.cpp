// compile_floor: the least time a compile of N configs can take, separated
// from the naive and grouping runs of the same benchmark.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/compile/compile_run.hpp"

namespace {

TEST(CompileFloor, SeparatesTheFrontEndFromTheBackEnds) {
  // F = 1 s, B = 0.5 s, 10 configs: naive 10 x 1.5 = 15 s; grouping in 2
  // programs 2 x 1 + 10 x 0.5 = 7 s. On 2 workers: 1 + 10 x 0.5 / 2 = 3.5 s.
  nlohmann::json f = kiln::compile_floor(15.0, 7.0, 10, 2, 2);
  ASSERT_TRUE(f.is_object()) << f.dump();
  EXPECT_NEAR(f["front_end_seconds"].get<double>(), 1.0, 1e-12);
  EXPECT_NEAR(f["back_end_seconds_per_config"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(f["seconds"].get<double>(), 3.5, 1e-12);
  EXPECT_NEAR(f["speedup_vs_naive"].get<double>(), 15.0 / 3.5, 1e-12);
  EXPECT_EQ(f["workers"], 2);
}

TEST(CompileFloor, MoreWorkersOnlyShareTheBackEnds) {
  nlohmann::json one = kiln::compile_floor(15.0, 7.0, 10, 2, 1);
  nlohmann::json four = kiln::compile_floor(15.0, 7.0, 10, 2, 4);
  EXPECT_NEAR(one["seconds"].get<double>(), 6.0, 1e-12);
  EXPECT_NEAR(four["seconds"].get<double>(), 2.25, 1e-12);
}

TEST(CompileFloor, RunsThatDoNotSeparateTheTwoGiveNoFloor) {
  // Grouping no faster than naive: no front end to share, nothing to say.
  EXPECT_TRUE(kiln::compile_floor(7.0, 7.0, 10, 2, 2).is_null());
  EXPECT_TRUE(kiln::compile_floor(7.0, 8.0, 10, 2, 2).is_null());
  // One program per config: the two runs are the same measurement.
  EXPECT_TRUE(kiln::compile_floor(15.0, 7.0, 2, 2, 2).is_null());
  // A front end larger than a whole naive config: the back end would be
  // negative, so the runs were noise, not a split.
  EXPECT_TRUE(kiln::compile_floor(15.0, 1.0, 10, 2, 2).is_null());
  EXPECT_TRUE(kiln::compile_floor(15.0, 7.0, 10, 2, 0).is_null());
}

}  // namespace
