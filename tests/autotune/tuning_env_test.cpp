// The tuning overrides from the environment (issue 57 §2): KILN_SEARCH,
// KILN_EFFORT, KILN_BUDGET_S parsed once, bad values reported with the
// variable and what it accepts, and their precedence over the kernel's
// declaration; then real tunings on the CPU backend (real Clang compiles,
// real benchmark workers) in a process whose environment sets
// KILN_EFFORT, KILN_PRINT_AUTOTUNING and KILN_AUTOTUNE_LOG (main, below,
// sets them before Kiln reads its options).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "kiln/core/options.hpp"
#include "kiln/tuner/tune_options.hpp"
#include "skip.hpp"
#include "tune_session.hpp"
#include "twice_source.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::Session;

fs::path log_path() {
  return fs::temp_directory_path() / ("kiln_tuning_env_" + std::to_string(getpid()) + ".jsonl");
}

Options options_of(std::vector<std::pair<std::string, std::string>> vars,
                   std::vector<std::string>* problems = nullptr) {
  Environment env;
  for (auto& [k, v] : vars) env.set(k, v);
  return Options::from_env(env, problems);
}

TuneOptions declared() {
  TuneOptions o;
  o.search.strategy = "exhaustive";
  o.search.max_configs = 5;
  o.pipeline.budget_seconds = 10;
  return o;
}

TEST(TuningEnv, EachVariableIsRead) {
  std::vector<std::string> problems;
  Options o = options_of({{"KILN_SEARCH", "random"},
                          {"KILN_EFFORT", "quick"},
                          {"KILN_BUDGET_S", "2.5"},
                          {"KILN_PRINT_AUTOTUNING", "1"},
                          {"KILN_AUTOTUNE_LOG", "/tmp/x.jsonl"}},
                         &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(o.search, "random");
  EXPECT_EQ(o.effort, "quick");
  EXPECT_EQ(o.budget_seconds, 2.5);
  EXPECT_TRUE(o.print_autotuning);
  EXPECT_EQ(o.autotune_log, "/tmp/x.jsonl");
  Options none = options_of({});
  EXPECT_TRUE(none.search.empty() && none.effort.empty() && !none.budget_seconds);
  EXPECT_FALSE(none.print_autotuning);
}

TEST(TuningEnv, ABadValueNamesTheVariableAndWhatItTakesAndIsIgnored) {
  std::vector<std::string> problems;
  Options o = options_of(
      {{"KILN_EFFORT", "fast"}, {"KILN_BUDGET_S", "-1"}, {"KILN_PRINT_AUTOTUNING", "maybe"}},
      &problems);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NE(problems[0].find("KILN_EFFORT='fast' is not valid: use quick, default or full"),
            std::string::npos)
      << problems[0];
  EXPECT_NE(problems[1].find("KILN_BUDGET_S='-1'"), std::string::npos) << problems[1];
  EXPECT_NE(problems[1].find("seconds, 0 or more"), std::string::npos) << problems[1];
  EXPECT_NE(problems[2].find("KILN_PRINT_AUTOTUNING='maybe'"), std::string::npos);
  EXPECT_TRUE(o.effort.empty());
  EXPECT_FALSE(o.budget_seconds);
  // Applied, the options are the declaration's.
  TuneOptions t = with_tuning_env(declared(), o);
  EXPECT_EQ(t.search.strategy, "exhaustive");
  EXPECT_EQ(t.pipeline.budget_seconds, 10);
}

TEST(TuningEnv, TheEnvironmentWinsOverTheDeclaration) {
  // Unset: the declaration stands.
  TuneOptions same = with_tuning_env(declared(), options_of({}));
  EXPECT_EQ(same.search.strategy, "exhaustive");
  EXPECT_EQ(same.search.max_configs, 5u);
  EXPECT_EQ(same.pipeline.budget_seconds, 10);
  // KILN_EFFORT alone: the auto plan with that effort's budget.
  TuneOptions quick =
      with_tuning_env(declared(), options_of({{"KILN_EFFORT", "quick"}, {"KILN_BUDGET_S", "0"}}));
  EXPECT_EQ(quick.search.strategy, kAutoSearch);
  EXPECT_EQ(quick.search.effort, SearchEffort::kQuick);
  EXPECT_EQ(quick.search.max_configs, 0u);
  EXPECT_EQ(quick.pipeline.budget_seconds, 0) << "KILN_BUDGET_S=0: no budget";
  // KILN_SEARCH: that strategy, the declaration's max_configs.
  TuneOptions random = with_tuning_env(declared(), options_of({{"KILN_SEARCH", "random"}}));
  EXPECT_EQ(random.search.strategy, "random");
  EXPECT_EQ(random.search.max_configs, 5u);
  // A named search with an effort: the effort is not read (said once).
  TuneOptions both =
      with_tuning_env(declared(), options_of({{"KILN_SEARCH", "random"}, {"KILN_EFFORT", "full"}}));
  EXPECT_EQ(both.search.strategy, "random");
  EXPECT_EQ(both.search.effort, SearchEffort::kDefault);
}

TEST(TuningEnv, AnUnknownSearchIsAWarningNotAFailure) {
  ::testing::internal::CaptureStderr();
  TuneOptions t = with_tuning_env(declared(), options_of({{"KILN_SEARCH", "fastest"}}));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.search.strategy, "exhaustive");
  EXPECT_NE(err.find("KILN_SEARCH='fastest' is not a search strategy: use auto, exhaustive"),
            std::string::npos)
      << err;
}

