// The search strategies by name. A new strategy is one file that defines a
// SearchStrategy and its SearchStrategyInfo, plus one line in the list below
// (and its declaration in search_internal.hpp).
#include "kiln/search/search.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln {

const std::vector<SearchStrategyInfo>& search_strategies() {
  // exhaustive and hybrid: what the default plan picks (search_plan.hpp).
  // random: the named baseline every search benchmark compares against
  // (`kiln-lab bench search`, docs/autotuning.md), kept selectable for that.
  static const std::vector<SearchStrategyInfo> list = {
      internal::exhaustive_strategy(),
      internal::random_strategy(),
      internal::hybrid_strategy(),
  };
  return list;
}

const SearchStrategyInfo* find_search_strategy(std::string_view name) {
  for (const auto& s : search_strategies()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool search_is_steered(std::string_view name) {
  const SearchStrategyInfo* info = find_search_strategy(name);
  if (!info) return false;
  // Steering is a property of the strategy's object (SearchStrategy::
  // steered), so ask one made for a space of two configs.
  ConfigSpace two;
  two.param("x", {0, 1});
  SearchSetup setup;
  setup.space = &two;
  setup.max_configs = 2;
  setup.start = two.default_config();
  return info->make(setup)->steered();
}

std::string search_strategy_names() {
  std::string names;
  for (const auto& s : search_strategies()) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

}  // namespace kiln
