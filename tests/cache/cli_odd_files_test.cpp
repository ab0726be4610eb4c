// `kiln cache` over odd files, read-only directories and refused
// directories (issue 14): every command finishes within a generous
// deadline, exits 1 when it could not do what was asked, and says what and
// why; never a hang, never a success line over nothing done.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "cli_fixture.hpp"
#include "odd_files.hpp"
#include "read_only_dir.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::DeadlineRun;
using CacheCliOddFiles = testing::CacheCliTest;

#define EXPECT_FINISHED(run) \
  ASSERT_FALSE((run).timed_out) << "hung: killed after the 60 s deadline\n" << (run).err

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(CacheCliOddFiles, VerifyFinishesOnFifosDevicesAndHugeEntries) {
  ASSERT_TRUE(testing::plant_fifo(entries_[0]));
  ASSERT_TRUE(testing::plant_fifo(entries_[1]));
  testing::FifoWriter entry_writer(entries_[1]);
  ASSERT_TRUE(testing::plant_sparse(entries_[2], testing::kOneTiB));
  ASSERT_TRUE(testing::plant_fifo(tuning_file_));
  testing::FifoWriter tuning_writer(tuning_file_);
  ASSERT_TRUE(entry_writer.ok() && tuning_writer.ok());

  DeadlineRun verify = kiln_within_deadline("verify");
  EXPECT_FINISHED(verify);
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  EXPECT_TRUE(has(verify.out, entries_[0].string() + ": it is a FIFO, not a regular file"))
      << verify.out;
  EXPECT_TRUE(has(verify.out, "larger than the 1 GiB limit for an artifact entry")) << verify.out;
  EXPECT_TRUE(has(verify.out, tuning_file_.string() + ": it is a FIFO")) << verify.out;
  EXPECT_TRUE(has(verify.out, "4 broken")) << verify.out;

  // ls and stats finish too; --remove clears the odd files away.
  EXPECT_FINISHED(kiln_within_deadline("ls"));
  EXPECT_FINISHED(kiln_within_deadline("stats"));
  DeadlineRun removed = kiln_within_deadline("verify --remove");
  EXPECT_FINISHED(removed);
  EXPECT_FALSE(fs::exists(fs::symlink_status(entries_[0])));
}

TEST_F(CacheCliOddFiles, ImportRefusesDevZeroFifosAndHugeFilesPromptly) {
  testing::TempDir elsewhere;
  const fs::path fifo = elsewhere.path() / "lonely.fifo";
  const fs::path held = elsewhere.path() / "held.fifo";
  const fs::path huge = elsewhere.path() / "huge.json";
  ASSERT_TRUE(testing::plant_fifo(fifo));
  ASSERT_TRUE(testing::plant_fifo(held));
  testing::FifoWriter writer(held);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(testing::plant_sparse(huge, testing::kOneTiB));
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "/dev/zero: it is a character device, not a regular file"},
      {fifo.string(), fifo.string() + ": it is a FIFO, not a regular file"},
      {held.string(), held.string() + ": it is a FIFO, not a regular file"},
      {huge.string(), "it is 1 TiB, larger than the 64 MiB limit for a tuning table"},
  };
  for (const auto& [file, message] : cases) {
    DeadlineRun run = kiln_within_deadline("import " + file);
    EXPECT_FINISHED(run);
    EXPECT_EQ(run.exit_code, 1) << file << ": " << run.err;
    EXPECT_TRUE(has(run.err, message)) << run.err;
  }
  // Nothing was imported, the cache is as it was.
  EXPECT_EQ(testing::kiln_cache(env_, "stats --json").json()["tuning"]["records"], 2);
}

TEST_F(CacheCliOddFiles, ExportNeverReplacesAFifo) {
  testing::TempDir elsewhere;
  const fs::path fifo = elsewhere.path() / "out.json";
  ASSERT_TRUE(testing::plant_fifo(fifo));
  DeadlineRun run = kiln_within_deadline("export " + fifo.string());
  EXPECT_FINISHED(run);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(has(run.err, "it is a FIFO, not a regular file")) << run.err;
  EXPECT_TRUE(testing::is_fifo(fifo));
  DeadlineRun disabled = kiln_within_deadline("export " + (elsewhere.path() / "t.json").string(),
                                              "KILN_CACHE_DISABLE=1");
  EXPECT_EQ(disabled.exit_code, 1) << "exported nothing and called it done";
  EXPECT_TRUE(has(disabled.err, "nothing exported: caching is disabled")) << disabled.err;
}

