// `kiln-lab tune --recorded`: the real `kiln-lab` binary replaying a hand-written
// recorded space, a shared one (Kernel Tuner's layout, gzip'd), Kiln's own
// export of a real CPU tuning, and files it must refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "lab_cli.hpp"
#include "skip.hpp"

namespace kiln::testing {
namespace {

// Five configs (the hand file of tests/lab/replay_clock_test.cpp, where
// its times are worked out): C (2,1) is the optimum, D fails to compile, E
// fails to run; one compile worker, pipelined, takes 7.75 simulated s.
const char* kHandFile = R"({
  "device_name": "Hand GPU", "kernel_name": "hand", "objective": "time",
  "tune_params_keys": ["x", "y"],
  "tune_params": {"x": [1, 2], "y": [1, 2, 3]},
  "cache": {
    "1,1": {"x": 1, "y": 1, "time": 4.0, "compile_time": 1000, "benchmark_time": 500},
    "1,2": {"x": 1, "y": 2, "time": 2.0, "compile_time": 2000, "benchmark_time": 500},
    "2,1": {"x": 2, "y": 1, "time": 1.0, "compile_time": 1000, "benchmark_time": 1000},
    "2,2": {"x": 2, "y": 2, "time": "CompilationFailedConfig", "compile_time": 3000,
            "benchmark_time": 0},
    "2,3": {"x": 2, "y": 3, "time": "RuntimeFailedConfig", "compile_time": 500,
            "benchmark_time": 250}
  }})";

const fs::path kShared = fs::path(KILN_SOURCE_DIR) / ".." / "shared" / "recorded-spaces";

// bench/search_trace_summary.py on a trace, its output and errors together.
CommandRun summarise(const fs::path& trace) {
  return run_command("python3 " KILN_SOURCE_DIR "/bench/search_trace_summary.py " + trace.string() +
                     " 2>&1");
}

// Two reports byte for byte; on a difference, the first line that differs
// (a whole report is thousands of lines).
::testing::AssertionResult same_report(const std::string& a, const std::string& b) {
  std::istringstream la(a), lb(b);
  std::string x, y;
  for (int line = 1;; ++line) {
    const bool in_a = static_cast<bool>(std::getline(la, x));
    const bool in_b = static_cast<bool>(std::getline(lb, y));
    if (!in_a && !in_b) return ::testing::AssertionSuccess();
    if (in_a != in_b || x != y)
      return ::testing::AssertionFailure() << "line " << line << ": '" << (in_a ? x : "(end)")
                                           << "' vs '" << (in_b ? y : "(end)") << "'";
  }
}

class TuneRecordedCli : public testing::LabCliTest {
 protected:
  fs::path hand() const {
    const fs::path f = dir_ / "hand.json";
    std::ofstream(f) << kHandFile;
    return f;
  }

  // `twin` (the hand file's measurements in another layout) replays as the
  // hand file does, pipelined, batched and by a random search: the same
  // configs, winner, simulated wall time and fraction. Where the layout
  // names no kernel, the failures' reasons are compared for their word only.
  void expect_replays_as_hand(const fs::path& twin, bool kernel_named) {
    for (const char* how : {"--threads 1", "--no-pipeline", "--search random --seed 3"}) {
      CliRun a = kiln("tune --recorded " + twin.string() + " " + how + " --json");
      CliRun b = kiln("tune --recorded " + hand().string() + " " + how + " --json");
      ASSERT_EQ(a.exit_code, 0) << a.err;
      ASSERT_EQ(b.exit_code, 0) << b.err;
      nlohmann::json ja = a.json(), jb = b.json();
      for (nlohmann::json* j : {&ja, &jb})
        for (nlohmann::json& row : j->at("configs"))
          if (!kernel_named && row.contains("reason"))
            row["reason"] =
                row["reason"].get<std::string>().find("recorded as ") != std::string::npos;
      EXPECT_EQ(ja.at("configs"), jb.at("configs")) << how;
      EXPECT_EQ(ja.at("winner"), jb.at("winner")) << how;
      EXPECT_EQ(ja.at("simulated_wall_s"), jb.at("simulated_wall_s")) << how;
      EXPECT_EQ(ja.at("fraction_of_optimum"), jb.at("fraction_of_optimum")) << how;
    }
  }
};

TEST_F(TuneRecordedCli, ReportsEveryConfigTheWinnerTheFractionAndTheSimulatedWallTime) {
  CliRun run = kiln("tune --recorded " + hand().string() + " --threads 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = run.json();
  EXPECT_EQ(j.at("configs").size(), 5u);
  EXPECT_EQ(count_status(j, "ok"), 3u);
  EXPECT_EQ(count_status(j, "compile_failed"), 1u) << j.at("configs").dump();
  EXPECT_EQ(count_status(j, "launch_failed"), 1u) << j.at("configs").dump();
  ASSERT_TRUE(measured(j.at("winner")));
  EXPECT_EQ(j.at("winner").at("config"), (nlohmann::json{{"x", 2}, {"y", 1}}));
  EXPECT_DOUBLE_EQ(j.at("winner").at("median_s").get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(j.at("fraction_of_optimum").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j.at("simulated_wall_s").get<double>(), 7.75);
  EXPECT_DOUBLE_EQ(j.at("stats").at("wall_seconds").get<double>(), 7.75);
  EXPECT_EQ(j.at("backend"), "recorded");
  EXPECT_EQ(j.at("recorded").at("optimum_ms"), 1.0);
  EXPECT_EQ(j.at("recorded").at("clock_stalls"), 0);
  EXPECT_EQ(j.at("settings").at("budget_simulated"), true);
  // The run failure is the file's word, with no launch geometry: the file
  // holds none, and the replay's placeholders read grid (1,1,1) block
  // (1,1,1) shared memory 0 bytes, ahead of it, cutting it off in the table.
  for (const auto& row : j.at("configs")) {
    if (row.at("status") != "launch_failed") continue;
    const std::string reason = row.at("reason").get<std::string>();
    EXPECT_EQ(
        reason.rfind("kernel hand [x=2,y=3] failed to run: recorded as RuntimeFailedConfig", 0), 0u)
        << reason;
    EXPECT_EQ(reason.find("grid"), std::string::npos) << reason;
    EXPECT_EQ(reason.find("shared"), std::string::npos) << reason;
  }

  // Compile everything, then benchmark: 7.5 s + 2.25 s.
  CliRun batch = kiln("tune --recorded " + hand().string() + " --no-pipeline --json");
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_DOUBLE_EQ(batch.json().at("simulated_wall_s").get<double>(), 9.75);

  // The table says the same in words.
  // (the first two configs in file order: exhaustive; the default plan
  // would give 2 of 5 configs to bayes)
  CliRun text = kiln("tune --recorded " + hand().string() + " --max-configs 2 --search exhaustive");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("0.500 of the optimum"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("simulated wall time: 3.5 s"), std::string::npos) << text.out;
  // A recorded space has no shape: the header names none (it ended
  // "[recorded], shape " with nothing after it).
  EXPECT_EQ(text.out.rfind("hand (hand) on Hand GPU [recorded]\n", 0), 0u) << text.out;
}

// The hand file's measurements in Kernel Tuner's T4 output layout: the same
// replay, to the simulated second (benchmark costs as the runs' sum here).
const char* kHandT4 = R"({"schema_version": "1.0.0", "results": [
  {"configuration": {"x": 1, "y": 1}, "times": {"compilation": 1000, "runtimes": [250, 250]},
   "invalidity": "correct", "measurements": [{"name": "time", "value": 4.0, "unit": "ms"}]},
  {"configuration": {"x": 1, "y": 2}, "times": {"compilation": 2000, "benchmark": 500},
   "invalidity": "correct", "measurements": [{"name": "time", "value": 2.0, "unit": "ms"}]},
  {"configuration": {"x": 2, "y": 1}, "times": {"compilation": 1000, "benchmark": 1000},
   "invalidity": "correct", "measurements": [{"name": "time", "value": 1.0, "unit": "ms"}]},
  {"configuration": {"x": 2, "y": 2}, "times": {"compilation": 3000}, "invalidity": "compile",
   "measurements": [{"name": "time", "value": "CompilationFailedConfig", "unit": "ms"}]},
  {"configuration": {"x": 2, "y": 3}, "times": {"compilation": 500, "benchmark": 250},
   "invalidity": "runtime",
   "measurements": [{"name": "time", "value": "RuntimeFailedConfig", "unit": "ms"}]}]})";

