// A search strategy replayed on a recorded space (kiln/lab/recorded_space.hpp):
// each proposal "measures" as the file recorded it on its device, so how
// fast a strategy gets close to the best is known without the device. The
// strategy is driven as the tuner drives it (kiln/search/search.hpp,
// SearchPacing: proposals in flight or rounds, when it steers), one config
// measured at a time, without compiling or running anything.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/search/search.hpp"

namespace kiln {

struct ReplayCurve {
  // After the k-th measurement (k = index + 1): optimum / best time so far,
  // 0 while nothing has worked yet. A config the file does not hold counts
  // as a failed measurement.
  std::vector<double> fraction;
  // The recorded compile + benchmark time spent by then, one config after
  // another (seconds).
  std::vector<double> seconds;
  // What was measured, in order: the trace a person reads to see where a
  // search spent its budget (each config's own time is in the recorded space).
  std::vector<Config> measured;
};

// `warm`: a warm start's seeds (kiln/tuner/warm_start.hpp), measured first
// as a tuning measures them, within `budget`; the strategy hears each one
// and a proposal of one is not measured twice. `prior`: other devices'
// times, as a tuning's strategy gets them with its seeds (SearchSetup::prior).
// kInvalidArgument naming the valid strategies when `strategy` is unknown.
Result<ReplayCurve> replay_search(const RecordedSpace& recorded, const std::string& strategy,
                                  std::size_t budget, std::uint64_t seed, SearchPacing pacing = {},
                                  const std::vector<Config>& warm = {},
                                  std::shared_ptr<const DevicePrior> prior = nullptr);

// The best-so-far fraction a curve has reached after `measured` configs
// (its last value when it stopped earlier: the strategy had nothing left).
double fraction_after(const ReplayCurve& curve, std::size_t measured);

}  // namespace kiln
