// Capture and replay across two ops: every (runner, tactic) combination
// runs, and a replay that drifts from the capture is a clear error.
#include <gtest/gtest.h>

#include <set>

#include "framework_test_util.hpp"
#include "kiln/framework/capture.hpp"

namespace kiln {
namespace {

using testing::ScaleCall;
using testing::ScaleRunner;

// A two-op "model": scale (two runners), then bias (one runner), on the
// same tensors; what each run used is recorded by the runners themselves.
struct TwoOps {
  TacticTuner tuner{testing::quick_options()};
  ScaleRunner scale_fast{"scale_fast", {0, 1}}, scale_ref{"scale_ref", {0}};
  ScaleRunner bias{"bias", {0, 1, 2}};
  std::set<std::pair<std::string, int>> ran;

  Status forward(const ArgList& in, bool bias_first = false) {
    TunableRunner* scale_runners[] = {&scale_fast, &scale_ref};
    TunableRunner* bias_runners[] = {&bias};
    auto step = [&](const char* op, std::span<TunableRunner* const> runners) {
      Choice c = tuner.choose_one(op, runners, in);
      ran.emplace(std::string(op) + ":" + c.runner->id().name, c.tactic);
      return c.run(in);
    };
    if (bias_first) {
      Status st = step("bias", bias_runners);
      if (!st.ok()) return st;
      return step("scale", scale_runners);
    }
    Status st = step("scale", scale_runners);
    if (!st.ok()) return st;
    return step("bias", bias_runners);
  }
};

TEST(CaptureReplay, EveryCombinationOfTwoOpsRuns) {
  TwoOps model;
  ScaleCall call(2, 16);
  Capture capture;
  {
    CaptureScope scope(capture);
    ASSERT_TRUE(model.forward(call.args).ok());
  }
  ASSERT_EQ(capture.calls().size(), 2u);
  EXPECT_EQ(capture.calls()[0].op, "scale");
  EXPECT_EQ(capture.calls()[0].pairs(), 3u);  // (fast,0) (fast,1) (ref,0)
  EXPECT_EQ(capture.calls()[1].pairs(), 3u);
  EXPECT_EQ(capture.combinations(), 9u);
  EXPECT_EQ(capture.captured(), (Combination{{0, -1}, {0, -1}})) << "untuned: fallbacks";

  model.ran.clear();
  std::size_t runs = 0;
  Status st = replay_all(capture, [&] {
    ++runs;
    return model.forward(call.args);
  });
  ASSERT_TRUE(st.ok()) << st.error().describe();
  EXPECT_EQ(runs, 9u);
  std::set<std::pair<std::string, int>> want = {{"scale:scale_fast", 0}, {"scale:scale_fast", 1},
                                                {"scale:scale_ref", 0},  {"bias:bias", 0},
                                                {"bias:bias", 1},        {"bias:bias", 2}};
  EXPECT_EQ(model.ran, want);
  // Combinations are distinct and cover the product.
  std::set<Combination> seen;
  for (std::uint64_t i = 0; i < capture.combinations(); ++i) seen.insert(capture.combination(i));
  EXPECT_EQ(seen.size(), 9u);
}

TEST(CaptureReplay, AMismatchNamesTheCallAndTheDifference) {
  TwoOps model;
  ScaleCall call(2, 16);
  Capture capture;
  {
    CaptureScope scope(capture);
    ASSERT_TRUE(model.forward(call.args).ok());
  }
  // Ops in another order.
  try {
    ReplayScope replay(capture, capture.combination(0));
    (void)model.forward(call.args, /*bias_first=*/true);
    FAIL() << "a drifted replay must throw";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("replay mismatch at call #0"), std::string::npos) << m;
    EXPECT_NE(m.find("captured 'scale'"), std::string::npos) << m;
    EXPECT_NE(m.find("replayed 'bias'"), std::string::npos) << m;
  }
  // Another shape.
  ScaleCall other(4, 16);
  try {
    ReplayScope replay(capture, capture.combination(0));
    (void)model.forward(other.args);
    FAIL() << "a replay on another shape must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another shape profile"), std::string::npos) << e.what();
  }
  // Fewer calls than captured: finish() says which is missing.
  {
    ReplayScope replay(capture, capture.combination(4));
    TunableRunner* runners[] = {&model.scale_fast, &model.scale_ref};
    Choice c = model.tuner.choose_one("scale", runners, call.args);
    EXPECT_EQ(c.source, ChoiceSource::kReplay);
    EXPECT_EQ(c.runner, &model.scale_fast);
    EXPECT_EQ(c.tactic, 1);
    Status done = replay.finish();
    ASSERT_FALSE(done.ok());
    EXPECT_NE(done.error().message.find("1 of 2 captured calls"), std::string::npos);
    EXPECT_NE(done.error().message.find("'bias'"), std::string::npos);
  }
  // More calls than captured.
  ReplayScope replay(capture, capture.combination(0));
  ASSERT_TRUE(model.forward(call.args).ok());
  EXPECT_THROW((void)model.forward(call.args), Error);
}

}  // namespace
}  // namespace kiln
