// The search strategies by name. A new built-in strategy is one file that
// defines a SearchStrategy and its SearchStrategyInfo, plus one line in the
// list below (and its declaration in search_internal.hpp); an application's
// is the same file plus one register_search_strategy call.
#include <deque>
#include <mutex>

#include "kiln/core/error.hpp"
#include "kiln/search/search.hpp"
#include "kiln/search/search_plan.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln {

namespace {

// NOTES: a deque, so that registering never moves an entry:
// find_search_strategy hands out pointers that a running tuning keeps.
struct Registry {
  std::mutex mutex;
  // exhaustive and hybrid: what the default plan picks (search_plan.hpp).
  // random: the named baseline every search benchmark compares against
  // (`kiln-lab bench search`, docs/autotuning.md), kept selectable for that.
  std::deque<SearchStrategyInfo> list = {
      internal::exhaustive_strategy(),
      internal::random_strategy(),
      internal::hybrid_strategy(),
  };
};

Registry& registry() {
  static Registry r;
  return r;
}

const SearchStrategyInfo* find_locked(const Registry& r, std::string_view name) {
  for (const auto& s : r.list) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

void register_search_strategy(SearchStrategyInfo info) {
  const auto refuse = [&](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument, "search strategy not registered: " + why);
  };
  if (info.name.empty()) refuse("its SearchStrategyInfo::name is empty; give it a name");
  if (info.name == kAutoSearch)
    refuse("\"auto\" names the default plan (search_plan.hpp); choose another name");
  if (!info.make)
    refuse("\"" + info.name + "\" has no factory; set SearchStrategyInfo::make to a function " +
           "that makes the strategy from a SearchSetup");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (find_locked(r, info.name))
    refuse("\"" + info.name + "\" is registered already (a strategy is never replaced); " +
           "register it once, or give it another name");
  r.list.push_back(std::move(info));
}

SearchStrategyList search_strategies() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const SearchStrategyInfo*> items;
  items.reserve(r.list.size());
  for (const auto& s : r.list) items.push_back(&s);
  return SearchStrategyList(std::move(items));
}

const SearchStrategyInfo* find_search_strategy(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return find_locked(r, name);
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
