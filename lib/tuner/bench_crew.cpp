#include "bench_crew.hpp"

#include <chrono>
#include <system_error>

#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"

namespace kiln::internal {

struct BenchCrew::Failure {
  std::mutex mutex;
  std::string message;

  void set(std::string m) {
    std::lock_guard<std::mutex> lock(mutex);
    message = std::move(m);
  }
  std::string get() {
    std::lock_guard<std::mutex> lock(mutex);
    return message;
  }
};

// One worker and its thread. `mutex` decides who owns the config being
// measured: the worker, if it finishes before the watchdog abandons it.
struct BenchCrew::Slot {
  int slot = 0;
  std::shared_ptr<BenchWorker> worker;
  bool keeps_deadline = false;
  bool borrows = false;
  int track = 0;
  std::thread thread;  // the crew's thread only

  std::mutex mutex;
  bool alive = true;  // false: could not start, or abandoned
  bool abandoned = false;
  std::optional<WatchClock::time_point> busy_since;
  Config current;
};

BenchCrew::BenchCrew(std::shared_ptr<const CrewFeed> feed, WorkerSource& source)
    : feed_(std::move(feed)), source_(source), failure_(std::make_shared<Failure>()) {}

BenchCrew::~BenchCrew() {
  finish();
}

void BenchCrew::loop(std::shared_ptr<const CrewFeed> feed, std::shared_ptr<Slot> slot,
                     std::shared_ptr<Failure> note) {
  // Started here, not by the crew: a process start overlaps the compiles.
  if (Status st = slot->worker->start(); !st.ok()) {
    KILN_LOG(kWarn) << "benchmark worker " << slot->slot
                    << " could not start: " << st.error().describe();
    {
      std::lock_guard<std::mutex> lock(slot->mutex);
      slot->alive = false;
    }
    note->set(st.error().message);
    feed->ledger->notify();
    return;
  }
  // Workers leave only when the queue is closed: an empty queue may still
  // be refilled by a unit that is compiling.
  while (std::optional<Artifact> artifact = feed->queue->pop()) {
    {
      std::lock_guard<std::mutex> lock(slot->mutex);
      if (!slot->alive) return;
      slot->busy_since = WatchClock::now();
      slot->current = artifact->config;
    }
    Measurement m;
    Outputs outputs;
    {
      TraceRecorder::Scope span(feed->trace.get(), slot->track, artifact->config.to_string(),
                                "benchmark");
      // Geometry from the caller's call: a LaunchRule cannot travel.
      auto geometry = launch_geometry(feed->kernel, artifact->config, feed->args);
      if (!geometry.ok()) {
        m = failure(*artifact, Outcome::kLaunchFailed, geometry.error().message);
      } else {
        // Early stop against what was measured so far: a config clearly
        // slower than the best, or that cannot win, ends after a few
        // repetitions (StopBars).
        StopBars bars;
        if (feed->early_stop > 0) bars = {feed->ledger->best_seconds(), feed->screen};
        // Timed here, around whichever worker ran it (a thread, a process),
        // so the record's benchmark cost is what this tuning spent on it. A
        // replay's virtual clock cannot move between these two readings but
        // by this benchmark (the item waits for this free worker before;
        // this worker is busy and awake after), so a replay's report stays
        // the same from run to run.
        const double began = feed->clock->now();
        m = slot->worker->measure(*artifact, *geometry, bars,
                                  feed->capture_outputs ? &outputs : nullptr, &span.args);
        m.benchmark_seconds = feed->clock->now() - began;
      }
      span.args["outcome"] = outcome_name(m.outcome);
    }
    {
      std::lock_guard<std::mutex> lock(slot->mutex);
      if (slot->abandoned) return;  // the watchdog recorded a timeout for it already
      slot->busy_since.reset();
    }
    feed->ledger->record(std::move(m),
                         feed->capture_outputs && !outputs.empty() ? &outputs : nullptr);
    feed->clock->done();  // a replay device took the config (CrewFeed::clock)
  }
}

bool BenchCrew::start(int slot) {
  auto made = source_.make(slot);
  if (!made.ok()) {
    KILN_LOG(kWarn) << "cannot open a benchmark device: " << made.error().describe();
    failure_->set(made.error().message);
    return false;
  }
  auto s = std::make_shared<Slot>();
  s->slot = slot;
  s->worker = std::move(*made);
  s->keeps_deadline = s->worker->keeps_deadline();
  s->borrows = s->worker->borrows_caller_device();
  s->track = feed_->trace->track("bench " + std::to_string(slot) + " (" + s->worker->where() + ")");
  try {
    s->thread = std::thread(loop, feed_, s, failure_);
  } catch (const std::system_error& e) {
    // Out of threads: this slot has no worker (the run goes on with the
    // others, or stops naming why), never std::terminate.
    std::string why = "cannot start a benchmark worker thread: " + std::string(e.what());
    KILN_LOG(kWarn) << "cannot open a benchmark device: " << why;
    failure_->set(why);
    return false;
  }
  slots_.push_back(std::move(s));
  return true;
}

std::vector<WorkerWatch> BenchCrew::watch() const {
  std::vector<WorkerWatch> out;
  for (const auto& s : slots_) {
    std::lock_guard<std::mutex> lock(s->mutex);
    out.push_back(WorkerWatch{s->slot, s->alive, s->keeps_deadline, !s->borrows, s->busy_since});
  }
  return out;
}

std::string BenchCrew::worker_failure() const {
  return failure_->get();
}

void BenchCrew::obey(const WatchOrders& orders, const Watchdog& dog,
                     const std::function<void()>& cancel_compiles) {
  const auto now = WatchClock::now();
  for (int slot : orders.abandon) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const std::shared_ptr<Slot> s = slots_[i];
      if (s->slot != slot) continue;
      Config config;
      {
        // The worker may have finished since the watchdog looked: then the
        // config is its own.
        std::lock_guard<std::mutex> lock(s->mutex);
        if (!s->alive || !s->busy_since || now - *s->busy_since < dog.rules().bench_deadline)
          continue;
        s->alive = false;
        s->abandoned = true;
        config = s->current;
      }
      if (s->borrows) {
        // Not let go: it runs on what the caller owns (finish() waits).
        KILN_LOG(kWarn) << "config {" << config.to_string()
                        << "} passed its benchmark deadline on the caller's device; the run "
                           "cannot return while its kernel uses the caller's device and tensors";
      } else {
        s->thread.detach();  // it owns what it uses (thread_worker.hpp)
      }
      feed_->ledger->record(not_run(config, Outcome::kTimeout, dog.timeout_reason()));
      for (int r : orders.replace) {
        if (r == slot) start(slot);
      }
    }
  }
  if (orders.fall_back) {
    KILN_LOG(kWarn) << "no benchmark worker process started (" << failure_->get()
                    << "); benchmarking in threads instead";
    const int slots = source_.fall_back_to_threads();
    failure_->set("");
    for (int i = 0; i < slots; ++i) start(i);
  }
  if (orders.stop) {
    for (Artifact& a : feed_->queue->close(*orders.stop)) {
      feed_->ledger->record(not_run(a.config, Outcome::kCancelled, *orders.stop));
    }
    cancel_compiles();
  }
}

void BenchCrew::finish() {
  if (finished_) return;
  finished_ = true;
  feed_->queue->close("the run is over");
  for (const auto& s : slots_) {
    if (!s->thread.joinable()) continue;
    bool waiting_on_caller = false;
    Config config;
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      waiting_on_caller = s->abandoned && s->borrows;
      config = s->current;
    }
    if (waiting_on_caller) {
      KILN_LOG(kWarn) << "waiting for config {" << config.to_string()
                      << "}, which passed its benchmark deadline on the caller's device, to end "
                         "before returning (give Backend::open_device, for workers on devices of "
                         "their own, or use worker processes, and a hung config is left behind)";
    }
    s->thread.join();
  }
}

}  // namespace kiln::internal
