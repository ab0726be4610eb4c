#include "kiln/core/log.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace kiln {
namespace {

// Restores the process's level after each test.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = log_level(); }
  void TearDown() override { set_log_level(saved_); }
  LogLevel saved_ = LogLevel::kWarn;
};

TEST_F(LogTest, LevelFiltersMessages) {
  set_log_level(LogLevel::kWarn);
  ::testing::internal::CaptureStderr();
  KILN_LOG(kWarn) << "shown " << 42;
  KILN_LOG(kDebug) << "hidden";
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("[kiln warn] shown 42\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("hidden"), std::string::npos) << out;
}

TEST_F(LogTest, OffSilencesEverything) {
  set_log_level(LogLevel::kOff);
  ::testing::internal::CaptureStderr();
  KILN_LOG(kError) << "nothing";
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(LogTest, DisabledLevelDoesNotEvaluateTheStream) {
  set_log_level(LogLevel::kError);
  int evaluated = 0;
  auto touch = [&] { return ++evaluated; };
  KILN_LOG(kTrace) << touch();
  EXPECT_EQ(evaluated, 0);
}

TEST_F(LogTest, OnceLogsOncePerKey) {
  set_log_level(LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) log_once(LogLevel::kInfo, "log_test.once", "stale record");
  log_once(LogLevel::kInfo, "log_test.other", "another");
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "[kiln info] stale record\n[kiln info] another\n");
}

TEST_F(LogTest, LinesFromThreadsDoNotInterleave) {
  set_log_level(LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 50; ++i) KILN_LOG(kInfo) << "thread " << t << " line " << i << " end";
    });
  }
  for (auto& th : threads) th.join();
  std::string out = ::testing::internal::GetCapturedStderr();
  std::size_t lines = 0, start = 0;
  while (start < out.size()) {
    std::size_t nl = out.find('\n', start);
    std::string line = out.substr(start, nl - start);
    EXPECT_EQ(line.rfind("[kiln info] thread ", 0), 0u) << line;
    EXPECT_EQ(line.substr(line.size() - 4), " end") << line;
    ++lines;
    start = nl + 1;
  }
  EXPECT_EQ(lines, 200u);
}

TEST_F(LogTest, ParseLevel) {
  LogLevel l;
  EXPECT_TRUE(parse_log_level("DEBUG", &l));
  EXPECT_EQ(l, LogLevel::kDebug);
  EXPECT_TRUE(parse_log_level("warning", &l));
  EXPECT_EQ(l, LogLevel::kWarn);
  EXPECT_FALSE(parse_log_level("loud", &l));
}

}  // namespace
}  // namespace kiln
