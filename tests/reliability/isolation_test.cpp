// Fault injection with benchmark worker processes: one config segfaults,
// one spins forever, one writes a wrong result, one does not compile, and
// one is killed from outside while it runs. Tuning finishes, the healthy
// configs are measured, the winner is right, every failure carries its
// reason, and the caches verify clean afterwards.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "kiln/tuner/bench_worker.hpp"
#include "reliability_util.hpp"
#include "sanitized.hpp"

namespace kiln {
namespace {

using namespace kiln::test;

// MODE 0 is healthy; 1 adds 1 to every output (wrong, in ax_tail); 2 writes through a
// null pointer (SIGSEGV); 3 spins forever; 4 does not compile; 5 announces its pid in
// @DIR@/victim.pid, then waits to be killed.
const std::string kFaultySource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int getpid(void);
extern "C" int rename(const char*, const char*);
extern "C" void* fopen(const char*, const char*);
extern "C" int fprintf(void*, const char*, ...);
extern "C" int fclose(void*);
namespace t {
template <int UNROLL, int MODE>
void ax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n, float a) {
  static_assert(MODE != 4, "MODE 4 is deliberately broken");
  if (MODE == 2 && ctx.block_idx.x == 1) {
    // ctx.shared is null without dynamic shared memory: a real null write.
    static_cast<volatile float*>(ctx.shared)[0] = 1.0f;
  }
  volatile int forever = 1;
  if (MODE == 3) {
    while (forever) {
    }
  }
  if (MODE == 5 && ctx.block_idx.x == 0) {
    void* f = fopen("@DIR@/victim.pid.tmp", "w");
    if (f) {
      fprintf(f, "%d", getpid());
      fclose(f);
      rename("@DIR@/victim.pid.tmp", "@DIR@/victim.pid");
    }
    while (forever) {
    }
  }
)";

TunableKernel faulty_kernel(const std::filesystem::path& dir) {
  TunableKernel k;
  k.tmpl.name = "faulty_ax";
  k.tmpl.source = with_dir(kFaultySource + ax_tail("(MODE == 1 ? 1.0f : 0.0f)"), dir);
  k.tmpl.entry = "t::ax<{UNROLL},{MODE}>";
  k.tmpl.space.param("UNROLL", {1, 4}).param("MODE", {0, 1, 2, 3, 4, 5});
  // Each fault once (at UNROLL 1); two healthy configs.
  k.tmpl.space.constraint("faults_once", [](const Config& c) {
    return c.get_int("UNROLL") == 1 || c.get_int("MODE") == 0;
  });
  k.tmpl.space.default_config(Config{{"UNROLL", std::int64_t{1}}, {"MODE", std::int64_t{0}}});
  k.launch = four_blocks;
  k.outputs = {"y"};
  return k;
}

// Kills the process whose pid appears in `file` (the benchmark worker
// running MODE 5) and remembers it.
class Killer {
 public:
  explicit Killer(std::filesystem::path file)
      : file_(std::move(file)), thread_([this] { run(); }) {}
  ~Killer() {
    stop_ = true;
    thread_.join();
  }
  pid_t victim() const { return victim_; }

