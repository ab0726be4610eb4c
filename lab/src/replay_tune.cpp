// replay_tune: the recorded space as a TunableKernel, the replay backend,
// and one run of the tuner's search through the pipeline on a VirtualClock.
#include "kiln/lab/replay_tune.hpp"

#include "kiln/backends/replay.hpp"
#include "kiln/lab/virtual_clock.hpp"
#include "kiln/search/search.hpp"
#include "kiln/search/search_plan.hpp"
#include "kiln/tuner/selection.hpp"
#include "kiln/tuner/warm_start.hpp"
#include "tuner/call_state.hpp"
#include "tuner/pipeline.hpp"
#include "tuner/search_memory.hpp"
#include "tuner/search_run.hpp"

namespace kiln {

namespace {

// The file's space as a kernel: an entry naming every parameter (entries
// must differ within a program), a launch rule with nothing to compute, and
// an early prune that keeps the configs the file holds until the budget is
// spent. NOTES: the prune is how a simulated budget ends the search: the
// search driver stops at a real-time deadline, so after the simulated one
// every proposal is pruned and the strategy runs out of proposals.
TunableKernel recorded_kernel(const RecordedSpace& recorded,
                              const std::shared_ptr<replay::ReplayBook>& book) {
  TunableKernel k;
  k.tmpl.name = recorded.kernel;
  k.tmpl.source = "// replayed from " + recorded.path.string() + "\n";
  std::string entry = "replay<";
  for (std::size_t i = 0; i < recorded.space.parameters().size(); ++i)
    entry += (i ? ",{" : "{") + recorded.space.parameters()[i].name + "}";
  k.tmpl.entry = entry + ">";
  k.tmpl.space = recorded.space;
  k.launch = [](const Config&, const ArgList&) { return LaunchGeometry{}; };
  k.early_prune = [&recorded, book](const Config& c, const ProblemKey&) {
    return recorded.find(c) != nullptr && !book->budget_spent();
  };
  return k;
}

// What the replay changes in the caller's options: simulated workers and
// groups, no real deadlines, no checking (nothing is computed), few
// repetitions (every one reads the same recorded time).
TuneOptions replay_options(const TuneOptions& asked) {
  TuneOptions o;
  o.search = asked.search;
  o.pipeline.overlap = asked.pipeline.overlap;
  o.pipeline.compile_threads =
      asked.pipeline.compile_threads > 0 ? asked.pipeline.compile_threads : 1;
  o.pipeline.group_size = asked.pipeline.group_size > 0 ? asked.pipeline.group_size : 1;
  o.pipeline.compile_deadline_seconds = 1e7;
  o.pipeline.bench_deadline_seconds = 1e7;
  o.pipeline.progress = false;
  o.measure.warmup = 1;
  o.measure.min_reps = 3;
  o.measure.max_reps = 3;
  o.measure.early_stop = 0;
  o.check.enabled = false;
  o.check.reference = ReferenceKind::kNone;
  o.cache.save = false;
  return o;
}

KernelStats replay_stats(const std::vector<Measurement>& measurements,
                         const replay::ReplayBook& book, double wall) {
  KernelStats s;
  s.cache_misses = 1;
  s.configs = measurements.size();
  for (const Measurement& m : measurements) {
    if (m.outcome != Outcome::kCompileFailed && m.outcome != Outcome::kCancelled) ++s.compiled;
    if (m.ok()) {
      ++s.benchmarked;
    } else {
      ++s.failed;
      ++s.failed_by_reason[outcome_name(m.outcome)];
    }
  }
  s.compile_seconds = book.busy_seconds("compile");
  s.benchmark_seconds = book.busy_seconds("benchmark");
  s.overlap_seconds = book.overlap_seconds();
  s.wall_seconds = wall;
  return s;
}

// The inputs of the replay's pipeline run on `device`, but its clock.
Result<internal::PipelineInputs> replay_inputs(const RecordedSpace& recorded,
                                               const TuneOptions& options,
                                               const std::shared_ptr<replay::ReplayBook>& book,
                                               Device& device) {
  internal::PipelineInputs in;
  in.kernel = recorded_kernel(recorded, book);
  in.listed = std::make_shared<const std::vector<Config>>(recorded.listed());
  auto state = internal::CallState::capture(device, in.kernel, in.args);
  if (!state.ok()) return state.error();
  in.state = *state;
  in.options = replay_options(options);
  in.backend.compiler = replay::replay_compiler(book);
  in.backend.compiler_factory = replay::replay_compilers(book);
  in.backend.arch = "recorded";
  in.backend.format = BinaryFormat::kCubin;
  in.backend.bench.isolation = Isolation::kThread;
  // One benchmark worker on the replay device: the recording measured one
  // config at a time on one GPU.
  in.plan.home_only = true;
  in.plan.devices = {device.properties().ref};
  in.home = &device;
  in.trace = std::make_shared<TraceRecorder>();
  return in;
}

// What the budget stopped is cancelled, as in a real run (the device can
// only fail a load, a compile stopped early reads as a timeout); then the
// tuner's pick, and the fastest measured against the file's optimum.
void judge_replay(const RecordedSpace& recorded, const replay::ReplayBook& book,
                  ReplayTuneResult& out) {
  for (Measurement& m : out.measurements) {
    if (!m.ok() && replay::ReplayBook::stopped_by_budget(m.error)) {
      m.outcome = Outcome::kCancelled;
      m.error = book.budget_error(m.config);
      ++out.budget_cancelled;
    }
  }
  SelectionPolicy policy;
  policy.prefer = out.default_config;
  if (auto chosen = select_winner(out.measurements, policy))
    out.winner = out.measurements[chosen->winner];
  for (const Measurement& m : out.measurements) {
    const RecordedConfig* r = m.ok() ? recorded.find(m.config) : nullptr;
    if (r && r->time_ms && (!out.best || *r->time_ms < out.best_ms)) {
      out.best = m.config;
      out.best_ms = *r->time_ms;
    }
  }
  out.fraction = out.best ? recorded.optimum_ms / out.best_ms : 0;
}

}  // namespace

Result<ReplayTuneResult> replay_tune(const RecordedSpace& recorded, const TuneOptions& options,
                                     const std::vector<TuningRecord>& warm_from) {
  // "auto" (kiln/search/search_plan.hpp) is resolved by drive_search on the recorded space.
  if (options.search.strategy != kAutoSearch && !find_search_strategy(options.search.strategy)) {
    return make_error(ErrorCode::kInvalidArgument, "unknown search strategy \"" +
                                                       options.search.strategy + "\"; use one of " +
                                                       search_strategy_names());
  }
  VirtualClock clock;
  const RecordedSource source(recorded);
  auto book = std::make_shared<replay::ReplayBook>(source, clock, options.pipeline.budget_seconds);
  std::unique_ptr<Device> device = replay::make_replay_device(book);

  // (1) The kernel, the backend and the inputs of a tuning run, as the
  // autotuner builds them for a real call (autotuner.cpp: run_search).
  Result<internal::PipelineInputs> inputs = replay_inputs(recorded, options, book, *device);
  if (!inputs) return inputs.error();
  internal::PipelineInputs& in = *inputs;
  in.clock = &clock;

  // (2) The search through the pipeline, on the clock.
  ReplayTuneResult out;
  out.default_config = in.kernel.tmpl.space.default_config();
  // The warm start a tuning on that device would have had, with the
  // records standing in for its tuning cache (definition zero, as theirs).
  const ProblemKey problem(recorded.kernel);
  internal::SearchMemory memory =
      internal::recall_seeds(warm_from, problem, recorded_identity(recorded), recorded.space,
                             options.search.warm_start, options.search.warm_start_devices);
  std::uint64_t warm_started = 0;
  try {
    internal::PipelineOutput ran =
        internal::drive_search(problem, std::move(in), nullptr, std::move(memory));
    out.measurements = std::move(ran.measurements);
    warm_started = ran.stats.warm_started;
  } catch (const Error& e) {
    return e.info();
  }

  // (3) What the budget stopped, the winner and the best, as in a real run.
  judge_replay(recorded, *book, out);
  out.simulated_seconds = clock.now();
  for (const Measurement& m : out.measurements)
    out.landed_seconds.push_back(book->landed_at(m.config).value_or(out.simulated_seconds));
  out.stats = replay_stats(out.measurements, *book, out.simulated_seconds);
  out.stats.warm_started = warm_started;
  out.stalls = clock.stalls();
  return out;
}

}  // namespace kiln