TEST_F(TuneRecordedCli, AT4OutputFileTunesAsItsCacheLayoutTwin) {
  const fs::path t4 = dir_ / "hand_T4.json";
  std::ofstream(t4) << kHandT4;
  // The reasons differ in the kernel's name only: T4 files name none.
  expect_replays_as_hand(t4, /*kernel_named=*/false);
  CliRun wall = kiln("tune --recorded " + t4.string() + " --threads 1 --json");
  EXPECT_DOUBLE_EQ(wall.json().at("simulated_wall_s").get<double>(), 7.75);

  // The bench scripts read T4 files too (bench/recorded_file.py): an
  // exhaustive trace reaches the optimum C at its third config, as with the
  // cache layout (BenchSearchTracesEveryMeasurementInOrder).
  const fs::path trace = dir_ / "t4.jsonl";
  CliRun traced =
      kiln("bench search --recorded " + t4.string() +
           " --strategy exhaustive --seeds 1 --max-configs 5 --json --trace " + trace.string());
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  const CommandRun summary = summarise(trace);
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  EXPECT_NE(summary.out.find("configs to reach 1.00: median 3 [3, 3]"), std::string::npos)
      << summary.out;
}

// The hand file's measurements as KTT writes them (in ms here): a compile
// cost is the overhead less data movement, validation and the searcher; a
// benchmark cost the run with its data movement and validation.
const char* kHandKtt = R"({"Metadata": {"Device": "Hand GPU", "TimeUnit": "Milliseconds"},
  "Results": [
  {"KernelName": "hand", "Status": "Ok", "TotalDuration": 4.0, "DataMovementOverhead": 496,
   "TotalOverhead": 1496,
   "Configuration": [{"Name": "x", "Value": 1}, {"Name": "y", "Value": 1}]},
  {"KernelName": "hand", "Status": "Ok", "TotalDuration": 2.0, "DataMovementOverhead": 498,
   "TotalOverhead": 2498,
   "Configuration": [{"Name": "x", "Value": 1}, {"Name": "y", "Value": 2}]},
  {"KernelName": "hand", "Status": "Ok", "TotalDuration": 1.0, "DataMovementOverhead": 999,
   "SearcherOverhead": 5, "TotalOverhead": 2004,
   "Configuration": [{"Name": "x", "Value": 2}, {"Name": "y", "Value": 1}]},
  {"KernelName": "hand", "Status": "CompilationFailed", "TotalDuration": 0, "TotalOverhead": 3000,
   "Configuration": [{"Name": "x", "Value": 2}, {"Name": "y", "Value": 2}]},
  {"KernelName": "hand", "Status": "ComputationFailed", "TotalDuration": 0,
   "DataMovementOverhead": 250, "TotalOverhead": 750,
   "Configuration": [{"Name": "x", "Value": 2}, {"Name": "y", "Value": 3}]}]})";

TEST_F(TuneRecordedCli, AKttOutputFileTunesAsItsCacheLayoutTwin) {
  const fs::path ktt = dir_ / "KTHandOutput.json";
  std::ofstream(ktt) << kHandKtt;
  expect_replays_as_hand(ktt, /*kernel_named=*/true);
  CliRun text = kiln("tune --recorded " + ktt.string() + " --threads 1");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("hand (hand) on Hand GPU [recorded]\n", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("simulated wall time: 7.75 s"), std::string::npos) << text.out;

  // The bench scripts read KTT files too (bench/recorded_file.py).
  const fs::path trace = dir_ / "ktt.jsonl";
  CliRun traced =
      kiln("bench search --recorded " + ktt.string() +
           " --strategy exhaustive --seeds 1 --max-configs 5 --json --trace " + trace.string());
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  const CommandRun summary = summarise(trace);
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  EXPECT_NE(summary.out.find("configs to reach 1.00: median 3 [3, 3]"), std::string::npos)
      << summary.out;
}

