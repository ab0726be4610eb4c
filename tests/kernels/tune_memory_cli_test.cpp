// `kiln tune --warm-start N --finalists N` and the failures a rerun skips,
// end to end: the real executable in child processes over a fresh cache
// directory, real Clang compiles on the CPU backend. The user kernel
// example with one config made to fail its compile.
#include <fstream>

#include "cli_runner.hpp"

namespace kiln {
namespace {

using testing::CliRun;
using TuneMemoryCli = testing::CliTest;

const std::string kMemoryTestKernelDir = std::string(KILN_SOURCE_DIR) + "/examples/user_kernel/";

// The example's transpose, but TILE = 32 staged does not compile.
std::string broken_transpose(const std::filesystem::path& dir) {
  std::string source = testing::read_file(kMemoryTestKernelDir + "transpose.cpp");
  const std::string body = "  if (STAGED) {";
  const auto at = source.find(body);
  if (at == std::string::npos) return "";
  source.insert(at, "  static_assert(!(TILE == 32 && STAGED), \"TILE 32 staged is broken\");\n");
  const std::filesystem::path file = dir / "transpose.cpp";
  std::ofstream(file) << source;
  return file.string();
}

// The tuning records of the test's cache, removed: its remembered failures
// stay (a record lost to a prune, or a cache copied in part).
void remove_records(const std::filesystem::path& cache) {
  for (const auto& e : std::filesystem::directory_iterator(cache / "tuning"))
    if (e.is_regular_file() && e.path().extension() == ".json") std::filesystem::remove(e.path());
}

std::string tune_command(const std::string& source) {
  return "tune --template " + source + " --space " + kMemoryTestKernelDir +
         "space.json --entry 'example::transpose<{TILE},{STAGED}>' --shape M=40,N=72";
}

TEST_F(TuneMemoryCli, ARerunSkipsWhatFailedARetuneMeasuresItAgain) {
  const std::string source = broken_transpose(dir_);
  ASSERT_FALSE(source.empty()) << "the example changed: update this test";
  const std::string tune = tune_command(source) + " --json";
  CliRun first = kiln(tune + " --finalists 2 --warm-start 0");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json r = first.json();
  EXPECT_EQ(r["settings"]["finalists"], 2);
  EXPECT_EQ(r["settings"]["warm_start"], 0);
  EXPECT_EQ(testing::count_status(r, "compile_failed"), 1u) << r.dump(2);
  EXPECT_LE(r["stats"]["finalists"].get<int>(), 2);
  EXPECT_EQ(r["stats"]["skipped_failed_before"], 0);
  const std::size_t configs = r["configs"].size();

  // Again, its record gone: the broken config is remembered and not
  // compiled, and the report lists it with its outcome and age.
  remove_records(dir_ / "cache");
  CliRun second = kiln(tune + " --finalists 0");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const nlohmann::json s = second.json();
  EXPECT_EQ(s["settings"]["finalists"], 0);
  EXPECT_EQ(s["settings"]["warm_start"], 3) << "the default";
  EXPECT_EQ(s["stats"]["skipped_failed_before"], 1);
  EXPECT_EQ(s["stats"]["finalists"], 0);
  EXPECT_EQ(testing::count_status(s, "compile_failed"), 0u) << s.dump(2);
  EXPECT_EQ(s["configs"].size(), configs - 1);
  ASSERT_EQ(s["skipped"].size(), 1u) << s.dump(2);
  EXPECT_EQ(s["skipped"][0]["config"]["TILE"], 32);
  EXPECT_EQ(s["skipped"][0]["outcome"], "compile_failed");
  EXPECT_GE(s["skipped"][0]["age_s"].get<int>(), 0);
  EXPECT_NE(s["skipped"][0]["reason"].get<std::string>().find("TILE 32 staged is broken"),
            std::string::npos);

  // The table says so too, config by config.
  remove_records(dir_ / "cache");
  CliRun text = kiln(tune_command(source));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("memory: 1 skipped (failed before)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("skipped STAGED=true,TILE=32: compile_failed"), std::string::npos)
      << text.out;

  // --retune measures every config again, the remembered failure included.
  CliRun retune = kiln(tune + " --retune");
  ASSERT_EQ(retune.exit_code, 0) << retune.err;
  const nlohmann::json t = retune.json();
  EXPECT_EQ(t["stats"]["skipped_failed_before"], 0);
  EXPECT_EQ(testing::count_status(t, "compile_failed"), 1u) << t.dump(2);
  // So does KILN_RETUNE=1, for a user who cannot pass the flag.
  remove_records(dir_ / "cache");
  CliRun env = kiln_with("", tune, "KILN_RETUNE=1");
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(testing::count_status(env.json(), "compile_failed"), 1u) << env.out;
}

TEST_F(TuneMemoryCli, AHeaderCreatedWhereTheCompilerLookedEndsTheRememberedFailure) {
  // The template names a header by a path where none is yet: every config
  // fails, and the failures are remembered.
  const std::filesystem::path header = dir_ / "inc" / "extra.h";
  std::string source = "#include \"" + header.string() + "\"\n" +
                       testing::read_file(kMemoryTestKernelDir + "transpose.cpp");
  const std::filesystem::path file = dir_ / "transpose.cpp";
  std::ofstream(file) << source;
  const std::string tune = tune_command(file.string()) + " --json";
  CliRun first = kiln(tune);
  EXPECT_EQ(first.exit_code, 1) << "no config ran: " << first.out;
  EXPECT_EQ(first.json()["source"], "failed");
  CliRun second = kiln(tune);
  EXPECT_EQ(second.json()["source"], "failed");
  EXPECT_GT(second.json()["skipped"].size(), 0u) << "remembered while the header is missing";
  // The header is created: the same command compiles and tunes.
  std::filesystem::create_directories(header.parent_path());
  std::ofstream(header) << "// the header, now here\n";
  CliRun third = kiln(tune);
  ASSERT_EQ(third.exit_code, 0) << third.out << third.err;
  const nlohmann::json r = third.json();
  EXPECT_EQ(r["source"], "tuned");
  EXPECT_EQ(r["stats"]["skipped_failed_before"], 0);
  ASSERT_GT(r["measured_again"].size(), 0u) << r.dump(2);
  EXPECT_NE(r["measured_again"][0]["why"].get<std::string>().find(header.string()),
            std::string::npos);
  CliRun verify = kiln("cache verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(TuneMemoryCli, AHeaderBesideTheTemplateIsNotSearchedTheReportSaysHowAndNothingLoops) {
  // The header sits beside the template, which is compiled from memory: the
  // compiler does not look there (only the spec's include_dirs).
  std::ofstream(dir_ / "extra.h") << "// beside the template\n";
  const std::filesystem::path file = dir_ / "transpose.cpp";
  std::ofstream(file) << "#include \"extra.h\"\n"
                      << testing::read_file(kMemoryTestKernelDir + "transpose.cpp");
  const std::string tune = tune_command(file.string()) + " --json";
  const nlohmann::json first = kiln(tune).json();
  EXPECT_EQ(first["source"], "failed");
  ASSERT_TRUE(first.contains("hints")) << first.dump(2);
  const std::string hint = first["hints"][0];
  EXPECT_NE(hint.find("include_dirs"), std::string::npos) << hint;
  EXPECT_NE(hint.find((dir_ / "extra.h").string()), std::string::npos) << hint;
  // The header was there all along: it witnesses nothing, so the failure is
  // remembered, not forgotten and failed again on every run.
  const nlohmann::json second = kiln(tune).json();
  EXPECT_GT(second["skipped"].size(), 0u) << second.dump(2);
  EXPECT_TRUE(second["measured_again"].empty()) << second.dump(2);
  EXPECT_TRUE(second.contains("hints")) << "the skipped configs' missing headers give it too";
}

TEST_F(TuneMemoryCli, TheCacheListsRememberedFailuresAndForgetsThemWithoutTheRecords) {
  const std::string source = broken_transpose(dir_);
  ASSERT_FALSE(source.empty());
  ASSERT_EQ(kiln(tune_command(source)).exit_code, 0);
  CliRun ls = kiln("cache ls --json");
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const nlohmann::json listed = ls.json();
  ASSERT_EQ(listed["failures"].size(), 1u) << listed.dump(2);
  const std::string kernel = listed["failures"][0]["kernel"];
  EXPECT_EQ(listed["failures"][0]["failed"][0]["outcome"], "compile_failed");
  EXPECT_EQ(listed["tuning_records"].size(), 1u);
  CliRun ls_text = kiln("cache ls");
  EXPECT_NE(ls_text.out.find("Remembered failures"), std::string::npos) << ls_text.out;
  EXPECT_NE(ls_text.out.find("STAGED=true,TILE=32  compile_failed"), std::string::npos)
      << ls_text.out;
  CliRun stats = kiln("cache stats --json");
  EXPECT_EQ(stats.json()["tuning"]["failed_configs"], 1) << stats.out;

  CliRun other = kiln("cache forget --failures --kernel no_such_kernel");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find(kernel), std::string::npos)
      << "names the kernels there are: " << other.err;
  EXPECT_EQ(kiln("cache forget").exit_code, 2) << "what to forget is named";
  CliRun forget = kiln("cache forget --failures --kernel " + kernel + " --json");
  ASSERT_EQ(forget.exit_code, 0) << forget.err;
  EXPECT_EQ(forget.json()["forgotten_configs"], 1);
  const nlohmann::json after = kiln("cache ls --json").json();
  EXPECT_TRUE(after["failures"].empty());
  EXPECT_EQ(after["tuning_records"].size(), 1u) << "good records are kept";
  // The record answers; with it gone, the broken config is measured again.
  remove_records(dir_ / "cache");
  CliRun again = kiln(tune_command(source) + " --json");
  EXPECT_EQ(testing::count_status(again.json(), "compile_failed"), 1u);
}

TEST_F(TuneMemoryCli, CountsOutsideTheirRangeAreUsageErrors) {
  for (const char* flag : {"--finalists -1", "--warm-start -2", "--finalists x"}) {
    CliRun run = kiln(std::string("tune --kernel gemm_f32 --shape M=8,N=8,K=8 ") + flag);
    EXPECT_EQ(run.exit_code, 2) << flag << ": " << run.err;
  }
}

}  // namespace
}  // namespace kiln
