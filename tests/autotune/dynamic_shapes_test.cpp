// Dynamic shapes end to end on the CPU backend (real Clang compiles, real
// benchmark workers): bucket rules on a scalar of the key and on tensor
// dims make every size of a bucket share one tuning; what no rule names
// stays exact; with tuning off, a key with no record is served the nearest
// tuned key's winner when it is valid for the call, else the default.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tune_session.hpp"

namespace kiln {
namespace {

using testing::Session;

// W = 1 (the default) naps 3 ms, W = 2 not at all: W = 2 wins every tuning.
constexpr const char* kSource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
namespace t {
template <int W>
void twice(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  if (W == 1) usleep(3000);
  for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
}
}  // namespace t
)";

// Buckets on n and, unless `scalar_only`, on x's and y's only dim.
TunableKernel kernel(bool scalar_only = false) {
  ConfigSpace space;
  space.param("W", {Value(std::int64_t{1}), Value(std::int64_t{2})});
  space.default_config(Config{{"W", std::int64_t{1}}});
  TunableKernel k = testing::one_block_kernel("dynamic_twice", kSource, "t::twice<{W}>", space);
  const BucketRule pow2{power_of_two_buckets(1, 4096), {}};
  k.buckets.push_back({"n", std::nullopt, pow2});
  if (!scalar_only) {
    k.buckets.push_back({"x", 0, pow2});
    k.buckets.push_back({"y", 0, pow2});
  }
  return k;
}

struct Call {
  std::vector<float> x, y;
  ArgList args;
  explicit Call(int n) : x(n, 1.5f), y(n, 0.0f) {
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_scalar("n", n)};
  }
};

// n, then x's and y's extent, as the key holds them.
std::vector<std::int64_t> extents(const ProblemKey& p) {
  return {std::get<std::int64_t>(p.scalars().at("n")), p.tensors().at("x").shape.at(0),
          p.tensors().at("y").shape.at(0)};
}

TuneOptions quick(bool tune = true) {
  TuneOptions o;
  o.tune = tune;
  o.search.strategy = "exhaustive";
  o.measure.target_seconds = 0.001;
  o.measure.max_reps = 3;
  o.search.finalists = 0;
  return o;
}

TEST(DynamicShapes, SizesOfOneBucketShareOneRecord) {
  Session s("dyn_share");
  const TunableKernel k = kernel();
  Call first(100), second(120), other(129);
  auto a = s.tuner.run(k, first.args, **s.device, quick());
  ASSERT_TRUE(a.ok()) << a.error().describe();
  EXPECT_EQ(a->source, ResultSource::kTuned);
  // The record is filed under the representative, not the call's size.
  EXPECT_EQ(extents(a->record->problem), (std::vector<std::int64_t>{128, 128, 128}))
      << a->record->problem.canonical();
  auto b = s.tuner.run(k, second.args, **s.device, quick());
  ASSERT_TRUE(b.ok()) << b.error().describe();
  EXPECT_EQ(b->source, ResultSource::kMemory);
  EXPECT_EQ(b->config, a->config);
  for (float v : second.y) ASSERT_EQ(v, 3.0f);  // served on the call's own shape
  auto c = s.tuner.tune(k, other.args, **s.device, quick());
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_EQ(c->source, ResultSource::kTuned);  // 129 is in the bucket of 256
}

TEST(DynamicShapes, TwoHundredLengthsTuneOncePerPowerOfTwo) {
  Session s("dyn_200");
  const TunableKernel k = kernel();
  std::set<int> lengths;
  for (int i = 0; lengths.size() < 200; ++i) lengths.insert(1 + (i * 2654435761u) % 4096);
  int tuned = 0;
  for (int n : lengths) {
    Call call(n);
    auto r = s.tuner.tune(k, call.args, **s.device, quick());
    ASSERT_TRUE(r.ok()) << n << ": " << r.error().describe();
    tuned += r->source == ResultSource::kTuned;
  }
  EXPECT_LE(tuned, 13);
  EXPECT_GE(tuned, 2);
}

TEST(DynamicShapes, ExtentsNoRuleNamesStayExact) {
  Session s("dyn_exact");
  const TunableKernel k = kernel(/*scalar_only=*/true);
  Call first(100), second(120);
  auto a = s.tuner.tune(k, first.args, **s.device, quick());
  auto b = s.tuner.tune(k, second.args, **s.device, quick());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->source, ResultSource::kTuned);  // x and y differ: another key
  EXPECT_EQ(extents(b->record->problem), (std::vector<std::int64_t>{128, 120, 120}))
      << b->record->problem.canonical();
}

TEST(DynamicShapes, BadRulesAreNamed) {
  Session s("dyn_bad");
  TunableKernel k = kernel();
  k.buckets.push_back({"x", 3, {{8}, {}}});
  Call call(10);
  try {
    (void)s.tuner.tune(k, call.args, **s.device, quick());
    FAIL() << "a rule on a dim x lacks was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the bucket rule on 'x dim 3'"), std::string::npos)
        << e.what();
  }
  k.buckets.back() = {"n", std::nullopt, {}};
  EXPECT_THROW((void)s.tuner.tune(k, call.args, **s.device, quick()), Error);
}

TEST(DynamicShapes, UntunedKeyIsServedTheNearestTunedWinner) {
  Session s("dyn_nearest");
  const TunableKernel k = kernel();
  Call tuned(64), untuned(1000);
  auto a = s.tuner.tune(k, tuned.args, **s.device, quick());
  ASSERT_TRUE(a.ok()) << a.error().describe();
  ASSERT_EQ(a->config.get_int("W"), 2);
  auto b = s.tuner.run(k, untuned.args, **s.device, quick(/*tune=*/false));
  ASSERT_TRUE(b.ok()) << b.error().describe();
  EXPECT_EQ(b->source, ResultSource::kNearest);
  EXPECT_EQ(b->config.get_int("W"), 2);
  ASSERT_TRUE(b->record);
  EXPECT_EQ(b->record->problem, a->record->problem);
  EXPECT_EQ(b->stats.served_nearest, 1u);
  EXPECT_EQ(s.tuner.statistics().kernel("dynamic_twice").served_nearest, 1u);
  for (float v : untuned.y) ASSERT_EQ(v, 3.0f);
}

TEST(DynamicShapes, NearestWinnerInvalidForTheShapeGivesTheDefault) {
  Session s("dyn_nearest_invalid");
  TunableKernel k = kernel();
  // W = 2 cannot serve more than 512 elements (says the prune).
  k.early_prune = [](const Config& c, const ProblemKey& p) {
    return c.get_int("W") == 1 || std::get<std::int64_t>(p.scalars().at("n")) <= 512;
  };
  Call tuned(64), untuned(1000);
  auto a = s.tuner.tune(k, tuned.args, **s.device, quick());
  ASSERT_TRUE(a.ok()) << a.error().describe();
  ASSERT_EQ(a->config.get_int("W"), 2);
  auto b = s.tuner.tune(k, untuned.args, **s.device, quick(/*tune=*/false));
  ASSERT_TRUE(b.ok()) << b.error().describe();
  EXPECT_EQ(b->source, ResultSource::kUntuned);
  EXPECT_EQ(b->config.get_int("W"), 1);
  EXPECT_FALSE(b->record);
  EXPECT_EQ(b->stats.served_default, 1u);
  EXPECT_EQ(b->stats.served_nearest, 0u);
}

}  // namespace
}  // namespace kiln
