// A warm start of a replay from other devices' recorded spaces: the records
// the files make (kiln/lab/recorded_space.hpp) and the replays that start
// from them, on small files whose answers are worked out by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/lab/replay_tune.hpp"
#include "kiln/lab/search_replay.hpp"
#include "kiln/tuner/warm_start.hpp"

namespace kiln {
namespace {

// Four configs of a 2x2 space (x in {1,2}, y in {8,16}). On the unnamed
// other device (1,8) is the optimum, then (2,16), and (1,16) failed to run;
// on the "Test GPU" replayed, (2,8) is the optimum.
const char* kWarmOther = R"({
  "device_name": "", "kernel_name": "tiny", "objective": "time",
  "tune_params_keys": ["x", "y"],
  "tune_params": {"x": [1, 2], "y": [8, 16]},
  "cache": {
    "1,8":  {"x": 1, "y": 8,  "time": 1.0, "compile_time": 1000, "benchmark_time": 100},
    "2,8":  {"x": 2, "y": 8,  "time": 3.0, "compile_time": 2000, "benchmark_time": 100},
    "2,16": {"x": 2, "y": 16, "time": 1.5, "compile_time": 500, "benchmark_time": 100},
    "1,16": {"x": 1, "y": 16, "time": "RuntimeFailedConfig", "compile_time": 500, "benchmark_time": 0}
  }})";
const char* kWarmTarget = R"({
  "device_name": "Test GPU", "kernel_name": "tiny", "objective": "time",
  "tune_params_keys": ["x", "y"],
  "tune_params": {"x": [1, 2], "y": [8, 16]},
  "cache": {
    "1,8":  {"x": 1, "y": 8,  "time": 1.5, "compile_time": 1000, "benchmark_time": 100},
    "2,8":  {"x": 2, "y": 8,  "time": 1.0, "compile_time": 2000, "benchmark_time": 100},
    "2,16": {"x": 2, "y": 16, "time": 4.0, "compile_time": 500, "benchmark_time": 100},
    "1,16": {"x": 1, "y": 16, "time": 9.0, "compile_time": 500, "benchmark_time": 100}
  }})";

Config warm_xy(std::int64_t x, std::int64_t y) {
  return Config{{"x", x}, {"y", y}};
}

class RecordedWarmStart : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kiln-warm-XXXXXX";
    dir_ = ::mkdtemp(dir);
    std::ofstream(dir_ / "other.json") << kWarmOther;
    std::ofstream(dir_ / "target.json") << kWarmTarget;
    auto other = read_recorded_space(dir_ / "other.json");
    auto target = read_recorded_space(dir_ / "target.json");
    ASSERT_TRUE(other.ok() && target.ok());
    other_ = std::move(*other);
    target_ = std::move(*target);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  RecordedSpace other_, target_;
};

TEST_F(RecordedWarmStart, AFileIsARecordOfItsDeviceWithEveryConfigMeasured) {
  const TuningRecord r = recorded_record(other_);
  EXPECT_EQ(r.kernel(), "tiny");
  EXPECT_EQ(r.device.arch, "recorded");
  EXPECT_EQ(r.device.name, "an unnamed device (other.json)") << "named after its file";
  EXPECT_EQ(recorded_device(target_).name, "Test GPU");
  EXPECT_EQ(r.best, warm_xy(1, 8));
  EXPECT_DOUBLE_EQ(r.best_time_ms, 1.0);
  ASSERT_EQ(r.measured.size(), 4u);
  std::size_t failed = 0;
  for (const MeasuredConfig& m : r.measured) {
    failed += !m.ok;
    if (m.config == warm_xy(1, 8)) {
      EXPECT_EQ(m.compile_ms, 1000);
    }
    if (m.config == warm_xy(1, 16)) {
      EXPECT_EQ(m.reason, "RuntimeFailedConfig");
    }
  }
  EXPECT_EQ(failed, 1u);
}

TEST_F(RecordedWarmStart, AReplaySearchMeasuresTheSeedsFirstAndNothingTwice) {
  // The other device ranks (1,8), (2,16), (2,8); (1,16) failed there.
  const std::vector<Config> seeds =
      warm_start_seeds({recorded_record(other_)}, ProblemKey("tiny"), recorded_identity(target_),
                       target_.space, 2, WarmStartDevices::kAny);
  ASSERT_EQ(seeds, (std::vector<Config>{warm_xy(1, 8), warm_xy(2, 16)}));
  for (const char* strategy : {"exhaustive", "random", "hybrid"}) {
    auto curve = replay_search(target_, strategy, 4, 1, {}, seeds);
    ASSERT_TRUE(curve.ok()) << curve.error().message;
    ASSERT_EQ(curve->measured.size(), 4u) << strategy;
    EXPECT_EQ(curve->measured[0], warm_xy(1, 8)) << strategy;
    EXPECT_EQ(curve->measured[1], warm_xy(2, 16)) << strategy;
    std::set<std::string> distinct;
    for (const Config& c : curve->measured) distinct.insert(c.key());
    EXPECT_EQ(distinct.size(), 4u) << strategy << ": a seed measured twice";
    EXPECT_DOUBLE_EQ(curve->fraction[0], 1.0 / 1.5) << "the seed's own time, first";
    EXPECT_DOUBLE_EQ(curve->fraction[3], 1.0);
  }
  // Seeds count against the budget.
  auto short_run = replay_search(target_, "exhaustive", 1, 1, {}, seeds);
  ASSERT_TRUE(short_run.ok());
  EXPECT_EQ(short_run->measured, std::vector<Config>{warm_xy(1, 8)});
}

TEST_F(RecordedWarmStart, AReplayedTuningMeasuresTheSeedsRightAfterTheDefault) {
  TuneOptions o;
  o.search.strategy = "exhaustive";
  o.search.warm_start = 1;
  auto warm = replay_tune(target_, o, {recorded_record(other_)});
  ASSERT_TRUE(warm.ok()) << warm.error().message;
  EXPECT_EQ(warm->stats.warm_started, 1u);
  ASSERT_EQ(warm->measurements.size(), 4u);
  EXPECT_EQ(warm->measurements[0].config, warm->default_config);
  EXPECT_EQ(warm->default_config, warm_xy(1, 8)) << "the space's first config";
  // The default is the other device's winner too, so the seed is the next
  // best there: (2,16).
  EXPECT_EQ(warm->measurements[1].config, warm_xy(2, 16));
  auto cold = replay_tune(target_, o);
  ASSERT_TRUE(cold.ok());
  EXPECT_EQ(cold->stats.warm_started, 0u);
  EXPECT_EQ(cold->measurements[1].config, warm_xy(1, 16)) << "cold: the space's order";
}

}  // namespace
}  // namespace kiln
