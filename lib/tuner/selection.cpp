#include "kiln/tuner/selection.hpp"

#include <algorithm>

namespace kiln {

std::optional<Selection> select_winner(const std::vector<Measurement>& measurements,
                                       const SelectionPolicy& policy) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    if (!measurements[i].ok()) continue;
    if (!best || measurements[i].stats.median < measurements[*best].stats.median) best = i;
  }
  if (!best) return std::nullopt;

  Selection s;
  s.best_median = measurements[*best].stats.median;
  // The band is the best measurement's own noise, clamped: a quiet
  // measurement still tolerates min_noise, a wild one cannot tie everything.
  s.band = std::clamp(measurements[*best].stats.spread, policy.min_noise, policy.max_noise);
  double limit = s.best_median * (1.0 + s.band);
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    if (measurements[i].ok() && measurements[i].stats.median <= limit) s.tied.push_back(i);
  }

  auto preferred = std::find_if(s.tied.begin(), s.tied.end(), [&](std::size_t i) {
    return policy.prefer && measurements[i].config == *policy.prefer;
  });
  if (preferred != s.tied.end()) {
    s.winner = *preferred;
  } else {
    s.winner = *std::min_element(s.tied.begin(), s.tied.end(), [&](std::size_t a, std::size_t b) {
      return measurements[a].config.to_string() < measurements[b].config.to_string();
    });
  }
  return s;
}

}  // namespace kiln
