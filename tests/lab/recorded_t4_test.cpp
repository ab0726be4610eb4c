// Kernel Tuner's T4 output files as recorded spaces: the same space, times,
// costs and failures as the cache file layout of the same measurements, and
// clear refusals of T4 files a replay cannot trust.
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

// recorded_space_test.cpp's tiny file, written as Kernel Tuner's
// store_output_file writes it: (1,8) 4 ms, (2,8) 1 ms the optimum, (2,16)
// failed at run time, (1,16) absent. The first result carries its
// benchmark cost as T4's "benchmark"; the second only its runs (60 + 40 ms).
const char* kTinyT4 = R"({
  "schema_version": "1.0.0", "metadata": {"timeunit": "miliseconds"},
  "results": [
    {"timestamp": "t", "configuration": {"x": 1, "y": 8},
     "times": {"compilation": 1000, "benchmark": 100, "runtimes": [4.0, 4.0]},
     "invalidity": "correct", "correctness": 1,
     "measurements": [{"name": "time", "value": 4.0, "unit": "ms"}], "objectives": ["time"]},
    {"timestamp": "t", "configuration": {"x": 2, "y": 8},
     "times": {"compilation": 2000, "runtimes": [60, 40]},
     "invalidity": "correct", "correctness": 1,
     "measurements": [{"name": "GFLOP/s", "value": 9.0, "unit": ""},
                      {"name": "time", "value": 1.0, "unit": ""}], "objectives": ["time"]},
    {"timestamp": "t", "configuration": {"x": 2, "y": 16},
     "times": {"compilation": 500}, "invalidity": "runtime", "correctness": 0,
     "measurements": [{"name": "time", "value": "RuntimeFailedConfig", "unit": ""}],
     "objectives": ["time"]}
  ]})";

// The same measurements in the cache file layout.
const char* kTinyCache = R"({
  "tune_params_keys": ["x", "y"], "tune_params": {"x": [1, 2], "y": [8, 16]},
  "cache": {
    "1,8":  {"x": 1, "y": 8,  "time": 4.0, "compile_time": 1000, "benchmark_time": 100},
    "2,8":  {"x": 2, "y": 8,  "time": 1.0, "compile_time": 2000, "benchmark_time": 100},
    "2,16": {"x": 2, "y": 16, "time": "RuntimeFailedConfig", "compile_time": 500}
  }})";

Config t4_xy(std::int64_t x, std::int64_t y) {
  return Config{{"x", x}, {"y", y}};
}

Result<RecordedSpace> parse_t4(const std::string& text) {
  return parse_recorded_space(text, "t4.json");
}

TEST(RecordedT4, ReadsTheSameSpaceTimesCostsAndFailuresAsTheCacheLayout) {
  Result<RecordedSpace> t4 = parse_t4(kTinyT4);
  ASSERT_TRUE(t4.ok()) << t4.error().message;
  EXPECT_EQ(t4->space.size(), 3u);
  EXPECT_DOUBLE_EQ(t4->optimum_ms, 1.0);
  const RecordedConfig* best = t4->find(t4_xy(2, 8));
  ASSERT_NE(best, nullptr);
  EXPECT_DOUBLE_EQ(*best->time_ms, 1.0) << "the \"time\" measurement, not the first one";
  EXPECT_DOUBLE_EQ(best->compile_ms, 2000);
  EXPECT_DOUBLE_EQ(best->benchmark_ms, 100) << "no \"benchmark\": the runs' sum";
  EXPECT_DOUBLE_EQ(t4->find(t4_xy(1, 8))->benchmark_ms, 100);
  const RecordedConfig* failed = t4->find(t4_xy(2, 16));
  ASSERT_NE(failed, nullptr);
  EXPECT_FALSE(failed->time_ms);
  EXPECT_EQ(failed->failure, "RuntimeFailedConfig");
  EXPECT_EQ(t4->find(t4_xy(1, 16)), nullptr);

  // Replayed, both layouts give the same curves, costs included.
  Result<RecordedSpace> cache = parse_t4(kTinyCache);
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  for (const char* strategy : {"exhaustive", "random", "hybrid"}) {
    Result<ReplayCurve> a = replay_search(*t4, strategy, 3, 5);
    Result<ReplayCurve> b = replay_search(*cache, strategy, 3, 5);
    ASSERT_TRUE(a.ok() && b.ok()) << strategy;
    EXPECT_EQ(a->fraction, b->fraction) << strategy;
    EXPECT_EQ(a->seconds, b->seconds) << strategy;
  }
}

