#include "pipeline.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "artifact_source.hpp"
#include "bench_plan.hpp"
#include "deadline_compiler.hpp"
#include "host_args.hpp"
#include "kiln/compile/compile_pool.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"
#include "process_bench.hpp"

namespace kiln::internal {

namespace {

using Clock = std::chrono::steady_clock;

// A worker process gets this long to start, open its device and take the
// call (LLVM's start-up or a CUDA context on a loaded machine).
constexpr double kWorkerStartSeconds = 60;

// Everything a benchmark worker touches. Held by shared_ptr: a worker whose
// kernel hangs is abandoned (its thread detached), and may still wake up
// long after run_pipeline has returned.
struct Shared {
  PipelineInputs in;
  CallState state;
  BenchPlan plan;
  std::optional<HostArgs> host;         // when workers measure on replicas
  std::shared_ptr<const Message> call;  // what every worker process gets first

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Artifact> ready;
  bool stopping = false;
  std::string stop_reason;
  std::string worker_failure;  // why the last worker could not start
  std::vector<Measurement> results;
  std::map<std::string, Artifact> artifacts;
  std::size_t artifact_hits = 0;
  std::map<int, int> compile_tracks;  // pool worker -> trace track
};

struct WorkerState {
  int slot = 0;
  std::unique_ptr<Device> owned;  // thread workers on a device of their own
  Device* device = nullptr;
  std::optional<ReplicaArgs> replica;     // the call's arguments on `device`
  std::optional<CallState> state;         // bound to `replica`
  std::unique_ptr<ProcessBench> process;  // process workers: times itself
  int track = 0;
  bool abandoned = false;  // no longer a worker (hung, or never started); guarded by Shared::mutex
  bool detached = false;   // its thread was let go (coordinator only)
  bool busy = false;
  Clock::time_point started;
  Config current;
  std::thread thread;
};

Measurement not_run(const Config& config, Outcome outcome, ErrorInfo error) {
  Measurement m;
  m.config = config;
  m.outcome = outcome;
  m.error = std::move(error);
  return m;
}

Measurement not_run(const Config& config, Outcome outcome, std::string reason) {
  return not_run(config, outcome, make_error(outcome_error_code(outcome), std::move(reason)));
}

// Records a finished measurement (with the outputs of its checked run, when
// they are judged afterwards); the caller holds the lock.
void record_locked(Shared& s, Measurement m, Outputs* outputs = nullptr) {
  if (s.in.judge) s.in.judge->observe(m, outputs);
  if (s.in.progress) {
    if (m.ok())
      s.in.progress->benchmarked();
    else
      s.in.progress->failed();
  }
  s.results.push_back(std::move(m));
  s.changed.notify_all();
}

// One config on one worker: geometry from the caller's call (a LaunchRule
// cannot travel), then measured in this thread or by the worker process.
Measurement measure_on(Shared& s, WorkerState& w, const Artifact& artifact, nlohmann::json* args,
                       Outputs* captured) {
  auto geometry = launch_geometry(s.in.kernel, artifact.config, s.in.args);
  if (!geometry.ok()) {
    return failure(artifact, Outcome::kLaunchFailed, geometry.error().message);
  }
  if (w.process) {
    Measurement m = w.process->measure(artifact, *geometry,
                                       s.in.options.pipeline.bench_deadline_seconds, captured);
    (*args)["pid"] = w.process->last_pid();
    return m;
  }
  MeasureInputs in{w.replica ? &w.replica->args : &s.in.args, w.state ? &*w.state : &s.state,
                   &s.in.reference, &s.in.options, captured};
  return measure(*w.device, artifact, *geometry, in);
}

void bench_loop(std::shared_ptr<Shared> s, std::shared_ptr<WorkerState> w) {
  if (w->process) {
    // Started here, not by the coordinator: the start overlaps compiles.
    if (Status st = w->process->start(kWorkerStartSeconds); !st.ok()) {
      KILN_LOG(kWarn) << "benchmark worker " << w->slot
                      << " could not start: " << st.error().describe();
      std::lock_guard<std::mutex> lock(s->mutex);
      w->abandoned = true;
      s->worker_failure = st.error().message;
      s->changed.notify_all();
      return;
    }
  }
  while (true) {
    Artifact artifact;
    {
      std::unique_lock<std::mutex> lock(s->mutex);
      // Workers leave only when the coordinator says so: an empty queue may
      // still be refilled by a unit that is compiling.
      s->changed.wait(lock, [&] { return !s->ready.empty() || s->stopping; });
      if (w->abandoned || s->stopping) return;
      artifact = std::move(s->ready.front());
      s->ready.pop_front();
      w->busy = true;
      w->started = Clock::now();
      w->current = artifact.config;
    }
    TraceRecorder::Scope span(s->in.trace.get(), w->track, artifact.config.to_string(),
                              "benchmark");
    Outputs outputs;
    Measurement m = measure_on(*s, *w, artifact, &span.args, s->in.judge ? &outputs : nullptr);
    span.args["outcome"] = outcome_name(m.outcome);
    std::lock_guard<std::mutex> lock(s->mutex);
    if (w->abandoned) return;  // the watchdog recorded a timeout for it already
    w->busy = false;
    record_locked(*s, std::move(m), s->in.judge && !outputs.empty() ? &outputs : nullptr);
  }
}

Result<std::shared_ptr<WorkerState>> start_worker(const std::shared_ptr<Shared>& s, int slot) {
  auto w = std::make_shared<WorkerState>();
  w->slot = slot;
  const DeviceRef ref = s->plan.devices.at(static_cast<std::size_t>(slot));
  std::string where = ref.to_string();
  if (s->plan.process) {
    w->process =
        std::make_unique<ProcessBench>(s->plan.executable, s->call, ref, s->plan.cpu_threads);
    where += ", process";
  } else if (s->plan.home_only) {
    w->device = s->in.home;
  } else {
    auto dev = s->in.backend.bench.open_device(slot);
    if (!dev.ok()) return dev.error();
    w->owned = std::move(*dev);
    w->device = w->owned.get();
    where = w->device->properties().ref.to_string() + ", replica";
    auto replica = replicate(*w->device, *s->host);
    if (!replica.ok()) return replica.error();
    w->replica = std::move(*replica);
    w->state = s->state;
    w->state->rebind(&w->replica->args);
  }
  w->track = s->in.trace->track("bench " + std::to_string(slot) + " (" + where + ")");
  try {
    w->thread = std::thread(bench_loop, s, w);
  } catch (const std::system_error& e) {
    // Out of threads: this slot has no worker (the run goes on with the
    // others, or stops naming why), never std::terminate.
    return make_error(ErrorCode::kUnavailable,
                      "cannot start a benchmark worker thread: " + std::string(e.what()));
  }
  return w;
}

// Before any worker starts: the arguments as the first run sees them
// (restore_value snapshots back, reset_to_zero zeroed), copied to the host
// for the replicas, and the call message for worker processes.
Status prepare_replicas(Shared& s) {
  if (!s.plan.replicate) return ok_status();
  Status st = s.state.prepare(*s.in.home);
  if (!st.ok()) return st;
  auto host = HostArgs::capture(*s.in.home, s.in.args);
  if (!host.ok()) return host.error();
  s.host = std::move(*host);
  if (!s.plan.process) return ok_status();
  BenchCall call;
  call.args = *s.host;
  call.outputs = s.in.kernel.outputs;
  call.restore_value = s.in.kernel.restore_value;
  call.reset_to_zero = s.in.kernel.reset_to_zero;
  call.reference = s.in.reference;
  call.capture_outputs = s.in.judge != nullptr;
  call.options = s.in.options;
  call.options.check.reference_fn = nullptr;
  call.threads = s.plan.cpu_threads;
  s.call = std::make_shared<const Message>(call.to_message());
  return ok_status();
}

void on_compiled(Shared& s, CompletedUnit done) {
  auto now = Clock::now();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto [it, fresh] = s.compile_tracks.emplace(done.worker, 0);
  if (fresh) it->second = s.in.trace->track("compile " + std::to_string(done.worker));
  s.in.trace->span(it->second, done.result.unit.describe(), "compile",
                   now - std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(done.result.seconds)),
                   now, {{"programs", done.result.programs}, {"ok", done.result.ok_count()}});
  for (std::size_t i = 0; i < done.result.entries.size(); ++i) {
    const Config& config = done.result.unit.specializations[i].config;
    auto& entry = done.result.entries[i];
    if (!entry.ok()) {
      Outcome o = entry.error().code == ErrorCode::kCancelled ? Outcome::kCancelled
                  : entry.error().code == ErrorCode::kTimeout ? Outcome::kTimeout
                                                              : Outcome::kCompileFailed;
      record_locked(s, not_run(config, o, entry.error()));
      continue;
    }
    store_artifact(s.in.artifacts, *entry);
    if (s.in.progress) s.in.progress->compiled();
    s.artifacts.emplace(config.to_string(), *entry);
    if (s.stopping)
      record_locked(s, not_run(config, Outcome::kCancelled, s.stop_reason));
    else
      s.ready.push_back(std::move(*entry));
  }
  s.changed.notify_all();
}

}  // namespace

