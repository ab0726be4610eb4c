// Benchmark hooks end to end on the CPU backend (TuneOptions::hooks): a
// real kernel through the real tuner. pre_run / post_run around every run
// of a config, on the caller's own arguments; a hook's error fails only its
// config; a user benchmarker's samples become the measurement; and worker
// processes (Isolation::kProcess), which cannot run a host callable, are
// refused with the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tune_session.hpp"

namespace kiln {
namespace {

// Accumulates: y += 2 x. A run that does not start from a zeroed y leaves
// more than 2 x in it.
constexpr const char* kAccSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int UNROLL>
void acc(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  int i = 0;
  for (; i + UNROLL <= n; i += UNROLL)
    for (int u = 0; u < UNROLL; ++u) y[i + u] += 2.0f * x[i + u];
  for (; i < n; ++i) y[i] += 2.0f * x[i];
}
}  // namespace t
)";

TunableKernel acc_kernel(const std::string& name) {
  return testing::one_block_kernel(name, kAccSource, "t::acc<{UNROLL}>",
                                   ConfigSpace().param("UNROLL", {1, 2, 4}));
}

struct AccCall {
  std::vector<float> x, y;
  ArgList args;
  explicit AccCall(int n) : x(n, 1.5f), y(n, 7.0f) {
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_scalar("n", n)};
  }
};

// Counts fixed by the options: no early stop, no finalists, 2 warm-ups and
// 3 repetitions, so each config runs 1 (checked) + 1 (warm-up) + 3 times.
TuneOptions counted_options() {
  TuneOptions o;
  o.measure.warmup = 2;
  o.measure.min_reps = 3;
  o.measure.max_reps = 3;
  o.measure.early_stop = 0;
  o.search.finalists = 0;
  o.search.warm_start = 0;
  o.cache.save = false;
  return o;
}

// What the hooks saw, by config (UNROLL), under a lock.
struct Seen {
  std::mutex mutex;
  std::map<std::int64_t, int> pre, post;
  std::map<std::int64_t, std::vector<float>> y_after;  // y[0] after each run
  int foreign_args = 0;                                // hooks given other buffers
};

void install_counting_hooks(TuneOptions& o, Seen& seen, const AccCall& call) {
  o.hooks.pre_run = [&seen, &call](const Config& c, const ArgList& args) -> Status {
    std::lock_guard lock(seen.mutex);
    ++seen.pre[c.get_int("UNROLL")];
    if (args[1].address() != call.y.data()) ++seen.foreign_args;
    // Triton's use: zero the accumulated output before every run.
    auto* y = static_cast<float*>(args[1].address());
    for (std::size_t i = 0; i < call.y.size(); ++i) y[i] = 0.0f;
    return ok_status();
  };
  o.hooks.post_run = [&seen](const Config& c, const ArgList& args, const Status& run) -> Status {
    std::lock_guard lock(seen.mutex);
    ++seen.post[c.get_int("UNROLL")];
    EXPECT_TRUE(run.ok());
    seen.y_after[c.get_int("UNROLL")].push_back(static_cast<const float*>(args[1].address())[0]);
    return ok_status();
  };
}

const Measurement& measured(const TuneResult& r, std::int64_t unroll) {
  for (const auto& m : r.measurements)
    if (m.config.get_int("UNROLL") == unroll) return m;
  throw Error(ErrorCode::kNotFound, "no measurement of UNROLL=" + std::to_string(unroll));
}

TEST(BenchHooks, PreAndPostRunAroundEveryRunOnTheCallersArguments) {
  testing::Session s("bench_hooks_counts");
  ASSERT_TRUE(s.device.ok());
  AccCall call(256);
  Seen seen;
  TuneOptions o = counted_options();
  install_counting_hooks(o, seen, call);
  auto r = s.tuner.tune(acc_kernel("hooks_counts"), call.args, **s.device, o);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ASSERT_EQ(r->measurements.size(), 3u);
  EXPECT_EQ(seen.foreign_args, 0) << "hooks run on the caller's own arguments";
  for (std::int64_t u : {1, 2, 4}) {
    const Measurement& m = measured(*r, u);
    ASSERT_TRUE(m.ok()) << m.reason();
    EXPECT_EQ(m.stats.reps, 3u);
    EXPECT_EQ(seen.pre[u], 5) << "checked run + 1 warm-up + 3 repetitions, UNROLL=" << u;
    EXPECT_EQ(seen.post[u], 5) << "UNROLL=" << u;
    // pre_run zeroed y before each run: every run left exactly 2 x.
    for (float v : seen.y_after[u]) EXPECT_EQ(v, 3.0f) << "UNROLL=" << u;
  }
  EXPECT_EQ(call.y[0], 7.0f) << "tuning leaves the caller's outputs as they were";
}

