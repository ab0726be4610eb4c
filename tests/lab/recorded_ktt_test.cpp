// KTT (Kernel Tuning Toolkit) output files as recorded spaces: the same
// space, times, costs and failures as the cache file layout of the same
// measurements, and clear refusals of KTT files a replay cannot trust.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/lab/search_replay.hpp"

namespace kiln {
namespace {

// recorded_t4_test.cpp's tiny space as KTT writes it, in microseconds: (1,8)
// 4 ms, (2,8) 1 ms the optimum, (2,16) failed at run time, (1,16) failed to
// compile. (1,8)'s overhead is 1,100 ms: 50 ms moving data, 30 validating,
// 20 in the searcher, so 1,000 ms building and launching the kernel; its
// benchmark cost is its run and the data movement and validation around it.
const char* kTinyKtt = R"({
  "Metadata": {"ComputeApi": "CUDA", "Device": "Tiny GPU", "KttVersion": "2.1.0",
               "TimeUnit": "Microseconds"},
  "Results": [
    {"KernelName": "tiny", "Status": "Ok",
     "Configuration": [{"Name": "x", "Value": 1, "ValueType": "UnsignedInt"},
                       {"Name": "y", "Value": 8, "ValueType": "UnsignedInt"}],
     "ComputationResults": [{"Duration": 4000, "Overhead": 1000000}],
     "TotalDuration": 4000, "TotalOverhead": 1100000, "DataMovementOverhead": 50000,
     "ValidationOverhead": 30000, "SearcherOverhead": 20000, "ExtraDuration": 0},
    {"KernelName": "tiny", "Status": "Ok",
     "Configuration": [{"Name": "x", "Value": 2, "ValueType": "UnsignedInt"},
                       {"Name": "y", "Value": 8, "ValueType": "UnsignedInt"}],
     "TotalDuration": 1000, "TotalOverhead": 2000000},
    {"KernelName": "tiny", "Status": "ComputationFailed",
     "Configuration": [{"Name": "x", "Value": 2, "ValueType": "UnsignedInt"},
                       {"Name": "y", "Value": 16, "ValueType": "UnsignedInt"}],
     "ComputationResults": [], "TotalDuration": 0, "TotalOverhead": 500000},
    {"KernelName": "tiny", "Status": "CompilationFailed",
     "Configuration": [{"Name": "x", "Value": 1, "ValueType": "UnsignedInt"},
                       {"Name": "y", "Value": 16, "ValueType": "UnsignedInt"}],
     "TotalDuration": 0, "TotalOverhead": 300000}
  ]})";

// The same measurements in the cache file layout.
const char* kTinyKttAsCache = R"({
  "device_name": "Tiny GPU", "kernel_name": "tiny",
  "tune_params_keys": ["x", "y"], "tune_params": {"x": [1, 2], "y": [8, 16]},
  "cache": {
    "1,8":  {"x": 1, "y": 8,  "time": 4.0, "compile_time": 1000, "benchmark_time": 84},
    "2,8":  {"x": 2, "y": 8,  "time": 1.0, "compile_time": 2000, "benchmark_time": 1},
    "2,16": {"x": 2, "y": 16, "time": "RuntimeFailedConfig", "compile_time": 500,
             "benchmark_time": 0},
    "1,16": {"x": 1, "y": 16, "time": "CompilationFailedConfig", "compile_time": 300,
             "benchmark_time": 0}
  }})";

Config ktt_xy(std::int64_t x, std::int64_t y) {
  return Config{{"x", x}, {"y", y}};
}

Result<RecordedSpace> parse_ktt(const std::string& text) {
  return parse_recorded_space(text, "ktt.json");
}

