// Dynamic shapes: bucket generators and mapping, the cap, profiles as the
// product of buckets, constraints, generated inputs (indices repeated, the
// pre-hook), tuning over every profile and nearest-profile lookup.
#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "framework_test_util.hpp"
#include "kiln/framework/dynamic_shapes.hpp"
#include "kiln/framework/tuning_scope.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

using testing::ScaleCall;
using testing::ScaleRunner;
using V = std::vector<std::int64_t>;

TEST(Buckets, Generators) {
  EXPECT_EQ(power_of_two_buckets(1, 100), (V{1, 2, 4, 8, 16, 32, 64, 100}));
  EXPECT_EQ(power_of_two_buckets(3, 16), (V{4, 8, 16}));
  EXPECT_EQ(linear_buckets(64, 256), (V{64, 128, 192, 256}));
  EXPECT_THROW(power_of_two_buckets(0, 4), Error);
  EXPECT_THROW(linear_buckets(8, 4), Error);
}

TEST(Buckets, SizesMapToTheNearestBucketAndTheCapHolds) {
  TuningSpec spec;
  spec.dynamic.push_back(DynamicDim::of(0, 0, {64, 1, 16, 4, 16}));  // unsorted, repeated
  spec.max_bucket = 32;
  spec.finalize();
  EXPECT_EQ(spec.dynamic[0].buckets, (V{1, 4, 16, 32})) << "capped: 64 dropped, 32 added";
  EXPECT_EQ(spec.bucket_of(0, 1), 1);
  EXPECT_EQ(spec.bucket_of(0, 3), 4);
  EXPECT_EQ(spec.bucket_of(0, 16), 16);
  EXPECT_EQ(spec.bucket_of(0, 17), 32);
  EXPECT_EQ(spec.bucket_of(0, 5000), 32) << "above the cap: the largest bucket";
  // A custom map is snapped to a tuned bucket.
  spec.dynamic[0].map = [](std::int64_t size) { return size / 2; };
  EXPECT_EQ(spec.bucket_of(0, 10), 16);  // 5 -> nearest tuned bucket 16
  EXPECT_EQ(spec.bucket_of(0, 2), 1);
}

TEST(Buckets, ProfilesAreTheProductAndConstraintsFollow) {
  TuningSpec spec;
  spec.dynamic.push_back(DynamicDim::of(0, 0, {1, 2, 4}));
  spec.dynamic.push_back(DynamicDim::of(0, 1, {8, 16}));
  // y's rows follow x's rows; y's cols are twice x's.
  spec.constraints.push_back({1, 0, [](auto p) { return p[0]; }});
  spec.constraints.push_back({1, 1, [](auto p) { return 2 * p[1]; }});
  spec.finalize();
  auto profiles = spec.profiles();
  ASSERT_EQ(profiles.size(), 6u);
  EXPECT_EQ(profiles.front(), (V{1, 8}));
  EXPECT_EQ(profiles[1], (V{1, 16}));
  EXPECT_EQ(profiles.back(), (V{4, 16}));
  ScaleCall call(3, 5);
  EXPECT_EQ(spec.profile_of(call.args), (V{4, 8}));
  std::vector<std::int64_t> p = {2, 16};
  EXPECT_EQ(spec.shape_under(call.args, 0, p), (V{2, 16}));
  EXPECT_EQ(spec.shape_under(call.args, 1, p), (V{2, 32}));
}

TEST(GeneratedInputs, IndicesRepeatFloatsAreSeededAndThePreHookRuns) {
  std::vector<std::int32_t> ids = {4, 0, 3};  // token ids into a table of 5 rows
  std::vector<float> emb(3 * 2, 0.0f);
  ArgList call = {Arg::of_tensor("ids", ids.data(), TensorArg::contiguous(DType::kI32, {3})),
                  Arg::of_tensor("emb", emb.data(), TensorArg::contiguous(DType::kF32, {3, 2})),
                  Arg::of_scalar("vocab", 5)};
  TuningSpec spec;
  spec.dynamic.push_back(DynamicDim::of(0, 0, {8}));
  spec.constraints.push_back({1, 0, [](auto p) { return p[0]; }});
  int hooked = 0;
  spec.pre_hook = [&](ArgList& in) {
    ++hooked;
    EXPECT_EQ(in[0].tensor.shape, V{8});
  };
  spec.finalize();
  std::vector<std::int64_t> profile = {8};
  auto gen = make_profile_inputs(call, spec, profile, nullptr);
  ASSERT_TRUE(gen.ok()) << gen.error().describe();
  EXPECT_EQ(hooked, 1);
  ASSERT_EQ(gen->args.size(), 3u);
  const auto* g = static_cast<const std::int32_t*>(gen->args[0].data);
  EXPECT_EQ((std::vector<std::int32_t>(g, g + 8)),
            (std::vector<std::int32_t>{4, 0, 3, 4, 0, 3, 4, 0}));
  EXPECT_EQ(gen->args[1].tensor.shape, (V{8, 2}));
  const auto* f = static_cast<const float*>(gen->args[1].data);
  for (int i = 0; i < 16; ++i) {
    EXPECT_GE(f[i], -1.0f);
    EXPECT_LE(f[i], 1.0f);
  }
  EXPECT_NE(f[0], f[1]);
  auto again = make_profile_inputs(call, spec, profile, nullptr);
  EXPECT_EQ(static_cast<const float*>(again->args[1].data)[5], f[5]) << "seeded";
  EXPECT_EQ(std::get<std::int32_t>(gen->args[2].scalar), 5);
}

// Records the rows of every input it runs on.
class ShapeRecorder : public ScaleRunner {
 public:
  using ScaleRunner::ScaleRunner;
  Status run(const ArgList& in, int tactic) override {
    {
      std::lock_guard lock(mutex);
      rows.insert(in.at(0).tensor.shape[0]);
    }
    return ScaleRunner::run(in, tactic);
  }
  std::mutex mutex;
  std::set<std::int64_t> rows;
};

TEST(DynamicTuning, TuningCoversEveryProfileAndCallsMapToTheNearest) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  TacticTuner tuner(testing::quick_options());
  ShapeRecorder r("rows", {0, 1});
  TunableRunner* runners[] = {&r};
  TuningSpec spec;
  spec.dynamic.push_back(DynamicDim::of(0, 0, power_of_two_buckets(1, 64)));
  spec.constraints.push_back({1, 0, [](auto p) { return p[0]; }});
  spec.max_bucket = 8;
  spec.finalize();
  ScaleCall first(3, 16);
  {
    TuningScope tuning(true);
    EXPECT_EQ(tuner.choose_one("rows_op", runners, first.args, spec).source, ChoiceSource::kTuned);
  }
  EXPECT_EQ(r.rows, (std::set<std::int64_t>{1, 2, 4, 8})) << "the product of the buckets";
  EXPECT_EQ(tuner.stats().tuned_profiles, 4u);
  // Outside tuning every size is served from its nearest profile.
  for (std::int64_t rows : {1, 2, 3, 5, 8, 9, 1000}) {
    ScaleCall call(rows, 16);
    Choice c = tuner.choose_one("rows_op", runners, call.args, spec);
    EXPECT_EQ(c.source, ChoiceSource::kMemory) << rows;
    ASSERT_TRUE(c.run(call.args).ok());
  }
  EXPECT_EQ(tuner.stats().fallbacks, 0u);
  // A static dim that was never tuned (another width) is a miss.
  ScaleCall wide(3, 17);
  EXPECT_EQ(tuner.choose_one("rows_op", runners, wide.args, spec).source, ChoiceSource::kFallback);
}

}  // namespace
}  // namespace kiln
