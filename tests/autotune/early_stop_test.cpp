// Early stop end to end on the CPU backend: a config far slower than the
// best so far ends after MeasureOptions::early_stop_reps repetitions, while
// the winner gets every repetition asked for. The work ratio (64x and more)
// makes "clearly slower" hold on any machine, however loaded.
#include <gtest/gtest.h>

#include <vector>

#include "tune_session.hpp"

namespace kiln {
namespace {

// WORK repeats the same pass over x: the time grows with it.
constexpr const char* kWorkSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int WORK>
void work(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  for (int w = 0; w < WORK; ++w) {
    for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
    __asm__ volatile("" : : "r"(y) : "memory");  // each pass is done again
  }
}
}  // namespace t
)";

TunableKernel work_kernel() {
  TunableKernel k;
  k.tmpl.name = "early_stop_test";
  k.tmpl.source = kWorkSource;
  k.tmpl.entry = "t::work<{WORK}>";
  k.tmpl.space.param("WORK", {1, 64, 128});
  k.tmpl.space.default_config(Config{{"WORK", std::int64_t{1}}});
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

const Measurement& measured(const TuneResult& r, std::int64_t work) {
  for (const auto& m : r.measurements) {
    if (m.config.get_int("WORK") == work) return m;
  }
  throw Error(ErrorCode::kNotFound, "no measurement of WORK=" + std::to_string(work));
}

// Every config asks for 12 repetitions; one compile thread and units of one
// config measure the default (the fastest) first, so the slow ones meet a
// best to compare with.
TuneOptions fixed_reps(double early_stop) {
  TuneOptions to;
  to.measure.min_reps = 12;
  to.measure.max_reps = 12;
  to.measure.early_stop = early_stop;
  to.measure.early_stop_reps = 3;
  to.pipeline.compile_threads = 1;
  to.pipeline.group_size = 1;
  to.cache.save = false;
  return to;
}

// The session outlives the result: its kernel is loaded on the session's device.
Result<TuneResult> tune_work(testing::Session& session, double early_stop) {
  if (!session.device.ok()) return session.device.error();
  WorkCall call(1 << 14);
  return session.tuner.tune(work_kernel(), call.args, **session.device, fixed_reps(early_stop));
}

TEST(EarlyStop, AClearlySlowerConfigStopsAndTheWinnerGetsEveryRepetition) {
  testing::Session session("early_stop");
  auto r = tune_work(session, 1.5);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  ASSERT_EQ(r->measurements.size(), 3u);
  EXPECT_EQ(r->config.get_int("WORK"), 1);
  EXPECT_EQ(measured(*r, 1).stats.reps, 12u) << "the winner is measured in full";
  // Measured after the default, each slow config is cut at 3 repetitions.
  EXPECT_EQ(measured(*r, 64).stats.reps, 3u);
  EXPECT_EQ(measured(*r, 128).stats.reps, 3u);
}

TEST(EarlyStop, OffMeasuresEveryConfigInFull) {
  testing::Session session("early_stop_off");
  auto r = tune_work(session, 0);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  for (std::int64_t work : {1, 64, 128}) EXPECT_EQ(measured(*r, work).stats.reps, 12u) << work;
}

}  // namespace
}  // namespace kiln
