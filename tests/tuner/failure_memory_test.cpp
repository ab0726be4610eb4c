// Remembered failures that outlive their cause are forgotten (issue: nothing
// Kiln remembers outlives its truth): a compile failure is witnessed by the
// places a missing header was looked for and by the files its errors named;
// a failure of the moment is retried after a bounded number of runs or
// days; one run's update forgets what it measured, counts what it skipped
// and, as a retune, replaces the lot; `kiln cache forget --failures` drops
// a kernel's failures. Real files in a temporary directory; no compiler.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kiln/tuner/failure_evidence.hpp"
#include "search_memory.hpp"

namespace kiln::internal {
namespace {

namespace fs = std::filesystem;

Config v(std::int64_t x) {
  return Config{{"V", x}};
}

ProblemKey problem(const std::string& kernel, std::int64_t n) {
  ProblemKey p(kernel);
  p.scalar("n", Value{n});
  return p;
}

class FailureMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_failure_memory_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "inc");
  }
  void TearDown() override { fs::remove_all(dir_); }
  FailureKey key(const std::string& kernel = "scale", std::int64_t n = 256) const {
    return FailureKey{problem(kernel, n),
                      TuningIdentity{hash128("def"), DeviceIdentity{"host", "cpu", 0, 0}, {}, {}},
                      1};
  }
  // A compile failure whose log says what Clang says of `name`.
  FailedConfig missing(const std::string& name, std::int64_t config = 3) const {
    FailedConfig f{v(config), "compile_failed", "fatal error"};
    f.failed_at = unix_now();
    add_compile_evidence(f, "unit.cpp:1:10: fatal error: '" + name + "' file not found\n",
                         {(dir_ / "inc").string()}, dir_);
    return f;
  }
  fs::path dir_;
};

TEST_F(FailureMemory, AHeaderCreatedWhereTheCompilerLookedForgetsTheFailure) {
  const FailedConfig f = missing("extra.h");
  EXPECT_EQ(f.missing_headers, std::vector<std::string>{"extra.h"});
  ASSERT_EQ(f.files.size(), 2u) << "both places it may be looked for witness its absence";
  EXPECT_FALSE(failure_gone(f, unix_now()).has_value()) << "nothing changed";
  std::ofstream(dir_ / "inc" / "extra.h") << "// now here\n";
  auto why = failure_gone(f, unix_now());
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find((dir_ / "inc" / "extra.h").string()), std::string::npos) << *why;
}

TEST_F(FailureMemory, NVRTCAndGccSpellingsAndAbsoluteNamesAreRead) {
  FailedConfig f{v(1), "compile_failed", ""};
  const std::string absolute = (dir_ / "abs" / "x.cuh").string();
  add_compile_evidence(f,
                       "k.cu(2): catastrophic error: cannot open source file \"a.cuh\"\n"
                       "k.cpp:3: fatal error: b.h: No such file or directory\n"
                       "fatal error: '" +
                           absolute + "' file not found\n",
                       {(dir_ / "inc").string()}, {});
  EXPECT_EQ(f.missing_headers, (std::vector<std::string>{"a.cuh", "b.h", absolute}));
  fs::create_directories(dir_ / "abs");
  std::ofstream(absolute) << "\n";
  EXPECT_TRUE(failure_gone(f, unix_now()).has_value()) << "an absolute name is its own place";
}

TEST_F(FailureMemory, APlaceThatHoldsTheHeaderAlreadyWasNotSearchedAndWitnessesNothing) {
  // The header exists in the working directory, yet the compiler did not
  // find it: it never looked there (a template compiled from memory). Had
  // that place witnessed, every run would forget the failure and fail again.
  std::ofstream(dir_ / "extra.h") << "\n";
  const FailedConfig f = missing("extra.h");
  ASSERT_EQ(f.files.size(), 1u);
  EXPECT_EQ(f.files[0].path, (dir_ / "inc" / "extra.h").string());
  EXPECT_FALSE(failure_gone(f, unix_now()).has_value());
}

TEST_F(FailureMemory, AFileTheErrorsNamedIsWitnessedByContent) {
  const fs::path header = dir_ / "inc" / "broken.h";
  std::ofstream(header) << "int x = ;\n";
  FailedConfig f{v(2), "compile_failed", ""};
  add_compile_evidence(f,
                       "In file included from unit.cpp:1:\n" + header.string() +
                           ":1:9: error: expected expression\n",
                       {(dir_ / "inc").string()}, {});
  ASSERT_EQ(f.files.size(), 1u);
  EXPECT_EQ(f.files[0].path, header.string());
  EXPECT_FALSE(f.files[0].digest.empty());
  EXPECT_FALSE(failure_gone(f, unix_now()).has_value());
  std::ofstream(header) << "int x = 1;\n";
  EXPECT_TRUE(failure_gone(f, unix_now()).has_value()) << "edited";
  fs::remove(header);
  EXPECT_TRUE(failure_gone(f, unix_now()).has_value()) << "removed";
}

