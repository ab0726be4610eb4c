#include "pipeline.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "artifact_source.hpp"
#include "kiln/compile_pool.hpp"
#include "kiln/error.hpp"
#include "kiln/log.hpp"

namespace kiln::internal {

namespace {

using Clock = std::chrono::steady_clock;

// Everything a benchmark worker touches. Held by shared_ptr: a worker whose
// kernel hangs is abandoned (its thread detached), and may still wake up
// long after run_pipeline has returned.
struct Shared {
  PipelineInputs in;
  CallState state;

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Artifact> ready;
  bool stopping = false;
  std::string stop_reason;
  std::vector<Measurement> results;
  std::map<std::string, Artifact> artifacts;
  std::size_t artifact_hits = 0;
  std::map<int, int> compile_tracks;  // pool worker -> trace track
};

struct WorkerState {
  int slot = 0;
  std::unique_ptr<Device> owned;  // null when benchmarking on the home device
  Device* device = nullptr;
  int track = 0;
  bool abandoned = false;  // guarded by Shared::mutex
  bool busy = false;
  Clock::time_point started;
  Config current;
  std::thread thread;
};

Measurement not_run(const Config& config, Outcome outcome, std::string reason) {
  Measurement m;
  m.config = config;
  m.outcome = outcome;
  m.reason = std::move(reason);
  return m;
}

// Records a finished measurement; the caller holds the lock.
void record_locked(Shared& s, Measurement m) {
  if (s.in.progress) {
    if (m.ok())
      s.in.progress->benchmarked();
    else
      s.in.progress->failed();
  }
  s.results.push_back(std::move(m));
  s.changed.notify_all();
}

void bench_loop(std::shared_ptr<Shared> s, std::shared_ptr<WorkerState> w) {
  MeasureInputs in{&s->in.kernel, &s->in.args, &s->state, &s->in.reference, &s->in.options};
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
    Measurement m = measure(*w->device, artifact, in);
    span.args = {{"outcome", outcome_name(m.outcome)}};
    std::lock_guard<std::mutex> lock(s->mutex);
    if (w->abandoned) return;  // the watchdog recorded a timeout for it already
    w->busy = false;
    record_locked(*s, std::move(m));
  }
}

Result<std::shared_ptr<WorkerState>> start_worker(const std::shared_ptr<Shared>& s, int slot) {
  auto w = std::make_shared<WorkerState>();
  w->slot = slot;
  if (s->in.backend.open_device) {
    auto dev = s->in.backend.open_device(slot);
    if (!dev.ok()) return dev.error();
    w->owned = std::move(*dev);
    w->device = w->owned.get();
  } else {
    w->device = s->in.home;
  }
  w->track = s->in.trace->track("bench " + std::to_string(slot) + " (" +
                                w->device->properties().ref.to_string() + ")");
  w->thread = std::thread(bench_loop, s, w);
  return w;
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
      record_locked(s, not_run(config, o, entry.error().describe()));
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
                             opt.group_size);
  s->artifact_hits = plan.cached.size();
  for (auto& a : plan.cached) {
    if (s->in.progress) s->in.progress->compiled();
    s->artifacts.emplace(a.config.to_string(), a);
    s->ready.push_back(std::move(a));
  }

  // (2) Benchmark workers: now when pipelined, after the compiles otherwise.
  std::vector<std::shared_ptr<WorkerState>> workers;
  int slots = s->in.backend.open_device ? std::max(1, s->in.backend.bench_workers) : 1;
  int next_slot = 0;
  auto add_worker = [&]() -> bool {
    auto w = start_worker(s, next_slot++);
    if (!w.ok()) {
      KILN_LOG(kWarn) << "cannot open a benchmark device: " << w.error().describe();
      return false;
    }
    workers.push_back(*w);
    return true;
  };
  if (opt.pipeline) {
    for (int i = 0; i < slots; ++i) add_worker();
  }

  // (3) The compile pool feeds the ready queue as each unit lands.
  {
    PoolOptions po;
    po.workers = opt.compile_threads;
    po.context = s->in.context;
    CompilePool pool(s->in.backend.compiler, po,
                     [s](CompletedUnit done) { on_compiled(*s, std::move(done)); });
    for (auto& unit : plan.to_compile) {
      CancelToken token;
      token.set_deadline(Clock::now() +
                         std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(opt.compile_deadline_seconds)));
      pool.submit(std::move(unit), token);
    }
    if (!opt.pipeline) {
      pool.wait_idle();
      for (int i = 0; i < slots; ++i) add_worker();
    }

    // (4) Watch: deadlines per config, the budget for the whole run. Every
    // config ends as one result, so the loop ends when all are in.
    auto bench_deadline = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(opt.bench_deadline_seconds));
    std::unique_lock<std::mutex> lock(s->mutex);
    while (s->results.size() < configs.size()) {
      s->changed.wait_for(lock, std::chrono::milliseconds(10));
      auto now = Clock::now();
      for (std::size_t i = 0; i < workers.size(); ++i) {
        auto w = workers[i];
        if (w->abandoned || !w->busy || now - w->started < bench_deadline) continue;
        w->abandoned = true;
        w->thread.detach();
        record_locked(*s, not_run(w->current, Outcome::kTimeout,
                                  "benchmark passed its deadline of " +
                                      std::to_string(opt.bench_deadline_seconds) +
                                      " s and was abandoned (its worker is replaced)"));
        if (s->in.backend.open_device && !s->stopping) {
          lock.unlock();
          add_worker();
          lock.lock();
        }
      }
      bool any_alive =
          std::any_of(workers.begin(), workers.end(), [](auto& w) { return !w->abandoned; });
      if (!s->stopping && (now > s->in.deadline || !any_alive)) {
        s->stopping = true;
        s->stop_reason = now > s->in.deadline ? "the tuning budget was spent before this config ran"
                         : workers.empty()    ? "no benchmark device could be opened"
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
    if (!w->abandoned && w->thread.joinable()) w->thread.join();
  }

  PipelineOutput out;
  std::lock_guard<std::mutex> lock(s->mutex);
  out.measurements = s->results;
  out.artifacts = s->artifacts;
  out.stats.configs = configs.size();
  out.stats.compiled = s->artifacts.size();
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
