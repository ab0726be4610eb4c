// The tuning run's steps, in order; the parts live in their own files:
// the ready queue (ready_queue.hpp), the benchmark workers
// (benchmark_worker.hpp, thread_worker.hpp, process_worker.hpp) run by the
// crew (bench_crew.hpp), the watchdog (watchdog.hpp) and the results
// (result_ledger.hpp).
#include "pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>

#include "bench_crew.hpp"
#include "deadline_compiler.hpp"
#include "host_args.hpp"
#include "kiln/compile/compile_pool.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/log.hpp"
#include "kiln/tuner/artifact_source.hpp"
#include "process_worker.hpp"
#include "thread_worker.hpp"

namespace kiln::internal {

namespace {

// Makes the run's workers from its BenchPlan; after a fall back, threads.
class PlannedWorkers : public WorkerSource {
 public:
  PlannedWorkers(BenchPlan plan, const PipelineInputs& in) : plan_(std::move(plan)), in_(in) {}

  BenchPlan& plan() { return plan_; }
  std::shared_ptr<ThreadCall>& thread_call() { return thread_call_; }
  std::shared_ptr<const Message>& process_call() { return process_call_; }

  Result<std::unique_ptr<BenchWorker>> make(int slot) override {
    const DeviceRef ref = plan_.devices.at(static_cast<std::size_t>(slot));
    if (plan_.process) {
      return std::unique_ptr<BenchWorker>(
          std::make_unique<ProcessWorker>(plan_.executable, process_call_, ref, plan_.cpu_threads,
                                          in_.options.pipeline.bench_deadline_seconds));
    }
    if (plan_.home_only)
      return std::unique_ptr<BenchWorker>(ThreadWorker::on_caller_device(*in_.home, thread_call_));
    auto dev = in_.backend.bench.open_device(slot);
    if (!dev.ok()) return dev.error();
    auto w = ThreadWorker::on_own_device(std::move(*dev), thread_call_);
    if (!w.ok()) return w.error();
    return std::unique_ptr<BenchWorker>(std::move(*w));
  }

  int fall_back_to_threads() override {
    plan_.process = false;
    plan_.home_only = !in_.backend.bench.open_device;
    if (plan_.home_only) plan_.devices.resize(1);
    return static_cast<int>(plan_.devices.size());
  }

