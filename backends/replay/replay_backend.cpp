// The replay's compiler and device: recorded costs spent on the run's
// clock, recorded outcomes returned.
#include "kiln/backends/replay.hpp"

#include <cstdio>
#include <cstring>
#include <limits>

#include "kiln/device/clock.hpp"
#include "kiln/device/host_memory.hpp"

namespace kiln::replay {

namespace {

using Station = PipelineClock::Station;

// Kernel Tuner's word for a config whose compile failed; every other
// failure string ("RuntimeFailedConfig", "InvalidConfig") fails its launch.
constexpr const char* kCompileFailure = "CompilationFailedConfig";

bool compile_fails(const ReplayRecord* r) {
  return !r || r->failure == kCompileFailure;
}

class ReplayCompiler final : public Compiler {
 public:
  ReplayCompiler(std::shared_ptr<ReplayBook> book, bool pool_worker)
      : book_(std::move(book)), pool_worker_(pool_worker) {
    if (pool_worker_) book_->clock().add_workers(Station::kCompile, 1);
  }
  ~ReplayCompiler() override {
    if (pool_worker_) book_->clock().remove_workers(Station::kCompile, 1);
  }
  ReplayCompiler(const ReplayCompiler&) = delete;
  ReplayCompiler& operator=(const ReplayCompiler&) = delete;

  std::string name() const override { return "replay"; }
  std::string version() const override { return "1"; }
  std::vector<std::string> code_options() const override { return {}; }

  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) override {
    PipelineClock& clock = book_->clock();
    bool fresh = false;
    const double cost = book_->charge_compile(unit, &fresh);
    // (1) The first program of a unit is the unit taken from the pool's
    // queue; the failure isolation's retries of its parts follow on this
    // thread and cost nothing more (each config's recorded time is paid
    // once). The pipeline says done() when the unit's artifacts are queued.
    if (fresh) clock.take(Station::kCompile);
    const Config& first = unit.specializations.front().config;
    // (2) The budget: nothing starts after it, a compile running at it is
    // cancelled there (as the watchdog cancels a real one).
    const double left = book_->budget_left();
    if (cancel.cancelled()) return make_error(ErrorCode::kCancelled, "the compile was cancelled");
    if (left <= 0) return book_->budget_error(first);
    const double start = clock.now();
    if (cost > left) {
      clock.spend(left, first.to_string());
      book_->span("compile", start, clock.now());
      return book_->budget_error(first);
    }
    if (cost > 0) clock.spend(cost, first.to_string());
    book_->span("compile", start, clock.now());
    // (3) The recorded outcome: the whole program fails when one config
    // did not compile (as a real compiler does); blame() names them.
    std::string why;
    for (const auto& spec : unit.specializations) {
      const ReplayRecord* r = book_->find(spec.config);
      if (!compile_fails(r)) continue;
      why += (why.empty() ? "" : "; ") + ("{" + spec.config.to_string() + "} ") +
             (r ? "recorded as " + r->failure : std::string("is not in the recorded file"));
    }
    if (!why.empty()) {
      for (const auto& spec : unit.specializations)
        if (compile_fails(book_->find(spec.config))) book_->landed(spec.config);
      return make_error(ErrorCode::kCompileFailed, why,
                        {{"log", "error: " + why + "\n"}, {"options", ""}});
    }
    CompiledProgram program;
    program.format = unit.format;
    program.arch = unit.arch;
    static const auto kBinary = std::make_shared<const std::string>("recorded");
    program.binary = kBinary;
    for (const auto& spec : unit.specializations) program.lowered_names.push_back(spec.entry);
    program.seconds = cost;
    return program;
  }

  std::vector<std::size_t> blame(const CompileUnit& unit, const std::string&) const override {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < unit.specializations.size(); ++i) {
      if (compile_fails(book_->find(unit.specializations[i].config))) out.push_back(i);
    }
    return out;
  }

 private:
  std::shared_ptr<ReplayBook> book_;
  bool pool_worker_;
};

struct Nothing final : detail::HandleState {};

// Times every launch at its config's recorded run time. The measurement
// records an event, launches, records an event and reads the time between
// them, so elapsed_ms() is the last launch's time.
class ReplayDevice final : public HostMemoryDevice {
 public:
  explicit ReplayDevice(std::shared_ptr<ReplayBook> book) : book_(std::move(book)) {
    props_.ref = DeviceRef{"replay", 0};
    props_.name = book_->recorded().device() + " (recorded)";
    props_.arch = "recorded";
  }

  const DeviceProperties& properties() const override { return props_; }

  // The benchmark: the config's recorded benchmark time passes here. The
  // benchmark worker says done() once the result is recorded (CrewFeed::clock),
  // not here: a search that proposes one config as each result lands must
  // see it before simulated time moves on.
  Result<LoadedKernel> load(const Artifact& artifact) override {
    PipelineClock& clock = book_->clock();
    // The kernel's config text is the key: launch() finds the record by it.
    const std::string key = artifact.config.key();
    clock.take(Station::kBenchmark);
    if (book_->budget_spent()) return book_->budget_error(artifact.config);
    const ReplayRecord* r = book_->find(artifact.config);
    const double start = clock.now();
    clock.spend(r ? r->benchmark_ms / 1e3 : 0, key);
    book_->span("benchmark", start, clock.now());
    book_->landed(artifact.config);
    auto state = std::make_unique<Nothing>();
    state->owner = this;
    return LoadedKernel(std::move(state), artifact.kernel, key);
  }

