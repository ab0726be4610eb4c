// Priors bias, never confine (docs/autotuning.md, "Searches", "Priors and
// plateaus"): a space whose optimum lies outside the rule hybrid prefers
// (blocks of whole warps) is still found, because a share of the proposals
// always comes from outside the rule, and grows at a plateau.
// The space is the case that broke the hard cut: a 2D convolution whose
// fastest block is 4 threads wide and 32 high.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "search/internal/search_internal.hpp"
#include "search_drive.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

// 8 x 6 x 4 x 4 x 4 x 2 = 6,144 cartesian configs, 5,184 within 1024
// threads a block; the whole-warp rule keeps 1,152 of them, over a tenth,
// so hybrid applies it, for its first 3% (155 configs).
ConfigSpace off_warp_space() {
  ConfigSpace s;
  s.param("block_size_x", {1, 2, 4, 8, 16, 32, 64, 128})
      .param("block_size_y", {1, 2, 4, 8, 16, 32})
      .param("tile_size_x", {1, 2, 3, 4})
      .param("tile_size_y", {1, 2, 3, 4})
      .param("unroll", {1, 2, 4, 8})
      .param("use_shmem", {0, 1});
  s.constraint("threads", [](const Config& c) {
    return c.get_int("block_size_x") * c.get_int("block_size_y") <= 1024;
  });
  return s;
}

// A smooth off_warp_bowl in log2 of the block's sides and in the tiles, lowest at
// (4, 32, 2, 2): the best whole-warp block (32 wide) is 1.35x slower.
std::optional<double> off_warp_bowl(const Config& c) {
  const double x = std::log2(static_cast<double>(c.get_int("block_size_x")));
  const double y = std::log2(static_cast<double>(c.get_int("block_size_y")));
  const double tx = static_cast<double>(c.get_int("tile_size_x"));
  const double ty = static_cast<double>(c.get_int("tile_size_y"));
  const double u = std::log2(static_cast<double>(c.get_int("unroll")));
  return 1.0 + 0.1 * (x - 2) * (x - 2) + 0.05 * (y - 5) * (y - 5) + 0.1 * std::abs(tx - 2) +
         0.1 * std::abs(ty - 2) + 0.05 * std::abs(u - 1) +
         0.1 * static_cast<double>(c.get_int("use_shmem"));
}

TEST(HybridPlateau, AnOptimumOutsideThePreferredRuleIsFound) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  const ConfigSpace space = off_warp_space();
  // A hard cut spends the first 3% of the space (155 configs) on
  // whole-warp blocks alone and has 1/1.35 = 0.74 of the optimum by then;
  // soft, the median seed has an 8 x 32 block (off the rule, 0.91) by 3%,
  // and the optimum within 8% of the space (400 configs).
  const std::size_t budget = 400;
  std::vector<double> reached;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto hybrid = find_search_strategy("hybrid")->make(test::search_setup(space, budget, seed));
    double best = 1e300;
    for (const Config& c : test::drive_in_flight(*hybrid, off_warp_bowl, 3))
      best = std::min(best, *off_warp_bowl(c));
    reached.push_back(1.0 / best);
  }
  std::sort(reached.begin(), reached.end());
  EXPECT_GE(reached[1], 0.95) << "median fraction of the optimum over 3 seeds";
}

bool on_rule(const Config& c) {
  return c.get_int("block_size_x") % 32 == 0 &&
         (c.get_int("block_size_x") * c.get_int("block_size_y")) % 64 == 0;
}

// Proposals off the whole-warp rule among each `window` of a run of
// `budget` configs driven against `time`.
std::vector<std::size_t> off_rule_per_window(SearchStrategy& search, const test::TimeFn& time,
                                             std::size_t window) {
  std::vector<std::size_t> off;
  std::size_t i = 0;
  for (const Config& c : test::drive_in_flight(search, time, 3)) {
    if (i++ % window == 0) off.push_back(0);
    off.back() += !on_rule(c);
  }
  return off;
}

// Inside the rule's part (the first 3% of the space, 155 configs), the
// default hybrid still proposes blocks off the rule; its parts alone
// (no outside share) propose none.
TEST(HybridPlateau, TheRuleBiasesProposalsAndNeverConfinesThem) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  const ConfigSpace space = off_warp_space();
  const SearchSetup setup = test::search_setup(space, 120, 3);
  auto soft = find_search_strategy("hybrid")->make(setup);
  auto hard = internal::make_hybrid_search(setup, {});
  std::size_t soft_off = 0, hard_off = 0;
  for (std::size_t n : off_rule_per_window(*soft, off_warp_bowl, 120)) soft_off += n;
  for (std::size_t n : off_rule_per_window(*hard, off_warp_bowl, 120)) hard_off += n;
  EXPECT_EQ(hard_off, 0u) << "the parts alone propose only whole-warp blocks";
  EXPECT_GE(soft_off, 1u + 120 / 32) << "at least the outside share, from the first batch";
  EXPECT_LT(soft_off, 60u) << "the rule still weights the proposals";
}

// Where nothing improves (every config as fast as the default), each
// plateau doubles the outside share: later windows hold more proposals
// off the rule than the first.
TEST(HybridPlateau, APlateauGrowsTheOutsideShare) {
  KILN_SKIP_UNDER_TSAN("one thread's model arithmetic");
  const ConfigSpace space = off_warp_space();
  const test::TimeFn flat = [](const Config&) -> std::optional<double> { return 1.0; };
  auto hybrid = find_search_strategy("hybrid")->make(test::search_setup(space, 150, 3));
  const std::vector<std::size_t> off = off_rule_per_window(*hybrid, flat, 50);
  ASSERT_EQ(off.size(), 3u);
  EXPECT_GT(off[2], off[0]) << "off the rule, per 50 proposals: " << off[0] << ", " << off[1]
                            << ", " << off[2];
  EXPECT_GE(off[2], 10u) << "past three plateaus the share is at least a quarter";
}

}  // namespace
}  // namespace kiln
