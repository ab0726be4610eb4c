#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kiln/core/error.hpp"

namespace kiln::internal {

Measurement failure(const Artifact& artifact, Outcome outcome, ErrorInfo error) {
  Measurement m;
  m.config = artifact.config;
  m.outcome = outcome;
  m.error = std::move(error);
  m.compile_seconds = artifact.compile_seconds;
  m.group_size = artifact.group_size;
  return m;
}

Measurement failure(const Artifact& artifact, Outcome outcome, std::string reason) {
  return failure(artifact, outcome, make_error(outcome_error_code(outcome), std::move(reason)));
}

namespace {

LaunchConfig launch_config(const LaunchGeometry& g) {
  LaunchConfig c;
  c.grid = g.grid;
  c.block = g.block;
  c.shared_bytes = g.shared_bytes;
  return c;
}

// The comparison of every output; the first failing one's evidence.
Status check(const std::map<std::string, std::vector<double>>& got, const Reference& reference,
             const CallState& state, const TuneOptions& options) {
  for (const auto& [name, want] : *reference) {
    Tolerance tol =
        options.check.tolerance.value_or(Tolerance::for_dtype(state.output_dtype(name)));
    Comparison c = compare(got.at(name), want, tol);
    if (!c.ok) {
      return make_error(outcome_error_code(Outcome::kWrongResult),
                        "output '" + name + "': " + c.describe(), {{"output", name}});
    }
  }
  return ok_status();
}

// A hook's error as the config's failure: named, and marked so that the
// failure is not remembered against the config (search_memory.cpp).
Status hook_failure(const char* hook, const Status& st) {
  ErrorInfo e = st.error();
  e.message = std::string("the ") + hook + " hook failed: " + e.message;
  e.details["hook"] = hook;
  return e;
}

}  // namespace

Status RunHooks::before() const {
  if (!hooks || !hooks->pre_run) return ok_status();
  Status st = hooks->pre_run(*config, *args);
  return st.ok() ? st : hook_failure("pre_run", st);
}

Status RunHooks::after(const Status& run) const {
  if (!hooks || !hooks->post_run) return run;
  Status st = hooks->post_run(*config, *args, run);
  if (!run.ok()) return run;  // the run's own error stays the evidence
  return st.ok() ? st : hook_failure("post_run", st);
}

Status run_once(Device& device, const LoadedKernel& kernel, const LaunchGeometry& geometry,
                const KernelArgs& packed, const CallState& state, bool checked,
                const RunHooks& hooks) {
  Status st = state.prepare(device, nullptr, checked);
  if (!st.ok()) return st;
  st = hooks.before();
  if (!st.ok()) return st;
  st = device.launch(kernel, launch_config(geometry), packed);
  if (st.ok()) st = device.synchronize();
  return hooks.after(st);
}

Result<LaunchGeometry> launch_geometry(const TunableKernel& kernel, const Config& config,
                                       const ArgList& args) {
  try {
    return kernel.launch(config, args);
  } catch (const Error& e) {
    return make_error(ErrorCode::kLaunchFailed, std::string("launch rule: ") + e.what());
  }
}

Status probe_device(Device& device) {
  Status st = device.synchronize();
  if (!st.ok()) return st;
  auto buffer = device.allocate(64);
  if (!buffer.ok()) return buffer.error();
  unsigned char back[64];
  st = device.fill(buffer->data(), 0x5a, sizeof back);
  if (st.ok()) st = device.copy_to_host(back, buffer->data(), sizeof back);
  if (st.ok()) st = device.synchronize();
  if (!st.ok()) return st;
  if (back[0] != 0x5a || back[63] != 0x5a) {
    return make_error(ErrorCode::kLaunchFailed, "the device returned wrong bytes for a fill");
  }
  return ok_status();
}

namespace {

// The first run's outputs checked against the reference, or captured as it
// when there is none yet; nullopt when they pass.
std::optional<Measurement> check_first_run(Device& device, const Artifact& artifact,
                                           const MeasureInputs& in) {
  if (!in.options->check.enabled || !(in.reference->has_value() || in.captured)) {
    return std::nullopt;
  }
  auto got = in.state->read_outputs(device);
  if (!got.ok()) return failure(artifact, Outcome::kLaunchFailed, got.error());
  if (!in.reference->has_value()) {
    *in.captured = std::move(*got);
  } else if (Status checked = check(*got, *in.reference, *in.state, *in.options); !checked.ok()) {
    return failure(artifact, Outcome::kWrongResult, checked.error());
  }
  return std::nullopt;
}

// As many repetitions as fit in target_seconds, given the first run's time.
int repetitions(const TuneOptions& opt, double first) {
  if (first <= 0) return opt.measure.max_reps;
  return static_cast<int>(std::clamp(opt.measure.target_seconds / first,
                                     static_cast<double>(opt.measure.min_reps),
                                     static_cast<double>(opt.measure.max_reps)));
}

// The launch captured as a graph on its own stream, when graphs are asked
// for and the device can capture; otherwise both stay empty.
void capture_graph(Device& device, const LoadedKernel& loaded, const LaunchGeometry& geometry,
                   const KernelArgs& packed, std::optional<Graph>& graph,
                   std::optional<Stream>& stream) {
  auto s = device.create_stream();
  if (!s.ok() || !device.begin_capture(*s).ok()) return;
  // Only work on the capturing stream is recorded: a launch on the
  // default stream would run at once and leave the graph empty.
  LaunchConfig captured = launch_config(geometry);
  captured.stream = &*s;
  Status launched = device.launch(loaded, captured, packed);
  auto g = device.end_capture(*s);
  if (launched.ok() && g.ok()) {
    graph = std::move(*g);
    stream = std::move(*s);
  }
}

// What one timed repetition needs besides the device.
struct TimedRun {
  const LoadedKernel& loaded;
  const LaunchGeometry& geometry;
  const KernelArgs& packed;
  const std::optional<Graph>& graph;
  Stream* on;
  Event& start;
  Event& stop;
};

// One timed repetition: preparation and the hooks stay outside the events
// (the pre_run hook before the delay, which keeps host work out).
Result<double> timed_run(Device& device, const TimedRun& r, const MeasureInputs& in,
                         const RunHooks& hooks) {
  const TuneOptions& opt = *in.options;
  Status st = in.state->prepare(device, r.on);
  if (st.ok()) st = hooks.before();
  if (!st.ok()) return st.error();
  if (opt.measure.cold_l2) st = device.flush_caches(touched_spans(*in.args), r.on);
  if (st.ok() && opt.measure.delay_us > 0) st = device.delay(opt.measure.delay_us, r.on);
  if (st.ok()) st = device.record(r.start, r.on);
  if (st.ok()) {
    LaunchConfig lc = launch_config(r.geometry);
    lc.stream = r.on;
    st = r.graph ? device.replay(*r.graph, r.on) : device.launch(r.loaded, lc, r.packed);
  }
  if (st.ok()) st = device.record(r.stop, r.on);
  if (st.ok()) st = device.synchronize(r.on);
  st = hooks.after(st);
  if (!st.ok()) return st.error();
  auto ms = device.elapsed_ms(r.start, r.stop);
  if (!ms.ok()) return ms.error();
  return static_cast<double>(*ms) * 1e-3;
}

Measurement success(const Artifact& artifact, std::vector<double> samples) {
  Measurement m;
  m.config = artifact.config;
  m.compile_seconds = artifact.compile_seconds;
  m.group_size = artifact.group_size;
  m.stats = TimingStats::from_samples(std::move(samples));
  return m;
}

// What the runs after the checked one share.
struct Runs {
  Device& device;
  const Artifact& artifact;
  const LoadedKernel& loaded;
  const LaunchGeometry& geometry;
  const KernelArgs& packed;
  const MeasureInputs& in;
  const RunHooks& hooks;
};

// (2) and (3) as Kiln times them: warm-ups, then as many repetitions as fit
// in target_seconds (`first`: the checked run's time), with device events.
Measurement kiln_timing(const Runs& r, double first) {
  const TuneOptions& opt = *r.in.options;
  int reps = repetitions(opt, first);
  for (int i = 1; i < opt.measure.warmup; ++i) {  // the checked run was the first warm-up
    Status st = run_once(r.device, r.loaded, r.geometry, r.packed, *r.in.state, false, r.hooks);
    if (!st.ok()) return failure(r.artifact, Outcome::kLaunchFailed, st.error());
  }
  auto start = r.device.create_event();
  auto stop = r.device.create_event();
  if (!start.ok() || !stop.ok()) {
    return failure(r.artifact, Outcome::kLaunchFailed,
                   (start.ok() ? stop.error() : start.error()).describe());
  }
  std::optional<Graph> graph;
  std::optional<Stream> stream;
  if (opt.measure.graphs) capture_graph(r.device, r.loaded, r.geometry, r.packed, graph, stream);
  TimedRun run{r.loaded, r.geometry, r.packed, graph, stream ? &*stream : nullptr, *start, *stop};
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    auto seconds = timed_run(r.device, run, r.in, r.hooks);
    if (!seconds.ok()) return failure(r.artifact, Outcome::kLaunchFailed, seconds.error());
    samples.push_back(*seconds);
    if (stop_early(r.in.stop, opt.measure, i + 1,
                   *std::min_element(samples.begin(), samples.end())))
      break;
  }
  return success(r.artifact, std::move(samples));
}

// (2) and (3) by the user's benchmarker (BenchHooks::benchmark): its samples
// are the measurement. The first failed run fails the config, whatever the
// benchmarker made of it; so do samples that are no times.
Measurement user_timing(const Runs& r) {
  std::optional<ErrorInfo> run_failed;
  const std::function<Status()> run = [&]() -> Status {
    Status st = run_once(r.device, r.loaded, r.geometry, r.packed, *r.in.state, false, r.hooks);
    if (!st.ok() && !run_failed) run_failed = st.error();
    return st;
  };
  Result<std::vector<double>> samples = r.in.options->hooks.benchmark(r.artifact.config, run);
  if (run_failed) return failure(r.artifact, Outcome::kLaunchFailed, *run_failed);
  auto refused = [&](const Status& why) {
    return failure(r.artifact, Outcome::kLaunchFailed, hook_failure("benchmark", why).error());
  };
  if (!samples.ok()) return refused(samples.error());
  if (samples->empty()) {
    return refused(make_error(ErrorCode::kInvalidArgument, "it returned no time samples"));
  }
  for (double t : *samples) {
    if (std::isfinite(t) && t >= 0) continue;
    return refused(make_error(ErrorCode::kInvalidArgument,
                              "it returned the time " + std::to_string(t) +
                                  " s: samples are in seconds, finite and not negative"));
  }
  return success(r.artifact, std::move(*samples));
}

}  // namespace

