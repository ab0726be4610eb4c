// Refusals and modes: directories others can write, entries another user
// owns, symbolic links, read-only and disabled caches. Runs as root on CI
// machines, so ownership is changed for real with chown.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_test_util.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

using testing::options_for;
using testing::TempDir;
using testing::test_artifact;
using testing::test_key;

constexpr uid_t kOtherUid = 54321;

TEST(CacheSafety, GroupOrOtherWritableCacheDirectoryIsRefused) {
  for (mode_t mode : {0770, 0707, 0777}) {
    TempDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), mode), 0);
    ArtifactCache cache(options_for(dir.path()));
    EXPECT_EQ(cache.state(), CacheState::kRefused) << std::oct << mode;
    EXPECT_NE(cache.state_reason().find("chmod go-w " + dir.path().string()), std::string::npos)
        << cache.state_reason();
    EXPECT_EQ(cache.store(test_key(1), test_artifact(1, 10)).value(),
              StoreOutcome::kSkippedDisabled);
    EXPECT_EQ(cache.lookup(test_key(1)), nullptr);
    TuningCache tuning(options_for(dir.path()));
    EXPECT_EQ(tuning.state(), CacheState::kRefused);
  }
}

TEST(CacheSafety, GroupWritableShardDirectoryIsRefused) {
  TempDir dir;
  ArtifactCache writer(options_for(dir.path()));
  ASSERT_TRUE(writer.store(test_key(1), test_artifact(1, 100)).ok());
  ASSERT_EQ(::chmod(writer.entry_path(test_key(1)).parent_path().c_str(), 0770), 0);
  ArtifactCache reader(options_for(dir.path()));
  ASSERT_EQ(reader.state(), CacheState::kReady);
  EXPECT_EQ(reader.lookup(test_key(1)), nullptr);
  EXPECT_EQ(reader.stats().refused_entries, 1u);
}

TEST(CacheSafety, EntryOwnedByAnotherUserIsRefusedNotRemoved) {
  if (::geteuid() != 0) KILN_SKIP(Skip::kNotRoot) << "needs root to chown an entry to another user";
  TempDir dir;
  ArtifactCache writer(options_for(dir.path()));
  ASSERT_TRUE(writer.store(test_key(1), test_artifact(1, 100)).ok());
  const auto path = writer.entry_path(test_key(1));
  ASSERT_EQ(::chown(path.c_str(), kOtherUid, kOtherUid), 0);
  ArtifactCache reader(options_for(dir.path()));
  EXPECT_EQ(reader.lookup(test_key(1)), nullptr);
  EXPECT_EQ(reader.stats().refused_entries, 1u);
  EXPECT_TRUE(std::filesystem::exists(path)) << "a refused entry is reported, not deleted";
  SweepReport report = reader.verify(false);
  ASSERT_EQ(report.broken.size(), 1u);
  EXPECT_NE(report.broken[0].problem.find("owned by uid 54321"), std::string::npos);
}

TEST(CacheSafety, CacheDirectoryOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0)
    KILN_SKIP(Skip::kNotRoot) << "needs root to chown a directory to another user";
  TempDir dir;
  ASSERT_EQ(::chown(dir.path().c_str(), kOtherUid, kOtherUid), 0);
  ArtifactCache cache(options_for(dir.path()));
  EXPECT_EQ(cache.state(), CacheState::kRefused);
  EXPECT_NE(cache.state_reason().find("owned by uid 54321"), std::string::npos);
}

TEST(CacheSafety, GroupWritableOrSymlinkedEntryIsRefused) {
  TempDir dir;
  ArtifactCache writer(options_for(dir.path()));
  ASSERT_TRUE(writer.store(test_key(1), test_artifact(1, 100)).ok());
  ASSERT_TRUE(writer.store(test_key(2), test_artifact(2, 100)).ok());
  ASSERT_EQ(::chmod(writer.entry_path(test_key(1)).c_str(), 0666), 0);
  const auto target = dir.path() / "elsewhere.kiln";
  std::filesystem::rename(writer.entry_path(test_key(2)), target);
  std::filesystem::create_symlink(target, writer.entry_path(test_key(2)));
  ArtifactCache reader(options_for(dir.path()));
  EXPECT_EQ(reader.lookup(test_key(1)), nullptr);
  EXPECT_EQ(reader.lookup(test_key(2)), nullptr);
  EXPECT_EQ(reader.stats().refused_entries, 2u);
}

TEST(CacheSafety, ReadOnlyReadsButNeverWrites) {
  TempDir dir;
  {
    ArtifactCache writer(options_for(dir.path()));
    ASSERT_TRUE(writer.store(test_key(1), test_artifact(1, 100)).ok());
    ASSERT_TRUE(writer.store(test_key(2), test_artifact(2, 100)).ok());
  }
  Options o = options_for(dir.path());
  o.cache_read_only = true;
  ArtifactCache cache(o);
  ASSERT_EQ(cache.state(), CacheState::kReadOnly);
  // Damage one entry: read-only still refuses to load it, but leaves it.
  const auto broken = cache.entry_path(test_key(2));
  ASSERT_EQ(::truncate(broken.c_str(), 10), 0);
  struct stat before {};
  ASSERT_EQ(::stat(cache.entry_path(test_key(1)).c_str(), &before), 0);
  EXPECT_NE(cache.lookup(test_key(1)), nullptr);
  EXPECT_EQ(cache.lookup(test_key(2)), nullptr);
  EXPECT_TRUE(std::filesystem::exists(broken));
  EXPECT_EQ(cache.store(test_key(3), test_artifact(3, 100)).value(),
            StoreOutcome::kSkippedReadOnly);
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(test_key(3))));
  struct stat after {};
  ASSERT_EQ(::stat(cache.entry_path(test_key(1)).c_str(), &after), 0);
  EXPECT_TRUE(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
              before.st_mtim.tv_nsec == after.st_mtim.tv_nsec)
      << "read-only touched an entry";
  EXPECT_EQ(cache.clear().removed_entries, 0u);
  EXPECT_TRUE(std::filesystem::exists(broken));

  // Read-only on a directory that does not exist creates nothing.
  Options missing = options_for(dir.path() / "absent");
  missing.cache_read_only = true;
  ArtifactCache nothing(missing);
  EXPECT_EQ(nothing.lookup(test_key(1)), nullptr);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "absent"));
}

TEST(CacheSafety, DisabledTouchesNothing) {
  TempDir dir;
  Options o = options_for(dir.path() / "cache");
  o.cache_disabled = true;
  ArtifactCache cache(o);
  EXPECT_EQ(cache.state(), CacheState::kDisabled);
  EXPECT_EQ(cache.store(test_key(1), test_artifact(1, 10)).value(), StoreOutcome::kSkippedDisabled);
  EXPECT_EQ(cache.lookup(test_key(1)), nullptr);
  TuningCache tuning(o);
  tuning.put(testing::test_record("gemm", 1, 1.0));
  EXPECT_EQ(tuning.save().value(), StoreOutcome::kSkippedDisabled);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "cache"));
}

}  // namespace
}  // namespace kiln
