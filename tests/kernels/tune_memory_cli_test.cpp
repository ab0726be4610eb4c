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

TEST_F(TuneMemoryCli, ARetuneSkipsWhatFailedAndTheFlagsReachTheRun) {
  const std::string source = broken_transpose(dir_);
  ASSERT_FALSE(source.empty()) << "the example changed: update this test";
  const std::string tune = "tune --template " + source + " --space " + kMemoryTestKernelDir +
                           "space.json --entry 'example::transpose<{TILE},{STAGED}>' "
                           "--shape M=40,N=72 --json";
  CliRun first = kiln(tune + " --finalists 2 --warm-start 0");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json r = first.json();
  EXPECT_EQ(r["settings"]["finalists"], 2);
  EXPECT_EQ(r["settings"]["warm_start"], 0);
  EXPECT_EQ(testing::count_status(r, "compile_failed"), 1u) << r.dump(2);
  EXPECT_LE(r["stats"]["finalists"].get<int>(), 2);
  EXPECT_EQ(r["stats"]["skipped_failed_before"], 0);
  const std::size_t configs = r["configs"].size();

  // Again, retuned: the broken config is remembered and not compiled.
  CliRun second = kiln(tune + " --retune --finalists 0");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const nlohmann::json s = second.json();
  EXPECT_EQ(s["settings"]["finalists"], 0);
  EXPECT_EQ(s["settings"]["warm_start"], 3) << "the default";
  EXPECT_EQ(s["stats"]["skipped_failed_before"], 1);
  EXPECT_EQ(s["stats"]["finalists"], 0);
  EXPECT_EQ(testing::count_status(s, "compile_failed"), 0u) << s.dump(2);
  EXPECT_EQ(s["configs"].size(), configs - 1);

  // The table says so too.
  CliRun text = kiln("tune --template " + source + " --space " + kMemoryTestKernelDir +
                     "space.json --entry 'example::transpose<{TILE},{STAGED}>' "
                     "--shape M=40,N=72 --retune");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("memory: 1 skipped (failed before)"), std::string::npos) << text.out;
}

TEST_F(TuneMemoryCli, CountsOutsideTheirRangeAreUsageErrors) {
  for (const char* flag : {"--finalists -1", "--warm-start -2", "--finalists x"}) {
    CliRun run = kiln(std::string("tune --kernel gemm_f32 --shape M=8,N=8,K=8 ") + flag);
    EXPECT_EQ(run.exit_code, 2) << flag << ": " << run.err;
  }
}

}  // namespace
}  // namespace kiln
