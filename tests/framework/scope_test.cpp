// Tuning and skip scopes: nesting, restoration on exceptions, per-thread
// isolation, and that a skipped op leaves no trace in any cache.
#include <gtest/gtest.h>

#include <fstream>
#include <latch>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "framework_test_util.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/framework/tuning_scope.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

using testing::ScaleCall;
using testing::ScaleRunner;

using Names = std::vector<std::string>;

TEST(SkipScope, NestedScopesTakeTheUnionAndRestore) {
  EXPECT_TRUE(SkipScope::current().empty());
  {
    SkipScope outer("gemm");
    EXPECT_EQ(SkipScope::current(), Names{"gemm"});
    {
      SkipScope inner({"attention", "moe"});
      EXPECT_EQ(SkipScope::current(), (Names{"attention", "gemm", "moe"}));
      EXPECT_TRUE(SkipScope::skipped("gemm"));
      {
        SkipScope again(Names{"gemm", "norm"});  // overlapping names are fine
        EXPECT_EQ(SkipScope::current(), (Names{"attention", "gemm", "moe", "norm"}));
      }
      EXPECT_EQ(SkipScope::current(), (Names{"attention", "gemm", "moe"}));
    }
    EXPECT_EQ(SkipScope::current(), Names{"gemm"});
    EXPECT_FALSE(SkipScope::skipped("attention"));
  }
  EXPECT_TRUE(SkipScope::current().empty());
}

TEST(SkipScope, ExceptionsRestoreTheOuterSet) {
  SkipScope outer("gemm");
  try {
    SkipScope inner("attention");
    TuningScope tuning(true);
    SkipScope innermost("moe");
    EXPECT_TRUE(TuningScope::tuning() || !Options::global().tuning);
    throw std::runtime_error("forward pass failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(SkipScope::current(), Names{"gemm"});
  EXPECT_FALSE(TuningScope::tuning());
}

TEST(SkipScope, EachThreadHasItsOwnList) {
  SkipScope mine("gemm");
  Names seen_before, seen_inside;
  std::thread other([&] {
    seen_before = SkipScope::current();  // not this thread's scope
    SkipScope theirs("attention");
    seen_inside = SkipScope::current();
  });
  other.join();
  EXPECT_TRUE(seen_before.empty());
  EXPECT_EQ(seen_inside, Names{"attention"});
  EXPECT_EQ(SkipScope::current(), Names{"gemm"});  // untouched by the other thread
}

TEST(TuningScope, SwitchesNestAndRestore) {
  EXPECT_FALSE(TuningScope::tuning());
  {
    TuningScope on(true);
    EXPECT_EQ(TuningScope::tuning(), Options::global().tuning);
    {
      TuningScope off(false);
      EXPECT_FALSE(TuningScope::tuning());
    }
    EXPECT_EQ(TuningScope::tuning(), Options::global().tuning);
  }
  EXPECT_FALSE(TuningScope::tuning());
}

TEST(TuningScope, RankFileNames) {
  EXPECT_EQ(rank_file("/t/tactics.json", -1), "/t/tactics.json");
  EXPECT_EQ(rank_file("/t/tactics.json", 3), "/t/tactics.rank3.json");
}

TuningScopeOptions scope_options(std::filesystem::path file, int rank, bool tune,
                                 std::vector<std::string> skip = {}) {
  TuningScopeOptions o;
  o.tune = tune;
  o.cache_path = std::move(file);
  o.rank = rank;
  o.skip = std::move(skip);
  return o;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TuningScope, SkippedOpsCompileProfileAndCacheNothing) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  auto dir = testing::fresh_dir("skip_cache");
  TacticTuner tuner(testing::quick_options());
  ScaleRunner a0("op_a_runner", {0, 1}), b0("op_b_runner", {0, 1});
  TunableRunner* ra[] = {&a0};
  TunableRunner* rb[] = {&b0};
  ScaleCall call(4, 64);
  std::filesystem::path file;
  {
    TuningScope scope(tuner, scope_options(dir / "tactics.json", 2, true, {"op_b"}));
    file = scope.cache_file();
    EXPECT_EQ(tuner.choose_one("op_a", ra, call.args).source, ChoiceSource::kTuned);
    Choice b = tuner.choose_one("op_b", rb, call.args);
    EXPECT_EQ(b.source, ChoiceSource::kSkipped);
    EXPECT_EQ(b.tactic, kFallbackTactic);
    EXPECT_EQ(b.runner, &b0);
    // A nested skip scope naming a second op, then both again.
    SkipScope more("op_a");
    EXPECT_EQ(tuner.choose_one("op_a", ra, call.args).source, ChoiceSource::kSkipped);
  }
  // The skipped op's runner was never asked anything.
  EXPECT_EQ(b0.listed, 0);
  EXPECT_EQ(b0.prepared, 0);
  EXPECT_EQ(b0.runs, 0);
  EXPECT_GT(a0.runs, 0);
  EXPECT_EQ(tuner.stats().skipped, 2u);
  // The rank's file holds op_a's decision and nothing of op_b.
  EXPECT_EQ(file.filename(), "tactics.rank2.json");
  std::string text = read_text(file);
  EXPECT_NE(text.find("op_a|op_a_runner@1"), std::string::npos) << text;
  EXPECT_EQ(text.find("op_b"), std::string::npos) << text;
  // Outside the scope op_b is still unknown: a miss, the fallback.
  EXPECT_EQ(tuner.choose_one("op_b", rb, call.args).source, ChoiceSource::kFallback);
  std::filesystem::remove_all(dir);
}

TEST(TuningScope, CacheFileLoadsAtEntryAndSavesAtExit) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  auto dir = testing::fresh_dir("scope_file");
  ScaleRunner r("scale", {0, 1, 2});
  TunableRunner* runners[] = {&r};
  ScaleCall call(2, 32);
  Choice first;
  {
    TacticTuner tuner(testing::quick_options());
    TuningScope scope(tuner, scope_options(dir / "t.json", -1, true));
    first = tuner.choose_one("scale", runners, call.args);
    EXPECT_EQ(first.source, ChoiceSource::kTuned);
  }
  ASSERT_TRUE(std::filesystem::exists(dir / "t.json"));
  // A new tuner (as in a new process), tuning off: served from the file.
  TacticTuner fresh(testing::quick_options());
  int runs_before = r.runs;
  {
    TuningScope scope(fresh, scope_options(dir / "t.json", -1, false));
    Choice again = fresh.choose_one("scale", runners, call.args);
    EXPECT_EQ(again.source, ChoiceSource::kDisk);
    EXPECT_EQ(again.tactic, first.tactic);
  }
  EXPECT_EQ(r.runs, runs_before) << "a cached decision profiles nothing";
  std::filesystem::remove_all(dir);
}

