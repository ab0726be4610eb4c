// A recorded space ranked by its file's objective: a throughput such as
// GFLOP/s (higher is better) or an energy (lower), not only the run time,
// in both of Kernel Tuner's layouts, with clear refusals of objectives a
// replay cannot rank by.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/lab/search_replay.hpp"
#include "kiln/search/search.hpp"

namespace kiln {
namespace {

// Hotspot's shape in small: `steps` time steps per launch, so a launch of
// 4 steps is slower yet does 4 times the work. By time the optimum would
// be (1,32) at 0.8 ms; by GFLOP/s it is (4,16), 20 GFLOP/s at 2 ms.
// (4,32) failed to compile.
const char* kSteps = R"({
  "device_name": "Test GPU", "kernel_name": "steps", "objective": "GFLOP/s",
  "tune_params_keys": ["steps", "bx"],
  "tune_params": {"steps": [1, 4], "bx": [16, 32]},
  "cache": {
    "1,16": {"steps": 1, "bx": 16, "time": 1.0, "GFLOP/s": 10.0, "compile_time": 100, "benchmark_time": 10},
    "1,32": {"steps": 1, "bx": 32, "time": 0.8, "GFLOP/s": 12.5, "compile_time": 100, "benchmark_time": 10},
    "4,16": {"steps": 4, "bx": 16, "time": 2.0, "GFLOP/s": 20.0, "compile_time": 100, "benchmark_time": 10},
    "4,32": {"steps": 4, "bx": 32, "time": "CompilationFailedConfig", "GFLOP/s": "CompilationFailedConfig",
             "compile_time": 100, "benchmark_time": 0}
  }})";

Config at(std::int64_t steps, std::int64_t bx) {
  return Config{{"steps", steps}, {"bx", bx}};
}

Result<RecordedSpace> parse(const nlohmann::json& j) {
  return parse_recorded_space(j.dump(), "steps.json");
}

TEST(RecordedObjective, AThroughputRanksTheConfigsNotTheRunTime) {
  Result<RecordedSpace> r = parse(nlohmann::json::parse(kSteps));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->objective, "GFLOP/s");
  EXPECT_TRUE(r->higher_is_better);
  EXPECT_FALSE(r->by_time());
  EXPECT_DOUBLE_EQ(r->optimum, 20.0);
  EXPECT_DOUBLE_EQ(r->optimum_ms, 2.0) << "the optimum's own run time";
  // Each working config's replayed time: the optimum's 2 ms over its
  // fraction of 20 GFLOP/s. Its recorded run time is kept beside it.
  const RecordedConfig* slow = r->find(at(1, 16));
  const RecordedConfig* quick = r->find(at(1, 32));
  const RecordedConfig* best = r->find(at(4, 16));
  ASSERT_TRUE(slow && quick && best && slow->time_ms && quick->time_ms && best->time_ms);
  EXPECT_DOUBLE_EQ(*slow->time_ms, 4.0);
  EXPECT_DOUBLE_EQ(*quick->time_ms, 3.2);
  EXPECT_DOUBLE_EQ(*best->time_ms, 2.0);
  EXPECT_DOUBLE_EQ(quick->run_ms, 0.8);
  EXPECT_DOUBLE_EQ(quick->objective, 12.5);
  EXPECT_FALSE(r->find(at(4, 32))->time_ms);

  // Every strategy given the whole space ends at the GFLOP/s optimum, and
  // the curve's fractions are the GFLOP/s fractions.
  for (const auto& info : search_strategies()) {
    Result<ReplayCurve> c = replay_search(*r, info.name, 4, 7);
    ASSERT_TRUE(c.ok()) << info.name << ": " << c.error().message;
    EXPECT_DOUBLE_EQ(c->fraction.back(), 1.0) << info.name;
  }
  Result<ReplayCurve> c = replay_search(*r, "exhaustive", 4, 1);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->measured.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const RecordedConfig* m = r->find(c->measured[i]);
    if (m->time_ms) {
      EXPECT_DOUBLE_EQ(r->optimum_ms / *m->time_ms, m->objective / 20.0) << i;
    }
  }
}

TEST(RecordedObjective, AnEnergyIsRankedLowestFirst) {
  nlohmann::json j = nlohmann::json::parse(kSteps);
  j["objective"] = "energy";
  j["cache"]["1,16"]["energy"] = 3.0;
  j["cache"]["1,32"]["energy"] = 1.5;  // the optimum: half the energy of (1,16)
  j["cache"]["4,16"]["energy"] = 6.0;
  Result<RecordedSpace> r = parse(j);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->higher_is_better);
  EXPECT_DOUBLE_EQ(r->optimum, 1.5);
  EXPECT_DOUBLE_EQ(r->optimum_ms, 0.8);
  EXPECT_DOUBLE_EQ(*r->find(at(1, 16))->time_ms, 1.6);
  EXPECT_DOUBLE_EQ(*r->find(at(4, 16))->time_ms, 3.2);
}

