// The tuner's searches end to end on the CPU backend (real Clang compiles,
// real timings): annealing finds the known best config of a space whose
// cost doubles with every step away from it, a seed repeats its walk, and
// annealing and random search stay within max_configs and the time budget.
// Assertions are on behaviour and on relative facts (2x per step), never on
// absolute times.
#include <gtest/gtest.h>

#include <set>

#include "tune_session.hpp"

namespace kiln {
namespace {

using testing::TuneSession;

// Work = 2^(|W - T| + P) units of a spin the optimiser cannot remove: the
// fastest config is W == T, P == 0, and each step away doubles the time.
constexpr const char* kSpinSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int W, int P, int T>
void spin(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n, int unit) {
  constexpr int d = (W > T ? W - T : T - W) + P;
  const long spins = (1L << d) * unit;
  unsigned acc = 0;
  for (long s = 0; s < spins; ++s) {
    acc += static_cast<unsigned>(s);
    asm volatile("" : "+r"(acc));
  }
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
TunableKernel spin_kernel(std::int64_t widths, std::int64_t penalties, std::int64_t best_w) {
  TunableKernel k;
  k.tmpl.name = "spin_search_test";
  k.tmpl.source = kSpinSource;
  k.tmpl.entry = "t::spin<{W},{P},{T}>";
  k.tmpl.space.param("W", range(widths)).param("P", range(penalties)).param("T", {best_w});
  std::int64_t far = best_w >= widths / 2 ? 0 : widths - 1;
  k.tmpl.space.default_config(
      Config{{"W", far}, {"P", std::int64_t{penalties - 1}}, {"T", best_w}});
  k.launch = [](const Config&, const ArgList&) { return LaunchGeometry{}; };
  k.outputs = {"y"};
  return k;
}

struct SpinCall {
  std::vector<float> x = std::vector<float>(64, 1.5f), y = std::vector<float>(64, 0.0f);
  ArgList args;
  explicit SpinCall(int unit) {
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {64})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {64})),
            Arg::of_scalar("n", 64), Arg::of_scalar("unit", unit, false)};
  }
};

// Short timing: the costs differ by 2x a step, a few repetitions tell them apart.
TuneOptions quick(SearchKind search, std::size_t max_configs, std::uint64_t seed) {
  TuneOptions o;
  o.search = search;
  o.max_configs = max_configs;
  o.seed = seed;
  o.target_seconds = 0.002;
  o.max_reps = 20;
  o.progress = false;
  o.save = false;
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

TEST(AutotuneSearch, AnnealingFindsTheKnownBest) {
  // 32 configs, 24 measured at most, the default 8 steps (256x) from the best.
  TunableKernel k = spin_kernel(8, 4, 5);
  TuneSession s("anneal_best");
  SpinCall call(20000);
  auto r = s.tuner.tune(k, call.args, *s.device, quick(SearchKind::kAnnealing, 24, 3));
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->source, "tuned");
  expect_distinct_and_within(*r, k, 24);
  EXPECT_EQ(r->stats.benchmarked, r->measurements.size());
  EXPECT_EQ(r->config.get_int("W"), 5) << r->config.to_string();
  EXPECT_EQ(r->config.get_int("P"), 0) << r->config.to_string();
  EXPECT_GT(r->speedup_over_default(), 1.0);
}

TEST(AutotuneSearch, AnnealingRepeatsItsWalkForASeed) {
  // Every two configs differ by 2x or more (cost 2^W) and the walk never
  // accepts a slower config (near-zero temperature), so every comparison the
  // walk makes has one answer and the seed alone decides what is proposed.
  TunableKernel k = spin_kernel(8, 1, 0);
  SpinCall call(100000);
  TuneOptions o = quick(SearchKind::kAnnealing, 6, 11);
  o.annealing.random_start = 2;
  o.annealing.initial_temperature = 1e-3;
  o.annealing.final_temperature = 1e-4;
  o.search_batch = 1;
  std::vector<std::vector<std::string>> walks;
  for (int run = 0; run < 2; ++run) {
    TuneSession s("anneal_seed" + std::to_string(run));
    auto r = s.tuner.tune(k, call.args, *s.device, o);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    expect_distinct_and_within(*r, k, 6);
    EXPECT_EQ(r->measurements.size(), 6u);
    walks.push_back(measured(*r));
  }
  EXPECT_EQ(walks[0], walks[1]);
}

TEST(AutotuneSearch, RandomSearchMeasuresMaxConfigsWithTheDefault) {
  TunableKernel k = spin_kernel(8, 4, 5);
  TuneSession s("random_max");
  SpinCall call(2000);
  auto r = s.tuner.tune(k, call.args, *s.device, quick(SearchKind::kRandom, 5, 1));
  ASSERT_TRUE(r.ok()) << r.error().describe();
  expect_distinct_and_within(*r, k, 5);
  EXPECT_EQ(r->measurements.size(), 5u);
}

TEST(AutotuneSearch, ExhaustiveCutAtMaxConfigsKeepsTheDefault) {
  TunableKernel k = spin_kernel(8, 4, 5);
  TuneSession s("exhaustive_max");
  SpinCall call(2000);
  auto r = s.tuner.tune(k, call.args, *s.device, quick(SearchKind::kExhaustive, 3, 0));
  ASSERT_TRUE(r.ok()) << r.error().describe();
  expect_distinct_and_within(*r, k, 3);
  EXPECT_EQ(r->measurements.size(), 3u);
}

TEST(AutotuneSearch, SpentBudgetStopsBothSearches) {
  TunableKernel k = spin_kernel(8, 4, 5);
  SpinCall call(2000);
  for (SearchKind kind : {SearchKind::kRandom, SearchKind::kAnnealing}) {
    TuneSession s("budget" + std::to_string(static_cast<int>(kind)));
    TuneOptions o = quick(kind, 20, 5);
    o.budget_seconds = 1e-6;  // spent before the first config compiles
    o.group_size = 1;
    auto r = s.tuner.tune(k, call.args, *s.device, o);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_GE(r->stats.failed_by_reason["cancelled"], 1u);
    if (kind == SearchKind::kRandom) {
      EXPECT_EQ(r->measurements.size(), 20u) << "every candidate is accounted for";
    } else {
      // One round (the default and the random start), none after it.
      EXPECT_EQ(r->measurements.size(), 1u + o.annealing.random_start);
    }
  }
}

}  // namespace
}  // namespace kiln
