// The decision path of a call: the in-memory table, the tuning cache on
// disk, a tuning run, or the heuristic default, in that order.
#include <chrono>

#include "check_plan.hpp"
#include "finalists.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/failed_configs.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/cache/tuning_journal.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/keys.hpp"
#include "kiln/core/log.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/artifact_source.hpp"
#include "kiln/tuner/selection.hpp"
#include "kiln/tuner/tuner.hpp"
#include "pipeline.hpp"
#include "search_memory.hpp"
#include "search_run.hpp"
#include "tune_call.hpp"
#include "tuning_env.hpp"

namespace kiln {

using internal::CallState;
using internal::served;
using internal::TuneCall;

Autotuner::Autotuner(Backend backend, ArtifactCache* artifacts, TuningCache* tunings)
    : backend_(std::move(backend)), artifacts_(artifacts), tunings_(tunings) {
  if (!backend_.compiler) {
    throw Error(ErrorCode::kInvalidArgument, "Autotuner needs a compiler in its Backend");
  }
}

Autotuner::~Autotuner() = default;

namespace {

// Every failed config with its outcome and the first of its reason, for
// the warning that no config ran correctly.
// `result` once `st` says it was served, else the error.

std::string failure_summary(const std::vector<Measurement>& measurements) {
  std::string reasons;
  for (const auto& m : measurements) {
    if (reasons.size() < 2000)
      reasons += "\n  {" + m.config.to_string() + "}: " + outcome_name(m.outcome) + ": " +
                 failure_gist(m.reason(), 300);
  }
  return reasons;
}

// The record of a tuning run: the winner and every config measured. The
// record is the cache's summary, so a failure keeps its first 500 characters;
// the whole error stays in TuneResult::measurements.
TuningRecord make_record(const ProblemKey& problem, const Hash128& definition,
                         const DeviceIdentity& identity, const ToolchainFingerprint& toolchain,
                         const CompileContext& context, const TuneResult& result) {
  TuningRecord record;
  record.problem = problem;
  record.definition = definition;
  record.device = identity;
  record.toolchain = toolchain;
  record.env = context.env;
  record.best = result.best->config;
  record.best_time_ms = result.best->stats.median * 1e3;
  record.reference = result.reference.name();
  for (const auto& m : result.measurements) {
    MeasuredConfig mc{m.config, m.ok() ? m.stats.median * 1e3 : 0, m.ok(),
                      m.ok() ? "" : outcome_name(m.outcome) + (": " + m.reason().substr(0, 500))};
    // Costs where this tuning paid them: a config pruned or cancelled
    // before its compile has none to tell.
    if (m.compile_seconds > 0) mc.compile_ms = m.compile_share_seconds() * 1e3;
    if (m.benchmark_seconds > 0) mc.benchmark_ms = m.benchmark_seconds * 1e3;
    record.measured.push_back(std::move(mc));
  }
  return record;
}

// A tuning run's measurements and what their outputs were checked against.
struct SearchRun {
  internal::PipelineOutput out;
  ReferenceReport reference;
};

// What the pipeline runs on: the call, its checking plan and where its
// benchmarks run; the budget counts from when the call started.
internal::PipelineInputs pipeline_inputs(const TuneCall& call, const Backend& backend,
                                         ArtifactCache* artifacts, const CallState& state,
                                         const internal::Checking& checking,
                                         internal::BenchPlan plan,
                                         std::chrono::steady_clock::time_point started) {
  const TuneOptions& opt = call.options;
  internal::PipelineInputs in;
  in.kernel = call.kernel;
  in.args = call.args;
  in.state = state;
  in.reference = checking.reference;
  in.judge = checking.judge;
  in.options = opt;
  in.backend = backend;
  in.plan = std::move(plan);
  in.context = call.context;
  in.artifacts = artifacts;
  in.home = &call.device;
  in.trace = std::make_shared<TraceRecorder>();
  if (opt.pipeline.budget_seconds > 0) {
    in.deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(opt.pipeline.budget_seconds));
  }
  return in;
}

void log_forgotten(const TuneCall& call, const internal::SearchMemory& memory) {
  for (const auto& f : memory.forgotten) {
    KILN_LOG(kInfo) << call.kernel.tmpl.name << ": {" << f.failure.config.to_string()
                    << "} failed before (" << f.failure.outcome
                    << ") and is measured again: " << f.why;
  }
}

// Outputs judged after the run: the verdicts the default's outputs did not
// settle during it come from the consensus now.
void judge_outputs(const internal::Checking& checking, SearchRun& run) {
  if (checking.judge) {
    run.reference = checking.judge->finish();
    internal::apply_verdicts(checking.judge->wrong(), run.out.measurements, run.out.stats);
  } else {
    run.reference = checking.report;
  }
}

// An interrupted run remembers no failures: what the interruption cut
// short is not the config's fault.
void remember_failures(const TuneCall& call, const SearchRun& run, FailedConfigs& failures,
                       const FailureKey& failure_key, const internal::SearchMemory& memory) {
  if (!call.options.cache.save || run.out.interrupted) return;
  std::error_code ec;
  Status kept = failures.update(
      failure_key, internal::failure_update(run.out.measurements,
                                            internal::failures_to_remember(
                                                run.out.measurements, call.kernel.tmpl.include_dirs,
                                                std::filesystem::current_path(ec)),
                                            memory, run.out.skipped, call.retune));
  if (!kept.ok())
    KILN_LOG(kWarn) << call.kernel.tmpl.name
                    << ": failed configs not remembered: " << kept.error().describe();
}

// The search through the pipeline, its outputs judged, and the caller's
// tensors restored; what earlier tunings remember seeds and filters it,
// and its failures are remembered in turn (search_memory.hpp).
Result<SearchRun> run_search(const TuneCall& call, const Backend& backend, ArtifactCache* artifacts,
                             TuningCache* tunings) {
  const TuneOptions& opt = call.options;
  auto started = std::chrono::steady_clock::now();
  // Where benchmarks run, before anything runs: arguments that cannot go
  // where they are asked to, or a named worker that does not answer, are
  // this call's error.
  auto plan = internal::plan_benchmarks(backend.bench, call.args, call.device, opt.hooks.any());
  if (!plan.ok()) return plan.error();
  auto state = CallState::capture(call.device, call.kernel, call.args);
  if (!state.ok()) return state.error();
  internal::Checking checking =
      internal::plan_checking(call.kernel, call.args, call.device, *state, opt, call.problem);
  internal::PipelineInputs in =
      pipeline_inputs(call, backend, artifacts, *state, checking, std::move(*plan), started);
  ProgressBar progress(call.kernel.tmpl.name, 0, stderr, opt.pipeline.progress);
  auto trace = in.trace;
  const FailureKey failure_key{
      call.problem,
      TuningIdentity{call.definition, call.identity, backend.toolchain, call.context.env},
      in.plan.cpu_threads};
  // NOTES: ranks that share a search (shard_count > 1) must propose the
  // same rounds to split them; their caches may differ, so they start
  // without memory.
  const bool sharded = opt.search.shard_count > 1;
  FailedConfigs failures = tunings && !sharded ? FailedConfigs::beside(*tunings) : FailedConfigs();
  internal::SearchMemory memory = internal::recall_memory(
      sharded ? nullptr : tunings, failures, failure_key, call.kernel.tmpl.space,
      opt.search.warm_start, opt.search.warm_start_devices, call.retune);
  log_forgotten(call, memory);
  // What an earlier run of this key measured before it was cut short; the
  // default is measured again when it is the outputs' reference.
  std::shared_ptr<internal::RunJournal> journal;
  if (tunings && !sharded)
    journal = std::make_shared<internal::RunJournal>(
        TuningJournal::beside(*tunings), failure_key, opt.cache.save,
        checking.judge ? std::optional<Config>(call.kernel.tmpl.space.default_config())
                       : std::nullopt);
  in.journal = journal;
  SearchRun run;
  run.out = internal::drive_search(call.problem, std::move(in), &progress, memory);
  progress.finish();
  if (!opt.pipeline.trace_path.empty()) {
    auto written = trace->write(opt.pipeline.trace_path);
    if (!written.ok()) KILN_LOG(kWarn) << written.error().describe();
  }
  // The caller's tensors end as they began: tuning may have run on them.
  Status restored = state->restore(call.device);
  if (restored.ok()) restored = call.device.synchronize();
  if (!restored.ok()) return restored.error();
  judge_outputs(checking, run);
  if (journal) journal->close(run.out.measurements, !run.out.cut_short);
  remember_failures(call, run, failures, failure_key, memory);
  return run;
}

}  // namespace

