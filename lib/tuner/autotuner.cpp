// The decision path of a call: the in-memory table, the tuning cache on
// disk, a tuning run, or the heuristic default, in that order.
#include <chrono>

#include "artifact_source.hpp"
#include "kiln/artifact_cache.hpp"
#include "kiln/error.hpp"
#include "kiln/keys.hpp"
#include "kiln/log.hpp"
#include "kiln/options.hpp"
#include "kiln/selection.hpp"
#include "kiln/tuner.hpp"
#include "kiln/tuning_cache.hpp"
#include "measure.hpp"
#include "pipeline.hpp"
#include "search_run.hpp"

namespace kiln {

using internal::CallState;
using internal::Reference;

double TuneResult::speedup_over_default() const {
  if (!best || !default_seconds || best->stats.median <= 0) return 1.0;
  return *default_seconds / best->stats.median;
}

Status TuneResult::launch(Device& device, const TunableKernel& tunable, const ArgList& args) const {
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

// Runs the reference (the default config or the user's function) once on
// restored inputs and reads the outputs. Absent when nothing is checked.
Reference make_reference(const TunableKernel& kernel, const ArgList& args, Device& device,
                         const CallState& state, const TuneOptions& opt, const Backend& backend,
                         const CompileContext& context, ArtifactCache* artifacts) {
  if (!opt.check || opt.reference == ReferenceKind::kNone || kernel.outputs.empty()) return {};
  Status ran = ok_status();
  if (opt.reference == ReferenceKind::kUser) {
    if (!opt.reference_fn) {
      throw Error(ErrorCode::kInvalidArgument,
                  "ReferenceKind::kUser needs TuneOptions::reference_fn");
    }
    ran = state.prepare(device);
    if (ran.ok()) ran = opt.reference_fn(device, args);
    if (ran.ok()) ran = device.synchronize();
  } else {
    Config def = kernel.tmpl.space.default_config();
    auto artifact = internal::compile_config(kernel, def, backend, context, artifacts);
    if (!artifact.ok()) {
      KILN_LOG(kWarn) << kernel.tmpl.name << ": the default config does not compile, so outputs "
                      << "are not checked: " << artifact.error().message;
      return {};
    }
    auto loaded = device.load(*artifact);
    if (!loaded.ok()) return {};
    ran = internal::run_once(device, *loaded, kernel.launch(def, args), pack(args), state);
  }
  if (!ran.ok()) {
    KILN_LOG(kWarn) << kernel.tmpl.name << ": the reference did not run, so outputs are not "
                    << "checked: " << ran.error().message;
    return {};
  }
  auto outputs = state.read_outputs(device);
  if (!outputs.ok()) return {};
  return std::move(*outputs);
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
    if (hit) ++result.stats.artifact_hits;
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
    return finish(kernel.tmpl.space.default_config(), "default");
  }

  // (4) Tune.
  auto started = std::chrono::steady_clock::now();
  auto state = CallState::capture(device, kernel, args);
  if (!state.ok()) return state.error();
  internal::PipelineInputs in;
  in.kernel = kernel;
  in.args = args;
  in.state = *state;
  in.reference = make_reference(kernel, args, device, *state, opt, backend_, context, artifacts_);
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
  internal::PipelineOutput out = internal::run_search(problem, std::move(in), &progress);
  progress.finish();
  if (!opt.trace_path.empty()) {
    auto written = trace->write(opt.trace_path);
    if (!written.ok()) KILN_LOG(kWarn) << written.error().describe();
  }
  // The caller's tensors end as they began: tuning ran on them.
  Status restored = state->prepare(device);
  if (restored.ok()) restored = device.synchronize();
  if (!restored.ok()) return restored.error();

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
    KILN_LOG(kWarn) << name << ": no config ran correctly; using the default config" << reasons;
    return finish(def, "default");
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
  for (const auto& m : out.measurements) {
    record.measured.push_back(
        MeasuredConfig{m.config, m.ok() ? m.stats.median * 1e3 : 0, m.ok(),
                       m.ok() ? "" : outcome_name(m.outcome) + (": " + m.reason.substr(0, 500))});
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    table_[key] = best;
  }
  if (tunings_ && opt.save) {
    tunings_->put(record,
                  opt.retune ? TuningCache::PutMode::kReplace : TuningCache::PutMode::kKeepFaster);
    auto saved = tunings_->save();
    if (!saved.ok())
      KILN_LOG(kWarn) << name << ": the tuning result was not saved: " << saved.error().describe();
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
