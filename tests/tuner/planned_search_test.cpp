// planned_search: the tuner applies the default plan (kiln/search/search_plan.hpp)
// to SearchOptions "auto" only, counting the valid configs of the space.
#include <gtest/gtest.h>

#include "kiln/search/search_plan.hpp"
#include "kiln/tuner/tune_options.hpp"

namespace kiln {
namespace {

ConfigSpace space_of(int xs, int ys) {
  std::vector<Value> a, b;
  for (int i = 0; i < xs; ++i) a.push_back(std::int64_t{i});
  for (int i = 0; i < ys; ++i) b.push_back(std::int64_t{i});
  ConfigSpace space;
  space.param("x", a).param("y", b);
  return space;
}

TEST(SearchPlan, PlannedSearchResolvesAutoAndCountsValidConfigs) {
  ConfigSpace space = space_of(100, 50);  // 5,000 configs
  SearchOptions o;
  o.strategy = std::string(kAutoSearch);
  o.effort = SearchEffort::kQuick;
  SearchOptions p = planned_search(o, space);
  EXPECT_EQ(p.strategy, "hybrid");
  EXPECT_EQ(p.max_configs, 50u);
  // A constraint that keeps 50 configs: the default effort's 64 cover them.
  space.constraint("x<1", [](const Config& c) { return c.get_int("x") < 1; });
  EXPECT_EQ(planning_size(space), 50u);
  EXPECT_EQ(planned_search(o, space).strategy, "hybrid") << "quick: 16 of 50";
  o.effort = SearchEffort::kDefault;
  EXPECT_EQ(planned_search(o, space).strategy, "exhaustive");
  EXPECT_EQ(planned_search(o, space).max_configs, 0u);
  // Any other strategy is left as it is.
  o.strategy = "random";
  o.max_configs = 7;
  p = planned_search(o, space);
  EXPECT_EQ(p.strategy, "random");
  EXPECT_EQ(p.max_configs, 7u);
}

}  // namespace
}  // namespace kiln
