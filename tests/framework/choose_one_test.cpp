// choose_one on plain C++ runners: tuning on a miss, the fallback with one
// warning per op outside tuning, keys made of identities (not pointers),
// stale records, misuse, and decisions shared across threads.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "framework_test_util.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/framework/tuning_scope.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

using testing::ScaleCall;
using testing::ScaleRunner;

class ChooseOne : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  }
};

TEST_F(ChooseOne, TunesOnAMissAndNeverPicksAFailingTactic) {
  TacticTuner tuner(testing::quick_options());
  ScaleRunner a("a", {0, 1, 2}), b("b", {0, 1});
  a.broken = {0, 2};
  b.broken = {0, 1};
  TunableRunner* runners[] = {&a, &b};
  ScaleCall call(8, 128);
  TuningScope tuning(true);
  Choice c = tuner.choose_one("scale", runners, call.args);
  EXPECT_EQ(c.source, ChoiceSource::kTuned);
  EXPECT_EQ(c.runner, &a);  // the only healthy pair is (a, 1)
  EXPECT_EQ(c.runner_index, 0u);
  EXPECT_EQ(c.tactic, 1);
  EXPECT_EQ(a.prepared, 1) << "prepared once per pass";
  EXPECT_EQ(a.prepared_tactics, 3u);
  EXPECT_EQ(tuner.stats().profiled, 5u);
  EXPECT_EQ(tuner.stats().failed, 4u);
  // The caller's tensors were not used for tuning: y is untouched.
  for (float v : call.y) ASSERT_EQ(v, 0.0f);
  ASSERT_TRUE(c.run(call.args).ok());
  EXPECT_EQ(call.y[5], 2.0f * call.x[5]);
  // Again: from memory, nothing profiled.
  int runs = a.runs;
  EXPECT_EQ(tuner.choose_one("scale", runners, call.args).source, ChoiceSource::kMemory);
  EXPECT_EQ(a.runs, runs);
}

TEST_F(ChooseOne, ATacticWithWrongOutputsIsNeverChosen) {
  // The wrong runner is also the fastest (no extra work): only the output
  // check keeps it out.
  auto opts = testing::quick_options();
  opts.check_outputs = {"y"};
  TacticTuner tuner(opts);
  ScaleRunner reference("reference", {0}, 2.0f, /*slowdown=*/4);
  ScaleRunner wrong("wrong", {0}, 2.5f);
  TunableRunner* runners[] = {&reference, &wrong};
  ScaleCall call(8, 256);
  TuningScope tuning(true);
  Choice c = tuner.choose_one("checked", runners, call.args);
  EXPECT_EQ(c.source, ChoiceSource::kTuned);
  EXPECT_EQ(c.runner, &reference);
  EXPECT_EQ(tuner.stats().profiled, 2u);
  EXPECT_EQ(tuner.stats().failed, 1u);
}

TEST_F(ChooseOne, OutsideTuningAMissFallsBackWithOneWarningPerOp) {
  TacticTuner tuner(testing::quick_options());
  ScaleRunner a("a", {0, 1});
  TunableRunner* runners[] = {&a};
  ScaleCall call(2, 16);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 5; ++i) {
    Choice c = tuner.choose_one("warn_once_op", runners, call.args);
    EXPECT_EQ(c.source, ChoiceSource::kFallback);
    EXPECT_EQ(c.tactic, kFallbackTactic);
  }
  ScaleCall other(4, 16);  // another shape of the same op: still one warning
  tuner.choose_one("warn_once_op", runners, other.args);
  tuner.choose_one("warn_once_other", runners, call.args);
  std::string err = ::testing::internal::GetCapturedStderr();
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto p = err.find(needle); p != std::string::npos; p = err.find(needle, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("warn_once_op: no tuned tactic"), 1u) << err;
  EXPECT_EQ(count("warn_once_other: no tuned tactic"), 1u) << err;
  EXPECT_EQ(a.runs, 0) << "nothing profiled outside tuning";
  // Tuning later replaces the fallback decision.
  TuningScope tuning(true);
  EXPECT_EQ(tuner.choose_one("warn_once_op", runners, call.args).source, ChoiceSource::kTuned);
}

TEST_F(ChooseOne, DecisionsAreKeyedOnIdentitiesNotObjects) {
  auto dir = testing::fresh_dir("identity");
  TuningCache cache = TuningCache::open_file(dir / "t.json", false);
  ScaleCall call(4, 32);
  int tactic = -5;
  {
    auto opts = testing::quick_options();
    opts.cache = &cache;
    TacticTuner tuner(opts);
    ScaleRunner r("scale_impl", {3, 4});
    TunableRunner* runners[] = {&r};
    TuningScope tuning(true);
    Choice c = tuner.choose_one("scale", runners, call.args);
    ASSERT_EQ(c.source, ChoiceSource::kTuned);
    tactic = c.tactic;
  }
  // Another object with the same identity, another tuner: a disk hit.
  TuningCache reread = TuningCache::open_file(dir / "t.json", true);
  auto opts = testing::quick_options();
  opts.cache = &reread;
  TacticTuner tuner(opts);
  ScaleRunner same("scale_impl", {3, 4});
  TunableRunner* runners[] = {&same};
  Choice c = tuner.choose_one("scale", runners, call.args);
  EXPECT_EQ(c.source, ChoiceSource::kDisk);
  EXPECT_EQ(c.tactic, tactic);
  EXPECT_EQ(same.runs, 0);
  // Another op name, or another runner name: a miss.
  EXPECT_EQ(tuner.choose_one("scale2", runners, call.args).source, ChoiceSource::kFallback);
  ScaleRunner renamed("scale_impl_v2", {3, 4});
  TunableRunner* other[] = {&renamed};
  EXPECT_EQ(tuner.choose_one("scale", other, call.args).source, ChoiceSource::kFallback);
  // Another shape: a miss.
  ScaleCall bigger(8, 32);
  EXPECT_EQ(tuner.choose_one("scale", runners, bigger.args).source, ChoiceSource::kFallback);
  std::filesystem::remove_all(dir);
}