// Two threads, each in its own scope with its own file, both open while
// each tunes: each thread's decision lands in its own file (it went to the
// file opened last, whichever thread opened it).
TEST(TuningScope, EachThreadRecordsIntoItsOwnScopesFile) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  auto dir = testing::fresh_dir("two_scopes");
  TacticTuner tuner(testing::quick_options());
  ScaleRunner ra("runner_a", {0, 1}), rb("runner_b", {0, 1});
  std::latch a_open(1), b_open(1), a_tuned(1);
  std::thread a([&] {
    TunableRunner* runners[] = {&ra};
    ScaleCall call(2, 16);
    TuningScope scope(tuner, scope_options(dir / "a.json", -1, true));
    a_open.count_down();
    b_open.wait();  // b's file is now the newest attached
    EXPECT_EQ(tuner.choose_one("op_a", runners, call.args).source, ChoiceSource::kTuned);
    a_tuned.count_down();
  });
  std::thread b([&] {
    TunableRunner* runners[] = {&rb};
    ScaleCall call(2, 16);
    a_open.wait();
    TuningScope scope(tuner, scope_options(dir / "b.json", -1, true));
    b_open.count_down();
    EXPECT_EQ(tuner.choose_one("op_b", runners, call.args).source, ChoiceSource::kTuned);
    a_tuned.wait();  // b's scope outlives a's tuning
  });
  a.join();
  b.join();
  const std::string text_a = read_text(dir / "a.json"), text_b = read_text(dir / "b.json");
  EXPECT_NE(text_a.find("op_a|runner_a@1"), std::string::npos) << text_a;
  EXPECT_EQ(text_a.find("op_b"), std::string::npos) << text_a;
  EXPECT_NE(text_b.find("op_b|runner_b@1"), std::string::npos) << text_b;
  EXPECT_EQ(text_b.find("op_a"), std::string::npos) << text_b;
  std::filesystem::remove_all(dir);
}

TEST(TuningScope, AMalformedCacheFileIsNotFatal) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  auto dir = testing::fresh_dir("bad_file");
  {
    std::ofstream out(dir / "t.json");
    out << "{ this is not a tuning file";
  }
  ScaleRunner r("scale", {0, 1});
  TunableRunner* runners[] = {&r};
  ScaleCall call(2, 16);
  TacticTuner tuner(testing::quick_options());
  {
    TuningScope scope(tuner, scope_options(dir / "t.json", -1, true));
    EXPECT_EQ(tuner.choose_one("scale", runners, call.args).source, ChoiceSource::kTuned);
  }
  // The next scope reads the decision back (the file was replaced whole).
  TacticTuner fresh(testing::quick_options());
  TuningScope scope(fresh, scope_options(dir / "t.json", -1, false));
  EXPECT_EQ(fresh.choose_one("scale", runners, call.args).source, ChoiceSource::kDisk);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln
