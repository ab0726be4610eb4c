// The decision path of a call: the in-memory table, the tuning cache on
// disk, a tuning run, or the heuristic default, in that order.
#include <chrono>

#include "artifact_source.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/keys.hpp"
#include "kiln/core/log.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/selection.hpp"
#include "kiln/tuner/tuner.hpp"
#include "measure.hpp"
#include "output_judge.hpp"
#include "pipeline.hpp"
#include "search_run.hpp"

namespace kiln {

using internal::CallState;
using internal::Reference;

std::string ReferenceReport::name() const {
  switch (kind) {
    case Kind::kDefault:
      return "default";
    case Kind::kUser:
      return "user";
    case Kind::kConsensus:
      return "consensus of " + std::to_string(agreeing) + " configs";
    case Kind::kNone:
      break;
  }
  return "none";
}

double TuneResult::speedup_over_default() const {
  if (!best || !default_seconds || best->stats.median <= 0) return 1.0;
  return *default_seconds / best->stats.median;
}

Status TuneResult::launch(Device& device, const TunableKernel& tunable, const ArgList& args) const {
  if (!kernel.valid()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "nothing to launch for " + tunable.tmpl.name + " (source '" + source +
                          "'): no config ran correctly and the default {" + config.to_string() +
                          "} could not be built; see the measurements for why");
  }
  for (const auto& name : tunable.reset_to_zero) {
    const Arg& a = find_arg(args, name);
    if (a.storage_bytes() == 0) continue;
    Status st = device.fill(a.data, 0, a.storage_bytes());
    if (!st.ok()) return st;
  }
  LaunchConfig lc;
  lc.grid = geometry.grid;
  lc.block = geometry.block;
  lc.shared_bytes = geometry.shared_bytes;
  return device.launch(kernel, lc, pack(args));
}

Autotuner::Autotuner(Backend backend, ArtifactCache* artifacts, TuningCache* tunings)
    : backend_(std::move(backend)), artifacts_(artifacts), tunings_(tunings) {
  if (!backend_.compiler) {
    throw Error(ErrorCode::kInvalidArgument, "Autotuner needs a compiler in its Backend");
  }
}

Autotuner::~Autotuner() = default;

namespace {

DeviceIdentity identity_of(const Device& device) {
  const DeviceProperties& p = device.properties();
  return DeviceIdentity{p.arch, p.name, p.cc_major, p.cc_minor};
}

// How a tuning run checks outputs: against the user's reference, computed
// here before the run (the caller's own code, trusted); or afterwards by a
// judge, from the outputs every config's checked run captured (the default
// config's, else the consensus); or not at all, and why.
struct Checking {
  Reference reference;
  std::shared_ptr<internal::OutputJudge> judge;
  ReferenceReport report;  // when there is no judge
};

Checking plan_checking(const TunableKernel& kernel, const ArgList& args, Device& device,
                       const CallState& state, const TuneOptions& opt, const ProblemKey& problem) {
  Checking c;
  if (!opt.check) {
    c.report.detail = "checking is off (TuneOptions::check is false: --no-check)";
    return c;
  }
  if (opt.reference == ReferenceKind::kNone) {
    c.report.detail = "the kernel asks for no reference (ReferenceKind::kNone)";
    return c;
  }
  if (kernel.outputs.empty()) {
    c.report.detail = "the kernel names no outputs to compare";
    return c;
  }
  if (opt.reference == ReferenceKind::kUser) {
    if (!opt.reference_fn) {
      throw Error(ErrorCode::kInvalidArgument,
                  "ReferenceKind::kUser needs TuneOptions::reference_fn");
    }
    Status ran = state.prepare(device);
    if (ran.ok()) ran = opt.reference_fn(device, args);
    if (ran.ok()) ran = device.synchronize();
    if (ran.ok()) {
      auto outputs = state.read_outputs(device);
      if (outputs.ok()) {
        c.reference = std::move(*outputs);
        c.report.kind = ReferenceReport::Kind::kUser;
        c.report.detail = "the caller's reference function";
        return c;
      }
      ran = outputs.error();
    }
    KILN_LOG(kWarn) << kernel.tmpl.name << ": the reference function failed, so outputs are "
                    << "checked against the default config instead: " << ran.error().message;
  }
  std::map<std::string, Tolerance> tolerances;
  for (const auto& name : kernel.outputs) {
    tolerances[name] = opt.tolerance.value_or(Tolerance::for_dtype(state.output_dtype(name)));
  }
  const Config def = kernel.tmpl.space.default_config();
  std::optional<std::string> unavailable;
  if (!internal::prune_keeps(kernel, problem, def)) {
    unavailable = "the default config {" + def.to_string() +
                  "} is pruned for this problem by the kernel's early prune";
  }
  c.judge = std::make_shared<internal::OutputJudge>(def, std::move(tolerances), unavailable);
  return c;
}

}  // namespace

Result<TuneResult> Autotuner::tune(const TunableKernel& kernel, const ArgList& args, Device& device,
                                   const TuneOptions& opt) {
  if (!kernel.launch) {
    throw Error(ErrorCode::kInvalidArgument,
                "kernel '" + kernel.tmpl.name + "' has no launch rule: set TunableKernel::launch");
  }
  const std::string& name = kernel.tmpl.name;
  ProblemKey problem = problem_key(name, args);
  CompileContext context{backend_.toolchain, CacheEnvRegistry::global().snapshot()};
  DeviceIdentity identity = identity_of(device);
  const Hash128 definition = definition_hash(kernel);
  Hash128 key = tuning_key(problem, identity.arch, backend_.toolchain, context.env, definition);

  TuneResult result;
  // `made`: the artifact this run already has (the tuned winner's, from the
  // pipeline): loading it is neither a compile nor a cache hit.
  auto finish = [&](Config config, std::string source,
                    const Artifact* made = nullptr) -> Result<TuneResult> {
    bool hit = false;
    Result<Artifact> artifact =
        made ? Result<Artifact>(*made)
             : internal::compile_config(kernel, config, backend_, context, artifacts_, &hit);
    if (!artifact.ok()) return artifact.error();
    auto loaded = device.load(*artifact);
    if (!loaded.ok()) return loaded.error();
    result.config = std::move(config);
    result.kernel = std::move(*loaded);
    result.geometry = kernel.launch(result.config, args);
    result.source = std::move(source);
    // A winner served from memory or disk still needs its artifact: one
    // from the artifact cache, or one rebuilt here, is counted like any.
    if (!made) ++(hit ? result.stats.artifact_hits : result.stats.compiled);
    stats_.add(name, result.stats);
    return std::move(result);
  };

  // A retune measures again what was decided before, in memory or on disk,
  // and its winner replaces that decision; without tuning it means nothing.
  const bool tuning = opt.tune && Options::global().tuning;
  const bool reuse = !(opt.retune && tuning);
  // (1) This process has decided before.
  if (reuse) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = table_.find(key); it != table_.end()) {
      result.stats.cache_hits = 1;
      Config c = it->second;
      return finish(std::move(c), "memory");
    }
  }
  // (2) The tuning cache on disk (records of another device, toolchain or
  // environment are misses there and never served).
  if (tunings_ && reuse) {
    if (auto record = tunings_->lookup(
            problem, TuningIdentity{definition, identity, backend_.toolchain, context.env})) {
      if (kernel.tmpl.space.contains(record->best)) {
        std::lock_guard<std::mutex> lock(mutex_);
        table_[key] = record->best;
        result.stats.cache_hits = 1;
        return finish(record->best, "disk");
      }
      log_once(LogLevel::kWarn, "stale-config:" + key.hex(),
               name + ": the cached best config {" + record->best.to_string() +
                   "} is not in the kernel's space any more; tuning again");
    }
  }
  result.stats.cache_misses = 1;
  // (3) No tuning: the heuristic default, one compile at most.
  if (!tuning) {
    return finish(internal::heuristic_config(kernel, problem), "default");
  }

  // (4) Tune.
  auto started = std::chrono::steady_clock::now();
  auto state = CallState::capture(device, kernel, args);
  if (!state.ok()) return state.error();
  internal::PipelineInputs in;
  in.kernel = kernel;
  in.args = args;
  in.state = *state;
  Checking checking = plan_checking(kernel, args, device, *state, opt, problem);
  in.reference = checking.reference;
  in.judge = checking.judge;
  in.options = opt;
  in.backend = backend_;
  in.context = context;
  in.artifacts = artifacts_;
  in.home = &device;
  in.trace = std::make_shared<TraceRecorder>();
  if (opt.budget_seconds > 0) {
    in.deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(opt.budget_seconds));
  }
  ProgressBar progress(name, 0, stderr, opt.progress);
  auto trace = in.trace;
  internal::PipelineOutput out;
  try {
    out = internal::run_search(problem, std::move(in), &progress);
  } catch (const Error& e) {
    // A benchmark worker the user named that is missing or broken is found
    // before anything runs: an error value, like a missing device. Misuse
    // (kInvalidArgument) still throws.
    if (e.code() != ErrorCode::kNotFound && e.code() != ErrorCode::kUnavailable) throw;
    progress.finish();
    return e.info();
  }
  progress.finish();
  if (!opt.trace_path.empty()) {
    auto written = trace->write(opt.trace_path);
    if (!written.ok()) KILN_LOG(kWarn) << written.error().describe();
  }
  // The caller's tensors end as they began: tuning ran on them.
  Status restored = state->prepare(device, nullptr, /*fresh_outputs=*/true);
  if (restored.ok()) restored = device.synchronize();
  if (!restored.ok()) return restored.error();

  // Outputs judged after the run: the verdicts the default's outputs did not
  // settle during it come from the consensus now.
  if (checking.judge) {
    result.reference = checking.judge->finish();
    internal::apply_verdicts(checking.judge->wrong(), out.measurements, out.stats);
  } else {
    result.reference = checking.report;
  }
  result.measurements = out.measurements;
  result.stats.merge(out.stats);
  Config def = kernel.tmpl.space.default_config();
  for (const auto& m : out.measurements) {
    if (m.ok() && m.config == def) result.default_seconds = m.stats.median;
  }
  SelectionPolicy policy;
  policy.prefer = def;
  auto chosen = select_winner(out.measurements, policy);
  if (!chosen) {
    std::string reasons;
    for (const auto& m : out.measurements) {
      if (reasons.size() < 2000)
        reasons += "\n  {" + m.config.to_string() + "}: " + outcome_name(m.outcome) + ": " +
                   m.reason.substr(0, 300);
    }
    Config fallback = internal::heuristic_config(kernel, problem);
    KILN_LOG(kWarn) << name << ": no config ran correctly; using the heuristic default {"
                    << fallback.to_string() << "}, unsaved" << reasons;
    auto served = finish(fallback, "default");
    if (served.ok()) return served;
    // Not even the fallback builds: the measurements still say why each
    // config failed, and the result cannot be launched (launch() says so).
    KILN_LOG(kWarn) << name << ": the heuristic default {" << fallback.to_string()
                    << "} cannot be loaded either: " << served.error().message;
    result.config = std::move(fallback);
    result.source = "failed";
    stats_.add(name, result.stats);
    return result;
  }
  result.best = out.measurements[chosen->winner];
  Config best = result.best->config;

  TuningRecord record;
  record.problem = problem;
  record.definition = definition;
  record.device = identity;
  record.toolchain = backend_.toolchain;
  record.env = context.env;
  record.best = best;
  record.best_time_ms = result.best->stats.median * 1e3;
  record.reference = result.reference.name();
  for (const auto& m : out.measurements) {
    record.measured.push_back(
        MeasuredConfig{m.config, m.ok() ? m.stats.median * 1e3 : 0, m.ok(),
                       m.ok() ? "" : outcome_name(m.outcome) + (": " + m.reason.substr(0, 500))});
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    table_[key] = best;
  }
  if (!result.reference.checked()) {
    KILN_LOG(kWarn) << name << ": the winner {" << best.to_string()
                    << "} is saved unchecked: " << result.reference.detail;
  }
  if (!tunings_) {
    result.not_saved_reason = "this tuner has no tuning cache";
  } else if (!opt.save) {
    result.not_saved_reason = "saving is off (TuneOptions::save is false)";
  } else {
    tunings_->put(record,
                  opt.retune ? TuningCache::PutMode::kReplace : TuningCache::PutMode::kKeepFaster);
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
  // The winner's artifact is in the pipeline's output (compiled or cached).
  auto made = out.artifacts.find(best.to_string());
  return finish(best, "tuned", made != out.artifacts.end() ? &made->second : nullptr);
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
