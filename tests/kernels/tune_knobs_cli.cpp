// `kiln tune`'s measurement flags and the tuning overrides from the
// environment (issue 57 §2), end to end: the real executable in a child
// process over a fresh cache directory, real Clang compiles and real
// benchmark workers on the CPU backend. A flag on the command line wins
// over the environment; the environment's overrides are listed by
// `kiln info`.
#include "cli_runner.hpp"
#include "twice_source.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using TuneKnobs = testing::CliTest;

constexpr const char* kSource = testing::kTwiceSource;

constexpr const char* kSpec = R"({
  "name": "knobs_twice",
  "backend": "cpu",
  "space": {"parameters": [{"name": "V", "values": [1, 2, 3, 4]}], "default": {"V": 1}},
  "launch": {"grid": [1, 1, 1]},
  "args": [{"name": "x", "dtype": "f32", "shape": ["N"], "role": "input", "init": "random"},
           {"name": "y", "dtype": "f32", "shape": ["N"], "role": "output", "init": "zeros"},
           {"name": "n", "type": "i32", "value": "N"}],
  "reference": "default_config"
})";

TEST_F(TuneKnobs, MeasurementFlagsReachEveryConfig) {
  CliRun run = tune_template(kSource, kSpec, "t::twice<{V}>", "N=256", "",
                             "--warmup 2 --min-reps 4 --max-reps 4 --target-s 0.001 "
                             "--compile-deadline-s 60 --bench-deadline-s 5 --early-stop 0");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = run.json();
  const nlohmann::json& s = report.at("settings");
  EXPECT_EQ(s.at("warmup"), 2);
  EXPECT_EQ(s.at("min_reps"), 4);
  EXPECT_EQ(s.at("max_reps"), 4);
  EXPECT_EQ(s.at("target_s"), 0.001);
  EXPECT_EQ(s.at("compile_deadline_s"), 60);
  EXPECT_EQ(s.at("bench_deadline_s"), 5);
  ASSERT_EQ(testing::count_status(report, "ok"), 4u) << run.out;
  for (const auto& c : report.at("configs")) EXPECT_EQ(c.at("reps"), 4) << c.dump();
}

TEST_F(TuneKnobs, MoreMinimumThanMaximumRepetitionsIsAUsageError) {
  expect_usage_error("tune --kernel saxpy --shape N=64 --min-reps 5 --max-reps 2",
                     {"--min-reps 5 is above --max-reps 2"});
}

TEST_F(TuneKnobs, TheEnvironmentOverridesTheDefaultsAndAFlagOverridesTheEnvironment) {
  const std::string log = (dir_ / "measurements.jsonl").string();
  const std::string env =
      "KILN_SEARCH=random KILN_EFFORT=quick KILN_BUDGET_S=300 "
      "KILN_PRINT_AUTOTUNING=1 KILN_AUTOTUNE_LOG=" +
      log;
  // (1) The environment alone: its search and budget ran; KILN_EFFORT is
  // not read beside a named search.
  CliRun run = tune_template(kSource, kSpec, "t::twice<{V}>", "N=256", env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json s = run.json().at("settings");
  EXPECT_EQ(s.at("search"), "random");
  EXPECT_EQ(s.at("budget_s"), 300);
  EXPECT_NE(run.err.find("kiln autotuning knobs_twice for "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("configs measured; best config {V="), std::string::npos) << run.err;
  std::size_t lines = 0;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line); ++lines) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j.at("kernel"), "knobs_twice");
    EXPECT_TRUE(j.contains("run") && j.contains("config") && j.contains("status"));
  }
  EXPECT_EQ(lines, run.json().at("configs").size());
  // (2) Flags on the command line win over it.
  run = tune_template(kSource, kSpec, "t::twice<{V}>", "N=256", env,
                      "--retune --search exhaustive --budget-s 100");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  s = run.json().at("settings");
  EXPECT_EQ(s.at("search"), "exhaustive");
  EXPECT_EQ(s.at("budget_s"), 100);
  // (3) --effort alone asks for the auto plan, over KILN_SEARCH.
  run = tune_template(kSource, kSpec, "t::twice<{V}>", "N=256", env, "--retune --effort full");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  s = run.json().at("settings");
  EXPECT_EQ(s.at("search"), "auto");
  EXPECT_EQ(s.at("effort"), "full");
}

TEST_F(TuneKnobs, ABadValueIsAWarningThatNamesItAndTheRunGoesOn) {
  CliRun run = tune_template(kSource, kSpec, "t::twice<{V}>", "N=256",
                             "KILN_EFFORT=fast KILN_BUDGET_S=-1 KILN_SEARCH=fastest");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("KILN_EFFORT='fast' is not valid: use quick, default or full"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("KILN_BUDGET_S='-1' is not valid"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("KILN_SEARCH='fastest' is not a search strategy"), std::string::npos)
      << run.err;
  EXPECT_EQ(run.json().at("settings").at("search"), "auto");
}

TEST_F(TuneKnobs, InfoListsTheOverridesWithTheirValues) {
  CliRun run = kiln_with("", "info", "KILN_SEARCH=random KILN_AUTOTUNE_LOG=/tmp/a.jsonl");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("Tuning overrides"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  KILN_SEARCH=random\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  KILN_EFFORT=(unset)\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  KILN_AUTOTUNE_LOG=/tmp/a.jsonl\n"), std::string::npos) << run.out;
  run = kiln_with("", "info --json", "KILN_BUDGET_S=30");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json env = run.json().at("tuning_env");
  EXPECT_EQ(env.at("KILN_BUDGET_S"), "30");
  EXPECT_TRUE(env.at("KILN_PRINT_AUTOTUNING").is_null());
  EXPECT_EQ(run.json().at("options").at("budget_s"), 30.0);
}

}  // namespace
}  // namespace kiln
