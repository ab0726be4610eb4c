// The virtual clock on real threads, and replay_tune (the real pipeline on
// recorded costs) against a small file whose answers are worked out by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/tuner/recorded_space.hpp"
#include "kiln/tuner/replay_tune.hpp"
#include "kiln/tuner/virtual_clock.hpp"

namespace kiln {
namespace {

using Station = VirtualClock::Station;

// ------------------------------------------------------------ the clock

TEST(VirtualClockTest, SpendOnOneThreadAdvancesNow) {
  VirtualClock clock;
  clock.add_workers(Station::kCompile, 1);
  clock.offer(Station::kCompile, 1);
  clock.take(Station::kCompile);
  clock.spend(1.5, "a");
  EXPECT_DOUBLE_EQ(clock.now(), 1.5);
  clock.spend(0.25, "a");
  EXPECT_DOUBLE_EQ(clock.now(), 1.75);
  clock.done();
  EXPECT_EQ(clock.stalls(), 0u);
}

TEST(VirtualClockTest, SpendWithoutTakeIsMisuse) {
  VirtualClock clock;
  EXPECT_THROW(clock.spend(1.0), Error);
}

// Two workers, three jobs of 3, 1 and 1 s: list scheduling gives ends at
// 1 (job b), 2 (job c, taken by b's worker at 1) and 3 (job a), whatever
// order the OS runs the threads in. Each job is claimed under a lock, as
// a pool's queue does.
TEST(VirtualClockTest, WorkersRunInSimulatedTimeOrderWhateverTheThreadOrder) {
  for (int trial = 0; trial < 20; ++trial) {
    VirtualClock clock;
    std::mutex mutex;
    std::vector<std::pair<std::string, double>> jobs = {{"a", 3}, {"b", 1}, {"c", 1}};
    std::size_t next = 0;
    std::map<std::string, double> ended;
    clock.add_workers(Station::kCompile, 2);
    clock.offer(Station::kCompile, jobs.size());
    auto worker = [&] {
      while (true) {
        std::pair<std::string, double> job;
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (next == jobs.size()) return;
          job = jobs[next++];
        }
        clock.take(Station::kCompile);
        clock.spend(job.second, job.first);
        {
          std::lock_guard<std::mutex> lock(mutex);
          ended[job.first] = clock.now();
        }
        clock.done();
      }
    };
    std::thread t1(worker), t2(worker);
    t1.join();
    t2.join();
    EXPECT_DOUBLE_EQ(ended["a"], 3.0);
    EXPECT_DOUBLE_EQ(ended["b"], 1.0);
    EXPECT_DOUBLE_EQ(ended["c"], 2.0);
    EXPECT_DOUBLE_EQ(clock.now(), 3.0);
    EXPECT_EQ(clock.stalls(), 0u);
  }
}

// Work offered to a station with a free worker holds the clock: a compile
// that lands at 1 s is benchmarked from 1 s, even though the other compile
// worker's span (ending at 5 s) is asleep and nothing else is.
TEST(VirtualClockTest, OfferedWorkHoldsTheClockUntilAFreeWorkerTakesIt) {
  VirtualClock clock;
  clock.add_workers(Station::kCompile, 2);
  clock.add_workers(Station::kBenchmark, 1);
  clock.offer(Station::kCompile, 2);
  std::mutex mutex;
  double bench_start = -1, bench_end = -1;
  std::thread slow([&] {
    clock.take(Station::kCompile);
    clock.spend(5, "slow");
    clock.done();
  });
  std::thread fast([&] {
    clock.take(Station::kCompile);
    clock.spend(1, "fast");
    clock.offer(Station::kBenchmark, 1);
    clock.done();
  });
  std::thread bench([&] {
    // A real benchmark thread may come late: the clock must wait for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    clock.take(Station::kBenchmark);
    const double start = clock.now();
    clock.spend(0.5, "fast");
    std::lock_guard<std::mutex> lock(mutex);
    bench_start = start;
    bench_end = clock.now();
    clock.done();
  });
  slow.join();
  fast.join();
  bench.join();
  EXPECT_DOUBLE_EQ(bench_start, 1.0);
  EXPECT_DOUBLE_EQ(bench_end, 1.5);
  EXPECT_DOUBLE_EQ(clock.now(), 5.0);
  EXPECT_EQ(clock.stalls(), 0u);
}

// ------------------------------------------------------------ replay_tune

// x in {1,2}, y in {1,2,3}; (1,3) is absent (ruled out). Times in the file
// are ms: compile c, benchmark b, run time t.
//   A (1,1): c 1 s,   b 0.5 s,  t 4 ms   (the default: first in odometer order)
//   B (1,2): c 2 s,   b 0.5 s,  t 2 ms
//   C (2,1): c 1 s,   b 1 s,    t 1 ms   (the optimum)
//   D (2,2): c 3 s,   compile failed
//   E (2,3): c 0.5 s, b 0.25 s, failed to run
const char* kHandFile = R"({
  "device_name": "Hand GPU", "kernel_name": "hand", "objective": "time",
  "tune_params_keys": ["x", "y"],
  "tune_params": {"x": [1, 2], "y": [1, 2, 3]},
  "cache": {
    "1,1": {"x": 1, "y": 1, "time": 4.0, "compile_time": 1000, "benchmark_time": 500},
    "1,2": {"x": 1, "y": 2, "time": 2.0, "compile_time": 2000, "benchmark_time": 500},
    "2,1": {"x": 2, "y": 1, "time": 1.0, "compile_time": 1000, "benchmark_time": 1000},
    "2,2": {"x": 2, "y": 2, "time": "CompilationFailedConfig", "compile_time": 3000,
            "benchmark_time": 0},
    "2,3": {"x": 2, "y": 3, "time": "RuntimeFailedConfig", "compile_time": 500,
            "benchmark_time": 250}
  }})";