 private:
  BenchPlan plan_;
  const PipelineInputs& in_;
  std::shared_ptr<ThreadCall> thread_call_;
  std::shared_ptr<const Message> process_call_;
};

// Before any worker starts: the arguments as the first run sees them
// (restore_value snapshots back, reset_to_zero zeroed), copied to the host
// for the replicas, and the call message for worker processes.
Status prepare_calls(PipelineInputs& in, PlannedWorkers& workers) {
  auto call = std::make_shared<ThreadCall>();
  call->reference = in.reference;
  call->options = in.options;
  // A worker left behind by a hung config holds no callback of the caller's.
  // The benchmark hooks stay: they make the plan home_only, whose worker
  // borrows the caller's device, and the run waits for such a worker.
  call->options.check.reference_fn = nullptr;
  call->args = in.args;
  call->state = in.state;
  call->state->rebind(&call->args);
  workers.thread_call() = call;
  const BenchPlan& plan = workers.plan();
  if (!plan.replicate) return ok_status();
  // The replicas start as the first run sees them, but the caller's own
  // reset_to_zero arguments keep their contents until the real call (which
  // zeroes them itself): tuning leaves no trace in the caller's memory.
  std::vector<std::pair<const Arg*, std::string>> kept;
  for (const auto& name : in.kernel.reset_to_zero) {
    const Arg& a = find_arg(in.args, name);
    std::string bytes(a.storage_bytes(), '\0');
    if (bytes.empty()) continue;
    Status copied = in.home->copy_to_host(bytes.data(), a.address(), bytes.size());
    if (!copied.ok()) return copied;
    kept.emplace_back(&a, std::move(bytes));
  }
  Status st = call->state->prepare(*in.home);
  if (!st.ok()) return st;
  auto host = HostArgs::capture(*in.home, in.args);
  for (const auto& [arg, bytes] : kept) {
    Status back = in.home->copy_to_device(arg->address(), bytes.data(), bytes.size());
    if (back.ok()) back = in.home->synchronize();
    if (!back.ok()) return back;
  }
  if (!host.ok()) return host.error();
  call->host = std::move(*host);
  if (!plan.process) return ok_status();
  BenchCall bc;
  bc.args = *call->host;
  bc.outputs = in.kernel.outputs;
  bc.restore_value = in.kernel.restore_value;
  bc.reset_to_zero = in.kernel.reset_to_zero;
  bc.reference = in.reference;
  bc.capture_outputs = in.judge != nullptr;
  bc.options = in.options;
  bc.options.check.reference_fn = nullptr;
  bc.threads = plan.cpu_threads;
  workers.process_call() = std::make_shared<const Message>(bc.to_message());
  return ok_status();
}

// What the compile callbacks share with the run. Its lock guards the two
// maps only, and no benchmark worker takes it: storing an artifact (files,
// fsyncs, maybe an eviction scan) happens under no lock at all, on the
// callback's thread, before the artifact is pushed.
struct Landing {
  PipelineInputs* in;
  std::shared_ptr<ReadyQueue> queue;
  std::shared_ptr<ResultLedger> ledger;
  std::mutex mutex;
  std::map<std::string, Artifact> artifacts;  // by config, for the output
  std::map<int, int> compile_tracks;          // pool worker -> trace track
};

void on_compiled(Landing& l, CompletedUnit done) {
  auto now = WatchClock::now();
  int track = 0;
  {
    std::lock_guard<std::mutex> lock(l.mutex);
    auto [it, fresh] = l.compile_tracks.emplace(done.worker, 0);
    if (fresh) it->second = l.in->trace->track("compile " + std::to_string(done.worker));
    track = it->second;
  }
  l.in->trace->span(track, done.result.unit.describe(), "compile",
                    now - std::chrono::duration_cast<WatchClock::duration>(
                              std::chrono::duration<double>(done.result.seconds)),
                    now, {{"programs", done.result.programs}, {"ok", done.result.ok_count()}});
  std::size_t pushed = 0;
  for (std::size_t i = 0; i < done.result.entries.size(); ++i) {
    const Config& config = done.result.unit.specializations[i].config;
    auto& entry = done.result.entries[i];
    if (!entry.ok()) {
      Outcome o = entry.error().code == ErrorCode::kCancelled ? Outcome::kCancelled
                  : entry.error().code == ErrorCode::kTimeout ? Outcome::kTimeout
                                                              : Outcome::kCompileFailed;
      Measurement failed = not_run(config, o, entry.error());
      // A rejected config cost its compile too. Not in a replay: there the
      // unit's wall time is real, not simulated, and would differ by run.
      if (l.in->clock->measures_real_time()) {
        failed.compile_seconds = done.result.seconds;
        failed.group_size = done.result.entries.size();
      }
      l.ledger->record(std::move(failed));
      continue;
    }
    // NOTES: disk I/O, outside every lock a benchmark worker takes.
    store_artifact(l.in->artifacts, *entry);
    if (l.in->progress) l.in->progress->compiled();
    {
      std::lock_guard<std::mutex> lock(l.mutex);
      l.artifacts.emplace(config.key(), *entry);
    }
    if (!l.queue->push(*entry)) {
      l.ledger->record(not_run(config, Outcome::kCancelled, l.queue->close_reason()));
    } else {
      ++pushed;
    }
  }
  // Simulated time: the configs wait for a benchmark worker, and this
  // compile worker is free again, only now that they are in the queue.
  l.in->clock->offer(PipelineClock::Station::kBenchmark, pushed);
  l.in->clock->done();
}

// The run's configs: those it starts with and those a search adds as
// results land (PipelineInputs::refill). Artifacts already built go to the
// ready queue, the rest to the compile pool in units; the run ends when
// every config taken in has its result. Its lock is never held while the
// run records a result: a unit submitted to a pool that could start no
// worker completes on the submitting thread, into the ledger.
class Intake {
 public:
  Intake(PipelineInputs& in, Landing& landing) : in_(in), landing_(landing) {}

