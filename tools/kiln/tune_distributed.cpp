// kiln tune --distributed: see tune_distributed.hpp.
#include "tune_distributed.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "kiln/distributed/distributed_tune.hpp"

namespace kiln::tool {
namespace {

// KILN_DISTRIBUTED_TIMEOUT_S: how long a collective waits for the slowest rank.
std::chrono::seconds collective_deadline() {
  const char* text = std::getenv("KILN_DISTRIBUTED_TIMEOUT_S");
  if (text && *text) {
    // Up to 30 days: a deadline far past that overflows the clock's
    // nanoseconds (10^10 s wrapped and fired at once, or crashed a rank).
    constexpr long kMost = 30L * 86'400;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && errno != ERANGE && v > 0 && v <= kMost)
      return std::chrono::seconds(v);
    std::fprintf(stderr,
                 "kiln tune: KILN_DISTRIBUTED_TIMEOUT_S=%s is not a positive number of "
                 "seconds up to %ld (30 days); using 3600\n",
                 text, kMost);
  }
  return std::chrono::seconds(3600);
}

// What this rank is asked to tune, as text the ranks compare before
// measuring anything: the kernel, its definition's hash (template, space,
// entry), the shape, the dtype and the backend.
std::string problem_text(const TuneRequest& request) {
  Result<TuneJob> job = [&]() -> Result<TuneJob> {
    try {
      return resolve_tune_request(request);
    } catch (const std::exception& e) {  // parse_shape throws on a bad shape
      return make_error(ErrorCode::kInvalidArgument, e.what());
    }
  }();
  // A request that does not resolve fails in its own tuning, where
  // check_ranks names the rank and why: no text, so it is not compared.
  if (!job) return {};
  std::string shape;
  for (const auto& [name, value] : job->shape)
    shape += (shape.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return "kernel " + job->name + " (definition " + definition_hash(job->kernel).hex() + ") shape " +
         shape + (job->dtype.empty() ? "" : " dtype " + job->dtype) + " backend " + job->backend;
}

// A rank's cached decision, asked of every rank before anyone measures:
// one rank's hit then serves all. Tuning off serves what is cached (or a
// default, which is not a decision).
RankLookup cached_decision(const TuneRequest& request, const TuneOptions& options,
                           const Options& caches) {
  return [&request, options, caches]() -> std::optional<TuningRecord> {
    TuneOptions probe = options;
    probe.tune = false;
    try {
      Result<TuneRun> run = tune_request(request, probe, caches);
      if (run && run->result.record &&
          (run->result.source == ResultSource::kMemory ||
           run->result.source == ResultSource::kDisk))
        return run->result.record;
    } catch (const std::exception&) {
      // The rank's tuning names what is wrong with its request.
    }
    return std::nullopt;
  };
}

}  // namespace

int run_distributed_tune(const TuneRequest& request, const TuneOptions& options,
                         const std::string& strategy_name, bool json) {
  Result<DistributedStrategy> strategy = parse_distributed_strategy(strategy_name);
  if (!strategy) {
    std::fprintf(stderr, "kiln tune: %s\n", strategy.error().message.c_str());
    return 2;
  }
  Result<std::unique_ptr<Collective>> collective = mpi_collective(collective_deadline());
  if (!collective) {
    std::fprintf(stderr, "kiln tune: %s\n", collective.error().message.c_str());
    return 1;
  }
  Collective& world = **collective;
  // Each rank saves into its own tuning file (tuning.rank<N>.json).
  Options caches = Options::global();
  caches.rank = world.rank();
  TuningCache cache(caches);
  RankTune tune = [&](const TuneOptions& o) -> Result<TuneResult> {
    try {
      Result<TuneRun> run = tune_request(request, o, caches);
      if (!run) return run.error();
      // Only the decision's parts leave: the loaded kernel belongs to the
      // run's device, which ends here.
      TuneResult out;
      out.source = run->result.source;
      out.measurements = run->result.measurements;
      out.record = run->result.record;
      out.saved = run->result.saved;
      out.not_saved_reason = run->result.not_saved_reason;
      return out;
    } catch (const std::exception& e) {
      return make_error(ErrorCode::kInternal, e.what());
    }
  };
  Result<DistributedOutcome> outcome = tune_distributed(
      world, *strategy, options, cache, tune, problem_text(request),
      options.cache.retune ? RankLookup() : cached_decision(request, options, caches));
  if (!outcome) {
    std::fprintf(stderr, "kiln tune: rank %d of %d: %s\n", world.rank(), world.size(),
                 outcome.error().message.c_str());
    return 1;
  }
  const DistributedOutcome& o = *outcome;
  nlohmann::json j = {{"rank", world.rank()},
                      {"size", world.size()},
                      {"strategy", strategy_name},
                      {"winner", o.record.best.to_json()},
                      {"best_time_ms", o.record.best_time_ms},
                      {"record_id", o.record.id().hex()},
                      {"record", o.record.to_json()},
                      {"served", o.served},
                      {"benchmarked", o.benchmarked},
                      {"benchmarked_by_rank", o.benchmarked_by_rank},
                      {"collective_seconds", o.collective_seconds},
                      {"saved", o.saved},
                      {"tuning_file", cache.write_path().string()}};
  if (!o.saved) j["not_saved_reason"] = o.not_saved_reason;
  if (json) {
    std::cout << j.dump() << "\n";
  } else {
    std::printf("rank %d/%d (%s): winner %s  %.4f ms  record %s  benchmarked %zu here%s\n",
                world.rank(), world.size(), strategy_name.c_str(),
                o.record.best.to_string().c_str(), o.record.best_time_ms,
                o.record.id().hex().c_str(), o.benchmarked,
                o.saved ? ("  saved in " + cache.write_path().string()).c_str()
                        : ("  not saved: " + o.not_saved_reason).c_str());
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace kiln::tool
