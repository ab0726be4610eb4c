// kiln.autotune across ranks: one decision for every rank of the process's
// collective (kiln.set_collective).
#include <optional>

#include "kiln/core/hash.hpp"
#include "kiln/distributed/distributed_tune.hpp"
#include "py_collective.hpp"

namespace kiln::py {

Result<TuneResult> tune_with_ranks(Runtime& rt, const TunableKernel& kernel, const ArgList& args,
                                   const std::string& key, const TuneOptions& options) {
  SharedCollective shared = shared_collective();
  if (!shared.collective) return rt.tuner->tune(kernel, args, rt.device(), options);
  // What the ranks compare before measuring: the kernel, its definition
  // (template, space) and the call's key (shapes, dtypes, key scalars).
  const std::string problem = kernel.tmpl.name + " definition " + definition_hash(kernel).hex() +
                              " key " + hash128(key).hex();
  // This rank's own part (its shard, all, or nothing under broadcast but
  // on rank 0): what it measured stays this rank's to report.
  std::optional<KernelStats> own_stats;
  std::vector<Measurement> own_measurements;
  RankTune alone = [&](const TuneOptions& o) {
    Result<TuneResult> r = rt.tuner->tune(kernel, args, rt.device(), o);
    if (r.ok()) {
      own_stats = r->stats;
      own_measurements = r->measurements;
    }
    return r;
  };
  RankLookup known = [&] { return rt.tuner->lookup(kernel, args, rt.device(), options); };
  Result<DistributedOutcome> agreed = tune_distributed(*shared.collective, shared.strategy, options,
                                                       *rt.tunings, alone, problem, known);
  if (!agreed.ok()) return agreed.error();
  Result<TuneResult> adopted = rt.tuner->adopt(kernel, args, rt.device(), agreed->record, options);
  if (adopted.ok() && own_stats) {
    // The lookup was this rank's own (a hit or a miss), not the adoption's.
    adopted->stats.cache_hits = 0;
    adopted->stats.merge(*own_stats);
    adopted->measurements = std::move(own_measurements);
  }
  return adopted;
}

}  // namespace kiln::py