TEST(RecordedObjective, TheFilesOwnDirectionRulesAndAnUnknownOneIsRefused) {
  nlohmann::json j = nlohmann::json::parse(kSteps);
  for (const char* key : {"1,16", "1,32", "4,16"})
    j["cache"][key]["score"] = j["cache"][key]["GFLOP/s"];
  j["objective"] = "score";
  Result<RecordedSpace> unknown = parse(j);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("steps.json"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("\"score\" has no known direction"), std::string::npos)
      << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("\"objective_higher_is_better\": true or false"),
            std::string::npos)
      << unknown.error().message;

  j["objective_higher_is_better"] = false;  // a score to minimise: (1,16) at 10
  Result<RecordedSpace> lower = parse(j);
  ASSERT_TRUE(lower.ok()) << lower.error().message;
  EXPECT_DOUBLE_EQ(lower->optimum, 10.0);
  j["objective_higher_is_better"] = true;
  Result<RecordedSpace> higher = parse(j);
  ASSERT_TRUE(higher.ok()) << higher.error().message;
  EXPECT_DOUBLE_EQ(higher->optimum, 20.0);

  // Time stays time, bit for bit: the replayed time is the recorded one.
  j["objective"] = "time";
  j.erase("objective_higher_is_better");
  Result<RecordedSpace> by_time = parse(j);
  ASSERT_TRUE(by_time.ok());
  EXPECT_TRUE(by_time->by_time());
  EXPECT_EQ(*by_time->find(at(1, 32))->time_ms, 0.8);
  EXPECT_EQ(by_time->optimum_ms, 0.8);
  j.erase("objective");  // Kernel Tuner's default
  Result<RecordedSpace> absent = parse(j);
  ASSERT_TRUE(absent.ok());
  EXPECT_TRUE(absent->by_time());
}

TEST(RecordedObjective, FiguresThatAreNoMeasurementFailTheirConfigAndAMissingOneIsNamed) {
  nlohmann::json j = nlohmann::json::parse(kSteps);
  j["cache"]["1,16"]["GFLOP/s"] = 0;
  j["cache"]["1,32"]["GFLOP/s"] = "RuntimeFailedConfig";
  Result<RecordedSpace> r = parse(j);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->find(at(1, 16))->time_ms);
  EXPECT_NE(r->find(at(1, 16))->failure.find("GFLOP/s 0 is not a positive figure"),
            std::string::npos)
      << r->find(at(1, 16))->failure;
  EXPECT_FALSE(r->find(at(1, 32))->time_ms);
  EXPECT_NE(r->find(at(1, 32))->failure.find("RuntimeFailedConfig"), std::string::npos);

  j = nlohmann::json::parse(kSteps);
  j["cache"]["1,32"].erase("GFLOP/s");
  Result<RecordedSpace> missing = parse(j);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("\"1,32\""), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("no \"GFLOP/s\", the file's objective"), std::string::npos)
      << missing.error().message;

  for (const nlohmann::json& bad : {nlohmann::json(5), nlohmann::json("")}) {
    j = nlohmann::json::parse(kSteps);
    j["objective"] = bad;
    Result<RecordedSpace> e = parse(j);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.error().message.find("its \"objective\" is " + bad.dump()), std::string::npos)
        << e.error().message;
  }
  j = nlohmann::json::parse(kSteps);
  j["objective_higher_is_better"] = "yes";
  Result<RecordedSpace> e = parse(j);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("\"objective_higher_is_better\" is \"yes\", not true or false"),
            std::string::npos)
      << e.error().message;
}

// The same measurements as Kernel Tuner's T4 output: each result names its
// objectives, and its figure is a measurement of that name.
std::string steps_t4(const char* second_objective = "GFLOP/s") {
  return std::string(R"({"schema_version": "1.0.0", "results": [
  {"configuration": {"steps": 1, "bx": 16}, "times": {"compilation": 100, "benchmark": 10},
   "invalidity": "correct", "objectives": ["GFLOP/s"],
   "measurements": [{"name": "time", "value": 1.0, "unit": "ms"}, {"name": "GFLOP/s", "value": 10.0, "unit": ""}]},
  {"configuration": {"steps": 1, "bx": 32}, "times": {"compilation": 100, "benchmark": 10},
   "invalidity": "correct", "objectives": [")") +
         second_objective + R"("],
   "measurements": [{"name": "time", "value": 0.8, "unit": "ms"}, {"name": "GFLOP/s", "value": 12.5, "unit": ""}]},
  {"configuration": {"steps": 4, "bx": 16}, "times": {"compilation": 100, "benchmark": 10},
   "invalidity": "correct", "objectives": ["GFLOP/s"],
   "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}, {"name": "GFLOP/s", "value": 20.0, "unit": ""}]},
  {"configuration": {"steps": 4, "bx": 32}, "times": {"compilation": 100}, "invalidity": "compile",
   "objectives": ["GFLOP/s"], "measurements": [{"name": "time", "value": "CompilationFailedConfig", "unit": ""}]}
  ]})";
}

TEST(RecordedObjective, AT4FileRanksByItsResultsObjective) {
  Result<RecordedSpace> t4 = parse_recorded_space(steps_t4(), "steps_T4.json");
  Result<RecordedSpace> cache = parse(nlohmann::json::parse(kSteps));
  ASSERT_TRUE(t4.ok()) << t4.error().message;
  ASSERT_TRUE(cache.ok());
  EXPECT_EQ(t4->objective, "GFLOP/s");
  EXPECT_TRUE(t4->higher_is_better);
  EXPECT_DOUBLE_EQ(t4->optimum, cache->optimum);
  EXPECT_DOUBLE_EQ(t4->optimum_ms, cache->optimum_ms);
  for (const RecordedConfig& rc : cache->configs) {
    const RecordedConfig* twin = t4->find(rc.config);
    ASSERT_NE(twin, nullptr) << rc.config.to_string();
    EXPECT_EQ(twin->time_ms, rc.time_ms) << rc.config.to_string();
  }
  Result<RecordedSpace> mixed = parse_recorded_space(steps_t4("time"), "steps_T4.json");
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("results 0 and 1 rank by different objectives"),
            std::string::npos)
      << mixed.error().message;
}

}  // namespace
}  // namespace kiln