Result<TuneResult> Autotuner::tune(const TunableKernel& kernel, const ArgList& args, Device& device,
                                   const TuneOptions& declared) {
  const Options& env = Options::global();
  const TuneOptions opt = declared.environment ? with_tuning_env(declared, env) : declared;
  if (!kernel.launch) {
    throw Error(ErrorCode::kInvalidArgument,
                "kernel '" + kernel.tmpl.name + "' has no launch rule: set TunableKernel::launch");
  }
  TuneCall call = internal::make_call(kernel, args, device, opt, backend_.toolchain);

  // A retune measures again what was decided before, in memory or on disk,
  // and every config remembered as failed, and its winner replaces that
  // decision; without tuning it means nothing. KILN_RETUNE=1 retunes each
  // key once per process: this process's own decisions still answer.
  const bool tuning = opt.tune && env.tuning;
  if (tuning) internal::strategy_for(opt);  // an unknown strategy is misuse: say so first
  const bool env_retune = tuning && env.retune;
  TuneResult result;
  if (!(opt.cache.retune && tuning)) {
    if (auto decided = decided_before(call, /*disk=*/!env_retune)) {
      result.stats.cache_hits = 1;
      Config best = decided->first.best;
      result.record = std::move(decided->first);
      return served(serve(call, result, std::move(best), decided->second), result);
    }
  }
  result.stats.cache_misses = 1;
  call.retune = tuning && (opt.cache.retune || env_retune);
  if (!tuning) return serve_untuned(call, std::move(result));
  auto tuned = tune_now(call, std::move(result));
  internal::report_tuning(kernel.tmpl.name, call.problem, tuned, env);
  return tuned;
}

