// A prior from other devices (SearchSetup::prior; docs/autotuning.md,
// "Seeds from other devices"): other devices' times of the same kernel
// weight gp's proposals. Where they agree with this device's, the default search finds
// the optimum within a budget the cold search does not reach; where they
// disagree (opposite, or unrelated), it fits the prior's scale to 0 and
// does about as well as cold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "search/internal/gp_search.hpp"
#include "search_drive.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

// 6 x 6 x 4 x 4 x 4 = 2,304 configs, no thread-block names (no whole-warp
// rule): hybrid's opening, then gp.
ConfigSpace prior_space() {
  ConfigSpace s;
  s.param("tile_a", {1, 2, 3, 4, 5, 6})
      .param("tile_b", {1, 2, 3, 4, 5, 6})
      .param("unroll", {1, 2, 4, 8})
      .param("vector", {1, 2, 4, 8})
      .param("stages", {1, 2, 3, 4});
  return s;
}

// A number in [0, 1) fixed per config and `salt`: the part of a config's
// time that its parameters, one at a time, do not explain.
double scatter(const Config& c, std::uint64_t salt) {
  std::uint64_t h = salt * 0x9e3779b97f4a7c15ULL;
  for (const char* p : {"tile_a", "tile_b", "unroll", "vector", "stages"}) {
    h ^= static_cast<std::uint64_t>(c.get_int(p)) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
  return static_cast<double>(h >> 11) / static_cast<double>(1ULL << 53);
}

// This device: a shallow bowl in the tiles and the scatter on top, which
// decides the optimum (up to 2x between configs; its cube root, so that few
// configs are near the fastest).
double log_time_here(const Config& c) {
  const double a = static_cast<double>(c.get_int("tile_a")) - 3.5;
  const double b = static_cast<double>(c.get_int("tile_b")) - 3.5;
  return 0.02 * (a * a + b * b) + 0.7 * std::cbrt(scatter(c, 1));
}

std::optional<double> time_here(const Config& c) {
  return std::exp(log_time_here(c));
}

// A prior as other_device_prior (kiln/tuner/warm_start.hpp) builds it from
// one other device's record of every config: log time above the fastest,
// clipped at the median.
std::shared_ptr<const DevicePrior> prior_of(const ConfigSpace& space,
                                            double (*log_time)(const Config&)) {
  auto prior = std::make_shared<DevicePrior>();
  std::vector<double> logs;
  const std::vector<Config> all = space.enumerate();
  for (const Config& c : all) logs.push_back(log_time(c));
  const double fastest = *std::min_element(logs.begin(), logs.end());
  std::vector<double> sorted = logs;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2),
                   sorted.end());
  const double median = sorted[sorted.size() / 2] - fastest;
  for (std::size_t i = 0; i < all.size(); ++i)
    prior->score.emplace(all[i].key(), std::min(logs[i] - fastest, median));
  prior->unknown = median;
  prior->devices = 1;
  return prior;
}

// Agrees: this device's times with a little of their own scatter.
double log_time_agreeing(const Config& c) {
  return log_time_here(c) + 0.1 * scatter(c, 2);
}
// Opposite: what is fast here is slow there.
double log_time_opposite(const Config& c) {
  return -log_time_here(c);
}
// Unrelated: times of its own.
double log_time_unrelated(const Config& c) {
  return 0.7 * scatter(c, 3);
}

// The median over seeds 1..5 of the fraction of the optimum hybrid reaches
// within `budget` configs, with `prior` (null: cold).
double median_reached(const ConfigSpace& space, std::size_t budget,
                      const std::shared_ptr<const DevicePrior>& prior) {
  double optimum = 1e300;
  for (const Config& c : space.enumerate()) optimum = std::min(optimum, *time_here(c));
  std::vector<double> reached;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    SearchSetup setup = test::search_setup(space, budget, seed);
    setup.prior = prior;
    auto hybrid = find_search_strategy("hybrid")->make(setup);
    double best = 1e300;
    for (const Config& c : test::drive_in_flight(*hybrid, time_here, 3))
      best = std::min(best, *time_here(c));
    reached.push_back(optimum / best);
  }
  std::sort(reached.begin(), reached.end());
  return reached[2];
}

// 46 configs, 2% of the space: the cold median stays short of 0.95 (the
// scatter decides the optimum and the cold model cannot see it); told the
// agreeing device's times, the median seed has the optimum.
TEST(DevicePrior, AgreeingDevicesFindTheOptimumWithinABudgetColdDoesNotReach) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  const ConfigSpace space = prior_space();
  const double cold = median_reached(space, 46, nullptr);
  const double warm = median_reached(space, 46, prior_of(space, log_time_agreeing));
  EXPECT_LT(cold, 0.95) << "the space is meant to be hard cold";
  EXPECT_GE(warm, 0.999) << "cold reached " << cold;
}

// Devices that disagree cost at most 0.05 of the optimum against cold, in
// the median over 5 seeds at 92 configs (4% of the space), where cold
// reaches 0.93. The scale is what keeps them level: fixed at 1 (the prior
// trusted whole) the opposite device took the median to 0.85, and a
// least-squares slope shrunk only by a ridge let the unrelated one take it
// to 0.85 (docs/lab/priors-journal.md, "A prior from other devices").
TEST(DevicePrior, DisagreeingDevicesCostLittleAgainstCold) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  const ConfigSpace space = prior_space();
  const double cold = median_reached(space, 92, nullptr);
  const double opposite = median_reached(space, 92, prior_of(space, log_time_opposite));
  const double unrelated = median_reached(space, 92, prior_of(space, log_time_unrelated));
  EXPECT_GE(opposite, cold - 0.05) << "cold " << cold;
  EXPECT_GE(unrelated, cold - 0.05) << "cold " << cold;
}

// The scale: the slope of this device's times on the prior, never below 0,
// shrunk where the rows are few and scattered.
TEST(DevicePrior, TheScaleFollowsTheDataAndNeverInvertsThePrior) {
  const std::vector<double> p = {0, 1, 2, 3, 4, 5, 6, 7};
  // Scatter that least squares does not see (orthogonal to p): its slope stays 0.1.
  const std::vector<double> scatter_of = {3, -3, -3, 3, 3, -3, -3, 3};
  std::vector<double> same, opposite, noisy;
  for (std::size_t i = 0; i < p.size(); ++i) {
    same.push_back(2 * p[i] + 1);
    opposite.push_back(-p[i]);
    noisy.push_back(0.1 * p[i] + scatter_of[i]);
  }
  EXPECT_NEAR(internal::prior_slope(p, same, 4.0), 2.0, 1e-9);
  EXPECT_EQ(internal::prior_slope(p, opposite, 4.0), 0.0);
  EXPECT_LT(internal::prior_slope(p, noisy, 4.0), 0.1) << "shrunk below the least-squares slope";
  const std::vector<double> level = {1, 1, 1}, rising = {1, 2, 3}, two = {1, 2};
  EXPECT_EQ(internal::prior_slope(level, rising, 4.0), 0.0) << "a constant prior";
  EXPECT_EQ(internal::prior_slope(two, two, 4.0), 0.0) << "too few rows";
}

}  // namespace
}  // namespace kiln
