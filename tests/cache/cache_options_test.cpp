// The Options fields the caches added: the in-memory bound and the rank
// that picks a tuning file, with their precedence and malformed values.
#include <gtest/gtest.h>

#include "kiln/core/options.hpp"

namespace kiln {
namespace {

TEST(CacheOptions, RankPrecedenceAndMemoryBound) {
  EXPECT_EQ(Options::from_env(Environment()).rank, -1);
  EXPECT_EQ(Options::from_env(Environment().set("LOCAL_RANK", "3")).rank, 3);
  EXPECT_EQ(Options::from_env(Environment().set("LOCAL_RANK", "3").set("RANK", "11")).rank, 11);
  EXPECT_EQ(Options::from_env(Environment().set("RANK", "11").set("KILN_RANK", "5")).rank, 5);
  EXPECT_EQ(
      Options::from_env(Environment().set("KILN_CACHE_MEMORY_SIZE", "64M")).cache_memory_bytes,
      64u << 20);
  EXPECT_EQ(Options::from_env(Environment().set("KILN_CACHE_MEMORY_SIZE", "0")).cache_memory_bytes,
            0u);
}

TEST(CacheOptions, MalformedValuesKeepTheDefaultAndSaySo) {
  std::vector<std::string> problems;
  Options o = Options::from_env(
      Environment().set("KILN_RANK", "first").set("KILN_CACHE_MEMORY_SIZE", "lots"), &problems);
  EXPECT_EQ(o.rank, -1);
  EXPECT_EQ(o.cache_memory_bytes, 256u << 20);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("KILN_CACHE_MEMORY_SIZE='lots'"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("KILN_RANK='first'"), std::string::npos) << problems[1];
}

}  // namespace
}  // namespace kiln