std::optional<std::pair<TuningRecord, ResultSource>> Autotuner::decided_before(const TuneCall& call,
                                                                               bool disk) {
  // (1) This process has decided before.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = table_.find(call.key); it != table_.end()) {
      return std::make_pair(it->second, ResultSource::kMemory);
    }
  }
  // (2) The tuning cache on disk (records of another device, toolchain or
  // environment are misses there and never served).
  if (!tunings_ || !disk) return std::nullopt;
  auto record = tunings_->lookup(
      call.problem,
      TuningIdentity{call.definition, call.identity, backend_.toolchain, call.context.env});
  if (!record) return std::nullopt;
  if (!call.kernel.tmpl.space.contains(record->best)) {
    log_once(LogLevel::kWarn, "stale-config:" + call.key.hex(),
             call.kernel.tmpl.name + ": the cached best config {" + record->best.to_string() +
                 "} is not in the kernel's space any more; tuning again");
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  table_[call.key] = *record;
  return std::make_pair(*record, ResultSource::kDisk);
}

Result<TuneResult> Autotuner::tune_now(const TuneCall& call, TuneResult result) {
  const TuneOptions& opt = call.options;
  auto ran = run_search(call, backend_, artifacts_, tunings_);
  if (!ran.ok()) return ran.error();
  internal::PipelineOutput& out = ran->out;
  if (out.interrupted) {
    std::size_t measured = 0;
    for (const auto& m : out.measurements) measured += m.ok();
    result.measurements = out.measurements;
    internal::report_interrupted(call.kernel.tmpl.name, call.problem, result, Options::global());
    return make_error(ErrorCode::kCancelled,
                      call.kernel.tmpl.name + ": the tuning run was interrupted after " +
                          std::to_string(measured) +
                          " configs were measured; no winner was saved, so the next call tunes "
                          "again (measuring only what its journal lacks)");
  }
  result.reference = ran->reference;
  result.measurements = out.measurements;
  result.skipped = out.skipped;
  result.forgotten = out.forgotten;
  result.stats.merge(out.stats);
  Config def = call.kernel.tmpl.space.default_config();
  for (const auto& m : out.measurements) {
    if (m.ok() && m.config == def) result.default_seconds = m.stats.median;
  }
  SelectionPolicy policy;
  policy.prefer = def;
  auto chosen = internal::select_with_finalists(out.measurements, out.finalists, policy);
  if (!chosen) return serve_fallback(call, std::move(result));

  result.best = out.measurements[chosen->winner];
  const Config best = result.best->config;
  result.record = make_record(call.problem, call.definition, call.identity, backend_.toolchain,
                              call.context, result);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    table_[call.key] = *result.record;
  }
  if (!result.reference.checked()) {
    KILN_LOG(kWarn) << call.kernel.tmpl.name << ": the winner {" << best.to_string()
                    << "} is saved unchecked: " << result.reference.detail;
  }
  save(call.kernel.tmpl.name, opt, call.retune, result);
  // The winner's artifact is in the pipeline's output (compiled or cached).
  auto made = out.artifacts.find(best.key());
  return served(serve(call, result, best, ResultSource::kTuned,
                      made != out.artifacts.end() ? &made->second : nullptr),
                result);
}