bool stop_early(const StopBars& bars, const MeasureOptions& options, int reps, double fastest) {
  if (bars.best > 0 && options.early_stop > 0) {
    const int short_of = std::max(0, options.early_stop_reps - reps);
    if (fastest > bars.best * std::pow(options.early_stop, 1 + short_of)) return true;
  }
  if (reps < options.early_stop_reps) return false;
  return bars.screen || (bars.best > 0 && fastest > bars.best);
}

Measurement measure(Device& device, const Artifact& artifact, const LaunchGeometry& geometry,
                    const MeasureInputs& in) {
  auto loaded = device.load(artifact);
  if (!loaded.ok()) return failure(artifact, Outcome::kLoadFailed, loaded.error());
  KernelArgs packed = pack(*in.args);
  const RunHooks hooks{&in.options->hooks, &artifact.config, in.args};

  // (1) One checked run; its host-clock time sizes the repetitions.
  auto t0 = std::chrono::steady_clock::now();
  Status st = run_once(device, *loaded, geometry, packed, *in.state, /*checked=*/true, hooks);
  double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!st.ok()) return failure(artifact, Outcome::kLaunchFailed, st.error());
  if (auto failed = check_first_run(device, artifact, in)) return std::move(*failed);

  // (2) Warm-ups and (3) timed repetitions, Kiln's or the user's.
  const Runs runs{device, artifact, *loaded, geometry, packed, in, hooks};
  return in.options->hooks.benchmark ? user_timing(runs) : kiln_timing(runs, first);
}

}  // namespace kiln::internal
