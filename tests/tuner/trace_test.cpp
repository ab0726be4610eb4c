#include "tuner/trace.hpp"
#include "kiln/device/clock.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

namespace kiln {
namespace {

using Clock = TraceRecorder::Clock;
using std::chrono::milliseconds;

TEST(Intervals, UnionAndIntersection) {
  EXPECT_DOUBLE_EQ(union_length({{0, 2}, {1, 3}, {5, 6}}), 4.0);
  EXPECT_DOUBLE_EQ(union_length({}), 0.0);
  EXPECT_DOUBLE_EQ(intersection_length({{0, 4}}, {{1, 2}, {3, 5}}), 2.0);
  EXPECT_DOUBLE_EQ(intersection_length({{0, 1}}, {{1, 2}}), 0.0);
  EXPECT_DOUBLE_EQ(intersection_length({{0, 2}, {1, 3}}, {{2, 10}}), 1.0);
}

TEST(Trace, ChromeFormatWithTracksAndSpans) {
  TraceRecorder trace;
  int compile = trace.track("compile 0");
  int bench = trace.track("bench cpu");
  auto t0 = Clock::now();
  trace.span(compile, "unit gemm x4", "compile", t0, t0 + milliseconds(10), {{"configs", 4}});
  trace.span(bench, "BM=64", "benchmark", t0 + milliseconds(5), t0 + milliseconds(20));
  nlohmann::json j = trace.to_json();
  ASSERT_TRUE(j.contains("traceEvents"));
  int complete = 0, names = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("tid") && e.contains("pid"));
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
    if (e["ph"] == "M" && e["name"] == "thread_name") ++names;
  }
  EXPECT_EQ(complete, 2);
  EXPECT_EQ(names, 2);
  EXPECT_NEAR(trace.overlap_seconds("compile", "benchmark"), 0.005, 1e-6);
  EXPECT_NEAR(trace.busy_seconds("benchmark"), 0.015, 1e-6);
}

TEST(Trace, ScopeRecordsFromThreads) {
  TraceRecorder trace;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&trace, t] {
      int track = trace.track("worker " + std::to_string(t));
      for (int i = 0; i < 25; ++i) TraceRecorder::Scope s(&trace, track, "job", "compile");
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(trace.span_count(), 100u);
}

TEST(Trace, WriteIsValidJsonOnDisk) {
  TraceRecorder trace;
  int t = trace.track("compile 0");
  { TraceRecorder::Scope s(&trace, t, "unit", "compile"); }
  auto path = std::filesystem::temp_directory_path() /
              ("kiln_trace_test_" + std::to_string(getpid()) + ".json");
  auto written = trace.write(path);
  ASSERT_TRUE(written.ok()) << written.error().describe();
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  std::filesystem::remove(path);
  auto bad = trace.write("/nonexistent-dir/x/trace.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("/nonexistent-dir/x"), std::string::npos);
}

}  // namespace
}  // namespace kiln