// No config ran correctly: the heuristic default, unsaved; when even that
// cannot be built, a result that says so (launch() is an error).
Result<TuneResult> Autotuner::serve_fallback(const TuneCall& call, TuneResult result) {
  const std::string& name = call.kernel.tmpl.name;
  Config fallback = internal::heuristic_config(call.kernel, call.problem);
  KILN_LOG(kWarn) << name << ": no config ran correctly; using the heuristic default {"
                  << fallback.to_string() << "}, unsaved"
                  << (result.measurements.empty() && call.kernel.early_prune
                          ? " (none was measured: the early prune rejected every config "
                            "proposed for " +
                                call.problem.canonical() + ")"
                          : failure_summary(result.measurements));
  Status st = serve(call, result, fallback, ResultSource::kFallback);
  if (st.ok()) return result;
  // Not even the fallback builds: the measurements still say why each
  // config failed, and the result cannot be launched (launch() says so).
  KILN_LOG(kWarn) << name << ": the heuristic default {" << fallback.to_string()
                  << "} cannot be loaded either: " << st.error().message;
  result.config = std::move(fallback);
  result.source = ResultSource::kFailed;
  stats_.add(name, result.stats);
  return result;
}

// NOTES: the nearest key alone is tried: a farther one is weaker evidence
// than the default, which every shape must run.
Result<TuneResult> Autotuner::serve_untuned(const TuneCall& call, TuneResult result) {
  const TunableKernel& kernel = call.kernel;
  std::vector<TuningRecord> records = tunings_ ? tunings_->records() : std::vector<TuningRecord>{};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& entry : table_) records.push_back(entry.second);
  }
  const TuningIdentity present{call.definition, call.identity, backend_.toolchain,
                               call.context.env};
  auto near = internal::nearest_records(records, call.problem, present, kernel.tmpl.space);
  if (!near.empty()) {
    const TuningRecord& nearest = *near.front();
    const std::string why = kernel.tmpl.name + ": the winner {" + nearest.best.to_string() +
                            "} of the nearest tuned key " + nearest.problem.canonical() +
                            " does not serve " + call.problem.canonical() + " (";
    if (!internal::prune_keeps(kernel, call.problem, nearest.best)) {
      KILN_LOG(kInfo) << why << "the early prune rejects it); using the default";
    } else {
      result.stats.served_nearest = 1;
      Status st = serve(call, result, nearest.best, ResultSource::kNearest);
      if (st.ok()) {
        result.record = nearest;
        return result;
      }
      result.stats.served_nearest = 0;
      KILN_LOG(kInfo) << why << st.error().message << "); using the default";
    }
  }
  result.stats.served_default = 1;
  return served(
      serve(call, result, internal::heuristic_config(kernel, call.problem), ResultSource::kUntuned),
      result);
}