 private:
  void run() {
    while (!stop_) {
      std::string text = read_text(file_);
      if (!text.empty()) {
        const pid_t pid = static_cast<pid_t>(std::stoi(text));
        // Never this process: the config must run in a worker process.
        if (pid != ::getpid() && ::kill(pid, SIGKILL) == 0) victim_ = pid;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  std::filesystem::path file_;
  std::atomic<bool> stop_{false};
  std::atomic<pid_t> victim_{-1};
  std::thread thread_;
};

TEST(ProcessIsolation, WorkerExecutableIsFound) {
  auto exe = find_bench_worker();
  ASSERT_TRUE(exe.ok()) << exe.error().describe();
  EXPECT_NE(exe->find("kiln-bench-worker"), std::string::npos);
  auto missing = find_bench_worker("/nonexistent/kiln-bench-worker");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/kiln-bench-worker"), std::string::npos);
}

TEST(ProcessIsolation, EveryFaultIsRecordedAndTuningGoesOn) {
  Scratch s("faults");
  Autotuner tuner(cpu_backend(Isolation::kProcess), &s.artifacts, &s.tunings);
  AxCall call(4096);
  const std::vector<float> x0 = call.x;
  TuneOptions to;
  to.pipeline.bench_deadline_seconds = 1.5;
  to.pipeline.group_size = 1;
  to.pipeline.trace_path = (s.dir / "trace.json").string();
  Killer killer(s.dir / "victim.pid");
  auto r = tuner.tune(faulty_kernel(s.dir), call.args, *s.device, to);
  ASSERT_TRUE(r.ok()) << r.error().describe();

  for (const auto& m : r->measurements) {
    std::printf("  {%s}: %s %s\n", m.config.to_string().c_str(), outcome_name(m.outcome),
                m.reason().substr(0, 240).c_str());
  }
  ASSERT_EQ(r->measurements.size(), 7u);
  EXPECT_EQ(r->source, ResultSource::kTuned);
  EXPECT_EQ(r->config.get_int("MODE"), 0) << "the winner is a healthy config";
  for (std::int64_t unroll : {1, 4}) {
    ASSERT_NE(find_mode(*r, unroll, 0), nullptr);
    EXPECT_TRUE(find_mode(*r, unroll, 0)->ok()) << find_mode(*r, unroll, 0)->reason();
  }
  const Measurement* wrong = find_mode(*r, 1, 1);
  EXPECT_EQ(wrong->outcome, Outcome::kWrongResult);
  EXPECT_NE(wrong->reason().find("output 'y'"), std::string::npos) << wrong->reason();

  const Measurement* segv = find_mode(*r, 1, 2);
  EXPECT_EQ(segv->outcome, Outcome::kCrashed);
#if defined(KILN_TEST_SANITIZED)
  // The sanitizer's SEGV handler reports the fault and then ends the worker
  // itself: by abort() with abort_on_error=1 (scripts/sanitize.sh sets it),
  // otherwise by exiting with the sanitizer's exit code.
  EXPECT_TRUE(segv->reason().find("SIGABRT") != std::string::npos ||
              segv->reason().find("exited with status") != std::string::npos)
      << segv->reason();
#else
  EXPECT_NE(segv->reason().find("SIGSEGV"), std::string::npos) << segv->reason();
#endif

  const Measurement* spin = find_mode(*r, 1, 3);
  EXPECT_EQ(spin->outcome, Outcome::kTimeout);
  EXPECT_NE(spin->reason().find("deadline of 1.5 s"), std::string::npos) << spin->reason();

  const Measurement* broken = find_mode(*r, 1, 4);
  EXPECT_EQ(broken->outcome, Outcome::kCompileFailed);
  EXPECT_NE(broken->reason().find("deliberately broken"), std::string::npos) << broken->reason();

  const Measurement* killed = find_mode(*r, 1, 5);
  ASSERT_GT(killer.victim(), 0) << "the MODE 5 config never ran in a worker process";
  EXPECT_EQ(killed->outcome, Outcome::kCrashed) << killed->reason();
  EXPECT_NE(killed->reason().find("SIGKILL"), std::string::npos) << killed->reason();
  EXPECT_NE(killed->reason().find(std::to_string(killer.victim())), std::string::npos)
      << killed->reason();

  EXPECT_EQ(r->stats.benchmarked, 2u);
  EXPECT_EQ(r->stats.failed_by_reason.at("crashed"), 2u);
  EXPECT_EQ(r->stats.failed_by_reason.at("timeout"), 1u);

  // The caller's input is untouched and the winner computes y = a*x here.
  EXPECT_EQ(call.x, x0);
  std::fill(call.y.begin(), call.y.end(), 0.0f);
  ASSERT_TRUE(r->launch(*s.device, faulty_kernel(s.dir), call.args).ok());
  for (std::size_t i = 0; i < call.x.size(); ++i) ASSERT_EQ(call.y[i], 3.0f * call.x[i]) << i;

  // Benchmark spans ran on a process worker (the trace names it).
  const std::string trace = read_text(s.dir / "trace.json");
  EXPECT_NE(trace.find("bench 0 (cpu, process)"), std::string::npos);
  EXPECT_NE(trace.find("\"pid\""), std::string::npos);
  s.expect_caches_clean(1);
}

// Raw pointer arguments: raw_pointer_test.cpp.

// The error of a tuning run that cannot start its benchmark workers,
// whether tune() throws it or returns it.
std::optional<ErrorInfo> tune_error(Autotuner& tuner, const TunableKernel& k, const ArgList& args,
                                    Device& device) {
  try {
    auto r = tuner.tune(k, args, device);
    if (!r.ok()) return r.error();
  } catch (const Error& e) {
    return e.info();
  }
  return std::nullopt;
}

// A worker the user named (BenchPlacement::worker_path) that is missing, or is not
// a worker (/bin/true exits at once: no hello), is an error naming the
// setting and the fix for kAuto as for kProcess, and nothing is saved; it
// never silently costs crash isolation. kThread does not start it.
TEST(ProcessIsolation, ANamedWorkerThatDoesNotWorkIsAnError) {
  for (const std::string worker : {"/nonexistent/kiln-bench-worker", "/bin/true"}) {
    for (Isolation iso : {Isolation::kAuto, Isolation::kProcess, Isolation::kThread}) {
      SCOPED_TRACE(worker + (iso == Isolation::kAuto      ? " auto"
                             : iso == Isolation::kProcess ? " process"
                                                          : " thread"));
      Scratch s("named_worker");
      Backend b = cpu_backend(iso);
      b.bench.worker_path = worker;
      Autotuner tuner(b, &s.artifacts, &s.tunings);
      AxCall call(256);
      TunableKernel k = faulty_kernel(s.dir);
      k.tmpl.space = ConfigSpace();
      k.tmpl.space.param("UNROLL", {1, 4}).param("MODE", {0});
      auto error = tune_error(tuner, k, call.args, *s.device);
      if (iso == Isolation::kThread) {
        EXPECT_FALSE(error.has_value()) << error->describe();
        EXPECT_EQ(TuningCache(s.opts).records().size(), 1u);
        continue;
      }
      ASSERT_TRUE(error.has_value()) << "a broken worker was not reported";
      EXPECT_NE(error->message.find("BenchPlacement::worker_path '" + worker + "'"),
                std::string::npos)
          << error->message;
      EXPECT_NE(error->message.find("Isolation::kThread"), std::string::npos) << error->message;
      if (worker == "/bin/true") {
        EXPECT_NE(error->message.find("did not answer the hello"), std::string::npos)
            << error->message;
      }
      EXPECT_EQ(TuningCache(s.opts).records().size(), 0u);
    }
  }
}

// The worker pids that benchmark spans of a trace name.
std::set<int> worker_pids(const std::filesystem::path& trace) {
  std::set<int> pids;
  auto json = nlohmann::json::parse(read_text(trace));
  for (const auto& e : json.at("traceEvents")) {
    if (e.contains("args") && e["args"].contains("pid")) pids.insert(e["args"]["pid"].get<int>());
  }
  return pids;
}

TEST(ProcessIsolation, AnIdleWorkerServesTheNextRun) {
  Scratch s("reuse");
  Autotuner tuner(cpu_backend(Isolation::kProcess), &s.artifacts, &s.tunings);
  TunableKernel k = faulty_kernel(s.dir);
  k.tmpl.space = ConfigSpace();
  k.tmpl.space.param("UNROLL", {1, 4}).param("MODE", {0});
  std::vector<std::set<int>> runs;
  for (int n : {512, 768}) {  // two problems: two tuning runs
    AxCall call(n);
    TuneOptions to;
    to.pipeline.trace_path = (s.dir / ("trace" + std::to_string(n) + ".json")).string();
    auto r = tuner.tune(k, call.args, *s.device, to);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->source, ResultSource::kTuned);
    EXPECT_EQ(r->stats.benchmarked, 2u);
    runs.push_back(worker_pids(to.pipeline.trace_path));
  }
  ASSERT_EQ(runs[0].size(), 1u);
  EXPECT_EQ(runs[0], runs[1]) << "the second run started a new worker";
  EXPECT_EQ(runs[0].count(::getpid()), 0u);
}

TEST(ProcessIsolation, ResultsMatchThreadBenchmarking) {
  // The same healthy space, once per isolation: the same configs pass, and
  // an in-place kernel's tensors end as one clean run in both.
  for (Isolation iso : {Isolation::kThread, Isolation::kProcess}) {
    Scratch s(iso == Isolation::kThread ? "same_thread" : "same_process");
    Autotuner tuner(cpu_backend(iso), &s.artifacts, &s.tunings);
    AxCall call(2048);
    TunableKernel k = faulty_kernel(s.dir);
    k.tmpl.name = "accumulate_ax";
    std::string src = k.tmpl.source;
    src.replace(src.find("y[i] = a"), 8, "y[i] += a");
    k.tmpl.source = src;
    k.tmpl.space = ConfigSpace();
    k.tmpl.space.param("UNROLL", {1, 2, 4}).param("MODE", {0});
    k.restore_value = {"y"};
    std::fill(call.y.begin(), call.y.end(), 1.0f);
    auto r = tuner.run(k, call.args, *s.device);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->stats.benchmarked, 3u);
    // y = 1 + a*x: one clean run on the restored tensor, however many reps.
    for (std::size_t i = 0; i < call.x.size(); ++i)
      ASSERT_EQ(call.y[i], 1.0f + 3.0f * call.x[i]) << i;
  }
}

}  // namespace
}  // namespace kiln
