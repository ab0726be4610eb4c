// Early stop end to end on the CPU backend (StopBars, lib/tuner/measure.hpp):
// a config far slower than the best so far ends after one repetition, one
// that cannot win after MeasureOptions::early_stop_reps, a screened search
// (finalists measured again) times every config for early_stop_reps and
// its finalists in full, and the winner gets every repetition asked for.
// The work ratio (64x and more) makes "clearly slower" hold on any machine,
// however loaded.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tune_session.hpp"

namespace kiln {
namespace {

// WORK repeats the same pass over x: the time grows with it. COPY changes
// nothing but the config: copies of one speed.
constexpr const char* kWorkSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int WORK, int COPY>
void work(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  for (int w = 0; w < WORK; ++w) {
    for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
    __asm__ volatile("" : : "r"(y) : "memory");  // each pass is done again
  }
}
}  // namespace t
)";

TunableKernel work_kernel(std::vector<Value> works, std::vector<Value> copies = {std::int64_t{0}}) {
  TunableKernel k;
  k.tmpl.name = "early_stop_test";
  k.tmpl.source = kWorkSource;
  k.tmpl.entry = "t::work<{WORK}, {COPY}>";
  k.tmpl.space.param("WORK", std::move(works));
  k.tmpl.space.param("COPY", std::move(copies));
  k.tmpl.space.default_config(Config{{"WORK", std::int64_t{1}}, {"COPY", std::int64_t{0}}});
  k.launch = [](const Config&, const ArgList&) {
    LaunchGeometry g;
    g.grid = Dim3{1, 1, 1};
    return g;
  };
  k.outputs = {"y"};
  return k;
}

struct WorkCall {
  std::vector<float> x, y;
  ArgList args;
  explicit WorkCall(int n) : x(n, 1.5f), y(n, 0.0f) {
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_scalar("n", n)};
  }
};

const Measurement& measured(const TuneResult& r, std::int64_t work, std::int64_t copy = 0) {
  for (const auto& m : r.measurements) {
    if (m.config.get_int("WORK") == work && m.config.get_int("COPY") == copy) return m;
  }
  throw Error(ErrorCode::kNotFound, "no measurement of WORK=" + std::to_string(work));
}

// Every config asks for 12 repetitions; one compile thread and units of one
// config measure the default (the fastest) first, so the slow ones meet a
// best to compare with.
TuneOptions fixed_reps(double early_stop, std::size_t finalists) {
  TuneOptions to;
  to.measure.min_reps = 12;
  to.measure.max_reps = 12;
  to.measure.early_stop = early_stop;
  to.measure.early_stop_reps = 3;
  to.search.finalists = finalists;
  to.pipeline.compile_threads = 1;
  to.pipeline.group_size = 1;
  to.cache.save = false;
  return to;
}

// The session outlives the result: its kernel is loaded on the session's device.
Result<TuneResult> tune_work(testing::Session& session, const TunableKernel& kernel,
                             const TuneOptions& options) {
  if (!session.device.ok()) return session.device.error();
  WorkCall call(1 << 14);
  return session.tuner.tune(kernel, call.args, **session.device, options);
}

TEST(EarlyStop, AClearlySlowerConfigStopsAfterOneRepetitionAndTheWinnerGetsEvery) {
  testing::Session session("early_stop");
  auto r = tune_work(session, work_kernel({1, 64, 128}), fixed_reps(1.5, 3));
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ASSERT_EQ(r->measurements.size(), 3u);
  EXPECT_EQ(r->config.get_int("WORK"), 1);
  // The lone finalist of a screened search is measured again in full.
  EXPECT_EQ(measured(*r, 1).stats.reps, 12u) << "the winner is measured in full";
  // Measured after the default, each slow config is 64x slower and more:
  // above 1.5^3 = 3.375x at its first repetition.
  EXPECT_EQ(measured(*r, 64).stats.reps, 1u);
  EXPECT_EQ(measured(*r, 128).stats.reps, 1u);
}

TEST(EarlyStop, AConfigThatCannotWinStopsAtEarlyStopReps) {
  // No finalists (the first measurement is the last) and a bar too high to
  // call any config clearly slower: what stops the slow configs is that
  // their fastest repetition is slower than the best median.
  testing::Session session("early_stop_cannot_win");
  auto r = tune_work(session, work_kernel({1, 64, 128}), fixed_reps(1000, 0));
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->config.get_int("WORK"), 1);
  EXPECT_EQ(measured(*r, 1).stats.reps, 12u);
  EXPECT_EQ(measured(*r, 64).stats.reps, 3u);
  EXPECT_EQ(measured(*r, 128).stats.reps, 3u);
}

TEST(EarlyStop, AScreenedSearchTimesItsFinalistsInFullAndTheRestForEarlyStopReps) {
  // Three copies of one speed, two finalists: every copy is screened at 3
  // repetitions (or fewer, should noise make one look clearly slower), and
  // the finalists are measured again, 12 repetitions a round. Which copies
  // are finalists, and whether noise (a sanitizer's, a loaded machine's)
  // put one outside the finalists' band, is the run's: the test holds for
  // whichever it was.
  testing::Session session("early_stop_screen");
  auto r = tune_work(session, work_kernel({1}, {0, 1, 2}), fixed_reps(1.5, 2));
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ASSERT_EQ(r->measurements.size(), 3u);
  const std::size_t finalists = r->stats.finalists;
  ASSERT_GE(finalists, 1u) << "a screened search times even a lone finalist in full";
  ASSERT_LE(finalists, 2u);
  std::vector<std::size_t> reps;
  for (std::int64_t copy : {0, 1, 2}) reps.push_back(measured(*r, 1, copy).stats.reps);
  std::sort(reps.rbegin(), reps.rend());
  for (std::size_t i = 0; i < reps.size(); ++i) {
    if (i < finalists)
      EXPECT_EQ(reps[i], 12u) << "a finalist, timed again in full";
    else
      EXPECT_LE(reps[i], 3u) << "left out of the finalists, it keeps its screen";
  }
  for (const Measurement& m : r->measurements) {
    if (m.config == r->config) {
      EXPECT_EQ(m.stats.reps, 12u) << "the winner is a finalist";
    }
  }
}

TEST(EarlyStop, OffMeasuresEveryConfigInFull) {
  testing::Session session("early_stop_off");
  auto r = tune_work(session, work_kernel({1, 64, 128}), fixed_reps(0, 3));
  ASSERT_TRUE(r.ok()) << r.error().describe();
  for (std::int64_t work : {1, 64, 128}) EXPECT_EQ(measured(*r, work).stats.reps, 12u) << work;
}

}  // namespace
}  // namespace kiln
