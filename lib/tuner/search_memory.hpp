// What earlier tunings tell a new one (docs/autotuning.md, "Warm start and
// remembered failures"):
// - warm start: the configs that won for neighbouring problems of the same
//   kernel (other shapes in the tuning cache), nearest first, then what
//   other devices found fast for it (kiln/tuner/warm_start.hpp), are
//   measured first, right after the default. A good config measured early also
//   sharpens early stop for everything after it;
// - remembered failures: configs that failed in an earlier tuning of this
//   very problem here (FailedConfigs) are never compiled again; the
//   strategy hears of them as failed, so it steers away as if it had
//   measured them.
// The search driver (search_run.cpp) applies both through MemoryRules.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/cache/failed_configs.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/cache/tuning_record.hpp"
#include "kiln/tuner/tuner.hpp"
#include "kiln/tuner/warm_start.hpp"

namespace kiln::internal {

struct SearchMemory {
  // Warm start: neighbours' winners, nearest first, then other devices'
  // (warm_start_seeds).
  std::vector<Config> seeds;
  // The seeds measured at most: the first this many of `seeds` that the
  // driver's rules keep (a seed that is the default, failed before or is
  // pruned makes room for the next), so `seeds` may hold spares.
  std::size_t max_seeds = static_cast<std::size_t>(-1);
  // Configs that failed before, by Config::key().
  std::set<std::string> failed_before;
};

// How far apart two problems of one kernel are: over the tensors both
// have, the sum of |log2(a / b)| over their extents (512 to 1024 is 1, as
// is 1024 to 2048: tiles that suit a size suit its double about as well as
// its half), the same over integer scalars, and 8 for each tensor or
// scalar that only one has or whose dtype or rank differs. 0: the same
// shapes. Non-negative and symmetric.
double problem_distance(const ProblemKey& a, const ProblemKey& b);

// The winners of `records` for problems of `problem`'s kernel tuned on
// `device` (arch and name), nearest first by problem_distance (ties by the
// problem's text, so the order is stable), each config once, only configs
// `space` holds, at most `count`. The problem itself counts too (distance
// 0): a retune starts from the last winner.
std::vector<Config> neighbour_winners(const std::vector<TuningRecord>& records,
                                      const ProblemKey& problem, const DeviceIdentity& device,
                                      const ConfigSpace& space, std::size_t count);

// Whether a failure of this kind is the config's own and would repeat: a
// compile error, a load or launch error, a crash, a hang, wrong output.
// Cancelled and pruned configs never ran, so they are not remembered.
bool remembered_outcome(Outcome outcome);
// The failures among `measurements` worth remembering (remembered_outcome),
// each with the first 500 characters of why.
std::vector<FailedConfig> failures_to_remember(const std::vector<Measurement>& measurements);

// The memory one tuning starts with: up to `warm_start` seeds from the
// records of `tunings` (null: none), from `key`'s device and, as `devices`
// allows, others (warm_start_seeds, with spares: recall_seeds), and the
// failures `failures` remembers for `key`.
SearchMemory recall_memory(const TuningCache* tunings, const FailedConfigs& failures,
                           const FailureKey& key, const ConfigSpace& space, std::size_t warm_start,
                           WarmStartDevices devices = WarmStartDevices::kAny);

// Up to `warm_start` seeds for SearchMemory from `records`, with as many
// spares again and one more (the default may be among them, and a config
// that failed before or is pruned is dropped by MemoryRules).
SearchMemory recall_seeds(const std::vector<TuningRecord>& records, const ProblemKey& problem,
                          const TuningIdentity& present, const ConfigSpace& space,
                          std::size_t warm_start, WarmStartDevices devices);

// The driver's side of SearchMemory for one search.
class MemoryRules {
 public:
  // `def`: the default config, which the driver measures itself and is
  // never a seed nor skipped (it is the reference and the baseline).
  MemoryRules(SearchMemory memory, const TunableKernel& kernel, const ProblemKey& problem,
              const Config& def);

  // The seeds for the first round, once: each kept by the kernel's early
  // prune, not the default, not failed before.
  std::vector<Config> take_seeds();
  // Whether the driver drops `proposal` instead of measuring it: a config
  // failed before (reported to `strategy` as failed and counted in
  // skipped()), or a seed already in a round (reported with the seed's
  // result once that is known; in the seed's own round the driver's feed
  // back reports it).
  bool drop(const Config& proposal, SearchStrategy& strategy);
  // A seed's result, as the driver feeds it back.
  void measured(const Config& config, std::optional<double> seconds);
  // Proposals dropped because they failed before.
  std::size_t skipped() const { return skipped_; }
  // Seeds measured so far (their results fed back).
  std::size_t seeds_measured() const { return seed_results_.size(); }

 private:
  SearchMemory memory_;
  std::vector<Config> seeds_;                                  // filtered, in order
  std::map<std::string, std::optional<double>> seed_results_;  // by to_string, once measured
  std::set<std::string> seed_texts_;
  bool seeds_taken_ = false;
  std::size_t skipped_ = 0;
};

}  // namespace kiln::internal
