// Decisions made elsewhere: what this process already holds for a call
// (lookup), and a record the ranks of a job agreed on served for this call
// as if this process had made it (adopt).
#include "kiln/core/error.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/tuner.hpp"
#include "tune_call.hpp"

namespace kiln {

Result<TuneResult> Autotuner::adopt(const TunableKernel& kernel, const ArgList& args,
                                    Device& device, const TuningRecord& record,
                                    const TuneOptions& options) {
  internal::TuneCall call = internal::make_call(kernel, args, device, options, backend_.toolchain);
  // Ranks that declare different spaces cannot share a winner: one outside
  // this rank's space could be a config it cannot build.
  if (!kernel.tmpl.space.contains(record.best)) {
    return make_error(ErrorCode::kInvalidArgument,
                      kernel.tmpl.name + ": the decision agreed by the ranks {" +
                          record.best.to_string() +
                          "} is not in this rank's space; every rank must declare the same "
                          "configs");
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    table_[call.key] = record;
  }
  TuneResult result;
  result.record = record;
  result.stats.cache_hits = 1;
  return internal::served(serve(call, result, record.best, ResultSource::kAgreed), result);
}

std::optional<TuningRecord> Autotuner::lookup(const TunableKernel& kernel, const ArgList& args,
                                              Device& device, const TuneOptions& options) {
  const Options& env = Options::global();
  if (options.cache.retune && options.tune && env.tuning) return std::nullopt;
  internal::TuneCall call = internal::make_call(kernel, args, device, options, backend_.toolchain);
  auto decided = decided_before(call, /*disk=*/!(env.tuning && env.retune));
  if (!decided) return std::nullopt;
  return std::move(decided->first);
}

}  // namespace kiln