// A runner whose tactic names change: a stored decision is stale.
class RenamingRunner : public ScaleRunner {
 public:
  using ScaleRunner::ScaleRunner;
  std::string describe(int tactic) const override { return "v2-" + std::to_string(tactic); }
};

TEST_F(ChooseOne, AStaleDecisionIsNotServed) {
  auto dir = testing::fresh_dir("stale");
  ScaleCall call(2, 32);
  {
    TuningCache cache = TuningCache::open_file(dir / "t.json", false);
    auto opts = testing::quick_options();
    opts.cache = &cache;
    TacticTuner tuner(opts);
    ScaleRunner r("impl", {0, 1});
    TunableRunner* runners[] = {&r};
    TuningScope tuning(true);
    ASSERT_EQ(tuner.choose_one("op", runners, call.args).source, ChoiceSource::kTuned);
  }
  TuningCache cache = TuningCache::open_file(dir / "t.json", true);
  auto opts = testing::quick_options();
  opts.cache = &cache;
  TacticTuner tuner(opts);
  RenamingRunner r("impl", {0, 1});
  TunableRunner* runners[] = {&r};
  EXPECT_EQ(tuner.choose_one("op", runners, call.args).source, ChoiceSource::kFallback);
  EXPECT_EQ(tuner.stats().stale, 1u);
  std::filesystem::remove_all(dir);
}

TEST_F(ChooseOne, MisuseThrowsWithTheFix) {
  TacticTuner tuner;
  ScaleCall call(2, 8);
  try {
    tuner.choose_one("empty", {}, call.args);
    FAIL() << "no runners must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no runners"), std::string::npos);
  }
  ScaleRunner r("r", {0});
  TunableRunner* runners[] = {&r};
  TuningSpec spec;
  spec.dynamic.push_back(DynamicDim::of(0, 0, {1, 2}));
  EXPECT_THROW(tuner.choose_one("op", runners, call.args, spec), Error);  // not finalized
  spec.finalize();
  spec.dynamic[0].input = 7;  // an input the call lacks
  EXPECT_THROW(tuner.choose_one("op", runners, call.args, spec), Error);
  EXPECT_THROW(ScaleRunner("bad|name", {0}), Error);
}

TEST_F(ChooseOne, OneThreadsDecisionServesAnother) {
  TacticTuner tuner(testing::quick_options());
  ScaleRunner r("r", {0, 1});
  TunableRunner* runners[] = {&r};
  ScaleCall call(2, 16);
  // This thread looks first (its snapshot caches the miss)...
  EXPECT_EQ(tuner.choose_one("shared", runners, call.args).source, ChoiceSource::kFallback);
  Choice tuned;
  std::thread worker([&] {
    TuningScope tuning(true);
    tuned = tuner.choose_one("shared", runners, call.args);
  });
  worker.join();
  EXPECT_EQ(tuned.source, ChoiceSource::kTuned);
  // ...and sees the other thread's decision at once.
  Choice mine = tuner.choose_one("shared", runners, call.args);
  EXPECT_EQ(mine.source, ChoiceSource::kMemory);
  EXPECT_EQ(mine.tactic, tuned.tactic);
}

TEST_F(ChooseOne, TheFreeFunctionUsesTheProcessWideTuner) {
  ScaleRunner r("free_fn_runner", {0, 1});
  TunableRunner* runners[] = {&r};
  ScaleCall call(2, 8);
  EXPECT_EQ(choose_one("free_fn_op", runners, call.args).source, ChoiceSource::kFallback);
  {
    TuningScope tuning(true);
    EXPECT_EQ(choose_one("free_fn_op", runners, call.args).source, ChoiceSource::kTuned);
  }
  EXPECT_EQ(choose_one("free_fn_op", runners, call.args).source, ChoiceSource::kMemory);
  EXPECT_GE(default_tactic_tuner().stats().tuned_profiles, 1u);
}

TEST_F(ChooseOne, ConcurrentCallersWhileOthersTune) {
  // Readers hit per-thread snapshots while tuners insert decisions: every
  // answer is a valid (runner, tactic) and the table ends with one
  // decision per shape.
  TacticTuner tuner(testing::quick_options());
  ScaleRunner r("r", {0, 1});
  TunableRunner* runners[] = {&r};
  std::vector<std::unique_ptr<ScaleCall>> calls;
  for (int rows = 1; rows <= 8; ++rows) calls.push_back(std::make_unique<ScaleCall>(rows, 8));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      TuningScope tuning(t % 2 == 0);
      for (int i = 0; i < 2000; ++i) {
        Choice c = tuner.choose_one("concurrent", runners, calls[(i + t) % calls.size()]->args);
        if (c.runner != &r || (c.tactic != 0 && c.tactic != 1 && c.tactic != -1)) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(tuner.memory_size(), calls.size());
  EXPECT_EQ(tuner.stats().tuned_profiles, calls.size()) << "each shape tuned once";
}

}  // namespace
}  // namespace kiln