// The benchmark hub ships KTT's outputs zipped as well: the archive of the
// hand KTT file replays as the file it holds, in kiln and in the bench
// scripts (the archive written by Python's zipfile, deflated).
TEST_F(TuneRecordedCli, AZippedOutputFileTunesAsTheFileItHolds) {
  std::ofstream(dir_ / "KTHandOutput.json") << kHandKtt;
  ASSERT_EQ(std::system(("cd " + dir_.string() +
                         " && python3 -m zipfile -c KTHandOutput.zip KTHandOutput.json")
                            .c_str()),
            0);
  fs::remove(dir_ / "KTHandOutput.json");  // only the archive is left to read
  const fs::path zip = dir_ / "KTHandOutput.zip";
  // `kiln-lab info` says whether this build reads archives; one that does not
  // refuses it with the fix.
  CliRun info = kiln("info --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  if (!info.json().at("recorded_zip").get<bool>()) {
    CliRun refused = kiln("tune --recorded " + zip.string());
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_NE(refused.err.find("libzip-dev"), std::string::npos) << refused.err;
    return;
  }
  expect_replays_as_hand(zip, /*kernel_named=*/true);
  const fs::path trace = dir_ / "zip.jsonl";
  CliRun traced =
      kiln("bench search --recorded " + zip.string() +
           " --strategy exhaustive --seeds 1 --max-configs 5 --json --trace " + trace.string());
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  const CommandRun summary = summarise(trace);
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  EXPECT_NE(summary.out.find("configs to reach 1.00: median 3 [3, 3]"), std::string::npos)
      << summary.out;
}

// The hand file as a run writes it before it ends: no closing braces, and
// here the last record cut off mid-line, as by a kill.
std::string hand_file_left_open() {
  const std::string whole = kHandFile;
  return whole.substr(0, whole.find("\"RuntimeFailedConfig\"") + 7);
}

