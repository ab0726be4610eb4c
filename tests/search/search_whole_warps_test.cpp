// The whole-warps prior of the default search (search_whole_warps.hpp):
// which blocks it prefers, the narrowed space, and hybrid searching those
// blocks first, then the whole space, and not at all where the space's
// author plainly did not mean block_size_x to be a warp's row.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "kiln/search/search.hpp"
#include "search/internal/search_internal.hpp"
#include "search/internal/search_whole_warps.hpp"
#include "search_drive.hpp"

namespace kiln {
namespace {

Config block(std::int64_t x, std::int64_t y) {
  return Config{{"block_size_x", x}, {"block_size_y", y}};
}

TEST(WholeWarps, BlocksOfWholeWarpsAreWarpWideRowsAndWholeWavefronts) {
  ConfigSpace space;
  space.param("block_size_x", {16, 32, 48, 64, 96, 128}).param("block_size_y", {1, 2, 4});
  const auto rule = internal::whole_warps_rule(space);
  ASSERT_TRUE(rule);
  EXPECT_TRUE(rule->predicate(block(64, 1)));
  EXPECT_TRUE(rule->predicate(block(32, 2)));   // two warps of one row each
  EXPECT_TRUE(rule->predicate(block(96, 2)));   // 192 threads
  EXPECT_FALSE(rule->predicate(block(32, 1)));  // half a wavefront
  EXPECT_FALSE(rule->predicate(block(96, 1)));  // a wavefront and a half
  EXPECT_FALSE(rule->predicate(block(48, 4)));  // 192 threads, but rows of 48
  EXPECT_FALSE(rule->predicate(block(16, 4)));  // 64 threads, each warp over two rows
}

TEST(WholeWarps, ZCountsTowardTheThreadsAndASpaceWithoutTheNamesHasNoRule) {
  ConfigSpace space;
  space.param("block_size_x", {32}).param("block_size_z", {1, 2});
  const auto rule = internal::whole_warps_rule(space);
  ASSERT_TRUE(rule);
  EXPECT_FALSE(rule->predicate(
      Config{{"block_size_x", std::int64_t{32}}, {"block_size_z", std::int64_t{1}}}));
  EXPECT_TRUE(rule->predicate(
      Config{{"block_size_x", std::int64_t{32}}, {"block_size_z", std::int64_t{2}}}));

  ConfigSpace other;
  other.param("threads", {32, 64}).param("tile", {1, 2});
  EXPECT_FALSE(internal::whole_warps_rule(other));
  ConfigSpace named_text;
  named_text.param("block_size_x", {"wide", "narrow"});
  EXPECT_FALSE(internal::whole_warps_rule(named_text)) << "not an integer parameter";
}

TEST(WholeWarps, TheNarrowedSpaceCutsXsListAndKeepsTheSpacesConstraints) {
  ConfigSpace space;
  space.param("block_size_x", {16, 32, 48, 64}).param("block_size_y", {1, 2, 4});
  space.constraint("threads<=128", [](const Config& c) {
    return c.get_int("block_size_x") * c.get_int("block_size_y") <= 128;
  });
  const auto rule = internal::whole_warps_rule(space);
  ASSERT_TRUE(rule);
  const ConfigSpace narrowed = internal::whole_warps_space(space, *rule);
  const Parameter* x = narrowed.find("block_size_x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->values, (std::vector<Value>{std::int64_t{32}, std::int64_t{64}}));
  std::set<std::string> got;
  for (const Config& c : narrowed.enumerate()) got.insert(c.to_string());
  // 32 x 2, 64 x 1, 64 x 2; 32 x 4 and 64 x 4 pass the rule, and only the
  // first the space's own constraint.
  std::set<std::string> want;
  for (const Config& c : {block(32, 2), block(32, 4), block(64, 1), block(64, 2)})
    want.insert(c.to_string());
  EXPECT_EQ(got, want);
}

// A convolution-like space of 2,560 configs: 80 block shapes (x 16 to 256
// by 16, y 1 to 16), two tiles and a flag. The fastest block is 48 x 2, off
// the rule, with aligned blocks close behind.
ConfigSpace gpu_space() {
  std::vector<Value> widths;
  for (std::int64_t x = 16; x <= 256; x += 16) widths.push_back(x);
  ConfigSpace space;
  space.param("block_size_x", widths)
      .param("block_size_y", {1, 2, 4, 8, 16})
      .param("tile_x", {1, 2, 3, 4})
      .param("tile_y", {1, 2, 3, 4})
      .param("flag", {true, false});
  return space;
}

std::optional<double> gpu_time(const Config& c) {
  const double x = static_cast<double>(c.get_int("block_size_x"));
  const double y = static_cast<double>(c.get_int("block_size_y"));
  const double tx = static_cast<double>(c.get_int("tile_x"));
  const double ty = static_cast<double>(c.get_int("tile_y"));
  return 1.0 + 0.02 * std::abs(x - 48) / 16 + 0.05 * std::abs(std::log2(y) - 1) +
         0.1 * std::abs(tx - 2) + 0.1 * std::abs(ty - 3) + (c.get_bool("flag") ? 0 : 0.3);
}

TEST(WholeWarps, HybridWeightsWholeWarpBlocksFirstThenTheWholeSpace) {
  const ConfigSpace space = gpu_space();
  const auto rule = internal::whole_warps_rule(space);
  ASSERT_TRUE(rule);
  const std::size_t budget = 300, first = 77;  // 3% of 2,560
  // hybrid's parts alone (no outside share: search_plateau_test.cpp) keep
  // to the rule for its 3%; the default lets a share out (below).
  auto hybrid = internal::make_hybrid_search(test::search_setup(space, budget, 11), {});
  const std::vector<Config> got = test::drive_rounds(*hybrid, gpu_time);
  ASSERT_EQ(got.size(), budget);
  std::set<std::string> seen;
  for (const Config& c : got) EXPECT_TRUE(seen.insert(c.to_string()).second) << c.to_string();
  for (std::size_t i = 0; i < first; ++i)
    EXPECT_TRUE(rule->predicate(got[i])) << "proposal " << i << ": " << got[i].to_string();
  std::size_t off = 0;
  double best = 1e300;
  for (std::size_t i = first; i < budget; ++i) off += !rule->predicate(got[i]);
  for (const Config& c : got) best = std::min(best, *gpu_time(c));
  EXPECT_GT(off, 0u) << "the whole space never opened";
  EXPECT_EQ(best, 1.0) << "the fastest block, off the rule, was never found";

  // The default: the rule weights its first 3%, and the fastest block is
  // found by then or soon after.
  auto soft = find_search_strategy("hybrid")->make(test::search_setup(space, budget, 11));
  const std::vector<Config> soft_got = test::drive_rounds(*soft, gpu_time);
  std::size_t on = 0;
  for (std::size_t i = 0; i < first; ++i) on += rule->predicate(soft_got[i]);
  EXPECT_GE(on, first * 3 / 4) << "the rule no longer weights the proposals";
  EXPECT_LT(on, first) << "the rule confines the proposals";
  best = 1e300;
  for (const Config& c : soft_got) best = std::min(best, *gpu_time(c));
  EXPECT_EQ(best, 1.0) << "the fastest block, off the rule, was never found";
}

// Inside the rule, hybrid's gp reads integers by value and place alone: the
// power-of-two codes were to tell aligned blocks from ragged ones, which
// the rule has done (search_hybrid.cpp). After the opening (16 configs,
// the least), its proposals are those of a gp over the narrowed space
// without the codes, told the same configs; a gp with them proposes others.
TEST(WholeWarps, InsideTheRuleGpReadsIntegersWithoutAlignmentCodes) {
  const ConfigSpace space = gpu_space();
  const auto rule = internal::whole_warps_rule(space);
  ASSERT_TRUE(rule);
  const ConfigSpace narrowed = internal::whole_warps_space(space, *rule);
  const std::size_t budget = 64, opening = 16;  // all before 3% of the space (77)
  auto hybrid = internal::make_hybrid_search(test::search_setup(space, budget, 11), {});
  const std::vector<Config> got = test::drive_rounds(*hybrid, gpu_time);
  ASSERT_EQ(got.size(), budget);
  std::vector<std::vector<Config>> runs;
  for (const bool codes : {false, true}) {
    auto gp = internal::make_gp_search(test::search_setup(narrowed, budget, 11), 0, {}, codes);
    for (std::size_t i = 0; i < opening; ++i) gp->report(got[i], gpu_time(got[i]));
    runs.push_back(test::drive_rounds(*gp, gpu_time, (budget - opening) / 4));
  }
  ASSERT_EQ(runs[0].size(), budget - opening);
  EXPECT_TRUE(std::equal(runs[0].begin(), runs[0].end(), got.begin() + opening));
  EXPECT_FALSE(std::equal(runs[1].begin(), runs[1].end(), got.begin() + opening))
      << "with the codes gp picks as without them here: the test tells nothing";
}

// Blocks of whole warps are under a tenth of this space (x runs 1 to 32,
// as in the dedispersion spaces): no prior, and the opening measures blocks
// off the rule from the first configs.
TEST(WholeWarps, NoPriorWhereWholeWarpBlocksAreUnderATenthOfTheSpace) {
  ConfigSpace space;
  std::vector<Value> rows;
  for (std::int64_t y = 8; y <= 256; y += 8) rows.push_back(y);
  space.param("block_size_x", {1, 2, 4, 8, 16, 32})
      .param("block_size_y", rows)
      .param("tile", {1, 2, 3, 4});
  space.constraint("threads<=1024", [](const Config& c) {
    return c.get_int("block_size_x") * c.get_int("block_size_y") <= 1024;
  });
  const auto rule = internal::whole_warps_rule(space);
  ASSERT_TRUE(rule);
  const ConfigSpace narrowed = internal::whole_warps_space(space, *rule);
  ASSERT_LT(narrowed.enumerate().size() * 10, space.enumerate().size());
  auto hybrid = find_search_strategy("hybrid")->make(test::search_setup(space, 40, 2));
  const std::vector<Config> got = test::drive_rounds(*hybrid, [](const Config& c) {
    return std::optional<double>(1.0 + static_cast<double>(c.get_int("tile")));
  });
  std::size_t off = 0;
  for (std::size_t i = 0; i < 16 && i < got.size(); ++i) off += !rule->predicate(got[i]);
  EXPECT_GT(off, 8u);
}

}  // namespace
}  // namespace kiln