Config xy(std::int64_t x, std::int64_t y) {
  return Config{{"x", x}, {"y", y}};
}

class ReplayTuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kiln-replay-XXXXXX";
    dir_ = ::mkdtemp(dir);
    std::ofstream(dir_ / "hand.json") << kHandFile;
    auto r = read_recorded_space(dir_ / "hand.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    space_ = std::move(*r);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ReplayTuneResult tune(int threads, bool pipelined, std::size_t max_configs = 0,
                        double budget = 0) {
    TuneOptions o;
    o.search.strategy = "exhaustive";
    o.search.max_configs = max_configs;
    o.pipeline.compile_threads = threads;
    o.pipeline.overlap = pipelined;
    o.pipeline.budget_seconds = budget;
    auto r = replay_tune(space_, o);
    if (!r.ok()) {
      ADD_FAILURE() << r.error().message;
      return {};
    }
    EXPECT_EQ(r->stalls, 0u);
    return *r;
  }

  static const Measurement& of(const ReplayTuneResult& r, const Config& c) {
    for (const auto& m : r.measurements)
      if (m.config == c) return m;
    throw std::runtime_error("not measured: " + c.to_string());
  }

  std::filesystem::path dir_;
  RecordedSpace space_;
};

TEST_F(ReplayTuneTest, FindsTheOptimumAndFailsConfigsAsRecorded) {
  ReplayTuneResult r = tune(1, true);
  ASSERT_EQ(r.measurements.size(), 5u);
  EXPECT_EQ(r.default_config, xy(1, 1));
  ASSERT_TRUE(r.winner);
  EXPECT_EQ(r.winner->config, xy(2, 1));
  EXPECT_DOUBLE_EQ(r.winner->stats.median, 1e-3);
  EXPECT_EQ(*r.best, xy(2, 1));
  EXPECT_DOUBLE_EQ(r.fraction, 1.0);
  EXPECT_EQ(of(r, xy(2, 2)).outcome, Outcome::kCompileFailed);
  EXPECT_NE(of(r, xy(2, 2)).reason().find("CompilationFailedConfig"), std::string::npos);
  EXPECT_EQ(of(r, xy(2, 3)).outcome, Outcome::kLaunchFailed);
  EXPECT_NE(of(r, xy(2, 3)).reason().find("RuntimeFailedConfig"), std::string::npos);
  EXPECT_DOUBLE_EQ(of(r, xy(1, 2)).stats.median, 2e-3);
  EXPECT_EQ(r.stats.benchmarked, 3u);
  EXPECT_EQ(r.stats.failed, 2u);
}

