// The search strategies by name: the registry lists each with a
// description, finds them by name, and its factories make the strategy the
// tuner's round driver runs, with the shared budget rules applied (the
// default measured besides, never proposed by a steered search).
#include <gtest/gtest.h>

#include <set>

#include "kiln/core/error.hpp"
#include "kiln/search/search.hpp"

namespace kiln {
namespace {

ConfigSpace registry_space() {
  ConfigSpace space;
  space.param("A", {1, 2, 3, 4}).param("B", {1, 2, 3, 4});
  space.default_config(Config{{"A", std::int64_t{1}}, {"B", std::int64_t{1}}});
  return space;
}

SearchSetup registry_setup(const ConfigSpace& space, std::size_t max_configs) {
  SearchSetup setup;
  setup.space = &space;
  setup.max_configs = max_configs;
  setup.start = space.default_config();
  setup.seed = 7;
  return setup;
}

TEST(SearchRegistry, ListsEveryStrategyWithADescription) {
  std::vector<std::string> names;
  for (const auto& s : search_strategies()) {
    names.push_back(s.name);
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_TRUE(s.make) << s.name;
    EXPECT_EQ(find_search_strategy(s.name), &s);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"exhaustive", "random", "hybrid"}));
  EXPECT_EQ(search_strategy_names(), "exhaustive, random, hybrid");
  EXPECT_EQ(find_search_strategy("simplex"), nullptr);
  // hybrid's parts are not strategies of their own.
  EXPECT_EQ(find_search_strategy("bayes"), nullptr);
  EXPECT_EQ(find_search_strategy("gp"), nullptr);
  EXPECT_EQ(find_search_strategy(""), nullptr);
}

TEST(SearchRegistry, FactoriesMakeTheNamedStrategy) {
  const ConfigSpace space = registry_space();
  for (const auto& info : search_strategies()) {
    auto strategy = info.make(registry_setup(space, 6));
    ASSERT_NE(strategy, nullptr) << info.name;
    EXPECT_EQ(std::string(strategy->name()), info.name);
    EXPECT_EQ(strategy->steered(), info.name != "exhaustive" && info.name != "random") << info.name;
    EXPECT_EQ(search_is_steered(info.name), strategy->steered()) << info.name;
  }
  EXPECT_FALSE(search_is_steered("simplex"));
  EXPECT_EQ(find_search_strategy("exhaustive")->default_budget, 0u);
  EXPECT_EQ(find_search_strategy("random")->default_budget, 64u);
  EXPECT_EQ(find_search_strategy("hybrid")->default_budget, 64u);
}

// Random through the registry draws what make_random_search draws for the
// same budget and seed: a seed keeps its configs.
TEST(SearchRegistry, RandomDrawsAsItsMakerDoes) {
  const ConfigSpace space = registry_space();
  auto named = find_search_strategy("random")->make(registry_setup(space, 6));
  auto made = make_random_search(space, 6, 7);
  EXPECT_EQ(named->next(100), made->next(100));
}

// A steered strategy never proposes the default the driver measures, and
// proposes max_configs - 1 configs so the run measures max_configs in all.
TEST(SearchRegistry, HybridLeavesTheDefaultToTheDriver) {
  const ConfigSpace space = registry_space();
  SearchSetup setup = registry_setup(space, 6);
  const auto proposals = [&](const SearchSetup& s) {
    auto search = find_search_strategy("hybrid")->make(s);
    std::vector<Config> all;
    for (int round = 0; round < 20; ++round) {
      for (const Config& c : search->next(100)) {
        search->report(c, 1.0 + static_cast<double>(all.size()));
        all.push_back(c);
      }
    }
    return all;
  };
  const std::vector<Config> all = proposals(setup);
  EXPECT_EQ(all.size(), 5u);
  for (const auto& c : all) EXPECT_NE(c, space.default_config());

  setup.default_measured = false;  // pruned for the problem: every slot is a proposal
  EXPECT_EQ(proposals(setup).size(), 6u);
}

// max_configs 1 with the default measured leaves a steered strategy no
// proposal; a budget of 0 must not read as "no limit" (the strategy would
// size its start for an open-ended search and propose on). With 2, one.
TEST(SearchRegistry, ABudgetTheDefaultUsesUpLeavesNothingToPropose) {
  const ConfigSpace space = registry_space();
  for (const auto& info : search_strategies()) {
    if (!info.make(registry_setup(space, 6))->steered()) continue;
    for (const std::size_t budget : {std::size_t{1}, std::size_t{2}}) {
      auto search = info.make(registry_setup(space, budget));
      EXPECT_EQ(std::string(search->name()), info.name);
      std::size_t proposed = 0;
      for (int round = 0; round < 20; ++round) {
        std::vector<Config> batch = search->next(100);
        proposed += batch.size();
        for (const Config& c : batch) search->report(c, 1.0 + static_cast<double>(proposed));
      }
      EXPECT_EQ(proposed, budget - 1) << info.name << " with max_configs " << budget;
    }
  }
}

}  // namespace
}  // namespace kiln