// Writes result.record to the tuning cache, or says in the result why not.
void Autotuner::save(const std::string& name, const TuneOptions& opt, bool retune,
                     TuneResult& result) {
  if (!tunings_) {
    result.not_saved_reason = "this tuner has no tuning cache";
    return;
  }
  if (!opt.cache.save) {
    result.not_saved_reason = "saving is off (TuneOptions::cache.save is false)";
    return;
  }
  tunings_->put(*result.record,
                retune ? TuningCache::PutMode::kReplace : TuningCache::PutMode::kKeepFaster);
  auto saved = tunings_->save();
  if (!saved.ok()) {
    result.not_saved_reason = saved.error().describe();
    KILN_LOG(kWarn) << name << ": the tuning result was not saved: " << result.not_saved_reason;
  } else if (*saved == StoreOutcome::kWritten) {
    result.saved = true;
  } else {
    result.not_saved_reason = std::string("the tuning cache is ") +
                              cache_state_name(tunings_->state()) + " (" +
                              tunings_->state_reason() + ")";
  }
}

// Loads `config` on the call's device. `made`: the artifact this run already
// has (the tuned winner's, from the pipeline): loading it is neither a
// compile nor a cache hit.
Status Autotuner::serve(const TuneCall& call, TuneResult& result, Config config,
                        ResultSource source, const Artifact* made) {
  bool hit = false;
  Result<Artifact> artifact = made ? Result<Artifact>(*made)
                                   : internal::compile_config(call.kernel, config, backend_,
                                                              call.context, artifacts_, &hit);
  if (!artifact.ok()) return artifact.error();
  auto loaded = call.device.load(*artifact);
  if (!loaded.ok() && hit && loaded.error().code == ErrorCode::kCorrupt) {
    // Stored bytes that passed the entry's digest but that the device
    // refuses (a foreign or damaged binary under a valid checksum): compiled
    // again, never a failed call.
    KILN_LOG(kWarn) << "the stored artifact "
                    << (artifacts_ ? artifacts_->entry_path(artifact->key).string()
                                   : artifact->key.hex())
                    << " cannot be loaded (" << loaded.error().message << "): compiling {"
                    << config.to_string() << "} again";
    artifact = internal::compile_config(call.kernel, config, backend_, call.context, nullptr, &hit);
    if (!artifact.ok()) return artifact.error();
    internal::store_artifact(artifacts_, *artifact);
    loaded = call.device.load(*artifact);
  }
  if (!loaded.ok()) return loaded.error();
  // The launch rule is the caller's code (a Python grid(meta)): when it
  // throws for the config to serve, that is this config failing, as it
  // failed each measured one, not an exception out of tune().
  LaunchGeometry geometry;
  try {
    geometry = call.kernel.launch(config, call.args);
  } catch (const Error& e) {
    return make_error(e.code(),
                      "the launch rule fails for {" + config.to_string() + "}: " + e.what());
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the launch rule fails for {" + config.to_string() + "}: " + e.what());
  }
  result.config = std::move(config);
  result.kernel = std::move(*loaded);
  result.geometry = geometry;
  result.source = source;
  // A winner served from memory or disk still needs its artifact: one
  // from the artifact cache, or one rebuilt here, is counted like any.
  if (!made) ++(hit ? result.stats.artifact_hits : result.stats.compiled);
  stats_.add(call.kernel.tmpl.name, result.stats);
  return ok_status();
}

Result<TuneResult> Autotuner::run(const TunableKernel& kernel, const ArgList& args, Device& device,
                                  const TuneOptions& options) {
  auto result = tune(kernel, args, device, options);
  if (!result.ok()) return result;
  Status st = result->launch(device, kernel, args);
  if (st.ok()) st = device.synchronize();
  if (!st.ok()) return st.error();
  return result;
}

}  // namespace kiln