constexpr const char* kSource = testing::kTwiceSource;

TunableKernel kernel() {
  ConfigSpace space;
  std::vector<Value> values;
  for (int v = 1; v <= 6; ++v) values.emplace_back(std::int64_t{v});
  space.param("V", values);
  space.default_config(Config{{"V", std::int64_t{1}}});
  return testing::one_block_kernel("env_twice", kSource, "t::twice<{V}>", space);
}

struct Call {
  std::vector<float> x = std::vector<float>(256, 1.5f), y = std::vector<float>(256, 0.0f);
  ArgList args{Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {256})),
               Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {256})),
               Arg::of_scalar("n", 256)};
};

std::vector<nlohmann::json> log_lines() {
  std::vector<nlohmann::json> lines;
  std::ifstream in(log_path());
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(TuningEnv, ARealTuningFollowsTheEnvironmentPrintsItsDecisionAndLogsEachMeasurement) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff);
  ASSERT_TRUE(Options::global().print_autotuning) << "main sets the environment first";
  Session s("tuning_env");
  ASSERT_TRUE(s.device.ok());
  Call call;
  TuneOptions o;
  o.search.strategy = "exhaustive";
  o.search.max_configs = 2;  // KILN_EFFORT=quick replaces it: the plan covers all 6
  o.measure.target_seconds = 0.005;
  ::testing::internal::CaptureStderr();
  auto tuned = s.tuner.tune(kernel(), call.args, **s.device, o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(tuned.ok()) << tuned.error().describe();
  EXPECT_EQ(tuned->measurements.size(), 6u);
  // One line for the decision: kernel, key, configs measured, the winner.
  EXPECT_NE(err.find("kiln autotuning env_twice for "), std::string::npos) << err;
  EXPECT_NE(err.find("6 configs measured; best config {" + tuned->config.to_string() + "} (tuned"),
            std::string::npos)
      << err;
  // Every measurement a JSON line, with this run's id.
  auto lines = log_lines();
  ASSERT_EQ(lines.size(), 6u);
  std::set<std::string> runs;
  for (const auto& j : lines) {
    EXPECT_EQ(j["kernel"], "env_twice");
    EXPECT_EQ(j["status"], "ok");
    EXPECT_GT(j["median_s"].get<double>(), 0);
    EXPECT_FALSE(j["key"].get<std::string>().empty());
    runs.insert(j["run"].get<std::string>());
  }
  EXPECT_EQ(runs.size(), 1u);

  // (2) A caller that applied the environment itself (kiln tune, its
  // flags on top) keeps its options: 2 configs, another run id appended.
  o.environment = false;
  o.cache.retune = true;
  auto second = s.tuner.tune(kernel(), call.args, **s.device, o);
  ASSERT_TRUE(second.ok()) << second.error().describe();
  EXPECT_EQ(second->measurements.size(), 2u);
  lines = log_lines();
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_NE(lines[7]["run"], lines[0]["run"]);
}

}  // namespace
}  // namespace kiln

// The environment is read once per process, on first use: set it first.
int main(int argc, char** argv) {
  setenv("KILN_EFFORT", "quick", 1);
  setenv("KILN_PRINT_AUTOTUNING", "1", 1);
  std::filesystem::remove(kiln::log_path());
  setenv("KILN_AUTOTUNE_LOG", kiln::log_path().c_str(), 1);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  std::filesystem::remove(kiln::log_path());
  return rc;
}
