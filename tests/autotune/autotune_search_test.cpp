// The tuner's searches end to end on the CPU backend (real Clang compiles,
// real kernels, real timings): the steered search (hybrid) measures only
// what the early prune keeps, shares one trace over its rounds, and it and
// random search stay within max_configs and the time budget. Assertions are
// on behaviour and on relative facts, never on absolute times.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "skip.hpp"
#include "tune_session.hpp"

namespace kiln {
namespace {

using testing::Session;

// d = |W - T| + P steps from the best. The kernel sleeps: one unit at
// d = 0, 2 + 2d units elsewhere, so the best is 4x faster than any other
// config and every step away costs more. Sleeping, not spinning: a spin's
// time stretches with the machine's load (2-6x on a busy 2-core machine,
// unevenly from one config to the next), a sleep's hardly, so the test
// judges the search, not the neighbours' builds.
constexpr const char* kSleepSource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
namespace t {
template <int W, int P, int T>
void sleepy(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n, int unit_us) {
  constexpr int d = (W > T ? W - T : T - W) + P;
  usleep(static_cast<unsigned>((d == 0 ? 1 : 2 + 2 * d) * unit_us));
  if (ctx.block_idx.x == 0)
    for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}
}  // namespace t
)";

std::vector<Value> range(std::int64_t n) {
  std::vector<Value> v;
  for (std::int64_t i = 0; i < n; ++i) v.emplace_back(i);
  return v;
}

// W in 0..widths-1, P in 0..penalties-1, the best at W = best_w, P = 0; the
// default is the slowest corner.
TunableKernel sleep_kernel(std::int64_t widths, std::int64_t penalties, std::int64_t best_w) {
  TunableKernel k;
  k.tmpl.name = "sleep_search_test";
  k.tmpl.source = kSleepSource;
  k.tmpl.entry = "t::sleepy<{W},{P},{T}>";
  k.tmpl.space.param("W", range(widths)).param("P", range(penalties)).param("T", {best_w});
  std::int64_t far = best_w >= widths / 2 ? 0 : widths - 1;
  k.tmpl.space.default_config(
      Config{{"W", far}, {"P", std::int64_t{penalties - 1}}, {"T", best_w}});
  k.launch = [](const Config&, const ArgList&) { return LaunchGeometry{}; };
  k.outputs = {"y"};
  return k;
}

struct SleepCall {
  std::vector<float> x = std::vector<float>(64, 1.5f), y = std::vector<float>(64, 0.0f);
  ArgList args;
  explicit SleepCall(int unit) {
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {64})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {64})),
            Arg::of_scalar("n", 64), Arg::of_scalar("unit", unit, false)};
  }
};

// Short timing: the costs differ by 2x a step, a few repetitions tell them apart.
TuneOptions quick(const std::string& search, std::size_t max_configs, std::uint64_t seed) {
  TuneOptions o;
  o.search.strategy = search;
  o.search.max_configs = max_configs;
  o.search.seed = seed;
  o.measure.target_seconds = 0.002;
  o.measure.max_reps = 20;
  o.pipeline.progress = false;
  o.cache.save = false;
  return o;
}

std::vector<std::string> measured(const TuneResult& r) {
  std::vector<std::string> out;
  for (const auto& m : r.measurements) out.push_back(m.config.to_string());
  return out;
}

void expect_distinct_and_within(const TuneResult& r, const TunableKernel& k, std::size_t limit) {
  auto names = measured(r);
  EXPECT_LE(names.size(), limit);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size())
      << "a config was measured twice";
  EXPECT_NE(std::find(names.begin(), names.end(), k.tmpl.space.default_config().to_string()),
            names.end())
      << "the default config is always measured";
}

TEST(AutotuneSearch, SteeredSearchMeasuresOnlyWhatTheEarlyPruneKeeps) {
  TunableKernel k = sleep_kernel(8, 4, 5);
  const Config def = k.tmpl.space.default_config();
  k.early_prune = [def](const Config& c, const ProblemKey&) {
    return c.get_int("P") == 0 || c == def;  // the default is measured anyway
  };
  SleepCall call(20);
  Session s("steered_prune");
  auto r = s.tuner.tune(k, call.args, **s.device, quick("hybrid", 12, 2));
  ASSERT_TRUE(r.ok()) << r.error().describe();
  expect_distinct_and_within(*r, k, 12);
  EXPECT_GT(r->measurements.size(), 1u);
  for (const auto& m : r->measurements) {
    if (m.config != def) {
      EXPECT_EQ(m.config.get_int("P"), 0) << m.config.to_string();
    }
  }
}

TEST(AutotuneSearch, SteeredRoundsShareOneTrace) {
  // Several rounds, each a pipeline run: one timeline with one track per
  // worker (not one per round), holding every round's spans.
  TunableKernel k = sleep_kernel(8, 4, 5);
  SleepCall call(20);
  Session s("steered_trace");
  TuneOptions o = quick("hybrid", 14, 4);
  o.search.batch = 2;  // rounds of 9 (the default and hybrid's start of 8), 2, 2, 1 configs
  o.pipeline.trace_path = (s.dir / "trace.json").string();
  auto r = s.tuner.tune(k, call.args, **s.device, o);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->measurements.size(), 14u);
  std::ifstream in(o.pipeline.trace_path);
  nlohmann::json trace = nlohmann::json::parse(in);
  std::set<std::string> tracks;
  std::size_t track_events = 0, compiles = 0, benchmarks = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["name"] == "thread_name") {
      ++track_events;
      tracks.insert(e["args"]["name"].get<std::string>());
    }
    if (e.value("cat", "") == "compile") ++compiles;
    if (e.value("cat", "") == "benchmark") ++benchmarks;
  }
  EXPECT_EQ(tracks.size(), track_events) << "a worker's track repeated per round";
  EXPECT_GE(compiles, 4u) << "every round's compiles";
  EXPECT_GE(benchmarks, r->stats.benchmarked);
  EXPECT_GT(r->stats.compile_seconds, 0.0);
  EXPECT_GT(r->stats.benchmark_seconds, 0.0);
}