PipelineOutput run_pipeline(const std::vector<Config>& configs, PipelineInputs inputs) {
  auto start = Clock::now();
  auto s = std::make_shared<Shared>();
  s->in = std::move(inputs);
  if (!s->in.trace) s->in.trace = std::make_shared<TraceRecorder>();
  const TuneOptions& opt = s->in.options;
  if (s->in.progress) s->in.progress->set_total(configs.size());
  s->state = s->in.state;
  s->state.rebind(&s->in.args);

  // (1) Artifacts the cache holds are ready at once; the rest is grouped.
  UnitPlan plan = plan_units(s->in.kernel, configs, s->in.backend, s->in.context, s->in.artifacts,
                             opt.pipeline.group_size);
  s->artifact_hits = plan.cached.size();
  for (auto& a : plan.cached) {
    if (s->in.progress) s->in.progress->compiled();
    s->artifacts.emplace(a.config.to_string(), a);
    s->ready.push_back(std::move(a));
  }

  // (2) Benchmark workers, one per device: now when pipelined, after the
  // compiles otherwise.
  s->plan = plan_benchmarks(s->in.backend.bench, s->in.args, *s->in.home);
  KILN_LOG(kDebug) << s->in.kernel.tmpl.name << ": benchmarking on " << s->plan.describe();
  Status replicas = prepare_replicas(*s);
  if (!replicas.ok()) s->worker_failure = replicas.error().message;
  std::vector<std::shared_ptr<WorkerState>> workers;
  const int slots = replicas.ok() ? static_cast<int>(s->plan.devices.size()) : 0;
  auto add_worker = [&](int slot) -> bool {
    auto w = start_worker(s, slot);
    if (!w.ok()) {
      KILN_LOG(kWarn) << "cannot open a benchmark device: " << w.error().describe();
      std::lock_guard<std::mutex> lock(s->mutex);
      s->worker_failure = w.error().message;
      return false;
    }
    workers.push_back(*w);
    return true;
  };
  if (opt.pipeline.overlap) {
    for (int i = 0; i < slots; ++i) add_worker(i);
  }

  // (3) The compile pool feeds the ready queue as each unit lands.
  {
    PoolOptions po;
    po.workers = opt.pipeline.compile_threads;
    po.context = s->in.context;
    // Each compile's deadline starts when it starts (DeadlineCompiler).
    const double limit = opt.pipeline.compile_deadline_seconds;
    CompilerFactory factory = s->in.backend.compiler_factory;
    if (!factory) {
      factory = [shared = s->in.backend.compiler](int) { return shared; };
    }
    CompilePool pool(
        [factory, limit](int i) -> std::shared_ptr<Compiler> {
          return std::make_shared<DeadlineCompiler>(factory(i), limit);
        },
        po, [s](CompletedUnit done) { on_compiled(*s, std::move(done)); });
    for (auto& unit : plan.to_compile) pool.submit(std::move(unit));
    if (!opt.pipeline.overlap) {
      pool.wait_idle();
      for (int i = 0; i < slots; ++i) add_worker(i);
    }

    // (4) Watch: deadlines per config, the budget for the whole run. Every
    // config ends as one result, so the loop ends when all are in.
    auto bench_deadline = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(opt.pipeline.bench_deadline_seconds));
    std::unique_lock<std::mutex> lock(s->mutex);
    while (s->results.size() < configs.size()) {
      s->changed.wait_for(lock, std::chrono::milliseconds(10));
      auto now = Clock::now();
      for (std::size_t i = 0; i < workers.size(); ++i) {
        auto w = workers[i];
        // Worker processes keep their own deadline (they kill and replace
        // the child); only a thread is abandoned from here.
        if (w->process || w->abandoned || !w->busy || now - w->started < bench_deadline) continue;
        w->abandoned = true;
        w->detached = true;
        w->thread.detach();
        record_locked(*s, not_run(w->current, Outcome::kTimeout,
                                  "benchmark passed its deadline of " +
                                      std::to_string(opt.pipeline.bench_deadline_seconds) +
                                      " s and was abandoned (its worker is replaced)"));
        if (!s->plan.home_only && !s->stopping) {
          lock.unlock();
          add_worker(w->slot);
          lock.lock();
        }
      }
      bool any_alive =
          std::any_of(workers.begin(), workers.end(), [](auto& w) { return !w->abandoned; });
      // Isolation::kAuto: when no worker process starts (a stale or broken
      // worker executable), benchmark in threads rather than not at all.
      if (!any_alive && !workers.empty() && s->plan.process &&
          s->in.backend.bench.isolation == Isolation::kAuto && !s->stopping) {
        KILN_LOG(kWarn) << "no benchmark worker process started (" << s->worker_failure
                        << "); benchmarking in threads instead";
        s->plan.process = false;
        s->plan.home_only = !s->in.backend.bench.open_device;
        if (s->plan.home_only) s->plan.devices.resize(1);
        s->worker_failure.clear();
        lock.unlock();
        for (int i = 0; i < static_cast<int>(s->plan.devices.size()); ++i) add_worker(i);
        lock.lock();
        continue;
      }
      if (!s->stopping && (now > s->in.deadline || !any_alive)) {
        s->stopping = true;
        s->stop_reason = now > s->in.deadline ? "the tuning budget was spent before this config ran"
                         : !s->worker_failure.empty()
                             ? "no benchmark worker is left: " + s->worker_failure
                         : workers.empty() ? "no benchmark device could be opened"
                                           : "no benchmark worker is left (every one hung)";
        s->changed.notify_all();
        lock.unlock();
        pool.cancel_all();
        lock.lock();
      }
      if (s->stopping) {
        while (!s->ready.empty()) {
          record_locked(*s, not_run(s->ready.front().config, Outcome::kCancelled, s->stop_reason));
          s->ready.pop_front();
        }
      }
    }
    s->stopping = true;
    s->changed.notify_all();
  }  // the pool joins its workers here

  for (auto& w : workers) {
    if (!w->detached && w->thread.joinable()) w->thread.join();
  }

  PipelineOutput out;
  std::lock_guard<std::mutex> lock(s->mutex);
  out.measurements = s->results;
  // Verdicts known by now (the default's outputs landed); the rest, when
  // consensus decides, come when the whole search is over.
  if (s->in.judge) {
    KernelStats unused;
    apply_verdicts(s->in.judge->wrong(), out.measurements, unused);
  }
  out.artifacts = s->artifacts;
  out.stats.configs = configs.size();
  // Compiled in this run; artifacts the cache held are counted apart.
  out.stats.compiled = s->artifacts.size() - std::min(s->artifacts.size(), s->artifact_hits);
  out.stats.artifact_hits = s->artifact_hits;
  for (const auto& m : out.measurements) {
    if (m.ok()) {
      ++out.stats.benchmarked;
    } else {
      ++out.stats.failed;
      ++out.stats.failed_by_reason[outcome_name(m.outcome)];
    }
  }
  out.stats.compile_seconds = s->in.trace->busy_seconds("compile");
  out.stats.benchmark_seconds = s->in.trace->busy_seconds("benchmark");
  out.stats.overlap_seconds = s->in.trace->overlap_seconds("compile", "benchmark");
  out.stats.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace kiln::internal
