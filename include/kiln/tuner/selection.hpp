// Choosing the winner deterministically. Timings are noisy: configs whose
// median lies within the measured noise of the best are tied, and a tie is
// broken by a rule that does not depend on the order or the noise of this
// run, so two runs on one machine pick the same config.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "kiln/core/config.hpp"
#include "kiln/tuner/measurement.hpp"

namespace kiln {

struct SelectionPolicy {
  // Ties are never narrower than this relative band around the best median.
  double min_noise = 0.02;
  // Nor wider than this, however noisy the best measurement was.
  double max_noise = 0.10;
  // Preferred when tied: the heuristic default, which needs no tuning to be found.
  std::optional<Config> prefer;
};

struct Selection {
  std::size_t winner = 0;         // index into the measurements
  std::vector<std::size_t> tied;  // every index within the band, winner included
  double band = 0;                // relative band used
  double best_median = 0;         // fastest median seen (may not be the winner's)
};

// nullopt when no measurement is ok. Among the tied: `prefer` if present,
// else the config with the smallest canonical text (Config::to_string).
std::optional<Selection> select_winner(const std::vector<Measurement>& measurements,
                                       const SelectionPolicy& policy = {});

}  // namespace kiln
