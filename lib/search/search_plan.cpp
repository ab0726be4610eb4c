// plan_search: see kiln/search/search_plan.hpp.
#include "kiln/search/search_plan.hpp"

#include <algorithm>
#include <cmath>

#include "kiln/core/config_space.hpp"

namespace kiln {

namespace {

// Spaces up to this cartesian size are counted exactly (a constraint check
// per config: milliseconds).
constexpr std::uint64_t kCountLimit = 1u << 20;

struct EffortRule {
  double share;
  std::size_t at_least, at_most;
};

// quick and default: the share of the space, clamped. On the recorded GPU
// spaces hybrid comes close to the optimum within a smaller share than the
// default's; 3% leaves a margin for spaces harder than those, and the floor
// of 64 lets the search's opening be a small part of it
// (docs/autotuning.md, "The default plan: `--search auto` and `--effort`";
// numbers: docs/benchmarks.md, "Search strategies on recorded GPU
// spaces").
EffortRule rule(SearchEffort effort) {
  return effort == SearchEffort::kQuick ? EffortRule{0.01, 16, 128} : EffortRule{0.03, 64, 512};
}

}  // namespace

std::optional<SearchEffort> parse_search_effort(std::string_view text) {
  if (text == "quick") return SearchEffort::kQuick;
  if (text == "default") return SearchEffort::kDefault;
  if (text == "full") return SearchEffort::kFull;
  return std::nullopt;
}

const char* search_effort_name(SearchEffort effort) {
  switch (effort) {
    case SearchEffort::kQuick:
      return "quick";
    case SearchEffort::kFull:
      return "full";
    case SearchEffort::kDefault:
      break;
  }
  return "default";
}

std::size_t effort_budget(std::uint64_t space_size, SearchEffort effort) {
  if (effort == SearchEffort::kFull) return 0;
  const EffortRule r = rule(effort);
  const auto share = static_cast<std::size_t>(std::ceil(r.share * static_cast<double>(space_size)));
  return std::clamp(share, r.at_least, r.at_most);
}

SearchPlan plan_search(std::uint64_t space_size, SearchEffort effort, std::size_t max_configs) {
  const std::size_t budget = max_configs ? max_configs : effort_budget(space_size, effort);
  if (budget == 0 || budget >= space_size) return {"exhaustive", 0};
  return {std::string(kPlannedModelSearch), budget};
}

std::uint64_t planning_size(const ConfigSpace& space) {
  const std::uint64_t cartesian = space.cartesian_size();
  return cartesian <= kCountLimit ? space.size() : cartesian;
}

}  // namespace kiln