TEST(AutotuneSearch, OneShotSearchesMeasureMaxConfigsWithTheDefault) {
  // The default config (the slowest corner) is last in enumeration order
  // and unlikely among 5 random draws: it takes a candidate's place.
  TunableKernel k = sleep_kernel(8, 4, 5);
  SleepCall call(20);
  for (std::string kind : {"exhaustive", "random"}) {
    Session s("one_shot_" + kind);
    auto r = s.tuner.tune(k, call.args, **s.device, quick(kind, 5, 1));
    ASSERT_TRUE(r.ok()) << r.error().describe();
    expect_distinct_and_within(*r, k, 5);
    EXPECT_EQ(r->measurements.size(), 5u);
  }
}

TEST(AutotuneSearch, SpentBudgetStopsBothSearches) {
  TunableKernel k = sleep_kernel(8, 4, 5);
  SleepCall call(20);
  for (std::string kind : {"random", "hybrid"}) {
    Session s("budget_" + kind);
    TuneOptions o = quick(kind, 20, 5);
    o.pipeline.budget_seconds = 1e-6;  // spent before the first config compiles
    o.pipeline.group_size = 1;
    auto r = s.tuner.tune(k, call.args, **s.device, o);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_GE(r->stats.failed_by_reason["cancelled"], 1u);
    if (kind == "random") {
      EXPECT_EQ(r->measurements.size(), 20u) << "every candidate is accounted for";
    } else {
      // One round (the default and the strategy's start), none after it.
      SearchSetup setup;
      setup.space = &k.tmpl.space;
      setup.max_configs = o.search.max_configs;
      setup.start = k.tmpl.space.default_config();
      const std::size_t start = find_search_strategy(kind)->make(setup)->first_round();
      EXPECT_GT(start, 1u);
      EXPECT_EQ(r->measurements.size(), 1u + start);
    }
  }
}

// A steered search fed as results land (the default pacing) against a
// real compiler and real threads: the refills go through the pipeline,
// max_configs holds, no config twice; rounds give the same guarantees.
TEST(AutotuneSearch, InFlightAndRoundsBothKeepTheBudgetOnARealRun) {
  TunableKernel k = sleep_kernel(8, 4, 5);
  SleepCall call(20);
  for (std::size_t rounds : {0, 3}) {
    Session s("in_flight_" + std::to_string(rounds));
    TuneOptions o = quick("hybrid", 14, 4);
    o.search.batch = rounds;
    o.search.in_flight = rounds ? 0 : 2;
    auto r = s.tuner.tune(k, call.args, **s.device, o);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    expect_distinct_and_within(*r, k, 14);
    EXPECT_EQ(r->measurements.size(), 14u) << "rounds " << rounds;
    EXPECT_EQ(r->stats.configs, 14u) << "rounds " << rounds;
  }
}

// Interrupted while configs are in flight: the run stops at the next
// check, refills nothing more, and returns kCancelled instead of hanging.
TEST(AutotuneSearch, AnInterruptedInFlightSearchStops) {
  TunableKernel k = sleep_kernel(8, 4, 5);
  SleepCall call(20);
  Session s("in_flight_interrupted");
  TuneOptions o = quick("hybrid", 30, 2);
  std::atomic<int> asked{0};
  o.pipeline.interrupted = [&asked] { return ++asked >= 4; };  // ~150 ms in
  auto r = s.tuner.tune(k, call.args, **s.device, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled) << r.error().describe();
}

// A kernel's early prune that throws while the search refills the run
// (on a worker thread) reaches the caller as it would from a round, after
// the configs in flight are done: no worker thread ends in std::terminate.
TEST(AutotuneSearch, AHookThrowingDuringARefillReachesTheCaller) {
  TunableKernel k = sleep_kernel(8, 4, 5);
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto off_caller = std::make_shared<std::atomic<bool>>(false);
  k.early_prune = [calls, off_caller, caller = std::this_thread::get_id()](const Config&,
                                                                           const ProblemKey&) {
    if (++*calls <= 12) return true;
    *off_caller = std::this_thread::get_id() != caller;
    throw Error(ErrorCode::kInvalidArgument, "prune hook failed on purpose");
  };
  SleepCall call(20);
  Session s("in_flight_throwing_hook");
  try {
    auto r = s.tuner.tune(k, call.args, **s.device, quick("hybrid", 24, 3));
    ADD_FAILURE() << "expected the hook's error, got "
                  << (r.ok() ? std::string("a result") : r.error().describe());
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("on purpose"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(off_caller->load()) << "the hook threw on the calling thread, not in a refill";
}

// An unknown strategy is misuse: it throws before anything runs, naming
// the registered ones.
TEST(AutotuneSearch, AnUnknownStrategyNamesTheValidOnes) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  TunableKernel k = sleep_kernel(8, 4, 5);
  SleepCall call(20);
  Session s("unknown_strategy");
  try {
    auto r = s.tuner.tune(k, call.args, **s.device, quick("simplex", 5, 1));
    FAIL() << "tuned with an unknown strategy";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown search strategy 'simplex'"), std::string::npos) << what;
    EXPECT_NE(what.find("exhaustive, random, hybrid"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kiln
