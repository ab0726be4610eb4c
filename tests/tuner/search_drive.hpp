// Driving a search strategy as the tuner's round driver does, for the
// strategy tests: a setup without the driver's default config, then the
// strategy's first round and rounds of 4, each reported before the next.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "kiln/tuner/search.hpp"

namespace kiln::test {

using TimeFn = std::function<std::optional<double>(const Config&)>;

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

}  // namespace kiln::test