TEST_F(FailureMemory, AFailureOfTheMomentIsRetriedAfterRunsOrDaysACompileErrorIsNot) {
  const std::int64_t now = unix_now();
  for (const char* outcome : {"timeout", "crashed", "load_failed", "launch_failed"}) {
    FailedConfig f{v(1), outcome, ""};
    f.failed_at = now;
    EXPECT_FALSE(failure_gone(f, now).has_value()) << outcome;
    f.skipped_runs = kRetryAfterRuns;
    EXPECT_TRUE(failure_gone(f, now).has_value()) << outcome << ": runs";
    f.skipped_runs = 0;
    EXPECT_TRUE(failure_gone(f, now + kRetryAfterSeconds).has_value()) << outcome << ": days";
  }
  for (const char* outcome : {"compile_failed", "wrong_result"}) {
    FailedConfig f{v(1), outcome, ""};
    f.failed_at = now;
    f.skipped_runs = 100;
    EXPECT_FALSE(failure_gone(f, now + 100 * kRetryAfterSeconds).has_value())
        << outcome << " stands until what decided it changes";
  }
}

TEST_F(FailureMemory, RecallSeparatesWhatStandsFromWhatIsForgottenAndARetuneRecallsNothing) {
  FailedConfigs table(dir_ / "failed");
  FailedConfig stale = missing("gone.h", 2);
  ASSERT_TRUE(table.remember(key(), {missing("extra.h", 1), stale}).ok());
  std::ofstream(dir_ / "inc" / "gone.h") << "\n";
  SearchMemory memory;
  recall_failures(memory, table, key(), /*retune=*/false, unix_now());
  ASSERT_EQ(memory.failed_before.size(), 1u);
  EXPECT_TRUE(memory.failed_before.count(v(1).key()));
  ASSERT_EQ(memory.forgotten.size(), 1u);
  EXPECT_EQ(memory.forgotten[0].failure.config, v(2));
  SearchMemory retune;
  recall_failures(retune, table, key(), /*retune=*/true, unix_now());
  EXPECT_TRUE(retune.failed_before.empty());
  EXPECT_TRUE(retune.forgotten.empty());
}

TEST_F(FailureMemory, ARunForgetsWhatItMeasuredCountsWhatItSkippedAndARetuneReplaces) {
  FailedConfigs table(dir_ / "failed");
  FailedConfig one{v(1), "timeout", "slow"}, two{v(2), "crashed", "SIGSEGV"};
  ASSERT_TRUE(table.remember(key(), {one, two}).ok());
  // A run that skipped V=1 and measured V=2 (ok now) and V=5 (pruned: it
  // never ran, so it says nothing).
  std::vector<Measurement> ms(2);
  ms[0].config = v(2);
  ms[1].config = v(5);
  ms[1].outcome = Outcome::kPruned;
  SearchMemory memory;
  ASSERT_TRUE(table.update(key(), failure_update(ms, {}, memory, {one}, false)).ok());
  auto left = table.recall(key());
  ASSERT_EQ(left.size(), 1u) << "V=2 ran: its failure is forgotten";
  EXPECT_EQ(left[0].config, v(1));
  EXPECT_EQ(left[0].skipped_runs, 1);
  // A retune that fails V=4 only: the file holds that alone.
  ASSERT_TRUE(
      table.update(key(), failure_update({}, {{v(4), "wrong_result", ""}}, memory, {}, true)).ok());
  left = table.recall(key());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].config, v(4));
  // A run that measures V=4 fine leaves nothing, and no file.
  std::vector<Measurement> fine(1);
  fine[0].config = v(4);
  ASSERT_TRUE(table.update(key(), failure_update(fine, {}, memory, {}, false)).ok());
  EXPECT_TRUE(table.recall(key()).empty());
  EXPECT_TRUE(table.list().empty()) << "an empty table is no file";
}

TEST_F(FailureMemory, ForgetDropsOneKernelsFailuresOrAll) {
  FailedConfigs table(dir_ / "failed");
  ASSERT_TRUE(table.remember(key("scale", 256), {{v(1), "crashed", ""}}).ok());
  ASSERT_TRUE(
      table.remember(key("scale", 512), {{v(1), "crashed", ""}, {v(2), "timeout", ""}}).ok());
  ASSERT_TRUE(table.remember(key("copy", 256), {{v(3), "compile_failed", ""}}).ok());
  auto files = table.list();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].kernel, "copy") << "sorted by kernel";
  auto forgotten = table.forget("scale");
  ASSERT_TRUE(forgotten.ok()) << forgotten.error().describe();
  EXPECT_EQ(*forgotten, 3u);
  EXPECT_TRUE(table.recall(key("scale", 512)).empty());
  EXPECT_EQ(table.recall(key("copy", 256)).size(), 1u) << "another kernel's stay";
  EXPECT_EQ(*table.forget(""), 1u);
  EXPECT_TRUE(table.list().empty());
  EXPECT_FALSE(FailedConfigs(dir_ / "failed", true).forget("").ok()) << "read-only";
}

TEST_F(FailureMemory, TheCompilersOwnSearchListDecidesWhereAHeaderWasLookedFor) {
  Measurement m;
  m.config = v(1);
  m.outcome = Outcome::kCompileFailed;
  m.error.message = "Clang failed to compile";
  m.error.details["log"] = "unit.cpp:1:10: fatal error: 'sys.h' file not found\n";
  m.error.details["include_search"] = (dir_ / "sys").string() + "\n";
  auto kept = failures_to_remember({m}, {(dir_ / "inc").string()}, dir_);
  ASSERT_EQ(kept.size(), 1u);
  ASSERT_EQ(kept[0].files.size(), 1u) << "the compiler's list, not the guess";
  EXPECT_EQ(kept[0].files[0].path, (dir_ / "sys" / "sys.h").string());
  EXPECT_GT(kept[0].failed_at, 0);
}

}  // namespace
}  // namespace kiln::internal
