// Real processes (fork/exec of kiln_cache_worker) against one directory:
// concurrent writers of the same keys, concurrent tuning savers, and
// writers killed with SIGKILL half way through a write.
#include <gtest/gtest.h>

#include "cache_test_util.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/file_io.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "process_util.hpp"

namespace kiln {
namespace {

using testing::options_for;
using testing::spawn;
using testing::TempDir;
using testing::wait_exit;

constexpr int kProcesses = 10;

TEST(MultiProcess, ConcurrentArtifactWritersNeverTearAnEntry) {
  TempDir dir;
  const int keys = 12;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcesses; ++p) {
    pids.push_back(spawn({KILN_CACHE_WORKER_PATH, "artifact-storm", dir.path().string(),
                          std::to_string(keys), "3"}));
  }
  for (pid_t pid : pids) EXPECT_EQ(wait_exit(pid), 0) << "a worker saw a wrong or torn entry";
  ArtifactCache cache(options_for(dir.path()));
  SweepReport report = cache.verify(false);
  EXPECT_TRUE(report.broken.empty());
  EXPECT_EQ(report.entries, static_cast<std::uint64_t>(keys));
  for (int k = 0; k < keys; ++k) {
    auto got = cache.lookup(testing::test_key(k));
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->binary, testing::test_artifact(k, testing::test_size(k)).binary);
  }
  for (const auto& f : cache.scan(false)) EXPECT_FALSE(f.temporary) << f.path << " left behind";
}

TEST(MultiProcess, ConcurrentTuningSaversLoseNoRecord) {
  TempDir dir;
  const int per_worker = 5;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcesses; ++p) {
    pids.push_back(spawn({KILN_CACHE_WORKER_PATH, "tuning-storm", dir.path().string(),
                          std::to_string(p), std::to_string(per_worker)}));
  }
  for (pid_t pid : pids) EXPECT_EQ(wait_exit(pid), 0);
  TuningCache cache(options_for(dir.path()));
  ASSERT_EQ(cache.files().size(), 1u);
  EXPECT_TRUE(cache.files()[0].problem.empty()) << cache.files()[0].problem;
  EXPECT_EQ(cache.records().size(), static_cast<std::size_t>(kProcesses * per_worker + 1));
  for (int p = 0; p < kProcesses; ++p) {
    for (int i = 0; i < per_worker; ++i) {
      EXPECT_TRUE(cache
                      .lookup(ProblemKey("own_w" + std::to_string(p)).scalar("M", std::int64_t{i}),
                              testing::test_identity())
                      .has_value())
          << "lost record of worker " << p << " round " << i;
    }
  }
  // Every worker offered a "shared" record; the fastest (worker 0) won.
  auto shared =
      cache.lookup(ProblemKey("shared").scalar("M", std::int64_t{1}), testing::test_identity());
  ASSERT_TRUE(shared.has_value());
  EXPECT_DOUBLE_EQ(shared->best_time_ms, 10.0);
}

TEST(MultiProcess, ArtifactWriterKilledMidWriteLeavesNothingCorruptVisible) {
  TempDir dir;
  const auto marker = dir.path() / "marker";
  pid_t pid =
      spawn({KILN_CACHE_WORKER_PATH, "artifact-stall", dir.path().string(), marker.string()});
  ASSERT_TRUE(testing::wait_for_file(marker)) << "the writer never reached the middle of its write";
  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);

  Options o = options_for(dir.path());
  ArtifactCache cache(o);
  // The kill landed mid-write: a partial temporary file, no entry.
  std::vector<ArtifactFileInfo> files = cache.scan(false);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files[0].temporary);
  EXPECT_GT(files[0].size, 0u);
  EXPECT_LT(files[0].size, 4u << 20);
  EXPECT_EQ(cache.lookup(testing::test_key(1000)), nullptr);
  EXPECT_EQ(cache.stats().corrupt_discarded, 0u);
  EXPECT_TRUE(cache.verify(false).broken.empty());
  // The entry is rebuilt normally; the dead writer's file is swept once stale.
  ASSERT_TRUE(cache.store(testing::test_key(1000), testing::test_artifact(1000, 4u << 20)).ok());
  cache.clear_memory();
  EXPECT_NE(cache.lookup(testing::test_key(1000)), nullptr);
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  ::utimensat(AT_FDCWD, files[0].path.c_str(), old, 0);
  cache.prune(o.cache_max_bytes);
  EXPECT_FALSE(std::filesystem::exists(files[0].path));
}

TEST(MultiProcess, TuningSaverKilledMidWriteLeavesTheOldFileWhole) {
  TempDir dir;
  {
    TuningCache cache(options_for(dir.path()));
    cache.put(testing::test_record("before", 1, 1.0));
    ASSERT_TRUE(cache.save().ok());
  }
  const auto marker = dir.path() / "marker";
  pid_t pid = spawn({KILN_CACHE_WORKER_PATH, "tuning-stall", dir.path().string(), marker.string()});
  ASSERT_TRUE(testing::wait_for_file(marker));
  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);

  TuningCache cache(options_for(dir.path()));
  ASSERT_EQ(cache.files().size(), 1u);
  EXPECT_TRUE(cache.files()[0].problem.empty()) << cache.files()[0].problem;
  EXPECT_EQ(cache.records().size(), 1u);
  EXPECT_TRUE(
      cache.lookup(ProblemKey("before").scalar("M", std::int64_t{1}), testing::test_identity()));
  // The dead saver's lock died with it: the next save goes through.
  cache.put(testing::test_record("after", 1, 1.0));
  ASSERT_EQ(cache.save().value(), StoreOutcome::kWritten);
  EXPECT_EQ(TuningCache(options_for(dir.path())).records().size(), 2u);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A saver stopped while it holds the tuning file's lock (SIGSTOP, a
// debugger, a hung file system) used to block every later save forever in
// flock(); now a waiter gives up at its bound with an error naming the lock.
TEST(MultiProcess, AStoppedLockHolderDelaysASaverOnlyUpToItsBound) {
  testing::TempDir dir;
  const auto marker = dir.path() / "marker";
  pid_t pid = testing::spawn(
      {KILN_CACHE_WORKER_PATH, "tuning-stall", dir.path().string(), marker.string()});
  ASSERT_TRUE(testing::wait_for_file(marker));
  ::kill(pid, SIGSTOP);
  const auto lock = TuningCache(testing::options_for(dir.path())).write_path().string() + ".lock";
  Result<cache::FileLock> taken = cache::FileLock::acquire(lock, std::chrono::milliseconds(300));
  ::kill(pid, SIGKILL);
  EXPECT_EQ(testing::wait_exit(pid), 128 + SIGKILL);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::kTimeout);
  EXPECT_NE(taken.error().message.find("gave up after 300 ms waiting for the lock on " + lock),
            std::string::npos)
      << taken.error().message;
  // The holder is gone: the lock is free at once.
  EXPECT_TRUE(cache::FileLock::acquire(lock, std::chrono::milliseconds(300)).ok());
}

}  // namespace
}  // namespace kiln