TEST_F(TuneRecordedCli, ACacheFileLeftOpenIsReadByTheBenchScriptsToo) {
  const fs::path open = dir_ / "open.json";
  std::ofstream(open) << hand_file_left_open();
  const fs::path trace = dir_ / "open.jsonl";
  CliRun traced =
      kiln("bench search --recorded " + open.string() +
           " --strategy exhaustive --seeds 1 --max-configs 4 --json --trace " + trace.string());
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  // bench/recorded_file.py closes the file as kiln does: four records, the
  // optimum C the third config measured.
  const CommandRun summary = summarise(trace);
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  EXPECT_NE(summary.out.find("exhaustive, 1 seeds, 4 configs"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("configs to reach 1.00: median 3 [3, 3]"), std::string::npos)
      << summary.out;

  // Closed and broken is not left open: the script says it cannot read it.
  std::ofstream(open) << kHandFile << "\n}\n}";
  const CommandRun broken = summarise(trace);
  EXPECT_EQ(broken.exit_code, 1) << broken.out;
  EXPECT_NE(broken.out.find("cannot read the recorded space"), std::string::npos) << broken.out;
}

TEST_F(TuneRecordedCli, BudgetIsInSimulatedSeconds) {
  CliRun run = kiln("tune --recorded " + hand().string() + " --budget-s 3.2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = run.json();
  EXPECT_DOUBLE_EQ(j.at("simulated_wall_s").get<double>(), 3.5);
  EXPECT_EQ(j.at("recorded").at("budget_cancelled"), 3);
  EXPECT_EQ(count_status(j, "cancelled"), 3u);
  // The cancelled have rows but were never measured.
  EXPECT_EQ(j.at("recorded").at("measured").get<std::size_t>() + 3, j.at("configs").size());
  // The reason gives the budget as it was given (it read 3.200000, and a
  // budget of 1e-07 s read 0.000000).
  for (const auto& row : j.at("configs")) {
    if (row.at("status") == "cancelled") {
      EXPECT_EQ(row.at("reason").get<std::string>().rfind("the tuning budget (3.2 simulated s)", 0),
                0u)
          << row.dump();
    }
  }
  CliRun tiny = kiln("tune --recorded " + hand().string() + " --budget-s 1e-7");
  EXPECT_NE(tiny.out.find("the tuning budget (1e-07 simulated s)"), std::string::npos) << tiny.out;
}

TEST_F(TuneRecordedCli, ReplaysASharedKernelTunerFileDeterministically) {
  const fs::path file = kShared / "convolution_A100.json.gz";
  if (!fs::exists(file))
    KILN_SKIP(Skip::kRecordedSpaces) << "no shared recorded spaces at " << kShared;
  const std::string args = "tune --recorded " + file.string() +
                           " --search random --max-configs 44 --seed 3 --threads 2 --json";
  CliRun a = kiln(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const nlohmann::json j = a.json();
  EXPECT_EQ(j.at("configs").size(), 44u);
  EXPECT_EQ(j.at("recorded").at("configs"), 4362);
  const double fraction = j.at("fraction_of_optimum").get<double>();
  EXPECT_GT(fraction, 0.0);
  EXPECT_LE(fraction, 1.0);
  // 44 configs of about 2.6 s of compile and 0.1 s of benchmark each on two
  // workers: well over a minute of simulated time, far less of real time.
  EXPECT_GT(j.at("simulated_wall_s").get<double>(), 30.0);
  EXPECT_GT(j.at("stats").at("overlap_seconds").get<double>(), 0.0);
  // The whole report, to the last bit: every time in it is simulated (the
  // stats' compile, benchmark and overlap totals were rounded through a real
  // clock reading, and differed in their last bits from run to run).
  for (int again = 0; again < 2; ++again) {
    CliRun b = kiln(args);
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_TRUE(same_report(b.out, a.out));
  }
  CliRun hand_a = kiln("tune --recorded " + hand().string() + " --threads 2 --json");
  CliRun hand_b = kiln("tune --recorded " + hand().string() + " --threads 2 --json");
  ASSERT_EQ(hand_a.exit_code, 0) << hand_a.err;
  EXPECT_TRUE(same_report(hand_b.out, hand_a.out));
}

// A steered search keeps --in-flight configs compiling and benchmarking
// (default 3) and is told of results in proposal order, so a replay
// repeats its walk config for config; --rounds N proposes N at a time
// instead. The two flags exclude each other; both say so in the settings.
TEST_F(TuneRecordedCli, InFlightOrRoundsPaceASteeredSearch) {
  const fs::path file = kShared / "convolution_A100.json.gz";
  if (!fs::exists(file))
    KILN_SKIP(Skip::kRecordedSpaces) << "no shared recorded spaces at " << kShared;
  const std::string base =
      "tune --recorded " + file.string() + " --search hybrid --max-configs 40 --seed 5 --threads 2";
  CliRun a = kiln(base + " --in-flight 3 --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const nlohmann::json j = a.json();
  EXPECT_EQ(j.at("configs").size(), 40u);
  EXPECT_EQ(j.at("settings").at("in_flight"), 3);
  CliRun b = kiln(base + " --json");  // the default pacing is the same
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.json().at("configs"), j.at("configs")) << "the same walk, in the same order";
  EXPECT_EQ(b.json().at("simulated_wall_s"), j.at("simulated_wall_s"));
  CliRun rounds = kiln(base + " --rounds 4 --json");
  ASSERT_EQ(rounds.exit_code, 0) << rounds.err;
  EXPECT_EQ(rounds.json().at("configs").size(), 40u);
  EXPECT_EQ(rounds.json().at("settings").at("rounds"), 4);
  EXPECT_NE(rounds.json().at("configs"), j.at("configs")) << "rounds propose otherwise";

  CliRun both = kiln(base + " --in-flight 2 --rounds 4");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
  CliRun zero = kiln(base + " --in-flight 0");
  EXPECT_EQ(zero.exit_code, 2) << zero.out;
  CliRun bench = kiln("bench search --recorded " + hand().string() +
                      " --strategy hybrid --seeds 2 --max-configs 4 --rounds 2 --json");
  EXPECT_EQ(bench.exit_code, 0) << bench.err;

  // Searches that propose every config at once have nothing to pace: the
  // option was silently ignored there, and is now refused. auto may plan a
  // steered search, and a list with one steered strategy is paced.
  const std::string h = hand().string();
  for (const std::string& c :
       {"tune --recorded " + h + " --search random --in-flight 2",
        "tune --recorded " + h + " --search exhaustive --rounds 2",
        "bench search --recorded " + h + " --strategy random --strategy exhaustive --rounds 2"}) {
    CliRun r = kiln(c);
    EXPECT_EQ(r.exit_code, 2) << c;
    EXPECT_NE(r.err.find("paces a steered search"), std::string::npos) << c << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c << ": " << r.out;
  }
  EXPECT_EQ(kiln("tune --recorded " + h + " --in-flight 2").exit_code, 0);
  EXPECT_EQ(kiln("bench search --recorded " + h +
                 " --strategy random --strategy hybrid --seeds 1 --max-configs 4 --rounds 2")
                .exit_code,
            0);
}

// `--search auto` (kiln tune's default) sizes its budget by --effort on a
// replay as on a real tuning: 1% of the file's 4,362 configs for quick, 3%
// for default; --max-configs overrides either.
TEST_F(TuneRecordedCli, EffortSizesTheAutoSearchOfAReplay) {
  const fs::path file = kShared / "convolution_A100.json.gz";
  if (!fs::exists(file))
    KILN_SKIP(Skip::kRecordedSpaces) << "no shared recorded spaces at " << kShared;
  const std::string base = "tune --recorded " + file.string() + " --json";
  for (const auto& [flags, configs] : std::vector<std::pair<std::string, std::size_t>>{
           {" --effort quick", 44}, {"", 131}, {" --effort quick --max-configs 20", 20}}) {
    CliRun run = kiln(base + flags);
    ASSERT_EQ(run.exit_code, 0) << flags << ": " << run.err;
    const nlohmann::json j = run.json();
    EXPECT_EQ(j.at("configs").size(), configs) << flags;
    EXPECT_EQ(j.at("settings").at("search"), "auto") << flags;
  }
  CliRun bad = kiln(base + " --effort fast");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--effort"), std::string::npos) << bad.err;
  // A named strategy bypasses the plan: --effort with it was ignored
  // (exhaustive measured all 4362 configs at --effort quick).
  for (const char* search : {"exhaustive", "random"}) {
    CliRun ignored = kiln(base + " --effort quick --search " + search);
    EXPECT_EQ(ignored.exit_code, 2) << search << ": " << ignored.out.size() << " bytes out";
    EXPECT_TRUE(ignored.out.empty()) << search;
    EXPECT_NE(ignored.err.find("--effort quick sizes --search auto's plan, which --search " +
                               std::string(search) + " bypasses: drop --effort"),
              std::string::npos)
        << ignored.err;
  }
  CliRun named_auto = kiln(base + " --effort quick --search auto");
  ASSERT_EQ(named_auto.exit_code, 0) << named_auto.err;
  EXPECT_EQ(named_auto.json().at("configs").size(), 44u);
}

// `kiln-lab bench search` against simulated time. The exhaustive search on one
// compile worker has A's result at 1.5 s (0.25 of the optimum), B's at 3.5
// s (0.5), C's at 5 s (1.0) and ends at 7.75 s. Compiling and benchmarking
// every config one after another takes 9.75 s, so the reported points, from
// the first result to the first point after the end, are 20% (1.95 s),
// 50% (4.875 s) and 100% (9.75 s).
// On two workers the results land at A 1.5, B 2.5, C 3.5 and the run ends
// at 5 s: 50% (4.875 s) already sees the optimum, 100% is after the end.
TEST_F(TuneRecordedCli, BenchSearchReportsBestSoFarAgainstSimulatedTime) {
  const std::string args = "bench search --recorded " + hand().string() +
                           " --strategy exhaustive --seeds 2 --max-configs 5";
  CliRun run = kiln(args + " --threads 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json file = run.json().at(0);
  ASSERT_TRUE(file.at("strategies").contains("exhaustive")) << "the configs curves stay";
  const nlohmann::json t = file.at("time_curves");
  EXPECT_EQ(t.at("threads"), 1);
  EXPECT_DOUBLE_EQ(t.at("serial_exhaustive_s").get<double>(), 9.75);
  const nlohmann::json& ex = t.at("strategies").at("exhaustive");
  EXPECT_DOUBLE_EQ(ex.at("finished_s").at("median").get<double>(), 7.75);
  auto expect_points = [](const nlohmann::json& points,
                          const std::vector<std::pair<double, double>>& want) {
    ASSERT_EQ(points.size(), want.size()) << points.dump();
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_DOUBLE_EQ(points[i].at("share_of_serial").get<double>(), want[i].first);
      EXPECT_DOUBLE_EQ(points[i].at("seconds").get<double>(), want[i].first * 9.75);
      for (const char* q : {"median", "q1", "q3"})
        EXPECT_DOUBLE_EQ(points[i].at(q).get<double>(), want[i].second) << i << " " << q;
    }
  };
  expect_points(ex.at("points"), {{0.2, 0.25}, {0.5, 0.5}, {1.0, 1.0}});

  const fs::path plot = dir_ / "curves.svg";
  CliRun two = kiln(args + " --threads 2 --json --plot " + plot.string());
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const nlohmann::json t2 = two.json().at(0).at("time_curves");
  EXPECT_DOUBLE_EQ(t2.at("strategies").at("exhaustive").at("finished_s").at("median").get<double>(),
                   5.0);
  expect_points(t2.at("strategies").at("exhaustive").at("points"),
                {{0.2, 0.25}, {0.5, 1.0}, {1.0, 1.0}});
  std::ifstream svg(plot);
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("hand on Hand GPU, by time"), std::string::npos);
  EXPECT_NE(text.find("simulated seconds, P=2"), std::string::npos);

  // The table says it in words. Seeds replayed side by side finish in any
  // order; the numbers are the same in every run.
  CliRun table = kiln(args + " --threads 1");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("best-so-far against simulated time"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("50% = 4.88 s"), std::string::npos) << table.out;
  const std::string random = "bench search --recorded " + hand().string() +
                             " --strategy random --seeds 6 --max-configs 3 --json";
  CliRun r1 = kiln(random), r2 = kiln(random);
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_EQ(r1.json().at(0).at("time_curves"), r2.json().at(0).at("time_curves"));

  // Each point of the configs curves has the mean over seeds beside the
  // quartiles: the same every seed for the exhaustive order; for random
  // draws, the average of six seeds' first configs, each 0 (D, E), 0.25
  // (A), 0.5 (B) or 1 (C): a multiple of 1/24 from 0 to 1.
  for (const nlohmann::json& p : file.at("strategies").at("exhaustive"))
    EXPECT_DOUBLE_EQ(p.at("mean").get<double>(), p.at("median").get<double>()) << p.dump();
  const nlohmann::json r1_json = r1.json();  // a temporary would die before the loop's body
  for (const nlohmann::json& p : r1_json.at(0).at("strategies").at("random")) {
    const double quarters_of_sixths = p.at("mean").get<double>() * 24;
    EXPECT_NEAR(quarters_of_sixths, std::round(quarters_of_sixths), 1e-9) << p.dump();
    EXPECT_GE(quarters_of_sixths, 0) << p.dump();
    EXPECT_LE(quarters_of_sixths, 24) << p.dump();
  }

  // Beside them, each seed's value in seed order and the shares of seeds
  // reaching the goal's 0.90 and 0.95 (here: those whose first config is C).
  // --first-seed 4 --seeds 3 replays seeds 4, 5, 6: the last three of the six.
  const std::string random_from_4 =
      "bench search --recorded " + hand().string() +
      " --strategy random --seeds 3 --first-seed 4 --max-configs 3 --json";
  CliRun later = kiln(random_from_4);
  ASSERT_EQ(later.exit_code, 0) << later.err;
  const nlohmann::json later_json = later.json();
  EXPECT_EQ(later_json.at(0).at("first_seed"), 4);
  EXPECT_EQ(r1_json.at(0).at("first_seed"), 1);
  const nlohmann::json& six = r1_json.at(0).at("strategies").at("random");
  const nlohmann::json& three = later_json.at(0).at("strategies").at("random");
  ASSERT_EQ(six.size(), three.size());
  for (std::size_t i = 0; i < six.size(); ++i) {
    const std::vector<double> all = six[i].at("per_seed").get<std::vector<double>>();
    ASSERT_EQ(all.size(), 6u) << six[i].dump();
    EXPECT_EQ(three[i].at("per_seed").get<std::vector<double>>(),
              std::vector<double>(all.begin() + 3, all.end()))
        << six[i].dump() << three[i].dump();
    double sum = 0, at_c = 0;
    for (double f : all) {
      EXPECT_TRUE(f == 0 || f == 0.25 || f == 0.5 || f == 1) << f;
      sum += f;
      at_c += f == 1 ? 1 : 0;
    }
    EXPECT_DOUBLE_EQ(six[i].at("mean").get<double>(), sum / 6);
    EXPECT_DOUBLE_EQ(six[i].at("reaching_0.90").get<double>(), at_c / 6);
    EXPECT_DOUBLE_EQ(six[i].at("reaching_0.95").get<double>(), at_c / 6);
  }
  for (const nlohmann::json& p : file.at("strategies").at("exhaustive")) {
    EXPECT_EQ(p.at("per_seed").size(), 2u) << p.dump();
    const double reach = p.at("median").get<double>() >= 0.95 ? 1.0 : 0.0;
    EXPECT_DOUBLE_EQ(p.at("reaching_0.95").get<double>(), reach) << p.dump();
  }
  CliRun zero = kiln(random + " --first-seed 0");
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE(zero.err.find("--first-seed"), std::string::npos) << zero.err;
}

// --trace writes every replayed measurement, one JSON object a line, in the
// order measured: the hand file's exhaustive order is A B C D E, so each
// seed's lines carry 0.25, 0.5, 1, 0 (D fails to compile), 0 (E fails to
// run) and the running best; random draws' first lines agree with the JSON
// curves' per-seed values.
// bench/search_goal_shares.py, which the search variants of
// docs/lab/search-*-journal.md were judged with, reads `bench search
// --json`: in a five-config space the points up to 5% are all the first
// config, A at 0.25 of the optimum, so no seed reaches 0.90 or 0.95 there.
TEST_F(TuneRecordedCli, GoalSharesScriptReadsTheSearchReport) {
  const fs::path report = dir_ / "shares.json";
  CliRun run = kiln("bench search --recorded " + hand().string() +
                    " --strategy exhaustive --seeds 2 --max-configs 5 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ofstream(report) << run.out;
  const CommandRun shares = run_command("python3 " KILN_SOURCE_DIR "/bench/search_goal_shares.py " +
                                        report.string() + " 2>&1");
  ASSERT_EQ(shares.exit_code, 0) << shares.out;
  EXPECT_NE(shares.out.find("hand exhaustive: reaching 0.90 at 1% 0.00, 0.95 at 2% 0.00; median "
                            "at 0.5/1/2/5% 0.250/0.250/0.250/0.250"),
            std::string::npos)
      << shares.out;
}

// bench/search_cross_device.py, behind the warm-start bound of
// docs/lab/search-spaces-journal.md ("What the whole space says"): another
// device ranks D (2,2) first, B (1,2) second, A, C; on the hand file D
// failed (0), B is at 0.5 of the optimum and C is the optimum, so its
// fastest 1 / 3 / 10 hold 0.000 / 0.500 / 1.000, and so does the mean rank
// over that one device. A file of other parameters is refused.
TEST_F(TuneRecordedCli, CrossDeviceScriptLooksTheOtherWinnersUp) {
  const fs::path other = dir_ / "other.json", wrong = dir_ / "wrong.json";
  std::ofstream(other) << R"({"tune_params_keys": ["x", "y"], "cache": {
    "1,1": {"x": 1, "y": 1, "time": 3.0}, "1,2": {"x": 1, "y": 2, "time": 2.0},
    "2,1": {"x": 2, "y": 1, "time": 5.0}, "2,2": {"x": 2, "y": 2, "time": 1.0},
    "2,3": {"x": 2, "y": 3, "time": "InvalidConfig"}}})";
  std::ofstream(wrong) << R"({"tune_params_keys": ["z"], "cache": {
    "1": {"z": 1, "time": 1.0}}})";
  const std::string script = "python3 " KILN_SOURCE_DIR "/bench/search_cross_device.py ";
  const CommandRun run = run_command(script + hand().string() + " " + other.string() + " 2>&1");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find(other.string() + ": 0.000 / 0.500 / 1.000"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("by mean rank over all of them: 0.000 / 0.500 / 1.000"), std::string::npos)
      << run.out;
  const CommandRun refused = run_command(script + hand().string() + " " + wrong.string() + " 2>&1");
  EXPECT_NE(refused.exit_code, 0) << refused.out;
  EXPECT_NE(refused.out.find("give recorded spaces of one kernel"), std::string::npos)
      << refused.out;
}