  void take(const std::vector<Config>& configs) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      expected_ += configs.size();
    }
    place(configs);
  }

  // The ledger's hook: one result in, the search's next configs out. It
  // runs on the recording thread (a benchmark worker, a compile callback),
  // so a model's refit delays that worker's next config: a few ms against
  // a GPU benchmark's tenths of a second, and on the virtual clock no
  // simulated time at all.
  void on_result(const Measurement& result) {
    if (in_.journal) in_.journal->landed(result, in_.judge.get());
    if (!in_.refill) return;
    std::vector<Config> more;
    {
      // One call into the search at a time; it sees the verdicts known now
      // (wrong outputs) as a round would.
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<Measurement> seen{result};
      if (in_.judge) {
        KernelStats unused;
        apply_verdicts(in_.judge->wrong(), seen, unused);
      }
      // Past the budget's deadline the watchdog is about to stop the run.
      const bool stopping = stopped_ || WatchClock::now() >= in_.deadline;
      try {
        more = in_.refill(seen.front(), stopping);
      } catch (...) {
        // A throwing hook (a kernel's early prune, a strategy) must not end
        // a worker thread: the run takes nothing more, finishes what is in
        // flight, and run_pipeline throws it where a round would have.
        if (!failure_) failure_ = std::current_exception();
        stopped_ = true;
        more.clear();
      }
      if (stopping) more.clear();
      expected_ += more.size();
    }
    if (more.empty()) return;
    try {
      place(more);
    } catch (const Error& e) {
      // A config outside the space (a strategy's bug): its result says so,
      // the run goes on.
      for (const Config& c : more)
        landing_.ledger->record(not_run(c, Outcome::kCompileFailed, e.info()));
    }
  }

  // The pool exists: what was planned before it is submitted now.
  void attach(CompilePool* pool) {
    std::vector<CompileUnit> waiting;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pool_ = pool;
      waiting.swap(waiting_);
    }
    submit(std::move(waiting), pool);
  }

  // No config is taken in after this: the run is stopping or over.
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
  }
  std::size_t expected() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return expected_;
  }
  // What the refill threw, once the run is over; null when nothing did.
  std::exception_ptr failure() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }
  // Configs whose artifacts were there already (PipelineInputs::ready, the
  // artifact cache): not compiled in this run.
  std::size_t built() const { return reused_ + hits_; }
  std::size_t hits() const { return hits_; }

 private:
  void place(const std::vector<Config>& configs) {
    std::vector<Config> to_plan;
    std::vector<Artifact> ready;
    std::vector<Measurement> earlier;
    for (const auto& c : configs) {
      auto found = in_.ready.find(c.key());
      if (auto m = in_.journal ? in_.journal->take(c) : std::nullopt)
        earlier.push_back(std::move(*m));
      else if (found == in_.ready.end())
        to_plan.push_back(c);
      else
        ready.push_back(found->second);  // a copy: a config may come more than once (finalists)
    }
    UnitPlan units = plan_units(in_.kernel, to_plan, in_.backend, in_.context, in_.artifacts,
                                in_.options.pipeline.group_size);
    reused_ += ready.size();
    hits_ += units.cached.size();
    if (in_.progress)
      for (std::size_t i = 0; i < units.cached.size(); ++i) in_.progress->compiled();
    ready.insert(ready.end(), std::make_move_iterator(units.cached.begin()),
                 std::make_move_iterator(units.cached.end()));
    {
      std::lock_guard<std::mutex> lock(landing_.mutex);
      for (const Artifact& a : ready) landing_.artifacts.emplace(a.config.key(), a);
    }
    in_.clock->offer(PipelineClock::Station::kBenchmark, ready.size());
    for (Artifact& a : ready) {
      const Config config = a.config;
      if (!landing_.queue->push(a))
        landing_.ledger->record(
            not_run(config, Outcome::kCancelled, landing_.queue->close_reason()));
    }
    CompilePool* pool = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pool = pool_;
      if (!pool) {
        for (auto& unit : units.to_compile) waiting_.push_back(std::move(unit));
      }
    }
    submit(std::move(units.to_compile), pool);
    if (in_.journal)
      in_.journal->land(std::move(earlier),
                        [this](Measurement m) { landing_.ledger->record(std::move(m)); });
  }

  void submit(std::vector<CompileUnit> units, CompilePool* pool) {
    if (units.empty() || !pool) return;
    in_.clock->offer(PipelineClock::Station::kCompile, units.size());
    for (auto& unit : units) pool->submit(std::move(unit));
  }

  PipelineInputs& in_;
  Landing& landing_;
  mutable std::mutex mutex_;
  std::size_t expected_ = 0;
  bool stopped_ = false;
  std::exception_ptr failure_;
  CompilePool* pool_ = nullptr;
  std::vector<CompileUnit> waiting_;  // planned before the pool was attached
  std::atomic<std::size_t> reused_{0}, hits_{0};
};

