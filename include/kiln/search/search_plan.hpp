// The default search: how many configs a tuning measures and which strategy
// picks them, from the size of the space and an effort level. Chosen by
// measurement on recorded GPU spaces (`kiln-lab bench search`;
// docs/benchmarks.md, "Search strategies on recorded GPU spaces"):
// when the budget covers the space every config is measured (exhaustive);
// else the model-based "hybrid" search (bayes's forest for an opening of
// 0.6% of the space, then gp's Gaussian process), which reaches the optimum
// of a real space in a few percent of it where a random sample does not.
//
//   quick    1% of the space, at least 16 configs and at most 128
//   default  3% of the space, at least 64 configs and at most 512
//   full     every config
//
// SearchOptions::strategy "auto" (the default) asks for this plan; the
// tuner's planned_search (kiln/tuner/tune_options.hpp) applies it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

class ConfigSpace;

enum class SearchEffort { kQuick, kDefault, kFull };

// The strategy name that asks for plan_search's choice.
inline constexpr std::string_view kAutoSearch = "auto";
// The strategy the plan picks when the budget does not cover the space.
inline constexpr std::string_view kPlannedModelSearch = "hybrid";

// "quick", "default", "full"; nullopt for anything else.
std::optional<SearchEffort> parse_search_effort(std::string_view text);
const char* search_effort_name(SearchEffort effort);

// Configs an effort measures in a space of `space_size` configs (0: all).
std::size_t effort_budget(std::uint64_t space_size, SearchEffort effort);

struct SearchPlan {
  std::string strategy;         // a registered strategy: "exhaustive" or "hybrid"
  std::size_t max_configs = 0;  // 0: every config
};

// The plan for a space of `space_size` valid configs: `max_configs` (when
// not 0) overrides the effort's budget; a budget that covers the space
// measures all of it.
SearchPlan plan_search(std::uint64_t space_size, SearchEffort effort, std::size_t max_configs = 0);

// The number of valid configs, counted when the space is small enough to
// enumerate quickly, else its cartesian size (an upper bound: a budget from
// it is never too small).
std::uint64_t planning_size(const ConfigSpace& space);

}  // namespace kiln
