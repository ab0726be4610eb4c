// The artifact cache on a real directory: hits from memory and disk,
// damaged entries discarded and rebuilt, LRU eviction within the bound,
// maintenance passes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "cache_test_util.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/file_io.hpp"

namespace kiln {
namespace {

using testing::options_for;
using testing::TempDir;
using testing::test_artifact;
using testing::test_key;

std::uint64_t entry_bytes(const ArtifactCache& cache) {
  std::uint64_t total = 0;
  for (const auto& f : cache.scan(false)) total += f.size;
  return total;
}

// Rewrites a file in place with `edit` applied to its bytes.
template <class Edit>
void damage(const std::filesystem::path& path, Edit edit) {
  std::string bytes = testing::read_test_file(path).value();
  edit(bytes);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(ArtifactCache, StoresAndFindsFromMemoryThenDisk) {
  TempDir dir;
  ArtifactCache cache(options_for(dir.path()));
  ASSERT_EQ(cache.state(), CacheState::kReady) << cache.state_reason();
  EXPECT_EQ(cache.lookup(test_key(1)), nullptr);
  ASSERT_EQ(cache.store(test_key(1), test_artifact(1, 5000)).value(), StoreOutcome::kWritten);
  auto hit = cache.lookup(test_key(1));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->binary, test_artifact(1, 5000).binary);
  EXPECT_EQ(cache.stats().memory_hits, 1u);

  // A second cache object (a second run) finds it on disk.
  ArtifactCache again(options_for(dir.path()));
  auto disk = again.lookup(test_key(1));
  ASSERT_NE(disk, nullptr);
  EXPECT_EQ(disk->meta, test_artifact(1, 5000).meta);
  EXPECT_EQ(again.stats().disk_hits, 1u);
  EXPECT_EQ(again.lookup(test_key(1)), disk);  // now from memory, the same object
  EXPECT_EQ(again.stats().memory_hits, 1u);

  struct stat st {};
  ASSERT_EQ(::stat(cache.dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(cache.entry_path(test_key(1)).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(ArtifactCache, TruncatedAndBitFlippedEntriesAreDiscardedAndRebuilt) {
  TempDir dir;
  ArtifactCache writer(options_for(dir.path()));
  ASSERT_TRUE(writer.store(test_key(1), test_artifact(1, 3000)).ok());
  ASSERT_TRUE(writer.store(test_key(2), test_artifact(2, 3000)).ok());
  damage(writer.entry_path(test_key(1)), [](std::string& b) { b.resize(b.size() - 100); });
  damage(writer.entry_path(test_key(2)), [](std::string& b) { b[b.size() / 2] ^= 0x10; });

  SweepReport report = writer.verify(/*remove=*/false);
  ASSERT_EQ(report.broken.size(), 2u);
  EXPECT_EQ(report.entries, 0u);

  ArtifactCache reader(options_for(dir.path()));
  EXPECT_EQ(reader.lookup(test_key(1)), nullptr);
  EXPECT_EQ(reader.lookup(test_key(2)), nullptr);
  EXPECT_EQ(reader.stats().corrupt_discarded, 2u);
  EXPECT_FALSE(std::filesystem::exists(reader.entry_path(test_key(1)))) << "not removed";
  EXPECT_FALSE(std::filesystem::exists(reader.entry_path(test_key(2))));
  // Rebuilt by the next store, and healthy again.
  ASSERT_TRUE(reader.store(test_key(1), test_artifact(1, 3000)).ok());
  reader.clear_memory();
  ASSERT_NE(reader.lookup(test_key(1)), nullptr);
  EXPECT_TRUE(reader.verify(false).broken.empty());
}

TEST(ArtifactCache, WrongFormatVersionIsAMiss) {
  TempDir dir;
  ArtifactCache cache(options_for(dir.path()));
  ASSERT_TRUE(cache.store(test_key(3), test_artifact(3, 100)).ok());
  damage(cache.entry_path(test_key(3)), [](std::string& b) { b[8] = 99; });
  cache.clear_memory();
  EXPECT_EQ(cache.lookup(test_key(3)), nullptr);
  EXPECT_EQ(cache.stats().corrupt_discarded, 1u);
}

TEST(ArtifactCache, EvictionKeepsTheBoundAndDropsLeastRecentlyUsed) {
  TempDir dir;
  const std::uint64_t bound = 600 * 1024;
  Options o = options_for(dir.path(), bound);
  o.cache_memory_bytes = 0;  // every lookup goes to disk and refreshes the LRU clock
  ArtifactCache cache(o);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(cache.store(test_key(i), test_artifact(i, 100 * 1024)).ok());
  }
  // Make the order unambiguous whatever the file system's time resolution:
  // entry 0 was used last, entry 1 is the least recently used.
  for (int i = 0; i < 4; ++i) {
    struct timespec times[2] = {{1000 + i, 0}, {1000 + i, 0}};
    ::utimensat(AT_FDCWD, cache.entry_path(test_key(i)).c_str(), times, 0);
  }
  ASSERT_NE(cache.lookup(test_key(0)), nullptr);  // touches entry 0: now the newest
  for (int i = 4; i < 20; ++i) {
    ASSERT_TRUE(cache.store(test_key(i), test_artifact(i, 100 * 1024)).ok());
    ASSERT_LE(entry_bytes(cache), bound) << "after storing entry " << i;
  }
  EXPECT_GT(cache.stats().evicted_entries, 0u);
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(test_key(1)))) << "LRU entry survived";
  EXPECT_TRUE(std::filesystem::exists(cache.entry_path(test_key(19)))) << "newest entry evicted";
  // An entry larger than the whole bound is not written at all.
  EXPECT_EQ(cache.store(test_key(99), test_artifact(99, bound + 1)).value(),
            StoreOutcome::kTooLarge);
}

TEST(ArtifactCache, PruneVerifyAndClear) {
  TempDir dir;
  ArtifactCache cache(options_for(dir.path()));
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(cache.store(test_key(i), test_artifact(i, 10'000)).ok());
  // A temporary file from a writer that died long ago, and a fresh one.
  std::filesystem::path shard = cache.entry_path(test_key(0)).parent_path();
  std::ofstream(shard / ".tmp-dead") << "partial";
  std::ofstream(shard / ".tmp-live") << "partial";
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  ::utimensat(AT_FDCWD, (shard / ".tmp-dead").c_str(), old, 0);

  SweepReport pruned = cache.prune(30'000);
  EXPECT_LE(pruned.bytes, 30'000u);
  EXPECT_EQ(pruned.entries, 2u);
  EXPECT_FALSE(std::filesystem::exists(shard / ".tmp-dead"));
  EXPECT_TRUE(std::filesystem::exists(shard / ".tmp-live")) << "a live writer's file was swept";

  SweepReport verified = cache.verify(false);
  EXPECT_EQ(verified.entries, 2u);
  EXPECT_TRUE(verified.broken.empty());

  SweepReport cleared = cache.clear();
  EXPECT_EQ(cleared.entries, 0u);
  EXPECT_TRUE(cache.scan(false).empty());
  EXPECT_EQ(cache.lookup(test_key(5)), nullptr);
}

}  // namespace
}  // namespace kiln
