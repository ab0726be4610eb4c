// The virtual clock on real threads, and replay_tune (the real pipeline on
// recorded costs) against a small file whose answers are worked out by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/lab/replay_tune.hpp"
#include "kiln/lab/virtual_clock.hpp"
#include "kiln/search/search.hpp"

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

// replay_tune, its failure a test failure; a correct run never stalls.
ReplayTuneResult replayed(const RecordedSpace& space, const TuneOptions& o) {
  auto r = replay_tune(space, o);
  if (!r.ok()) {
    ADD_FAILURE() << r.error().message;
    return {};
  }
  EXPECT_EQ(r->stalls, 0u);
  return *r;
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
    return replayed(space_, o);
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

// Each outcome is known when its benchmark ends (A 1.5, B 3.5, C 5, E
// 7.75) or its compile fails (D 7): where a best-so-far curve against
// simulated time steps.
TEST_F(ReplayTuneTest, EachMeasurementLandsWhenItsOutcomeIsKnown) {
  ReplayTuneResult r = tune(1, true);
  ASSERT_EQ(r.landed_seconds.size(), r.measurements.size());
  std::map<std::string, double> at;
  for (std::size_t i = 0; i < r.measurements.size(); ++i)
    at[r.measurements[i].config.to_string()] = r.landed_seconds[i];
  EXPECT_DOUBLE_EQ(at.at(xy(1, 1).to_string()), 1.5);
  EXPECT_DOUBLE_EQ(at.at(xy(1, 2).to_string()), 3.5);
  EXPECT_DOUBLE_EQ(at.at(xy(2, 1).to_string()), 5.0);
  EXPECT_DOUBLE_EQ(at.at(xy(2, 2).to_string()), 7.0);
  EXPECT_DOUBLE_EQ(at.at(xy(2, 3).to_string()), 7.75);
  // What a budget of 3.2 s stopped lands at the run's end, 3.5 s.
  ReplayTuneResult cut = tune(1, true, 0, 3.2);
  for (std::size_t i = 0; i < cut.measurements.size(); ++i) {
    if (cut.measurements[i].outcome == Outcome::kCancelled) {
      EXPECT_DOUBLE_EQ(cut.landed_seconds[i], 3.5) << cut.measurements[i].config.to_string();
    }
  }
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

// ------------------------------------------------- steered, in flight

// Forty configs that each compile in 1 s and benchmark in no time, replayed
// on 16 compile workers: the pace of a steered search is then set by how
// it is fed alone. In flight K (the default pacing): the first ask brings
// the default and max(K, F) proposals (F: the strategy's start, proposed at
// once), all landing at 1 s; from then on each result asks for one more,
// so K configs compile each second. B configs take
// 1 + ceil((B - 1 - max(K, F)) / K) s. In rounds of R: 1 + max(R, F) by 1 s,
// then R a second.
class ReplayInFlightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kiln-inflight-XXXXXX";
    dir_ = ::mkdtemp(dir);
    nlohmann::json file = {{"device_name", "Even GPU"},
                           {"kernel_name", "even"},
                           {"objective", "time"},
                           {"tune_params_keys", {"x"}}};
    nlohmann::json cache = nlohmann::json::object();
    std::vector<int> xs;
    for (int x = 0; x < 40; ++x) {
      xs.push_back(x);
      cache[std::to_string(x)] = {{"x", x},
                                  {"time", 1.0 + 0.1 * std::abs(x - 27)},
                                  {"compile_time", 1000},
                                  {"benchmark_time", 0}};
    }
    file["tune_params"] = {{"x", xs}};
    file["cache"] = cache;
    std::ofstream(dir_ / "even.json") << file.dump();
    auto r = read_recorded_space(dir_ / "even.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    space_ = std::move(*r);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The strategy's start (first_round) as the tuner's driver makes it.
  std::size_t start_of(const std::string& strategy, std::size_t budget) const {
    SearchSetup setup;
    setup.space = &space_.space;
    setup.max_configs = budget;
    setup.start = space_.space.default_config();
    setup.seed = 5;
    return find_search_strategy(strategy)->make(setup)->first_round();
  }

  ReplayTuneResult tune(const std::string& strategy, std::size_t budget, SearchPacing pacing) {
    TuneOptions o;
    o.search.strategy = strategy;
    o.search.max_configs = budget;
    o.search.seed = 5;
    o.search.batch = pacing.batch;
    o.search.in_flight = pacing.in_flight;
    o.pipeline.compile_threads = 16;
    return replayed(space_, o);
  }

  std::filesystem::path dir_;
  RecordedSpace space_;
};

double seconds_for(std::size_t budget, std::size_t first, std::size_t per_second) {
  if (budget <= first) return 1;
  return 1 + static_cast<double>((budget - first + per_second - 1) / per_second);
}

TEST_F(ReplayInFlightTest, TheConfigsInFlightSetThePace) {
  const std::size_t budget = 17;
  for (const std::string strategy : {"hybrid"}) {
    const std::size_t f = start_of(strategy, budget);
    for (std::size_t k : {1, 3}) {
      ReplayTuneResult r = tune(strategy, budget, SearchPacing{0, k});
      EXPECT_EQ(r.measurements.size(), budget) << strategy << " in flight " << k;
      EXPECT_DOUBLE_EQ(r.simulated_seconds, seconds_for(budget, 1 + std::max(k, f), k))
          << strategy << " in flight " << k << ", start " << f;
    }
    ReplayTuneResult rounds = tune(strategy, budget, SearchPacing{4, 0});
    EXPECT_EQ(rounds.measurements.size(), budget) << strategy;
    EXPECT_DOUBLE_EQ(rounds.simulated_seconds,
                     seconds_for(budget, 1 + std::max<std::size_t>(4, f), 4))
        << strategy << " in rounds of 4, start " << f;
  }
}

// The walk and its times are the same in every run for a seed and workers,
// though results land on several threads: a result and the proposals it
// asks for happen at one simulated moment.
TEST_F(ReplayInFlightTest, ARunIsTheSameForASeed) {
  for (const std::string strategy : {"hybrid"}) {
    TuneOptions o;
    o.search.strategy = strategy;
    o.search.max_configs = 20;
    o.search.seed = 11;
    o.pipeline.compile_threads = 3;
    auto a = replay_tune(space_, o);
    auto b = replay_tune(space_, o);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->measurements.size(), 20u) << strategy;
    ASSERT_EQ(b->measurements.size(), 20u) << strategy;
    for (std::size_t i = 0; i < 20; ++i)
      EXPECT_EQ(a->measurements[i].config, b->measurements[i].config) << strategy << " " << i;
    EXPECT_EQ(a->landed_seconds, b->landed_seconds) << strategy;
    EXPECT_DOUBLE_EQ(a->simulated_seconds, b->simulated_seconds) << strategy;
  }
}

// A simulated budget stops the refills: what it cut is cancelled, nothing
// is proposed after it, and the run ends.
TEST_F(ReplayInFlightTest, ABudgetStopsTheRefills) {
  TuneOptions o;
  o.search.strategy = "hybrid";
  o.search.max_configs = 30;
  o.search.seed = 2;
  o.pipeline.compile_threads = 16;
  o.pipeline.budget_seconds = 2.5;
  auto r = replay_tune(space_, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LE(r->simulated_seconds, 3.0);
  EXPECT_LT(r->measurements.size() - r->budget_cancelled, 30u);
  EXPECT_GT(r->budget_cancelled, 0u);
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
