// Where a warm start's seeds come from (docs/autotuning.md, "Across
// tunings: warm start, finalists, remembered failures"):
// configs that earlier tunings in the tuning records found fast, measured
// first by a new tuning, before anything its strategy proposes.
//
// First the winners of neighbouring problems of the kernel on this very
// device (other shapes, nearest first). Then, when there is room left, what
// other devices found fast for the same kernel: a shared cache (the Redis
// tier, an imported file) holds other GPUs' tunings, and a new GPU's tuning
// can start from them. What that is worth depends on the devices: another
// GPU's winners may be close to this one's optimum or far from it
// (docs/autotuning.md, "Across tunings", "Seeds from other devices";
// measured on replays of recorded GPU spaces:
// docs/lab/search-spaces-journal.md, "What the whole space says" and "A
// warm start from other devices").
//
//   auto seeds = warm_start_seeds(cache.records(), problem, identity, space, 3,
//                                 WarmStartDevices::kAny);
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "kiln/cache/tuning_record.hpp"
#include "kiln/core/config_space.hpp"
#include "kiln/core/problem.hpp"
#include "kiln/search/search.hpp"

namespace kiln {

// Which records a warm start reads.
enum class WarmStartDevices {
  kThis,  // this device's (arch and name) only
  kAny,   // this device's first, then other devices' for the rest
};

// "this", "any"; nullopt for anything else.
std::optional<WarmStartDevices> parse_warm_start_devices(std::string_view text);
const char* warm_start_devices_name(WarmStartDevices devices);

// What other devices found fast for `problem`'s kernel. Of each other
// device (arch or name differs from `present.device`), the one record of
// this kernel and of `present.definition` (another kernel source or space
// may rank configs otherwise) whose problem is nearest (problem distance,
// then the problem's text). Each such record ranks configs: its winner
// first, then the configs it measured that ran, fastest first. A config's
// score is its mean rank over those records, a record that did not rank it
// counting it after every config it did, so that a config fast on several
// devices comes before one that won on one alone. Lowest score first, ties
// by the config's text; only configs `space` holds; at most `count`.
std::vector<Config> other_device_winners(const std::vector<TuningRecord>& records,
                                         const ProblemKey& problem, const TuningIdentity& present,
                                         const ConfigSpace& space, std::size_t count);

// What other devices measured of `problem`'s kernel, as a prior for this
// device's times (DevicePrior, kiln/search/search.hpp): of each other device,
// the record other_device_winners reads; a config's score on a device is its
// log time above the device's fastest, clipped at the device's median, a
// failure 0.5 above the median, a config the device did not measure the
// median; averaged over the devices. Only configs `space` holds. Null where
// no other device measured two configs that ran. The tuner does not pass it
// to the search (docs/autotuning.md, "Seeds from other devices"); `kiln-lab
// bench search --warm-from ... --device-prior` replays with it.
std::shared_ptr<const DevicePrior> other_device_prior(const std::vector<TuningRecord>& records,
                                                      const ProblemKey& problem,
                                                      const TuningIdentity& present,
                                                      const ConfigSpace& space);

// The seeds of a warm start: this device's neighbours' winners (nearest
// problem first; the problem itself counts, so a retune starts from its
// last winner), then, with kAny and fewer than `count` of those,
// other_device_winners for the rest. Each config once, at most `count`.
std::vector<Config> warm_start_seeds(const std::vector<TuningRecord>& records,
                                     const ProblemKey& problem, const TuningIdentity& present,
                                     const ConfigSpace& space, std::size_t count,
                                     WarmStartDevices devices);

}  // namespace kiln
