// Artifacts of the compile stage through the artifact cache: round trip
// across cache objects, and metadata that does not match its bytes is a miss.
#include <gtest/gtest.h>

#include "cache_test_util.hpp"
#include "kiln/cache/artifact_store.hpp"
#include "kiln/core/keys.hpp"

namespace kiln {
namespace {

Artifact sample_artifact() {
  Artifact a;
  a.key = hash128("artifact-store-test");
  a.kernel = "gemm";
  a.config = Config{{"BM", std::int64_t{64}}};
  a.entry = "gemm<64>";
  a.lowered_name = "_Z4gemmILi64EEvv";
  a.format = BinaryFormat::kCubin;
  a.arch = "sm_90a";
  a.binary = std::make_shared<const std::string>(
      "\x7f"
      "ELF pretend cubin");
  a.compiler = "nvrtc 13.0";
  a.options = {"-std=c++17"};
  a.log = "warning: something";
  return a;
}

TEST(ArtifactStore, RoundTripAcrossCacheObjects) {
  testing::TempDir dir;
  const Artifact a = sample_artifact();
  {
    ArtifactCache cache(testing::options_for(dir.path()));
    ASSERT_EQ(store_artifact(cache, a).value(), StoreOutcome::kWritten);
  }
  ArtifactCache cache(testing::options_for(dir.path()));
  std::optional<Artifact> b = lookup_artifact(cache, a.key);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*b->binary, *a.binary);
  EXPECT_EQ(b->lowered_name, a.lowered_name);
  EXPECT_EQ(b->config, a.config);
  EXPECT_EQ(b->log, a.log);
  EXPECT_EQ(b->format, BinaryFormat::kCubin);
}

TEST(ArtifactStore, MetadataThatDoesNotMatchItsBytesIsAMiss) {
  testing::TempDir dir;
  ArtifactCache cache(testing::options_for(dir.path()));
  CachedArtifact swapped = to_cached(sample_artifact());
  swapped.binary = "other bytes";
  ASSERT_TRUE(cache.store(sample_artifact().key, swapped).ok());
  EXPECT_FALSE(lookup_artifact(cache, sample_artifact().key).has_value());
  Result<Artifact> decoded = from_cached(swapped);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().code, ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace kiln
