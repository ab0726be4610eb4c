// One cache object shared by many threads of one process, as the compile
// pool and the benchmark workers share it: no wrong entry, no lost record.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cache_test_util.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"

namespace kiln {
namespace {

TEST(CacheThreads, ArtifactCacheSharedByThreads) {
  testing::TempDir dir;
  Options o = testing::options_for(dir.path(), 2u << 20);
  o.cache_memory_bytes = 200 * 1024;  // small: the memory layer evicts all the time
  ArtifactCache cache(o);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 30; ++round) {
        int index = (round * 7 + t) % 24;
        CachedArtifact want = testing::test_artifact(index, 30'000 + index * 1000);
        auto got = cache.lookup(testing::test_key(index));
        if (got && (got->binary != want.binary || got->meta != want.meta)) ++wrong;
        if (!got) (void)cache.store(testing::test_key(index), std::move(want));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  ArtifactCacheStats s = cache.stats();
  EXPECT_EQ(s.corrupt_discarded, 0u);
  EXPECT_EQ(s.memory_hits + s.disk_hits + s.misses, 8u * 30u);
  EXPECT_TRUE(cache.verify(false).broken.empty());
}

TEST(CacheThreads, TuningCacheSharedByThreads) {
  testing::TempDir dir;
  TuningCache cache(testing::options_for(dir.path()));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        cache.put(testing::test_record("k" + std::to_string(t), i, 1.0));
        (void)cache.lookup(ProblemKey("k0").scalar("M", std::int64_t{i}), testing::test_identity());
        if (i % 3 == 0) (void)cache.save();
      }
      (void)cache.save();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(TuningCache(testing::options_for(dir.path())).records().size(), 80u);
}

}  // namespace
}  // namespace kiln
