// The tuning pass of choose_one: timing one (runner, tactic), and reading a
// persisted decision back against the runners of a call.
#pragma once

#include <atomic>
#include <optional>
#include <span>

#include "kiln/framework/choose_one.hpp"
#include "kiln/tuner/measurement.hpp"

namespace kiln {

struct TacticTuner::Counters {
  std::atomic<std::uint64_t> disk_hits{0}, tuned_profiles{0}, profiled{0}, failed{0}, fallbacks{0},
      skipped{0}, stale{0};
};

namespace internal {

// Times `tactic` of `runner` on `inputs` (warm-up, then repetitions until
// the target time). A run that fails or throws is a failed Measurement
// (kLaunchFailed) with the reason; it never escapes.
Measurement time_tactic(TunableRunner& runner, const ArgList& inputs, int tactic,
                        const TacticTunerOptions& options);

// The persisted form of a decision: {runner: "name@version", tactic: N,
// tactic_name: describe(N)}.
Config decision_config(const TunableRunner& runner, int tactic);
// The entry a record names among `runners`; nullopt when no runner has its
// identity or the runner describes the tactic differently now (stale).
std::optional<TacticTuner::Entry> entry_from_record(const TuningRecord& record,
                                                    std::span<TunableRunner* const> runners);

}  // namespace internal
}  // namespace kiln
