// `kiln tune` and `kiln kernels` end to end: the real executable in child
// processes, a fresh cache directory per test, real Clang compiles and real
// timings on the CPU backend. Assertions are on behaviour (statuses, where
// a result came from, what was compiled), never on times.
#include "cli_runner.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::count_status;
using testing::measured;
using testing::read_file;
using TuneCli = testing::CliTest;

const std::string kExample = std::string(KILN_SOURCE_DIR) + "/examples/user_kernel/";
const std::string kGemm = "tune --kernel gemm_f32 --shape M=48,N=40,K=24 --max-configs 4";

TEST_F(TuneCli, GemmTunesThenStartsWarmInASecondProcess) {
  CliRun cold = kiln(kGemm + " --json");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  const nlohmann::json r = cold.json();  // stdout is one JSON document
  EXPECT_EQ(r["kernel"], "gemm_f32");
  EXPECT_EQ(r["backend"], "cpu");
  EXPECT_EQ(r["source"], "tuned");
  EXPECT_EQ(r["dtype"], "f32");
  EXPECT_EQ(r["shape"]["K"], 24);
  EXPECT_EQ(r["reference"], "user");
  EXPECT_EQ(r["reference_detail"], "host code (double precision)");
  ASSERT_EQ(r["configs"].size(), 4u);
  EXPECT_EQ(count_status(r, "ok"), 4u) << r.dump(2);
  for (const auto& c : r.at("configs")) {
    ASSERT_TRUE(measured(c));
    EXPECT_GT(c.at("median_s").get<double>(), 0);
    EXPECT_LE(c.at("min_s").get<double>(), c.at("median_s").get<double>());
    // Early stop may end a config many times slower than the best after
    // one repetition (StopBars); the winner has every one.
    EXPECT_GE(c.at("reps").get<int>(), 1);
  }
  ASSERT_TRUE(measured(r.at("winner")));
  EXPECT_GE(r["winner"].at("reps").get<int>(), 3);
  ASSERT_TRUE(measured(r.at("default"))) << "the default config is always measured";
  EXPECT_EQ(r["default"]["config"], cpu::gemm_f32_template().space.default_config().to_json());
  EXPECT_GT(r.at("speedup_over_default").get<double>(), 0);
  EXPECT_GT(r["winner"].at("gflops").get<double>(), 0);
  const auto& stats = r["stats"];
  EXPECT_EQ(stats["cache_misses"], 1);
  EXPECT_EQ(stats["cache_hits"], 0);
  EXPECT_EQ(stats["configs"], 4);
  EXPECT_EQ(stats["benchmarked"], 4);
  EXPECT_EQ(stats["failed"], 0);
  EXPECT_GE(stats["compiled"].get<int>(), 4);
  EXPECT_GT(stats["compile_seconds"].get<double>(), 0);
  EXPECT_EQ(r["settings"]["pipeline"], true);

  // The same command in a new process: served from the tuning cache on
  // disk, its artifact from the artifact cache, nothing compiled.
  CliRun warm = kiln(kGemm + " --json");
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  const nlohmann::json w = warm.json();
  EXPECT_EQ(w["source"], "disk");
  EXPECT_EQ(w["winner"]["config"], r["winner"]["config"]);
  EXPECT_EQ(w["stats"]["cache_hits"], 1);
  EXPECT_EQ(w["stats"]["compiled"], 0);
  EXPECT_EQ(w["stats"]["artifact_hits"], 1);
  EXPECT_EQ(w["configs"].size(), 4u) << "the stored record's table";
  EXPECT_DOUBLE_EQ(w["speedup_over_default"].get<double>(),
                   r["speedup_over_default"].get<double>());
  CliRun text = kiln(kGemm);
  EXPECT_NE(text.out.find("source: disk"), std::string::npos) << text.out;

  // --retune measures again and replaces the record.
  CliRun again = kiln(kGemm + " --retune --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json()["source"], "tuned");
  EXPECT_EQ(kiln(kGemm + " --json").json()["source"], "disk");
}

// The timing switches reach the measurement: on the CPU device a captured
// graph replays, the L2 flush and the delay run before each timed launch,
// and every config is still measured and checked.
TEST_F(TuneCli, TimingSwitchesColdL2GraphsAndDelay) {
  CliRun run = kiln(kGemm + " --cold-l2 --graphs --delay-us 20 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json r = run.json();
  EXPECT_EQ(r["settings"]["cold_l2"], true);
  EXPECT_EQ(r["settings"]["graphs"], true);
  EXPECT_DOUBLE_EQ(r["settings"]["delay_us"].get<double>(), 20.0);
  EXPECT_EQ(r["source"], "tuned");
  EXPECT_EQ(count_status(r, "ok"), 4u) << r["configs"].dump(2);
  for (const auto& c : r.at("configs")) {
    ASSERT_TRUE(measured(c));
    EXPECT_GT(c.at("median_s").get<double>(), 0.0) << c.dump();
  }
  CliRun bad = kiln(kGemm + " --delay-us -1");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST_F(TuneCli, PipelineOffCompilesFirstThenBenchmarks) {
  CliRun run = kiln(kGemm + " --no-pipeline --group-size 1 --threads 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json r = run.json();
  EXPECT_EQ(r["settings"]["pipeline"], false);
  EXPECT_EQ(r["source"], "tuned");
  EXPECT_EQ(count_status(r, "ok"), 4u);
  EXPECT_DOUBLE_EQ(r["stats"]["overlap_seconds"].get<double>(), 0.0);
}

TEST_F(TuneCli, InPlaceRmsNormPassesTheCleanRunCheckForEveryConfig) {
  // Each config's checked run is compared with host code that ran once on
  // the original inputs: without restore_value, repetitions would add x
  // into the residual again and fail the check.
  CliRun run =
      kiln("tune --kernel fused_add_rmsnorm --shape rows=24,hidden=136 --max-configs 4 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json r = run.json();
  EXPECT_EQ(r["source"], "tuned");
  EXPECT_EQ(count_status(r, "ok"), 4u) << r.dump(2);
  EXPECT_EQ(r["stats"]["benchmarked"], 4);
}

TEST_F(TuneCli, TheUserKernelExampleTunes) {
  const std::string args = "tune --template " + kExample + "transpose.cpp --space " + kExample +
                           "space.json --entry 'example::transpose<{TILE},{STAGED}>' "
                           "--shape M=40,N=72 --max-configs 6 --json";
  CliRun run = kiln(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json r = run.json();
  EXPECT_EQ(r["kernel"], "example_transpose");
  EXPECT_EQ(r["source"], "tuned");
  EXPECT_EQ(r["reference"], "default");
  ASSERT_EQ(r["configs"].size(), 6u);
  EXPECT_EQ(count_status(r, "ok"), 6u) << r.dump(2);
  for (const auto& c : r["configs"]) EXPECT_LE(c["config"]["TILE"].get<int>(), 64);
  CliRun warm = kiln(args);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_EQ(warm.json()["source"], "disk");
  EXPECT_EQ(warm.json()["stats"]["compiled"], 0);

  // A shape the example's early prune rejects every tile for (TILE <=
  // max(M, N)): the report says no config was measured and why, not that
  // none ran correctly.
  CliRun pruned = kiln("tune --template " + kExample + "transpose.cpp --space " + kExample +
                       "space.json --entry 'example::transpose<{TILE},{STAGED}>' --shape M=4,N=4");
  EXPECT_NE(pruned.out.find("no config was measured: for this shape the kernel's early prune"),
            std::string::npos)
      << pruned.out;
  EXPECT_NE(pruned.err.find("none was measured: the early prune rejected every config"),
            std::string::npos)
      << pruned.err;
}

TEST_F(TuneCli, TraceIsChromeTraceJson) {
  const fs::path trace = dir_ / "trace.json";
  CliRun run = kiln(kGemm + " --trace " + trace.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("trace: " + trace.string()), std::string::npos) << run.out;
  const auto j = nlohmann::json::parse(read_file(trace));
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::size_t compiles = 0, benchmarks = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    EXPECT_GE(e["dur"].get<double>(), 0);
    compiles += e["cat"] == "compile";
    benchmarks += e["cat"] == "benchmark";
  }
  EXPECT_GE(compiles, 1u);
  EXPECT_EQ(benchmarks, 4u);
}

// `--search list` prints the registered strategies (no other flag needed);
// an unknown name is a usage error that names the valid ones.
TEST_F(TuneCli, SearchListsTheStrategiesAndRefusesUnknownOnes) {
  CliRun list = kiln("tune --search list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const char* name : {"exhaustive", "random", "hybrid"}) {
    EXPECT_NE(list.out.find(std::string(name) + " "), std::string::npos) << list.out;
  }
  EXPECT_NE(list.out.find("seeded uniform sample"), std::string::npos) << list.out;
  EXPECT_EQ(kiln("tune --search help").out, list.out);

  CliRun bad = kiln(kGemm + " --search simplex");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("unknown search strategy 'simplex'"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("exhaustive, random, hybrid"), std::string::npos) << bad.err;
  // hybrid's parts are not strategies of their own.
  CliRun part = kiln(kGemm + " --search bayes");
  EXPECT_EQ(part.exit_code, 2) << part.err;
  EXPECT_NE(part.err.find("unknown search strategy 'bayes'"), std::string::npos) << part.err;
  // auto, the default and accepted, is among the values the error offers.
  EXPECT_NE(bad.err.find("use auto (the default) or one of exhaustive"), std::string::npos)
      << bad.err;
}

// `--effort` picks the default search's budget (search "auto",
// kiln/search/search_plan.hpp); --max-configs still caps it, and the run's
// settings say which effort it used. An unknown effort is a usage error.
TEST_F(TuneCli, EffortIsReportedCappedByMaxConfigsAndChecked) {
  CliRun quick = kiln(kGemm + " --effort quick --json");
  ASSERT_EQ(quick.exit_code, 0) << quick.err;
  const nlohmann::json r = quick.json();
  EXPECT_EQ(r["settings"]["effort"], "quick");
  EXPECT_EQ(r["settings"]["search"], "auto");
  EXPECT_EQ(r["configs"].size(), 4u) << "--max-configs 4 caps the plan's budget";

  CliRun list = kiln("tune --search list");
  EXPECT_NE(list.out.find("auto "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("hybrid "), std::string::npos) << list.out;
  // With --json, before or after it, the list is one JSON document (it
  // printed the text table, which no JSON reader takes).
  for (const char* args : {"tune --json --search list", "tune --search list --json"}) {
    CliRun json = kiln(args);
    ASSERT_EQ(json.exit_code, 0) << args << ": " << json.err;
    const nlohmann::json j = json.json();
    ASSERT_TRUE(j.at("strategies").is_array()) << json.out;
    EXPECT_EQ(j.at("strategies").at(0).at("name"), "auto") << json.out;
    bool hybrid = false;
    for (const auto& s : j.at("strategies")) {
      hybrid = hybrid || s.at("name") == "hybrid";
      EXPECT_FALSE(s.at("description").get<std::string>().empty()) << s.dump();
    }
    EXPECT_TRUE(hybrid) << json.out;
  }

  CliRun bad = kiln(kGemm + " --effort extreme");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--effort"), std::string::npos) << bad.err;
}

TEST_F(TuneCli, BadInputExitsTwoNamingTheProblem) {
  const std::pair<std::string, std::string> cases[] = {
      {"tune --kernel gemm_f33 --shape M=8,N=8,K=8", "no shipped kernel 'gemm_f33'"},
      {"tune --kernel gemm_f32 --shape M=8,N=8", "--shape lacks K"},
      {"tune --kernel gemm_f32 --shape M8,N=8,K=8", "'M8' is not NAME=VALUE"},
      {"tune --kernel gemm_f32 --shape M=8,N=-1,K=8", "not a positive integer"},
      {"tune --kernel gemm_f32 --shape M=8,N=8,K=8,Q=2", "no dimension 'Q'"},
      {"tune --kernel gemm_f32 --shape M=8,N=8,K=8 --dtype f17", "unknown dtype 'f17'"},
      {"tune --kernel gemm_f32 --shape M=8,N=8,K=8 --dtype f16", "use --kernel gemm_f16"},
      {"tune --kernel gemm_f16 --backend cpu --shape M=8,N=8,K=8", "use --kernel gemm_f32"},
      {"tune --shape M=8", "nothing to tune: give --kernel NAME"},
      {"tune --template " + kExample + "transpose.cpp --shape M=8,N=8", "needs --space"},
      {"tune --template " + kExample + "transpose.cpp --space " + kExample +
           "space.json --shape M=8,N=8",
       "no entry expression"},
      {"tune --kernel gemm_f32 --shape M=8,N=8,K=8 --backend tpu", "--backend"},
      {"tune --kernel gemm_f32 --shape M=8,N=8,K=8 --devices cuda:0", "not a cpu device"},
  };
  for (const auto& [args, expected] : cases) {
    CliRun run = kiln(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.err;
    EXPECT_NE(run.err.find(expected), std::string::npos) << args << "\n" << run.err;
    EXPECT_TRUE(run.out.empty()) << args;
  }
}

TEST_F(TuneCli, CudaKernelsWithoutADeviceFailCleanly) {
  if (cuda_device_count().ok()) KILN_SKIP(Skip::kGpuPresent) << "a CUDA device is present";
  for (const char* args : {"tune --kernel gemm_f16 --shape M=64,N=64,K=64",
                           "tune --kernel gemm --backend cuda --shape M=64,N=64,K=64 --json"}) {
    CliRun run = kiln(args);
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("no CUDA device"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("--backend cpu"), std::string::npos) << run.err;
    EXPECT_TRUE(run.out.empty());
  }
  // A user's CUDA kernel: the fix named is the spec's backend.
  CliRun user = kiln(testing::write_cuda_user_kernel(dir_));
  EXPECT_EQ(user.exit_code, 1) << user.err;
  EXPECT_NE(user.err.find("no CUDA device"), std::string::npos) << user.err;
  EXPECT_NE(user.err.find("\"backend\": \"cpu\""), std::string::npos) << user.err;
  // auto picks the CPU when there is no device.
  CliRun run = kiln("tune --kernel gemm --shape M=16,N=16,K=16 --max-configs 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.json()["kernel"], "gemm_f32");
}

TEST_F(TuneCli, KernelsListsTheShippedKernels) {
  CliRun run = kiln("kernels --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = run.json();
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& k : j["kernels"]) by_name[k["name"].get<std::string>()] = k;
  for (const char* name : {"gemm_f32", "fused_add_rmsnorm", "gemm_f16", "gemm_bf16"})
    ASSERT_TRUE(by_name.count(name)) << name;
  const auto& gemm = by_name.at("gemm_f32");
  EXPECT_EQ(gemm["backend"], "cpu");
  EXPECT_EQ(gemm["dims"], nlohmann::json::array({"M", "N", "K"}));
  EXPECT_EQ(gemm["space_size"], cpu::gemm_f32_template().space.size());
  EXPECT_EQ(gemm["parameters"][0]["name"], "MR");
  EXPECT_EQ(by_name.at("fused_add_rmsnorm")["in_place"], true);
  EXPECT_EQ(by_name.at("gemm_bf16")["backend"], "cuda");
  EXPECT_EQ(by_name.at("gemm_bf16")["dtypes"][0], "bf16");
  CliRun text = kiln("kernels");
  EXPECT_NE(text.out.find("gemm_f16"), std::string::npos);
}

}  // namespace
}  // namespace kiln