// --warm-from: another device's recorded space of the hand kernel ranks C
// (2,1) first, so a warm replay measures it right after the default (A,
// (1,1)) and holds the optimum at 2 configs, where a cold exhaustive one
// holds B's 0.5. A file of the replayed device itself is left out, saying so.
TEST_F(TuneRecordedCli, WarmFromAnotherDevicesFileMeasuresItsFastestFirst) {
  const fs::path other = dir_ / "other.json";
  std::ofstream(other) << R"({"device_name": "Other GPU", "kernel_name": "hand",
    "tune_params_keys": ["x", "y"], "tune_params": {"x": [1, 2], "y": [1, 2, 3]}, "cache": {
    "2,1": {"x": 2, "y": 1, "time": 1.0}, "2,3": {"x": 2, "y": 3, "time": 2.0},
    "1,2": {"x": 1, "y": 2, "time": 3.0}, "1,1": {"x": 1, "y": 1, "time": 4.0},
    "2,2": {"x": 2, "y": 2, "time": "InvalidConfig"}}})";
  const std::string replay = "tune --recorded " + hand().string() + " --search exhaustive ";
  CliRun warm = kiln(replay + "--max-configs 2 --warm-from " + other.string() + " --json");
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  nlohmann::json j = warm.json();
  EXPECT_DOUBLE_EQ(j.at("fraction_of_optimum").get<double>(), 1.0);
  EXPECT_EQ(j.at("recorded").at("warm_started"), 1);
  EXPECT_EQ(j.at("recorded").at("warm_from"), nlohmann::json::array({other.string()}));
  EXPECT_EQ(j.at("stats").at("warm_started"), 1);
  CliRun cold = kiln(replay + "--max-configs 2 --json");
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_DOUBLE_EQ(cold.json().at("fraction_of_optimum").get<double>(), 0.5);
  EXPECT_EQ(cold.json().at("recorded").at("warm_started"), 0);

  // The replayed file, or another file of its device: the answer, not a
  // warm start.
  const fs::path twin = dir_ / "twin.json";
  fs::copy_file(hand(), twin);
  CliRun same = kiln(replay + "--max-configs 2 --warm-from " + twin.string() + " --warm-from " +
                     hand().string() + " --json");
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.json().at("recorded").at("warm_started"), 0);
  EXPECT_NE(same.err.find(twin.string() + ": recorded on the replayed device (Hand GPU)"),
            std::string::npos)
      << same.err;
  EXPECT_NE(same.err.find(hand().string() + ": the replayed file itself"), std::string::npos)
      << same.err;
  // The warm-start flags of a replay act on --warm-from's files alone.
  CliRun lone = kiln(replay + "--warm-start 2");
  EXPECT_EQ(lone.exit_code, 2);
  EXPECT_NE(lone.err.find("--warm-from"), std::string::npos) << lone.err;

  // kiln-lab bench search: the same seed first in every replay, for each file
  // its own left out.
  CliRun bench = kiln("bench search --recorded " + hand().string() +
                      " --strategy exhaustive --strategy random --seeds 3 --max-configs 1 "
                      "--warm-from " +
                      other.string() + " " + hand().string() + " --json");
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  const nlohmann::json file = bench.json().at(0);
  EXPECT_EQ(file.at("warm_seeds").at(0), (nlohmann::json{{"x", 2}, {"y", 1}}));
  EXPECT_EQ(file.at("warm_from"), nlohmann::json::array({other.string()}));
  EXPECT_EQ(file.at("warm_from_left_out").size(), 1u);
  for (const char* strategy : {"exhaustive", "random"})
    for (const auto& point : file.at("strategies").at(strategy))
      EXPECT_DOUBLE_EQ(point.at("median").get<double>(), 1.0) << strategy;
}