WatchRules watch_rules(const PipelineInputs& in, const BenchPlan& plan) {
  WatchRules rules;
  // Capped: an "infinite" deadline must not overflow the clock.
  const double seconds = std::min(in.options.pipeline.bench_deadline_seconds, 1e7);
  rules.bench_deadline =
      std::chrono::duration_cast<WatchClock::duration>(std::chrono::duration<double>(seconds));
  rules.bench_deadline_seconds = in.options.pipeline.bench_deadline_seconds;
  rules.budget_deadline = in.deadline;
  rules.may_fall_back = plan.process && in.backend.bench.isolation == Isolation::kAuto;
  rules.interrupted = in.options.pipeline.interrupted;
  return rules;
}

std::shared_ptr<const CrewFeed> crew_feed(const PipelineInputs& in,
                                          std::shared_ptr<ReadyQueue> queue,
                                          std::shared_ptr<ResultLedger> ledger) {
  auto feed = std::make_shared<CrewFeed>();
  feed->queue = std::move(queue);
  feed->ledger = std::move(ledger);
  feed->kernel = in.kernel;
  feed->args = in.args;
  feed->trace = in.trace;
  feed->capture_outputs = in.judge != nullptr;
  feed->early_stop = in.options.measure.early_stop;
  feed->screen = in.screen;
  feed->clock = in.clock;
  return feed;
}

// The pool's compilers: each compile's deadline starts when it starts.
CompilerFactory deadline_compilers(const PipelineInputs& in) {
  const double limit = in.options.pipeline.compile_deadline_seconds;
  CompilerFactory factory = in.backend.compiler_factory;
  if (!factory) {
    factory = [shared = in.backend.compiler](int) { return shared; };
  }
  return [factory, limit](int i) -> std::shared_ptr<Compiler> {
    return std::make_shared<DeadlineCompiler>(factory(i), limit);
  };
}

// The watchdog judges at every change (a result, a worker that could not
// start) and at the next deadline it names; every config ends as one
// result, so the run ends when all are in.
void watch_run(Intake& intake, ResultLedger& ledger, Watchdog& dog, BenchCrew& crew,
               const std::string& prepare_failure, const std::function<void()>& cancel_compiles) {
  std::uint64_t seen = 0;
  while (ledger.count() < intake.expected()) {
    std::string failure = crew.worker_failure();
    if (failure.empty()) failure = prepare_failure;
    WatchOrders orders = dog.check(WatchClock::now(), crew.watch(), failure);
    // Before the configs it cancels are recorded: their results refill nothing.
    if (orders.stop) intake.stop();
    crew.obey(orders, dog, cancel_compiles);
    if (orders.acted()) continue;
    ledger.wait(&seen, orders.next_check);
  }
}

KernelStats run_stats(std::size_t configs, const std::vector<Measurement>& results,
                      std::size_t compiled, std::size_t hits, const TraceRecorder& trace) {
  KernelStats stats;
  stats.configs = configs;
  stats.compiled = compiled;
  stats.artifact_hits = hits;
  for (const auto& m : results) {
    if (m.ok()) {
      ++stats.benchmarked;
    } else {
      ++stats.failed;
      ++stats.failed_by_reason[outcome_name(m.outcome)];
    }
  }
  stats.compile_seconds = trace.busy_seconds("compile");
  stats.benchmark_seconds = trace.busy_seconds("benchmark");
  stats.overlap_seconds = trace.overlap_seconds("compile", "benchmark");
  return stats;
}

}  // namespace

