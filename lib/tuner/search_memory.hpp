// What earlier tunings tell a new one (docs/autotuning.md, "Across tunings:
// warm start, finalists, remembered failures"):
// - warm start: the configs that won for neighbouring problems of the same
//   kernel (other shapes in the tuning cache), nearest first, then what
//   other devices found fast for it (kiln/tuner/warm_start.hpp), are
//   measured first, right after the default. A good config measured early also
//   sharpens early stop for everything after it;
// - remembered failures: configs that failed in an earlier tuning of this
//   very problem here (FailedConfigs) are not compiled again while the
//   failure stands (failure_evidence.hpp); the strategy hears of them as
//   failed, so it steers away as if it had measured them. A retune
//   measures them again.
// The search driver (search_run.cpp) applies both through MemoryRules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
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
  // Configs that failed before and still stand, by Config::key().
  std::map<std::string, FailedConfig> failed_before;
  // Remembered failures that no longer stand, and why (measured again).
  std::vector<ForgottenFailure> forgotten;
};

// How far apart two problems of one kernel are: over the tensors both
// have, the sum of |log2(a / b)| over their extents (512 to 1024 is 1, as
// is 1024 to 2048: tiles that suit a size suit its double about as well as
// its half), the same over integer scalars, and 8 for each tensor or
// scalar that only one has or whose dtype or rank differs. 0: the same
// shapes. Non-negative and symmetric.
double problem_distance(const ProblemKey& a, const ProblemKey& b);

// The records of `records` for problems of `problem`'s kernel and of
// `present.definition`, tuned on `present.device` (arch and name), whose
// winner `space` holds, nearest first by problem_distance (ties by the
// problem's text, so the order is stable). The problem itself counts too.
std::vector<const TuningRecord*> nearest_records(const std::vector<TuningRecord>& records,
                                                 const ProblemKey& problem,
                                                 const TuningIdentity& present,
                                                 const ConfigSpace& space);

// The winners of `records` for problems of `problem`'s kernel and of
// `present.definition` (an edited kernel may rank configs otherwise: its
// old winners stand for another kernel) tuned on `present.device` (arch and
// name), nearest first by problem_distance (ties by the problem's text, so
// the order is stable), each config once, only configs `space` holds, at
// most `count`. The problem itself counts too (distance 0): a retune starts
// from the last winner.
std::vector<Config> neighbour_winners(const std::vector<TuningRecord>& records,
                                      const ProblemKey& problem, const TuningIdentity& present,
                                      const ConfigSpace& space, std::size_t count);

// Whether a failure of this kind is the config's own and would repeat: a
// compile error, a load or launch error, a crash, a hang, wrong output.
// Cancelled and pruned configs never ran, so they are not remembered.
bool remembered_outcome(Outcome outcome);
// The failures among `measurements` worth remembering (remembered_outcome),
// each with the first 500 characters of why, the time now, and for a
// compile failure what its log says it depended on (add_compile_evidence,
// over `include_dirs` and `cwd`).
std::vector<FailedConfig> failures_to_remember(const std::vector<Measurement>& measurements,
                                               const std::vector<std::string>& include_dirs = {},
                                               const std::filesystem::path& cwd = {});

// What one run changes in its key's failures: its failures, the configs it
// ran, those it skipped and those it forgot; with `retune`, the run's
// failures replace what was remembered.
FailureUpdate failure_update(const std::vector<Measurement>& measurements,
                             std::vector<FailedConfig> failed, const SearchMemory& memory,
                             const std::vector<FailedConfig>& skipped, bool retune);

// The failures `failures` remembers for `key` that still stand at `now`
// (failure_gone; the rest in `memory.forgotten`). `retune` recalls none:
// every config is measured again.
void recall_failures(SearchMemory& memory, const FailedConfigs& failures, const FailureKey& key,
                     bool retune, std::int64_t now);

// The memory one tuning starts with: up to `warm_start` seeds from the
// records of `tunings` (null: none), from `key`'s device and, as `devices`
// allows, others (warm_start_seeds, with spares: recall_seeds), and the
// failures `failures` remembers for `key` that still stand (recall_failures;
// none with `retune`).
SearchMemory recall_memory(const TuningCache* tunings, const FailedConfigs& failures,
                           const FailureKey& key, const ConfigSpace& space, std::size_t warm_start,
                           WarmStartDevices devices = WarmStartDevices::kAny, bool retune = false);

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
  // Those configs, each once, with what was remembered of them.
  const std::vector<FailedConfig>& skipped_configs() const { return skipped_configs_; }
  // Remembered failures that no longer stood when the run began.
  const std::vector<ForgottenFailure>& forgotten() const { return memory_.forgotten; }
  // Seeds measured so far (their results fed back).
  std::size_t seeds_measured() const { return seed_results_.size(); }

 private:
  SearchMemory memory_;
  std::vector<Config> seeds_;                                  // filtered, in order
  std::map<std::string, std::optional<double>> seed_results_;  // by to_string, once measured
  std::set<std::string> seed_texts_;
  bool seeds_taken_ = false;
  std::size_t skipped_ = 0;
  std::vector<FailedConfig> skipped_configs_;
  std::set<std::string> skipped_texts_;
};

}  // namespace kiln::internal
