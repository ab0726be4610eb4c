// replay_search: see kiln/tuner/search_replay.hpp.
#include "kiln/tuner/search_replay.hpp"

#include <algorithm>

#include "kiln/tuner/search.hpp"

namespace kiln {

Result<ReplayCurve> replay_search(const RecordedSpace& recorded, const std::string& strategy,
                                  std::size_t budget, std::uint64_t seed, std::size_t batch) {
  const SearchStrategyInfo* info = find_search_strategy(strategy);
  if (!info)
    return make_error(ErrorCode::kInvalidArgument, "unknown search strategy \"" + strategy +
                                                       "\"; use one of " + search_strategy_names());
  SearchSetup setup;
  setup.space = &recorded.space;
  setup.max_configs = budget;
  setup.start = recorded.space.default_config();
  // Nothing is measured outside the strategy here: a replay has no default
  // config of its own, and the strategy may propose the start itself.
  setup.default_measured = false;
  setup.seed = seed;
  setup.annealing.budget = budget;
  setup.annealing.seed = seed;
  std::unique_ptr<SearchStrategy> search = info->make(setup);
  const std::size_t round = search->steered() ? (batch ? batch : 4) : budget;
  ReplayCurve curve;
  double best = 0, spent = 0;
  bool first = true;
  while (curve.fraction.size() < budget) {
    std::size_t want = std::min(round, budget - curve.fraction.size());
    if (first && search->steered()) want = std::max(want, std::min(budget, search->first_round()));
    first = false;
    std::vector<Config> next = search->next(want);
    if (next.empty()) break;
    for (const Config& c : next) {
      if (curve.fraction.size() >= budget) break;
      const RecordedConfig* r = recorded.find(c);
      std::optional<double> seconds;
      if (r) {
        spent += (r->compile_ms + r->benchmark_ms) / 1e3;
        if (r->time_ms) {
          seconds = *r->time_ms / 1e3;
          if (best == 0 || *r->time_ms < best) best = *r->time_ms;
        }
      }
      search->report(c, seconds);
      curve.measured.push_back(c);
      curve.fraction.push_back(best > 0 ? recorded.optimum_ms / best : 0.0);
      curve.seconds.push_back(spent);
    }
  }
  return curve;
}

double fraction_after(const ReplayCurve& curve, std::size_t measured) {
  if (curve.fraction.empty() || measured == 0) return 0;
  return curve.fraction[std::min(measured, curve.fraction.size()) - 1];
}

}  // namespace kiln