TEST_F(CacheCliOddFiles, ClearAndPruneOnAReadOnlyDirectoryReportWhatTheyCouldNotRemove) {
  testing::ReadOnlyDir read_only(dir_.path());
  if (!read_only.ok()) KILN_SKIP(Skip::kHost) << read_only.why_not();
  DeadlineRun clear = kiln_within_deadline("clear", "", read_only.in_child());
  EXPECT_FINISHED(clear);
  EXPECT_EQ(clear.exit_code, 1) << "(" << read_only.how() << ") " << clear.out << clear.err;
  // Three index entries and the three programs they name.
  EXPECT_TRUE(
      has(clear.err, "could not remove 6 artifact files (first: remove " + dir_.path().string()))
      << clear.err;
  EXPECT_TRUE(has(clear.err, "could not remove 1 of 1 tuning files (first: remove " +
                                 tuning_file_.string() + ": "))
      << clear.err;
  EXPECT_TRUE(has(clear.out, "removed 0 artifact entries")) << clear.out;

  DeadlineRun clear_json = kiln_within_deadline("clear --json", "", read_only.in_child());
  EXPECT_EQ(clear_json.exit_code, 1);
  nlohmann::json j = nlohmann::json::parse(clear_json.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << clear_json.out;
  EXPECT_EQ(j["failed_removals"], 6);
  EXPECT_EQ(j["errors"].size(), 2u) << j.dump(2);

  DeadlineRun prune = kiln_within_deadline("prune --max-size 0", "", read_only.in_child());
  EXPECT_FINISHED(prune);
  EXPECT_EQ(prune.exit_code, 1) << prune.out << prune.err;
  EXPECT_TRUE(has(prune.err, "kiln cache: ")) << prune.err;
  // A prune with nothing to remove needs no write and succeeds.
  DeadlineRun roomy = kiln_within_deadline("prune --max-size 1G", "", read_only.in_child());
  EXPECT_EQ(roomy.exit_code, 0) << roomy.err;

  for (const auto& e : entries_) EXPECT_TRUE(fs::exists(e)) << e;
}

TEST_F(CacheCliOddFiles, ClearUnderKilnCacheReadOnlyRefusesClearly) {
  DeadlineRun run = kiln_within_deadline("clear", "KILN_CACHE_READ_ONLY=1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(has(run.err, "cannot clear a read-only cache: KILN_CACHE_READ_ONLY is set"))
      << run.err;
  EXPECT_FALSE(has(run.out, "removed")) << run.out;
  for (const auto& e : entries_) EXPECT_TRUE(fs::exists(e)) << e;
}

// A directory the tuner refuses (dir_safety.cpp: others can write it, or
// another user owns it) is reported by verify, ls and stats with the
// tuner's own reason, never shown as empty and healthy.
void expect_refusal_reported(const testing::CacheCliTest& t, const std::string& reason) {
  for (const char* command : {"verify", "ls", "stats"}) {
    DeadlineRun run = t.kiln_within_deadline(command);
    EXPECT_EQ(run.exit_code, 1) << command << ": " << run.out << run.err;
    EXPECT_TRUE(has(run.err, "refused (the tuner will not use it): refusing cache path "))
        << run.err;
    EXPECT_TRUE(has(run.err, reason)) << command << ": " << run.err;
  }
  DeadlineRun json = t.kiln_within_deadline("verify --json");
  nlohmann::json j = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.out;
  EXPECT_TRUE(j["refused"].get<bool>());
  EXPECT_FALSE(j["errors"].empty());
}

TEST_F(CacheCliOddFiles, VerifyLsAndStatsReportADirectoryOthersCanWrite) {
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0777), 0);
  expect_refusal_reported(*this, "group or others can write it");
}

TEST_F(CacheCliOddFiles, VerifyLsAndStatsReportADirectoryAnotherUserOwns) {
  if (::geteuid() != 0)
    KILN_SKIP(Skip::kNotRoot) << "needs root to chown the directory to another user";
  ASSERT_EQ(::chown(dir_.path().c_str(), 54321, 54321), 0);
  expect_refusal_reported(*this, "it is owned by uid 54321");
}

TEST_F(CacheCliOddFiles, VerifyUnderKilnCacheDisableSaysNothingWasVerified) {
  DeadlineRun run = kiln_within_deadline("verify", "KILN_CACHE_DISABLE=1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(has(run.err, "nothing verified: caching is disabled")) << run.err;
}

}  // namespace
}  // namespace kiln
