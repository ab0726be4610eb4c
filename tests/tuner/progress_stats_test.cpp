#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "kiln/tuner/tuning_stats.hpp"
#include "tuner/progress.hpp"

namespace kiln {
namespace {

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[512];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  return out;
}

TEST(Progress, RendersCountsAndBar) {
  ProgressBar bar("gemm", 4, nullptr, false);
  bar.compiled(3);
  bar.benchmarked(1);
  bar.failed(1);
  std::string line = bar.render();
  EXPECT_NE(line.find("gemm [############------------]"), std::string::npos) << line;
  EXPECT_NE(line.find("2/4 done | 3 compiled | 1 failed"), std::string::npos) << line;
}

TEST(Progress, QuietWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  {
    ProgressBar bar("gemm", 2, f);
    EXPECT_FALSE(bar.enabled());
    bar.benchmarked(2);
  }
  EXPECT_EQ(read_all(f), "");
  std::fclose(f);
}

TEST(Progress, ForcedOnDrawsAndEndsTheLineOnce) {
  std::FILE* f = std::tmpfile();
  {
    ProgressBar bar("k", 1, f, true);
    bar.benchmarked(1);
    bar.finish();
    bar.finish();
  }
  std::string out = read_all(f);
  EXPECT_NE(out.find("1/1 done"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1);
  std::fclose(f);
}

TEST(Stats, CountsByKernelAndReason) {
  TuningStatistics s;
  s.cache_miss("gemm");
  s.outcome("gemm", Outcome::kOk);
  s.outcome("gemm", Outcome::kCompileFailed);
  s.outcome("gemm", Outcome::kTimeout);
  s.outcome("gemm", Outcome::kTimeout);
  s.cache_hit("rmsnorm");
  KernelStats delta;
  delta.compiled = 4;
  delta.compile_seconds = 1.5;
  s.add("gemm", delta);
  KernelStats g = s.kernel("gemm");
  EXPECT_EQ(g.benchmarked, 1u);
  EXPECT_EQ(g.failed, 3u);
  EXPECT_EQ(g.failed_by_reason.at("timeout"), 2u);
  EXPECT_EQ(g.failed_by_reason.at("compile_failed"), 1u);
  EXPECT_EQ(g.compiled, 4u);
  EXPECT_EQ(s.total().cache_hits, 1u);
  nlohmann::json j = s.to_json();
  EXPECT_EQ(j["kernels"]["gemm"]["failed_by_reason"]["timeout"], 2);
  EXPECT_EQ(j["total"]["cache_misses"], 1);
}

TEST(Stats, ConcurrentRecordingLosesNothing) {
  TuningStatistics s;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&s] {
      for (int i = 0; i < 1000; ++i) s.outcome("k", i % 2 ? Outcome::kOk : Outcome::kCrashed);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(s.kernel("k").benchmarked, 2000u);
  EXPECT_EQ(s.kernel("k").failed_by_reason.at("crashed"), 2000u);
}

}  // namespace
}  // namespace kiln