TEST_F(TuneRecordedCli, BenchSearchTracesEveryMeasurementInOrder) {
  auto read_lines = [](const fs::path& path) {
    std::vector<nlohmann::json> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  };
  const fs::path trace = dir_ / "trace.jsonl";
  CliRun run =
      kiln("bench search --recorded " + hand().string() +
           " --strategy exhaustive --seeds 2 --max-configs 5 --json --trace " + trace.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<nlohmann::json> lines = read_lines(trace);
  ASSERT_EQ(lines.size(), 10u);
  const std::vector<std::pair<int, int>> order = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 3}};
  const std::vector<double> own = {0.25, 0.5, 1, 0, 0}, best = {0.25, 0.5, 1, 1, 1};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json& l = lines[i];
    const std::size_t k = i % 5;
    EXPECT_EQ(l.at("file"), hand().string());
    EXPECT_EQ(l.at("strategy"), "exhaustive");
    EXPECT_EQ(l.at("seed"), 1 + i / 5) << l.dump();
    EXPECT_EQ(l.at("index"), k) << l.dump();
    EXPECT_EQ(l.at("config").at("x"), order[k].first) << l.dump();
    EXPECT_EQ(l.at("config").at("y"), order[k].second) << l.dump();
    EXPECT_DOUBLE_EQ(l.at("fraction").get<double>(), own[k]) << l.dump();
    EXPECT_DOUBLE_EQ(l.at("best_so_far").get<double>(), best[k]) << l.dump();
  }

  // bench/search_trace_summary.py reads it back: every seed reaches the
  // optimum C at its third config, and its first config, A (1,1), already
  // differs from C (2,1) in no more than two parameters.
  const CommandRun summary = summarise(trace);
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  EXPECT_NE(summary.out.find("exhaustive, 2 seeds, 5 configs"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("configs to reach 1.00: median 3 [3, 3]"), std::string::npos)
      << summary.out;
  EXPECT_NE(summary.out.find("within 2 parameters of the optimum: median 1 [1, 1]"),
            std::string::npos)
      << summary.out;

  // A trace naming a recorded space that is not there: the script says which.
  const fs::path stray = dir_ / "stray.jsonl";
  std::ofstream(stray) << R"({"file": "gone.json", "strategy": "random", "seed": 1, "index": 0, )"
                          R"("config": {"x": 1, "y": 1}, "fraction": 0.25, "best_so_far": 0.25})"
                       << "\n";
  const CommandRun lost = run_command(
      "cd " + dir_.string() + " && python3 " KILN_SOURCE_DIR "/bench/search_trace_summary.py " +
      stray.string() + " 2>&1");
  EXPECT_EQ(lost.exit_code, 1) << lost.out;
  EXPECT_NE(lost.out.find("cannot read the recorded space gone.json"), std::string::npos)
      << lost.out;

  const fs::path random_trace = dir_ / "random.jsonl";
  CliRun random =
      kiln("bench search --recorded " + hand().string() +
           " --strategy random --seeds 4 --first-seed 3 --max-configs 3 --json --trace " +
           random_trace.string());
  ASSERT_EQ(random.exit_code, 0) << random.err;
  const std::vector<nlohmann::json> drawn = read_lines(random_trace);
  ASSERT_EQ(drawn.size(), 12u);
  // Every point of a 5-config space's table is its first config.
  const std::vector<double> per_seed = random.json()
                                           .at(0)
                                           .at("strategies")
                                           .at("random")
                                           .at(0)
                                           .at("per_seed")
                                           .get<std::vector<double>>();
  ASSERT_EQ(per_seed.size(), 4u);
  for (std::size_t s = 0; s < 4; ++s) {
    double running = 0;
    std::vector<nlohmann::json> seen;
    for (std::size_t k = 0; k < 3; ++k) {
      const nlohmann::json& l = drawn[s * 3 + k];
      EXPECT_EQ(l.at("seed"), 3 + s) << l.dump();
      EXPECT_EQ(l.at("index"), k) << l.dump();
      running = std::max(running, l.at("fraction").get<double>());
      EXPECT_DOUBLE_EQ(l.at("best_so_far").get<double>(), running) << l.dump();
      for (const nlohmann::json& c : seen) EXPECT_NE(c, l.at("config")) << "measured twice";
      seen.push_back(l.at("config"));
    }
    EXPECT_DOUBLE_EQ(drawn[s * 3].at("best_so_far").get<double>(), per_seed[s]);
  }

  // So does a plot, and a plot of a one-config budget has no NaN in it (its
  // log axis had no width).
  CliRun no_plot = kiln("bench search --recorded " + hand().string() +
                        " --strategy random --seeds 1 --plot " + (dir_ / "no" / "p.svg").string());
  EXPECT_EQ(no_plot.exit_code, 2);
  EXPECT_NE(no_plot.err.find("cannot write the plot to " + (dir_ / "no" / "p.svg").string()),
            std::string::npos)
      << no_plot.err;
  CliRun one =
      kiln("bench search --recorded " + hand().string() +
           " --strategy random --seeds 2 --max-configs 1 --plot " + (dir_ / "one.svg").string());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string svg = testing::read_file(dir_ / "one.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;

  // A trace and a plot at one path (however spelled) would leave only the
  // plot, and an output at a recorded space's path would empty it before it
  // is read: both are refused before anything runs.
  const fs::path both = dir_ / "both.out";
  CliRun same =
      kiln("bench search --recorded " + hand().string() + " --strategy random --seeds 1 --trace " +
           both.string() + " --plot " + (dir_ / "." / "both.out").string());
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("are the same file"), std::string::npos) << same.err;
  EXPECT_FALSE(fs::exists(both));
  const fs::path space = hand();
  CliRun onto = kiln("bench search --recorded " + space.string() +
                     " --strategy random --seeds 1 --plot " + space.string());
  EXPECT_EQ(onto.exit_code, 2);
  EXPECT_NE(onto.err.find("--plot " + space.string() + " is the recorded space"), std::string::npos)
      << onto.err;
  EXPECT_EQ(testing::read_file(space), kHandFile) << "the space is untouched";

  // A trace that cannot be written stops the run before it starts, saying where.
  CliRun bad = kiln("bench search --recorded " + hand().string() +
                    " --strategy random --seeds 1 --trace " + (dir_ / "no" / "t.jsonl").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("trace"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find((dir_ / "no" / "t.jsonl").string()), std::string::npos) << bad.err;
}

TEST_F(TuneRecordedCli, ABadFileIsAnErrorNamingTheFileAndTheProblem) {
  const fs::path junk = dir_ / "junk.json";
  std::ofstream(junk) << "{not json";
  CliRun run = kiln("tune --recorded " + junk.string() + " --json");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_NE(run.err.find(junk.string()), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("not a JSON object"), std::string::npos) << run.err;

  const fs::path no_cache = dir_ / "no_cache.json";
  std::ofstream(no_cache) << R"({"tune_params_keys": ["x"], "tune_params": {"x": [1]}})";
  run = kiln("tune --recorded " + no_cache.string());
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(no_cache.string()), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("\"cache\""), std::string::npos) << run.err;

  run = kiln("tune --recorded " + (dir_ / "absent.json").string());
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("absent.json"), std::string::npos) << run.err;

  run = kiln("tune --recorded " + hand().string() + " --search nonesuch");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  // Without --recorded, a shape is still required.
  run = product("tune --kernel gemm_f32");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--shape"), std::string::npos) << run.err;
}

