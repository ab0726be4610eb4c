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

}  // namespace

Status run_once(Device& device, const LoadedKernel& kernel, const LaunchGeometry& geometry,
                const KernelArgs& packed, const CallState& state, bool checked) {
  Status st = state.prepare(device, nullptr, checked);
  if (!st.ok()) return st;
  st = device.launch(kernel, launch_config(geometry), packed);
  if (!st.ok()) return st;
  return device.synchronize();
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

// One timed repetition: preparation stays outside the events.
Result<double> timed_run(Device& device, const TimedRun& r, const MeasureInputs& in) {
  const TuneOptions& opt = *in.options;
  Status st = in.state->prepare(device, r.on);
  if (st.ok() && opt.measure.cold_l2) st = device.flush_caches(touched_spans(*in.args), r.on);
  if (st.ok() && opt.measure.delay_us > 0) st = device.delay(opt.measure.delay_us, r.on);
  if (st.ok()) st = device.record(r.start, r.on);
  if (st.ok()) {
    LaunchConfig lc = launch_config(r.geometry);
    lc.stream = r.on;
    st = r.graph ? device.replay(*r.graph, r.on) : device.launch(r.loaded, lc, r.packed);
  }
  if (st.ok()) st = device.record(r.stop, r.on);
  if (st.ok()) st = device.synchronize(r.on);
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

}  // namespace

Measurement measure(Device& device, const Artifact& artifact, const LaunchGeometry& geometry,
                    const MeasureInputs& in) {
  const TuneOptions& opt = *in.options;
  auto loaded = device.load(artifact);
  if (!loaded.ok()) return failure(artifact, Outcome::kLoadFailed, loaded.error());
  KernelArgs packed = pack(*in.args);

  // (1) One checked run; its host-clock time sizes the repetitions.
  auto t0 = std::chrono::steady_clock::now();
  Status st = run_once(device, *loaded, geometry, packed, *in.state, /*checked=*/true);
  double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!st.ok()) return failure(artifact, Outcome::kLaunchFailed, st.error());
  if (auto failed = check_first_run(device, artifact, in)) return std::move(*failed);

  // (2) Short profile: as many repetitions as fit in target_seconds.
  int reps = repetitions(opt, first);
  for (int i = 1; i < opt.measure.warmup; ++i) {  // the checked run was the first warm-up
    st = run_once(device, *loaded, geometry, packed, *in.state);
    if (!st.ok()) return failure(artifact, Outcome::kLaunchFailed, st.error());
  }

  // (3) Timed repetitions with device events; preparation stays outside.
  auto start = device.create_event();
  auto stop = device.create_event();
  if (!start.ok() || !stop.ok()) {
    return failure(artifact, Outcome::kLaunchFailed,
                   (start.ok() ? stop.error() : start.error()).describe());
  }
  std::optional<Graph> graph;
  std::optional<Stream> stream;
  if (opt.measure.graphs) capture_graph(device, *loaded, geometry, packed, graph, stream);
  TimedRun run{*loaded, geometry, packed, graph, stream ? &*stream : nullptr, *start, *stop};
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    auto seconds = timed_run(device, run, in);
    if (!seconds.ok()) return failure(artifact, Outcome::kLaunchFailed, seconds.error());
    samples.push_back(*seconds);
    // Clearly slower than the best so far even at its fastest: stop here.
    if (in.stop_above_seconds > 0 && i + 1 >= opt.measure.early_stop_reps &&
        *std::min_element(samples.begin(), samples.end()) > in.stop_above_seconds) {
      break;
    }
  }
  return success(artifact, std::move(samples));
}

}  // namespace kiln::internal
