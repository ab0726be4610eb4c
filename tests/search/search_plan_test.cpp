// plan_search: the default strategy and budget from the size of the space
// and the effort.
#include <gtest/gtest.h>

#include "kiln/search/search_plan.hpp"

namespace kiln {
namespace {

TEST(SearchPlan, EffortBudgetsAreAShareOfTheSpaceClamped) {
  // quick: 1%, 16..128; default: 3%, 64..512; full: all (0).
  EXPECT_EQ(effort_budget(100, SearchEffort::kQuick), 16u);
  EXPECT_EQ(effort_budget(5'000, SearchEffort::kQuick), 50u);
  EXPECT_EQ(effort_budget(1'000'000, SearchEffort::kQuick), 128u);
  EXPECT_EQ(effort_budget(100, SearchEffort::kDefault), 64u);
  EXPECT_EQ(effort_budget(6'552, SearchEffort::kDefault), 197u);  // ceil(196.56)
  EXPECT_EQ(effort_budget(1'000'000, SearchEffort::kDefault), 512u);
  EXPECT_EQ(effort_budget(1'000'000, SearchEffort::kFull), 0u);
}

TEST(SearchPlan, ExhaustiveWhenTheBudgetCoversTheSpaceElseHybrid) {
  EXPECT_EQ(plan_search(60, SearchEffort::kDefault).strategy, "exhaustive");
  EXPECT_EQ(plan_search(60, SearchEffort::kDefault).max_configs, 0u);
  EXPECT_EQ(plan_search(64, SearchEffort::kDefault).strategy, "exhaustive");
  const SearchPlan big = plan_search(4'362, SearchEffort::kDefault);
  EXPECT_EQ(big.strategy, "hybrid");
  EXPECT_EQ(big.max_configs, 131u);
  EXPECT_EQ(plan_search(4'362, SearchEffort::kQuick).max_configs, 44u);
  EXPECT_EQ(plan_search(4'362, SearchEffort::kFull).strategy, "exhaustive");
  EXPECT_EQ(plan_search(0, SearchEffort::kQuick).strategy, "exhaustive");
}

TEST(SearchPlan, MaxConfigsOverridesTheEffortsBudget) {
  const SearchPlan p = plan_search(4'362, SearchEffort::kFull, 40);
  EXPECT_EQ(p.strategy, "hybrid");
  EXPECT_EQ(p.max_configs, 40u);
  EXPECT_EQ(plan_search(30, SearchEffort::kQuick, 40).strategy, "exhaustive");
}

TEST(SearchPlan, EffortNamesRoundTrip) {
  for (auto e : {SearchEffort::kQuick, SearchEffort::kDefault, SearchEffort::kFull})
    EXPECT_EQ(parse_search_effort(search_effort_name(e)), e);
  EXPECT_FALSE(parse_search_effort("fast").has_value());
}

}  // namespace
}  // namespace kiln
