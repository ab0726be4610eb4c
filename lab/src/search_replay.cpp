// replay_search: see kiln/lab/search_replay.hpp.
#include "kiln/lab/search_replay.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "kiln/search/search.hpp"

namespace kiln {

namespace {

std::unique_ptr<SearchStrategy> make_strategy(const SearchStrategyInfo& info,
                                              const RecordedSpace& recorded,
                                              const std::vector<Config>& listed, std::size_t budget,
                                              std::uint64_t seed,
                                              std::shared_ptr<const DevicePrior> prior) {
  SearchSetup setup;
  setup.space = &recorded.space;
  setup.listed = &listed;
  setup.max_configs = budget;
  setup.start = recorded.space.default_config();
  // Nothing is measured outside the strategy here: a replay has no default
  // config of its own, and the strategy may propose the start itself.
  setup.default_measured = false;
  setup.seed = seed;
  setup.prior = std::move(prior);
  return info.make(setup);
}

// The best time and the cost so far, one config after another.
struct Tally {
  double best = 0;   // ms; 0 while nothing worked
  double spent = 0;  // s
};

// `c` "measured" as recorded: its time (nullopt when it failed or is not
// recorded), the curve's next point.
std::optional<double> measure(const RecordedSpace& recorded, const Config& c, Tally& tally,
                              ReplayCurve& curve) {
  const RecordedConfig* r = recorded.find(c);
  std::optional<double> seconds;
  if (r) {
    tally.spent += (r->compile_ms + r->benchmark_ms) / 1e3;
    if (r->time_ms) {
      seconds = *r->time_ms / 1e3;
      if (tally.best == 0 || *r->time_ms < tally.best) tally.best = *r->time_ms;
    }
  }
  curve.measured.push_back(c);
  curve.fraction.push_back(tally.best > 0 ? recorded.optimum_ms / tally.best : 0.0);
  curve.seconds.push_back(tally.spent);
  return seconds;
}

}  // namespace

Result<ReplayCurve> replay_search(const RecordedSpace& recorded, const std::string& strategy,
                                  std::size_t budget, std::uint64_t seed, SearchPacing pacing,
                                  const std::vector<Config>& warm,
                                  std::shared_ptr<const DevicePrior> prior) {
  const SearchStrategyInfo* info = find_search_strategy(strategy);
  if (!info)
    return make_error(ErrorCode::kInvalidArgument, "unknown search strategy \"" + strategy +
                                                       "\"; use one of " + search_strategy_names());
  // The recorded configs, for a sparse space where drawing by index fails.
  const std::vector<Config> listed = recorded.listed();
  std::unique_ptr<SearchStrategy> search =
      make_strategy(*info, recorded, listed, budget, seed, std::move(prior));
  // One config measured at a time, in proposal order; a one-shot strategy
  // proposes everything at once, a steered one as the tuner's driver asks
  // (search_run.cpp): in rounds, or one more as each result lands.
  const std::size_t window = search->steered() ? pacing.window() : budget;
  ReplayCurve curve;
  Tally tally;
  std::deque<Config> flight;  // proposed, not measured yet
  std::size_t proposed = 0;   // configs put in flight, the seeds included
  bool first = true, over = false;
  // A warm start's seeds go first, as the tuner's driver puts them in its
  // first round (search_run.cpp); the strategy hears each one as it lands,
  // and a proposal of one is not measured again: it hears the seed's time.
  std::set<std::string> seeds;                          // by key
  std::map<std::string, std::optional<double>> landed;  // the seeds measured, by key
  for (const Config& c : warm) {
    if (proposed >= budget || !seeds.insert(c.key()).second) continue;
    flight.push_back(c);
    ++proposed;
  }
  std::size_t idle_asks = 0;  // asks in a row that gave only seeds
  while (curve.fraction.size() < budget) {
    const bool ask =
        pacing.rounds() || !search->steered() ? flight.empty() : flight.size() < window;
    if (ask && !over && proposed < budget) {
      std::size_t want = std::min(window - std::min(window, flight.size()), budget - proposed);
      if (first && search->steered())
        want = std::max(want, std::min(budget, search->first_round()));
      first = false;
      std::vector<Config> next = search->next(want);
      over = next.empty();
      for (Config& c : next) {
        if (seeds.count(c.key())) {
          // Told now when it has landed; else when it lands, below.
          const auto known = landed.find(c.key());
          if (known != landed.end()) search->report(c, known->second);
          continue;
        }
        ++proposed;
        flight.push_back(std::move(c));
      }
      // Proposals that were all seeds leave nothing new: ask again (a
      // strategy proposes each seed once, so this ends).
      idle_asks = flight.empty() && !next.empty() ? idle_asks + 1 : 0;
      if (idle_asks > 0 && idle_asks <= warm.size()) continue;
    }
    if (flight.empty()) break;
    const Config c = std::move(flight.front());
    flight.pop_front();
    const std::optional<double> seconds = measure(recorded, c, tally, curve);
    search->report(c, seconds);
    if (seeds.count(c.key())) landed.emplace(c.key(), seconds);
  }
  return curve;
}

double fraction_after(const ReplayCurve& curve, std::size_t measured) {
  if (curve.fraction.empty() || measured == 0) return 0;
  return curve.fraction[std::min(measured, curve.fraction.size()) - 1];
}

}  // namespace kiln