TEST(BenchHooks, AHookErrorFailsOnlyItsConfigAndNamesTheHook) {
  testing::Session s("bench_hooks_errors");
  ASSERT_TRUE(s.device.ok());
  AccCall call(128);
  TuneOptions o = counted_options();
  o.hooks.pre_run = [](const Config& c, const ArgList&) -> Status {
    if (c.get_int("UNROLL") == 2) return make_error(ErrorCode::kInvalidArgument, "no twos here");
    return ok_status();
  };
  o.hooks.post_run = [](const Config& c, const ArgList&, const Status&) -> Status {
    if (c.get_int("UNROLL") == 4) return make_error(ErrorCode::kInvalidArgument, "no fours");
    return ok_status();
  };
  auto r = s.tuner.tune(acc_kernel("hooks_errors"), call.args, **s.device, o);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->config.get_int("UNROLL"), 1);
  EXPECT_TRUE(measured(*r, 1).ok()) << measured(*r, 1).reason();
  const Measurement& two = measured(*r, 2);
  EXPECT_FALSE(two.ok());
  EXPECT_NE(two.reason().find("the pre_run hook failed: no twos here"), std::string::npos)
      << two.reason();
  const Measurement& four = measured(*r, 4);
  EXPECT_FALSE(four.ok());
  EXPECT_NE(four.reason().find("the post_run hook failed: no fours"), std::string::npos)
      << four.reason();
}

// A hook's failure is the user's callable's, not the config's: a later run
// (its record gone, as in a new process after a retune) measures it again.
TEST(BenchHooks, AHookFailureIsNotRememberedAgainstTheConfig) {
  testing::Session s("bench_hooks_not_remembered");
  ASSERT_TRUE(s.device.ok());
  AccCall call(128);
  TuneOptions o = counted_options();
  o.cache.save = true;  // failures are remembered only by runs that save
  o.hooks.pre_run = [](const Config& c, const ArgList&) -> Status {
    if (c.get_int("UNROLL") == 2) return make_error(ErrorCode::kInvalidArgument, "not now");
    return ok_status();
  };
  auto first = s.tuner.tune(acc_kernel("hooks_not_remembered"), call.args, **s.device, o);
  ASSERT_TRUE(first.ok()) << first.error().describe();
  ASSERT_FALSE(measured(*first, 2).ok());
  for (const auto& e : std::filesystem::directory_iterator(s.dir / "tuning"))
    if (e.is_regular_file() && e.path().extension() == ".json") std::filesystem::remove(e.path());
  TuningCache tunings(s.opts);
  Autotuner tuner(testing::cpu_backend(), &s.artifacts, &tunings);
  o.hooks = {};
  auto second = tuner.tune(acc_kernel("hooks_not_remembered"), call.args, **s.device, o);
  ASSERT_TRUE(second.ok()) << second.error().describe();
  EXPECT_EQ(second->stats.skipped_failed_before, 0u);
  EXPECT_TRUE(measured(*second, 2).ok()) << measured(*second, 2).reason();
}

TEST(BenchHooks, ABenchmarkersSamplesAreTheMeasurement) {
  testing::Session s("bench_hooks_benchmark");
  ASSERT_TRUE(s.device.ok());
  AccCall call(128);
  TuneOptions o = counted_options();
  std::map<std::int64_t, int> runs;
  o.hooks.pre_run = [&runs](const Config& c, const ArgList&) -> Status {
    ++runs[c.get_int("UNROLL")];  // one benchmark thread: no lock needed
    return ok_status();
  };
  // UNROLL=4 "fastest" by the benchmarker's word, whatever the clock says;
  // UNROLL=2's benchmarker fails.
  o.hooks.benchmark = [](const Config& c,
                         const std::function<Status()>& run) -> Result<std::vector<double>> {
    for (int i = 0; i < 2; ++i) {
      Status st = run();
      if (!st.ok()) return st.error();
    }
    switch (c.get_int("UNROLL")) {
      case 1:
        return std::vector<double>{3e-3, 3e-3, 3e-3};
      case 2:
        return make_error(ErrorCode::kUnavailable, "the timer is busy");
      default:
        return std::vector<double>{1e-3, 1e-3};
    }
  };
  auto r = s.tuner.tune(acc_kernel("hooks_benchmark"), call.args, **s.device, o);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->config.get_int("UNROLL"), 4);
  const Measurement& four = measured(*r, 4);
  ASSERT_TRUE(four.ok()) << four.reason();
  EXPECT_EQ(four.stats.reps, 2u);
  EXPECT_DOUBLE_EQ(four.stats.median, 1e-3);
  EXPECT_DOUBLE_EQ(measured(*r, 1).stats.median, 3e-3);
  EXPECT_NE(measured(*r, 2).reason().find("the benchmark hook failed: the timer is busy"),
            std::string::npos)
      << measured(*r, 2).reason();
  // The checked run, then the benchmarker's two: no warm-up of Kiln's.
  for (std::int64_t u : {1, 2, 4}) EXPECT_EQ(runs[u], 3) << "UNROLL=" << u;
}

TEST(BenchHooks, WorkerProcessesWithHooksAreRefusedWithTheFix) {
  testing::Session s("bench_hooks_process", Isolation::kProcess);
  ASSERT_TRUE(s.device.ok());
  AccCall call(64);
  TuneOptions o = counted_options();
  o.hooks.pre_run = [](const Config&, const ArgList&) { return ok_status(); };
  auto r = s.tuner.tune(acc_kernel("hooks_process"), call.args, **s.device, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("Isolation::kProcess cannot run the benchmark hooks"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("Isolation::kAuto or kThread"), std::string::npos);
}

}  // namespace
}  // namespace kiln