  Status launch(const LoadedKernel& kernel, const LaunchConfig&, const KernelArgs&) override {
    const ReplayRecord* r = book_->recorded().find(kernel.config());
    // A recorded space holds no launch geometry: launch_error's grid, block
    // and shared memory would be the replay's placeholders, (1,1,1) and 0
    // bytes, stated as the failed launch's, ahead of the recorded reason.
    if (!r || !r->time_ms) {
      const std::string reason = r ? "recorded as " + r->failure : "not in the recorded file";
      return make_error(
          ErrorCode::kLaunchFailed,
          "kernel " + kernel.name() + " [" + kernel.config() + "] failed to run: " + reason,
          {{"kernel", kernel.name()}, {"config", kernel.config()}, {"reason", reason}});
    }
    last_ms_ = *r->time_ms;
    return ok_status();
  }

  Result<Stream> create_stream() override { return Stream(handle()); }
  Result<Event> create_event() override { return Event(handle()); }
  Status record(Event&, Stream*) override { return ok_status(); }
  Result<float> elapsed_ms(const Event&, const Event&) override {
    return static_cast<float>(last_ms_);
  }

 private:
  std::unique_ptr<detail::HandleState> handle() {
    auto h = std::make_unique<Nothing>();
    h->owner = this;
    return h;
  }

  std::shared_ptr<ReplayBook> book_;
  DeviceProperties props_;
  double last_ms_ = 0;  // the benchmark worker's thread only
};

}  // namespace

ReplayBook::ReplayBook(const ReplaySource& recorded, PipelineClock& clock, double budget_seconds)
    : recorded_(recorded), clock_(clock), budget_(budget_seconds) {}

bool ReplayBook::budget_spent() const {
  return budget_left() <= 0;
}

double ReplayBook::budget_left() const {
  if (budget_ <= 0) return std::numeric_limits<double>::max();
  return budget_ - clock_.now();
}

namespace {
constexpr const char* kBudgetSpent = " simulated s) was spent before this config ran";
}

ErrorInfo ReplayBook::budget_error(const Config& config) const {
  // %g, as --budget-s was given: std::to_string's fixed six decimals read
  // a budget of 1e-7 s as "0.000000" and 3.2 as "3.200000".
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", budget_);
  return make_error(ErrorCode::kCancelled,
                    "the tuning budget (" + std::string(budget) + kBudgetSpent,
                    {{"config", config.to_string()}});
}

bool ReplayBook::stopped_by_budget(const ErrorInfo& error) {
  return error.message.find(kBudgetSpent) != std::string::npos;
}

double ReplayBook::charge_compile(const CompileUnit& unit, bool* fresh) {
  std::lock_guard<std::mutex> lock(mutex_);
  double cost = 0;
  *fresh = false;
  for (const auto& spec : unit.specializations) {
    if (!compiled_.insert(spec.config.key()).second) continue;
    *fresh = true;
    if (const ReplayRecord* r = recorded_.find(spec.config.key())) cost += r->compile_ms / 1e3;
  }
  return cost;
}

void ReplayBook::landed(const Config& config) {
  const double now = clock_.now();
  std::lock_guard<std::mutex> lock(mutex_);
  landed_.emplace(config.key(), now);
}

std::optional<double> ReplayBook::landed_at(const Config& config) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = landed_.find(config.key());
  if (it == landed_.end()) return std::nullopt;
  return it->second;
}

void ReplayBook::span(const char* category, double start, double end) {
  std::lock_guard<std::mutex> lock(mutex_);
  spans_[category].emplace_back(start, end);
}

double ReplayBook::busy_seconds(const char* category) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = spans_.find(category);
  return it == spans_.end() ? 0.0 : union_length(it->second);
}

double ReplayBook::overlap_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto compile = spans_.find("compile"), benchmark = spans_.find("benchmark");
  if (compile == spans_.end() || benchmark == spans_.end()) return 0.0;
  return intersection_length(compile->second, benchmark->second);
}

CompilerFactory replay_compilers(std::shared_ptr<ReplayBook> book) {
  return [book](int) -> std::shared_ptr<Compiler> {
    return std::make_shared<ReplayCompiler>(book, /*pool_worker=*/true);
  };
}

std::unique_ptr<Compiler> replay_compiler(std::shared_ptr<ReplayBook> book) {
  return std::make_unique<ReplayCompiler>(std::move(book), /*pool_worker=*/false);
}

std::unique_ptr<Device> make_replay_device(std::shared_ptr<ReplayBook> book) {
  return std::make_unique<ReplayDevice>(std::move(book));
}

}  // namespace kiln::replay