// A file ranked by GFLOP/s (Kernel Tuner's hotspot files are): 4 time steps
// per launch run slower yet do 4 times the work, so the winner is the
// GFLOP/s optimum, not the fastest launch, and the report says so.
TEST_F(TuneRecordedCli, AFileRankedByGflopsTunesToItsGflopsOptimum) {
  const fs::path f = dir_ / "steps.json";
  std::ofstream(f) << R"({"device_name": "Test GPU", "kernel_name": "steps", "objective": "GFLOP/s",
    "tune_params_keys": ["steps"], "tune_params": {"steps": [1, 4]},
    "cache": {
      "1": {"steps": 1, "time": 0.8, "GFLOP/s": 12.5, "compile_time": 100, "benchmark_time": 10},
      "4": {"steps": 4, "time": 2.0, "GFLOP/s": 20.0, "compile_time": 100, "benchmark_time": 10}}})";
  CliRun run = kiln("tune --recorded " + f.string() + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = run.json();
  EXPECT_EQ(j.at("winner").at("config"), (nlohmann::json{{"steps", 4}}));
  EXPECT_DOUBLE_EQ(j.at("fraction_of_optimum").get<double>(), 1.0);
  const nlohmann::json& rec = j.at("recorded");
  EXPECT_EQ(rec.at("objective"), "GFLOP/s");
  EXPECT_EQ(rec.at("higher_is_better"), true);
  EXPECT_DOUBLE_EQ(rec.at("optimum").get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(rec.at("best_objective").get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(rec.at("best_run_ms").get<double>(), 2.0);

  CliRun text = kiln("tune --recorded " + f.string() + " --search exhaustive --max-configs 1");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(
      text.out.find("ranked by GFLOP/s (higher is better), optimum 20 GFLOP/s (run time 2 ms)"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("best found: steps=1 at 12.5 GFLOP/s (run time 0.8 ms) = 0.625 of the "
                          "optimum"),
            std::string::npos)
      << text.out;

  CliRun bench = kiln("bench search --recorded " + f.string() + " --seeds 1 --json");
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_EQ(bench.json().at(0).at("objective"), "GFLOP/s") << bench.out;

  // An objective Kiln cannot tell the direction of is refused, with the fix.
  std::string unknown;
  {
    std::ifstream in(f);
    unknown.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string gflops = "\"objective\": \"GFLOP/s\"";
  unknown.replace(unknown.find(gflops), gflops.size(), "\"objective\": \"score\"");
  std::ofstream(f) << unknown;
  run = kiln("tune --recorded " + f.string());
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("objective_higher_is_better"), std::string::npos) << run.err;
}

// --search runs its check at each occurrence (for --search list), which
// cleared CLI11's count: a second --search silently replaced the first
// where every other option refuses a repeat.
TEST_F(TuneRecordedCli, ASecondSearchIsRefusedNamingBoth) {
  CliRun run = kiln("tune --recorded " + hand().string() + " --search random --search exhaustive");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_NE(run.err.find("--search"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("given 2 times (random, exhaustive)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("give one search strategy"), std::string::npos) << run.err;
  // Once is fine, and `kiln tune --search list` still prints and exits 0.
  EXPECT_EQ(kiln("tune --recorded " + hand().string() + " --search random").exit_code, 0);
  EXPECT_EQ(product("tune --search list").exit_code, 0);
}

// A report stdout cannot take (a full disk) is a failed run: kiln exited 0
// with the report or JSON lost.
TEST_F(TuneRecordedCli, AnOutputStdoutCannotTakeExitsOne) {
  if (!fs::exists("/dev/full")) KILN_SKIP(Skip::kHost) << "no /dev/full";
  for (const std::string& args :
       {"tune --recorded " + hand().string() + " --json", "tune --recorded " + hand().string(),
        "bench search --recorded " + hand().string() + " --strategy random --seeds 1"}) {
    CliRun run = kiln(args + " >/dev/full");
    EXPECT_EQ(run.exit_code, 1) << args;
    EXPECT_NE(run.err.find("kiln-lab: writing the output to stdout failed"), std::string::npos)
        << args << ": " << run.err;
  }
  CliRun list = product("tune --search list >/dev/full");
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_NE(list.err.find("kiln: writing the output to stdout failed"), std::string::npos)
      << list.err;
}

// A real CPU tuning, exported in Kernel Tuner's layout, replays: every
// config measured comes back, and the exhaustive replay finds the fastest.
TEST_F(TuneRecordedCli, ReplaysKilnsOwnKernelTunerExport) {
  CliRun tuned =
      product("tune --kernel fused_add_rmsnorm --shape rows=24,hidden=136 --max-configs 4 --json");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const nlohmann::json t = tuned.json();
  const fs::path file = dir_ / "export.json";
  CliRun exported = product("cache export --format kernel-tuner --kernel " +
                            t.at("template").get<std::string>() + " " + file.string());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  // The family's name is not the record's: the error names the records.
  CliRun family = product("cache export --format kernel-tuner --kernel fused_add_rmsnorm " +
                          (dir_ / "family.json").string());
  EXPECT_EQ(family.exit_code, 1);
  EXPECT_NE(family.err.find("holds records of " + t.at("template").get<std::string>()),
            std::string::npos)
      << family.err;
  // Each config's costs are the real run's: its share of the compile and
  // its benchmark's wall time, in milliseconds (before, both were 0, and a
  // replay of the export took no simulated time at all).
  std::ifstream exported_in(file);
  const nlohmann::json kt = nlohmann::json::parse(exported_in);
  double benchmark_ms = 0;
  for (const auto& [id, entry] : kt.at("cache").items()) {
    if (!entry.at("time").is_number()) continue;
    EXPECT_GT(entry.at("compile_time").get<double>(), 0) << id;
    EXPECT_GT(entry.at("benchmark_time").get<double>(), 0) << id;
    benchmark_ms += entry.at("benchmark_time").get<double>();
  }
  for (const auto& row : t.at("configs")) {
    if (measured(row)) {
      EXPECT_GT(row.at("benchmark_s").get<double>(), 0) << row.dump();
    }
  }
  CliRun replay = kiln("tune --recorded " + file.string() + " --json");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const nlohmann::json r = replay.json();
  // One simulated benchmark worker spends each config's recorded cost.
  EXPECT_NEAR(r.at("stats").at("benchmark_seconds").get<double>(), benchmark_ms / 1e3,
              1e-6 + benchmark_ms * 1e-6);
  EXPECT_GE(r.at("simulated_wall_s").get<double>(), benchmark_ms / 1e3);
  EXPECT_EQ(r.at("configs").size(), t.at("configs").size());
  EXPECT_EQ(count_status(r, "ok"), count_status(t, "ok"));
  EXPECT_DOUBLE_EQ(r.at("fraction_of_optimum").get<double>(), 1.0);
  // The fastest config of the real run (rows are fastest first) is the best
  // the replay found, at the time the real run measured.
  ASSERT_TRUE(measured(t.at("configs").at(0)));
  EXPECT_EQ(r.at("recorded").at("best"), t.at("configs").at(0).at("config"));
  EXPECT_NEAR(r.at("recorded").at("best_ms").get<double>(),
              t.at("configs").at(0).at("median_s").get<double>() * 1e3, 1e-9);
}

}  // namespace
}  // namespace kiln::testing