// The parameters keep the configurations' order (the cache layout's
// tune_params_keys), and each list is sorted when its values are of one
// kind: a search reads a list's order as the parameter's scale.
TEST(RecordedT4, ParametersKeepTheFileOrderAndListsAreSorted) {
  Result<RecordedSpace> r = parse_t4(R"({"results": [
    {"configuration": {"zeta": 64, "alpha": "b", "mid": 1.5},
     "measurements": [{"name": "time", "value": 3}]},
    {"configuration": {"zeta": 8, "alpha": "a", "mid": 0.5},
     "measurements": [{"name": "time", "value": 2}]},
    {"configuration": {"zeta": 32, "alpha": "b", "mid": 0.5},
     "measurements": [{"name": "time", "value": 1}]}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->space.parameters().size(), 3u);
  EXPECT_EQ(r->space.parameters()[0].name, "zeta");
  EXPECT_EQ(r->space.parameters()[1].name, "alpha");
  EXPECT_EQ(r->space.parameters()[2].name, "mid");
  EXPECT_EQ(r->space.parameters()[0].values,
            (std::vector<Value>{std::int64_t{8}, std::int64_t{32}, std::int64_t{64}}));
  EXPECT_EQ(r->space.parameters()[1].values, (std::vector<Value>{"a", "b"}));
  EXPECT_EQ(r->space.parameters()[2].values, (std::vector<Value>{"0.5", "1.5"}));
  EXPECT_EQ(r->space.size(), 3u);
  EXPECT_DOUBLE_EQ(r->optimum_ms, 1.0);
}

