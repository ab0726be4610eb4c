#include "kiln/core/options.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kiln {
namespace {

Environment bare() {
  return Environment().set("HOME", "/home/u");
}

TEST(Options, CacheDirPrecedence) {
  Environment env = bare();
  EXPECT_EQ(Options::from_env(env).cache_dir, "/home/u/.cache/kiln");
  env.set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(Options::from_env(env).cache_dir, "/xdg/kiln");
  EXPECT_EQ(Options::from_env(env).cache_dir_source, "XDG_CACHE_HOME");
  env.set("KILN_CACHE_DIR", "/k");
  EXPECT_EQ(Options::from_env(env).cache_dir, "/k");
  EXPECT_EQ(Options::from_env(env).cache_dir_source, "KILN_CACHE_DIR");
}

TEST(Options, CacheDirWithoutHomeIsPerUserTemp) {
  Options o = Options::from_env(Environment());
  EXPECT_NE(o.cache_dir.string().find("kiln-cache-"), std::string::npos) << o.cache_dir;
}

TEST(Options, ParsesEveryField) {
  Environment env = bare();
  env.set("KILN_CACHE_MAX_SIZE", "512M")
      .set("KILN_CACHE_READ_ONLY", "1")
      .set("KILN_LOG_LEVEL", "debug")
      .set("KILN_COMPILE_THREADS", "3")
      .set("KILN_GROUP_SIZE", "8")
      .set("KILN_ARCH", "sm_90a")
      .set("KILN_PCH", "0")
      .set("KILN_TUNING", "off")
      .set("KILN_NVRTC_FLAGS", "-lineinfo")
      .set("CUDA_HOME", "/opt/cuda");
  std::vector<std::string> problems;
  Options o = Options::from_env(env, &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(o.cache_max_bytes, 512ull << 20);
  EXPECT_TRUE(o.cache_read_only);
  EXPECT_EQ(o.log_level, LogLevel::kDebug);
  EXPECT_EQ(o.compile_threads, 3);
  EXPECT_EQ(o.group_size, 8);
  EXPECT_EQ(o.arch, "sm_90a");
  EXPECT_FALSE(o.pch);
  EXPECT_FALSE(o.tuning);
  EXPECT_EQ(o.nvrtc_flags, "-lineinfo");
  EXPECT_EQ(o.cuda_home, "/opt/cuda");
  EXPECT_EQ(o.to_json()["group_size"], 8);
}

TEST(Options, MalformedValuesAreReportedAndDefaultsKept) {
  Environment env = bare();
  env.set("KILN_COMPILE_THREADS", "many")
      .set("KILN_LOG_LEVEL", "loud")
      .set("KILN_CACHE_MAX_SIZE", "4X");
  env.set("KILN_ARCH", "hopper");
  std::vector<std::string> problems;
  Options o = Options::from_env(env, &problems);
  Options defaults = Options::from_env(bare());
  EXPECT_EQ(o.compile_threads, defaults.compile_threads);
  EXPECT_EQ(o.log_level, defaults.log_level);
  EXPECT_EQ(o.cache_max_bytes, defaults.cache_max_bytes);
  EXPECT_EQ(o.arch, "");
  ASSERT_EQ(problems.size(), 4u);
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  for (const char* name : {"KILN_COMPILE_THREADS='many'", "KILN_LOG_LEVEL='loud'",
                           "KILN_CACHE_MAX_SIZE='4X'", "KILN_ARCH='hopper'"}) {
    EXPECT_NE(all.find(name), std::string::npos) << all;
  }
  EXPECT_NE(all.find("use "), std::string::npos) << "each problem says the fix: " << all;
}

TEST(Options, ParseSize) {
  EXPECT_EQ(parse_size("123"), 123u);
  EXPECT_EQ(parse_size("64K"), 64u << 10);
  EXPECT_EQ(parse_size("4G"), 4ull << 30);
  EXPECT_EQ(parse_size("2GiB"), 2ull << 30);
  EXPECT_EQ(parse_size("1MB"), 1u << 20);
  EXPECT_FALSE(parse_size("").has_value());
  EXPECT_FALSE(parse_size("G").has_value());
  EXPECT_FALSE(parse_size("12Q").has_value());
  EXPECT_FALSE(parse_size("99999999999T").has_value());
}

TEST(Options, GlobalIsReadOnce) {
  const Options& a = Options::global();
  const Options& b = Options::global();
  EXPECT_EQ(&a, &b);
  EXPECT_FALSE(a.cache_dir.empty());
}

}  // namespace
}  // namespace kiln