TEST(RecordedKtt, ReadsTheSameSpaceTimesCostsAndFailuresAsTheCacheLayout) {
  Result<RecordedSpace> ktt = parse_ktt(kTinyKtt);
  ASSERT_TRUE(ktt.ok()) << ktt.error().message;
  EXPECT_EQ(ktt->device, "Tiny GPU");
  EXPECT_EQ(ktt->kernel, "tiny");
  EXPECT_EQ(ktt->space.size(), 4u);
  EXPECT_DOUBLE_EQ(ktt->optimum_ms, 1.0) << "TotalDuration, in ms";
  const RecordedConfig* first = ktt->find(ktt_xy(1, 8));
  ASSERT_NE(first, nullptr);
  EXPECT_DOUBLE_EQ(*first->time_ms, 4.0);
  EXPECT_DOUBLE_EQ(first->compile_ms, 1000) << "the overhead less data, validation, searcher";
  EXPECT_DOUBLE_EQ(first->benchmark_ms, 84) << "the run, its data movement and validation";
  EXPECT_DOUBLE_EQ(ktt->find(ktt_xy(2, 8))->compile_ms, 2000);
  EXPECT_EQ(ktt->find(ktt_xy(2, 16))->failure, "RuntimeFailedConfig");
  EXPECT_FALSE(ktt->find(ktt_xy(2, 16))->time_ms);
  EXPECT_EQ(ktt->find(ktt_xy(1, 16))->failure, "CompilationFailedConfig");
  EXPECT_DOUBLE_EQ(ktt->find(ktt_xy(1, 16))->compile_ms, 300);

  // Replayed, both layouts give the same curves, costs included.
  Result<RecordedSpace> cache = parse_ktt(kTinyKttAsCache);
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  for (const char* strategy : {"exhaustive", "random", "hybrid"}) {
    Result<ReplayCurve> a = replay_search(*ktt, strategy, 3, 5);
    Result<ReplayCurve> b = replay_search(*cache, strategy, 3, 5);
    ASSERT_TRUE(a.ok() && b.ok()) << strategy;
    EXPECT_EQ(a->fraction, b->fraction) << strategy;
    EXPECT_EQ(a->seconds, b->seconds) << strategy;
  }
}

// Every KTT status reads as a failure of its kind (a compile failure fails
// to compile in a replay, the rest fail their launch), times in any of
// KTT's units as ms, and the parameters keep the file's order with sorted
// lists.
TEST(RecordedKtt, StatusesUnitsAndParameterOrder) {
  Result<RecordedSpace> r = parse_ktt(R"({"Metadata": {"TimeUnit": "Seconds"}, "Results": [
    {"Status": "Ok", "TotalDuration": 0.003,
     "Configuration": [{"Name": "z", "Value": 64}, {"Name": "a", "Value": "b"}]},
    {"Status": "ValidationFailed", "TotalDuration": 0.001,
     "Configuration": [{"Name": "z", "Value": 8}, {"Name": "a", "Value": "b"}]},
    {"Status": "DeviceLimitsExceeded",
     "Configuration": [{"Name": "z", "Value": 32}, {"Name": "a", "Value": "a"}]},
    {"Status": "Ok", "TotalDuration": 0.002, "TotalOverhead": 1.5,
     "Configuration": [{"Name": "z", "Value": 8}, {"Name": "a", "Value": "a"}]}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->space.parameters().size(), 2u);
  EXPECT_EQ(r->space.parameters()[0].name, "z");
  EXPECT_EQ(r->space.parameters()[0].values,
            (std::vector<Value>{std::int64_t{8}, std::int64_t{32}, std::int64_t{64}}));
  EXPECT_EQ(r->space.parameters()[1].values, (std::vector<Value>{"a", "b"}));
  auto at = [&](std::int64_t z, const char* a) { return r->find(Config{{"z", z}, {"a", a}}); };
  EXPECT_EQ(at(8, "b")->failure, "ValidationFailedConfig") << "wrong answers are no time";
  EXPECT_FALSE(at(8, "b")->time_ms);
  EXPECT_EQ(at(32, "a")->failure, "InvalidConfig");
  EXPECT_DOUBLE_EQ(*at(64, "b")->time_ms, 3.0);
  EXPECT_DOUBLE_EQ(at(8, "a")->compile_ms, 1500);
  EXPECT_DOUBLE_EQ(r->optimum_ms, 2.0);
}