// Failures by T4's invalidity kind: a compile failure fails to compile in a
// replay, the others fail their launch, as the cache layout's names do.
TEST(RecordedT4, InvalidResultsAreFailuresByKind) {
  Result<RecordedSpace> r = parse_t4(R"({"results": [
    {"configuration": {"x": 1}, "invalidity": "compile",
     "measurements": [{"name": "time", "value": "CompilationFailedConfig"}]},
    {"configuration": {"x": 2}, "invalidity": "constraints", "measurements": []},
    {"configuration": {"x": 3}, "invalidity": "runtime", "measurements": []},
    {"configuration": {"x": 4}, "invalidity": "correct",
     "measurements": [{"name": "time", "value": 2.5}]}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto failure = [&](std::int64_t x) { return r->find(Config{{"x", x}})->failure; };
  EXPECT_EQ(failure(1), "CompilationFailedConfig");
  EXPECT_EQ(failure(2), "InvalidConfig");
  EXPECT_EQ(failure(3), "RuntimeFailedConfig");
  EXPECT_DOUBLE_EQ(r->optimum_ms, 2.5);
}

// Durations in other units are read in ms: the file's timeunit for all of
// them, a measurement's own unit for its value.
TEST(RecordedT4, TimesInOtherUnitsAreReadInMilliseconds) {
  Result<RecordedSpace> r = parse_t4(R"({"metadata": {"timeunit": "seconds"}, "results": [
    {"configuration": {"x": 1}, "times": {"compilation": 2, "runtimes": [0.5, 0.25]},
     "measurements": [{"name": "time", "value": 0.003}]},
    {"configuration": {"x": 2}, "times": {"compilation": 1},
     "measurements": [{"name": "time", "value": 4, "unit": "ms"}]}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const RecordedConfig* one = r->find(Config{{"x", std::int64_t{1}}});
  EXPECT_DOUBLE_EQ(*one->time_ms, 3.0);
  EXPECT_DOUBLE_EQ(one->compile_ms, 2000);
  EXPECT_DOUBLE_EQ(one->benchmark_ms, 750);
  EXPECT_DOUBLE_EQ(*r->find(Config{{"x", std::int64_t{2}}})->time_ms, 4.0);
  EXPECT_DOUBLE_EQ(r->optimum_ms, 3.0);
}

// What a replay cannot trust is refused with the file, the result and the
// fix named, never read as a different space.
TEST(RecordedT4, FilesAReplayCannotTrustAreRefusedByName) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"results": []})", "holds no results"},
      {R"({"results": [{"times": {}}]})", "result 0 has no \"configuration\""},
      {R"({"results": [{"configuration": {"x": 1}, "measurements": [{"name": "time", "value": 1}]},
                       {"configuration": {"x": 2, "y": 1},
                        "measurements": [{"name": "time", "value": 1}]}]})",
       "result 1's configuration names the parameters"},
      {R"({"results": [{"configuration": {"x": 1}, "measurements": [{"name": "time", "value": 1}]},
                       {"configuration": {"x": 1}, "measurements": [{"name": "time", "value": 2}]}]})",
       "results 0 and 1 hold the same configuration (1)"},
      {R"({"results": [{"configuration": {"x": 1}, "invalidity": "correct",
                        "measurements": [{"name": "GFLOP/s", "value": 1}]}]})",
       "no \"time\" measurement (measurements: \"GFLOP/s\")"},
      {R"({"metadata": {"timeunit": "fortnights"}, "results": []})", "\"fortnights\""},
      {R"({"results": [{"configuration": {"x": 1},
                        "measurements": [{"name": "time", "value": 1, "unit": "parsecs"}]}]})",
       "\"parsecs\""},
      {R"({"results": [{"configuration": {"x": 1}, "times": {"runtimes": [1, "slow"]},
                        "measurements": [{"name": "time", "value": 1}]}]})",
       "\"slow\", which is not a duration"},
      {R"({"results": [{"configuration": {"x": 1}, "times": {"compilation": -5},
                        "measurements": [{"name": "time", "value": 1}]}]})",
       "compile_time -5"},
      // A cost that is no number was dropped: the config replayed as free.
      {R"({"results": [{"configuration": {"x": 1}, "times": {"compilation": "abc"},
                        "measurements": [{"name": "time", "value": 1}]}]})",
       "result 0's times.compilation is \"abc\", which is not a duration"},
      {R"({"results": [{"configuration": {"x": 1}, "times": {"benchmark": null},
                        "measurements": [{"name": "time", "value": 1}]}]})",
       "result 0's times.benchmark is null, which is not a duration"},
      {R"({"results": [{"configuration": {"x": 1}, "times": {"runtimes": 5},
                        "measurements": [{"name": "time", "value": 1}]}]})",
       "result 0's times.runtimes is 5, not a list of durations"},
      // The cache layout's refusal names the field and the value.
      {R"({"tune_params_keys": ["x"], "tune_params": {"x": [1]},
           "cache": {"1": {"x": 1, "time": 1.0, "compile_time": "abc"}}})",
       "the record \"1\" is malformed: compile_time \"abc\" is not a duration"},
      // A field of the wrong type is named as that, not as missing.
      {R"({"results": 5})", "its \"results\" is a JSON number, not a list"},
      {R"({"tune_params_keys": ["x"], "tune_params": {"x": [1]}, "cache": []})",
       "its \"cache\" is a JSON array, not an object of records"},
  };
  for (const auto& [text, why] : bad) {
    Result<RecordedSpace> r = parse_t4(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find("t4.json"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  }
}

TEST(RecordedT4, ReadsGzippedFiles) {
  char dir[] = "/tmp/kiln-t4-XXXXXX";
  const std::filesystem::path at = ::mkdtemp(dir);
  std::ofstream(at / "tiny_T4.json") << kTinyT4;
  ASSERT_EQ(std::system(("gzip " + (at / "tiny_T4.json").string()).c_str()), 0);
  Result<RecordedSpace> r = read_recorded_space(at / "tiny_T4.json.gz");
  std::filesystem::remove_all(at);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->configs.size(), 3u);
  EXPECT_DOUBLE_EQ(r->optimum_ms, 1.0);
}

}  // namespace
}  // namespace kiln
