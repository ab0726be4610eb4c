// Driving a search strategy as the tuner's driver does, for the strategy
// tests: a setup without the driver's default config, then the strategy's
// first round and either rounds of 4, each reported before the next, or
// `window` proposals in flight, one more asked for as each is reported.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kiln/search/search.hpp"
#include "search/internal/search_internal.hpp"

namespace kiln::test {

using TimeFn = std::function<std::optional<double>(const Config&)>;

// A registered strategy by name, or one of hybrid's parts ("bayes", "gp"),
// which the registry does not list but the tests drive alone.
inline SearchStrategyInfo strategy_named(const std::string& name) {
  if (name == "bayes") return internal::bayes_strategy();
  if (name == "gp") return internal::gp_strategy();
  return *find_search_strategy(name);
}

inline SearchSetup search_setup(const ConfigSpace& space, std::size_t budget, std::uint64_t seed) {
  SearchSetup setup;
  setup.space = &space;
  setup.max_configs = budget;
  setup.start = space.default_config();
  setup.default_measured = false;
  setup.seed = seed;
  return setup;
}

// Every config measured, in order; at most `rounds` rounds.
inline std::vector<Config> drive_rounds(
    SearchStrategy& search, const TimeFn& time,
    std::size_t rounds = std::numeric_limits<std::size_t>::max()) {
  std::vector<Config> measured;
  std::size_t want = std::max<std::size_t>(4, search.first_round());
  for (; rounds > 0; --rounds, want = 4) {
    std::vector<Config> round = search.next(want);
    if (round.empty()) break;
    for (const Config& c : round) {
      search.report(c, time(c));
      measured.push_back(c);
    }
  }
  return measured;
}

// Every config measured, in order: the first round at once, then one
// proposal asked for each time the oldest in flight is reported, so that
// `window` are in flight (reported in proposal order, one at a time).
inline std::vector<Config> drive_in_flight(SearchStrategy& search, const TimeFn& time,
                                           std::size_t window) {
  std::vector<Config> measured, flight;
  std::vector<Config> first = search.next(std::max(window, search.first_round()));
  flight.insert(flight.end(), first.begin(), first.end());
  bool over = first.empty();
  while (!flight.empty()) {
    const Config c = flight.front();
    flight.erase(flight.begin());
    search.report(c, time(c));
    measured.push_back(c);
    while (!over && flight.size() < window) {
      std::vector<Config> more = search.next(window - flight.size());
      over = more.empty();
      flight.insert(flight.end(), more.begin(), more.end());
    }
  }
  return measured;
}

}  // namespace kiln::test