// What a replay cannot trust is refused with the file, the result and the
// fix named, never read as a different space.
TEST(RecordedKtt, FilesAReplayCannotTrustAreRefusedByName) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"Metadata": {"TimeUnit": "Microseconds"}, "Results": []})", "holds no results"},
      {R"({"Metadata": {}, "Results": [{"Status": "Ok"}]})", "Metadata.TimeUnit is missing"},
      {R"({"Metadata": {"TimeUnit": "Fortnights"}, "Results": [{"Status": "Ok"}]})",
       "Metadata.TimeUnit is \"Fortnights\", not one of"},
      {R"({"Metadata": {"TimeUnit": "Seconds"}, "Results": [{"Status": "Ok"}]})",
       "result 0 has no \"Configuration\" list"},
      {R"({"Metadata": {"TimeUnit": "Seconds"},
           "Results": [{"Status": "Ok", "Configuration": [{"Value": 1}], "TotalDuration": 1}]})",
       "result 0's Configuration holds {\"Value\":1}"},
      {R"({"Metadata": {"TimeUnit": "Seconds"},
           "Results": [{"Status": "Ok", "TotalDuration": 1,
                        "Configuration": [{"Name": "x", "Value": 1},
                                          {"Name": "x", "Value": 2}]}]})",
       "sets \"x\" twice"},
      {R"({"Metadata": {"TimeUnit": "Seconds"},
           "Results": [{"Configuration": [{"Name": "x", "Value": 1}], "TotalDuration": 1}]})",
       "result 0 has no \"Status\""},
      {R"({"Metadata": {"TimeUnit": "Seconds"},
           "Results": [{"Status": "Ok", "Configuration": [{"Name": "x", "Value": 1}]}]})",
       "result 0 is Ok but has no TotalDuration above zero (none)"},
      {R"({"Metadata": {"TimeUnit": "Seconds"},
           "Results": [{"Status": "Ok", "Configuration": [{"Name": "x", "Value": 1}],
                        "TotalDuration": 1, "TotalOverhead": "slow"}]})",
       "result 0's TotalOverhead is \"slow\", which is not a duration"},
      {R"({"Metadata": {"TimeUnit": "Seconds"}, "Results": [
           {"KernelName": "a", "Status": "Ok", "TotalDuration": 1,
            "Configuration": [{"Name": "x", "Value": 1}]},
           {"KernelName": "b", "Status": "Ok", "TotalDuration": 1,
            "Configuration": [{"Name": "y", "Value": 1}]}]})",
       "results 0 and 1 tune different kernels (\"a\" and \"b\")"},
      {R"({"Metadata": {"TimeUnit": "Seconds"}, "Results": [
           {"Status": "Ok", "TotalDuration": 1, "Configuration": [{"Name": "x", "Value": 1}]},
           {"Status": "Ok", "TotalDuration": 2, "Configuration": [{"Name": "x", "Value": 1}]}]})",
       "results 0 and 1 hold the same configuration (1)"},
  };
  for (const auto& [text, why] : bad) {
    Result<RecordedSpace> r = parse_ktt(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find("ktt.json"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  }
}

TEST(RecordedKtt, ReadsGzippedFiles) {
  char dir[] = "/tmp/kiln-ktt-XXXXXX";
  const std::filesystem::path at = ::mkdtemp(dir);
  std::ofstream(at / "KTTinyOutput.json") << kTinyKtt;
  ASSERT_EQ(std::system(("gzip " + (at / "KTTinyOutput.json").string()).c_str()), 0);
  Result<RecordedSpace> r = read_recorded_space(at / "KTTinyOutput.json.gz");
  std::filesystem::remove_all(at);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->configs.size(), 4u);
  EXPECT_EQ(r->device, "Tiny GPU");
}

}  // namespace
}  // namespace kiln