// One compile worker, pipelined: compiles A [0,1] B [1,3] C [3,4] D [4,7]
// E [7,7.5]; the benchmark worker takes each as it lands: A [1,1.5],
// B [3,3.5], C [4,5], E [7.5,7.75]. Wall 7.75 s, against 9.75 s one config
// after another (the sum of every compile and benchmark).
// (Busy and overlap times are unions of spans on a trace's clock: equal to
// the nanosecond.)
TEST_F(ReplayTuneTest, PipelinedWallTimeWithOneCompileWorker) {
  ReplayTuneResult r = tune(1, true);
  EXPECT_DOUBLE_EQ(r.simulated_seconds, 7.75);
  EXPECT_NEAR(r.stats.compile_seconds, 7.5, 1e-6);
  EXPECT_NEAR(r.stats.benchmark_seconds, 2.25, 1e-6);
  EXPECT_NEAR(r.stats.overlap_seconds, 2.0, 1e-6);  // A, B and C's benchmarks
}

// Not pipelined, one worker: every compile (7.5 s), then every benchmark
// (2.25 s): 9.75 s, the serial sum.
TEST_F(ReplayTuneTest, CompileThenBenchmarkWithOneCompileWorker) {
  EXPECT_DOUBLE_EQ(tune(1, false).simulated_seconds, 9.75);
}

// Two compile workers: A [0,1] and B [0,2]; C [1,2] on A's worker; at 2 B
// and C land together, D [2,5] and E [2,2.5] start. Benchmarks A [1,1.5],
// B [2,2.5], C [2.5,3.5], E [3.5,3.75]; the wall is D's compile end, 5 s.
// Not pipelined: compiles end at 5, then 2.25 s of benchmarks: 7.25 s.
TEST_F(ReplayTuneTest, TwoCompileWorkersPipelinedAndNot) {
  ReplayTuneResult piped = tune(2, true);
  EXPECT_DOUBLE_EQ(piped.simulated_seconds, 5.0);
  EXPECT_NEAR(piped.stats.benchmark_seconds, 2.25, 1e-6);
  EXPECT_DOUBLE_EQ(tune(2, false).simulated_seconds, 7.25);
}

// Two configs (the default first, then B): the best is B at 2 ms, half the
// optimum; A [0,1]+[1,1.5], B [1,3]+[3,3.5].
TEST_F(ReplayTuneTest, MaxConfigsLimitsTheSearchAndTheFraction) {
  ReplayTuneResult r = tune(1, true, 2);
  ASSERT_EQ(r.measurements.size(), 2u);
  EXPECT_DOUBLE_EQ(r.fraction, 0.5);
  EXPECT_DOUBLE_EQ(r.simulated_seconds, 3.5);
}

// A budget of 3.2 simulated s: C's compile (from 3) is cancelled at 3.2, D
// and E never start; B's benchmark, started at 3, still ends at 3.5 (a
// running benchmark is not stopped).
TEST_F(ReplayTuneTest, SimulatedBudgetCancelsWhatItDoesNotReach) {
  ReplayTuneResult r = tune(1, true, 0, 3.2);
  EXPECT_DOUBLE_EQ(r.simulated_seconds, 3.5);
  EXPECT_EQ(r.budget_cancelled, 3u);
  EXPECT_EQ(of(r, xy(2, 1)).outcome, Outcome::kCancelled);
  EXPECT_TRUE(of(r, xy(1, 2)).ok());
  EXPECT_DOUBLE_EQ(r.fraction, 0.5);
}

TEST_F(ReplayTuneTest, SameSeedAndThreadsGiveTheSameRun) {
  TuneOptions o;
  o.search.strategy = "random";
  o.search.max_configs = 4;
  o.search.seed = 7;
  o.pipeline.compile_threads = 2;
  auto a = replay_tune(space_, o);
  auto b = replay_tune(space_, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->simulated_seconds, b->simulated_seconds);
  EXPECT_DOUBLE_EQ(a->stats.overlap_seconds, b->stats.overlap_seconds);
  // The same configs with the same outcomes (results that land at one
  // simulated moment may be listed in either order).
  auto outcomes = [](const ReplayTuneResult& r) {
    std::map<std::string, Outcome> by;
    for (const auto& m : r.measurements) by[m.config.to_string()] = m.outcome;
    return by;
  };
  EXPECT_EQ(outcomes(*a), outcomes(*b));
  EXPECT_EQ(a->best, b->best);
}

TEST_F(ReplayTuneTest, UnknownStrategyNamesTheValidOnes) {
  TuneOptions o;
  o.search.strategy = "nonesuch";
  auto r = replay_tune(space_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("exhaustive"), std::string::npos);
}

}  // namespace
}  // namespace kiln