PipelineOutput run_pipeline(const std::vector<Config>& configs, PipelineInputs inputs) {
  auto start = WatchClock::now();
  PipelineInputs& in = inputs;
  if (!in.trace) in.trace = std::make_shared<TraceRecorder>();
  const TuneOptions& opt = in.options;
  // A run that grows as results land counts against its caller's total.
  if (in.progress && !in.refill) in.progress->set_total(configs.size());
  in.state.rebind(&in.args);
  auto queue = std::make_shared<ReadyQueue>();
  auto ledger = std::make_shared<ResultLedger>(in.judge, in.progress);
  ledger->set_prior_best(in.best_seconds);

  // (1) Artifacts built before or held by the cache are ready at once; the
  // rest is grouped into units, submitted once the pool exists. Each result
  // may bring more (PipelineInputs::refill).
  Landing landing{&in, queue, ledger, {}, {}, {}};
  Intake intake(in, landing);
  if (in.refill || in.journal)
    ledger->set_on_record([&intake](const Measurement& m) { intake.on_result(m); });
  intake.take(configs);

  // (2) Benchmark workers, one per device: now when pipelined, after the
  // compiles otherwise.
  PlannedWorkers source(in.plan, in);
  KILN_LOG(kDebug) << in.kernel.tmpl.name << ": benchmarking on " << source.plan().describe();
  Status calls = prepare_calls(in, source);
  BenchCrew crew(crew_feed(in, queue, ledger), source);
  const int slots = calls.ok() ? static_cast<int>(source.plan().devices.size()) : 0;
  if (opt.pipeline.overlap) {
    for (int i = 0; i < slots; ++i) crew.start(i);
    in.clock->add_workers(PipelineClock::Station::kBenchmark, slots);
  }
  Watchdog dog(watch_rules(in, source.plan()));
  // The first failure to prepare is why no worker exists.
  const std::string prepare_failure = calls.ok() ? "" : calls.error().message;

  // (3) The compile pool feeds the ready queue as each unit lands.
  {
    PoolOptions po;
    po.workers = opt.pipeline.compile_threads;
    po.context = in.context;
    CompilePool pool(deadline_compilers(in), po,
                     [&landing](CompletedUnit done) { on_compiled(landing, std::move(done)); });
    intake.attach(&pool);
    if (!opt.pipeline.overlap) {
      pool.wait_idle();
      for (int i = 0; i < slots; ++i) crew.start(i);
      in.clock->add_workers(PipelineClock::Station::kBenchmark, slots);
    }

    // (4) Deadlines, replacement, fall back, budget, until all are in; a
    // stopped run takes no more configs.
    watch_run(intake, *ledger, dog, crew, prepare_failure, [&pool] { pool.cancel_all(); });
    intake.stop();
    intake.attach(nullptr);
    crew.finish();
    in.clock->remove_workers(PipelineClock::Station::kBenchmark, slots);
  }  // the pool joins its workers here

  // (5) The results; nothing the caller lent is used after this.
  PipelineOutput out;
  out.measurements = ledger->close();
  if (std::exception_ptr failure = intake.failure()) std::rethrow_exception(failure);
  out.interrupted = dog.interrupted();
  // Verdicts known by now (the default's outputs landed); the rest, when
  // consensus decides, come when the whole search is over.
  if (in.judge) {
    KernelStats unused;
    apply_verdicts(in.judge->wrong(), out.measurements, unused);
  }
  out.artifacts = landing.artifacts;
  // Compiled in this run; artifacts the cache held are counted apart.
  const std::size_t compiled =
      out.artifacts.size() - std::min(out.artifacts.size(), intake.built());
  out.stats = run_stats(intake.expected(), out.measurements, compiled, intake.hits(), *in.trace);
  out.stats.wall_seconds = std::chrono::duration<double>(WatchClock::now() - start).count();
  return out;
}

}  // namespace kiln::internal
