// `kiln-lab bench search`'s command line: a strategy or a file named twice is
// replayed once, a trace and a plot at one path are refused, a file it
// cannot read exits 2 as `kiln-lab tune --recorded` does, and simulated times
// read as times (a sub-second one printed as "0 s", and a file without
// costs as "(0.00x of serial)").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lab_cli.hpp"

namespace kiln::testing {
namespace {

// Three configs of 100 ms compile and 20 ms benchmark: 0.36 s one after another.
const char* kQuickFile = R"({
  "device_name": "Quick GPU", "kernel_name": "quick", "objective": "time",
  "tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3]},
  "cache": {
    "1": {"x": 1, "time": 3.0, "compile_time": 100, "benchmark_time": 20},
    "2": {"x": 2, "time": 1.0, "compile_time": 100, "benchmark_time": 20},
    "3": {"x": 3, "time": 2.0, "compile_time": 100, "benchmark_time": 20}
  }})";

// The same without any recorded cost.
const char* kFreeFile = R"({
  "device_name": "Free GPU", "kernel_name": "free", "objective": "time",
  "tune_params_keys": ["x"], "tune_params": {"x": [1, 2]},
  "cache": {"1": {"x": 1, "time": 3.0}, "2": {"x": 2, "time": 1.0}}})";

class BenchSearchCli : public testing::LabCliTest {
 protected:
  fs::path write(const std::string& name, const char* text) const {
    const fs::path f = dir_ / name;
    std::ofstream(f) << text;
    return f;
  }
};

TEST_F(BenchSearchCli, AStrategyNamedTwiceIsReplayedOnceWithANote) {
  CliRun run = kiln("bench search --recorded " + write("quick.json", kQuickFile).string() +
                    " --strategy random --strategy random --seeds 1 --max-configs 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("--strategy random is given twice"), std::string::npos) << run.err;
  const nlohmann::json t = run.json().at(0).at("time_curves").at("strategies");
  EXPECT_EQ(t.size(), 1u) << t.dump();
  CliRun table = kiln("bench search --recorded " + write("quick.json", kQuickFile).string() +
                      " --strategy random --strategy random --seeds 1 --max-configs 2");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const std::string& out = table.out;
  std::size_t rows = 0;
  for (std::size_t at = out.find("\n  random "); at != std::string::npos;
       at = out.find("\n  random ", at + 1))
    ++rows;
  EXPECT_EQ(rows, 2u) << out;  // one row against configs, one against time
}

// A recorded space named twice, however spelled, is replayed once, as a
// strategy is: it printed a second, identical table.
TEST_F(BenchSearchCli, AFileNamedTwiceIsReplayedOnceWithANote) {
  const fs::path quick = write("quick.json", kQuickFile);
  const fs::path again = dir_ / "." / "quick.json";
  CliRun run = kiln("bench search --recorded " + quick.string() + " " + again.string() +
                    " --strategy random --seeds 1 --max-configs 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("--recorded " + again.string() + " is given twice (as " + quick.string() +
                         "); replaying it once"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.json().size(), 1u) << run.out;
  // Two different files are both replayed.
  CliRun two = kiln("bench search --recorded " + quick.string() + " " +
                    write("free.json", kFreeFile).string() +
                    " --strategy random --seeds 1 --max-configs 2 --json");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.json().size(), 2u) << two.out;
  EXPECT_EQ(two.err.find("given twice"), std::string::npos) << two.err;
}

// A trace and a plot at one path relative to the working directory, before
// the file exists (t and ./t): weakly_canonical left t relative and made ./t
// absolute, so the clash went unseen and the plot overwrote the trace.
TEST_F(BenchSearchCli, ATraceAndAPlotAtOneRelativePathAreRefused) {
  const fs::path quick = write("quick.json", kQuickFile);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);  // kiln runs in the test's working directory
  CliRun run =
      kiln("bench search --recorded " + quick.string() +
           " --strategy random --seeds 1 --max-configs 2 --trace both.out --plot ./both.out");
  fs::current_path(cwd);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.err.find("--trace both.out and --plot ./both.out are the same file"),
            std::string::npos)
      << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "both.out"));
}

// An empty --plot or --trace was taken as none: the run said nothing and
// wrote nothing.
TEST_F(BenchSearchCli, AnEmptyPlotOrTracePathIsRefused) {
  const fs::path quick = write("quick.json", kQuickFile);
  for (const char* option : {"--plot", "--trace"}) {
    CliRun run = kiln("bench search --recorded " + quick.string() +
                      " --strategy random --seeds 1 --max-configs 2 " + option + " ''");
    EXPECT_EQ(run.exit_code, 2) << option << ": " << run.out;
    EXPECT_NE(run.err.find(std::string(option) + ": the file name is empty"), std::string::npos)
        << run.err;
  }
}

TEST_F(BenchSearchCli, AFileItCannotReadExitsTwoAsTuneDoes) {
  const fs::path junk = write("junk.json", "{not json");
  CliRun run = kiln("bench search --recorded " + junk.string() + " --strategy random");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find(junk.string()), std::string::npos) << run.err;
  EXPECT_EQ(kiln("tune --recorded " + junk.string()).exit_code, 2);

  // A bad file after a good one stops the run before the outputs are
  // opened: an existing plot was emptied, and the trace held the good
  // file's replays.
  const fs::path plot = write("old.svg", "<svg>old</svg>");
  const fs::path trace = dir_ / "t.jsonl";
  CliRun late = kiln("bench search --recorded " + write("quick.json", kQuickFile).string() + " " +
                     junk.string() + " --strategy random --seeds 1 --max-configs 2 --plot " +
                     plot.string() + " --trace " + trace.string());
  EXPECT_EQ(late.exit_code, 2) << late.err;
  EXPECT_TRUE(late.out.empty()) << late.out;
  EXPECT_EQ(testing::read_file(plot), "<svg>old</svg>");
  EXPECT_FALSE(fs::exists(trace));
}

TEST_F(BenchSearchCli, SubSecondSimulatedTimesReadAsMilliseconds) {
  CliRun run = kiln("bench search --recorded " + write("quick.json", kQuickFile).string() +
                    " --strategy exhaustive --seeds 1 --max-configs 3 --threads 1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find(" 0 s"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(Triton): 360 ms"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" ms"), std::string::npos) << run.out;
}

TEST_F(BenchSearchCli, AFileWithoutCostsShowsNoRatioToSerial) {
  CliRun run = kiln("bench search --recorded " + write("free.json", kFreeFile).string() +
                    " --strategy random --seeds 1 --max-configs 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("x of serial"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(Triton): 0 s"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace kiln::testing
