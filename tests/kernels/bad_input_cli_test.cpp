// Bad input to `kiln` never crashes, blocks or lies: sizes that overflow or
// do not fit the kernel's types, options out of their range, malformed
// environment variables, a config space its constraints empty. Each is
// checked with the real executable: exit code 2, a message naming the
// option or dimension and the limit, and nothing written to the cache.
#include "cli_runner.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;

const std::string kBadInputExample = std::string(KILN_SOURCE_DIR) + "/examples/user_kernel/";
const std::string kSmallGemm = "tune --kernel gemm_f32 --shape M=8,N=8,K=8 ";

struct Case {
  std::string args;
  std::vector<std::string> expected;  // every one appears in stderr
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class BadInput : public testing::CliTest {
 protected:
  // Exit 2, every expected text in stderr, nothing on stdout, nothing
  // cached (CliTest::expect_usage_error).
  void expect_usage_error(const Case& c) { CliTest::expect_usage_error(c.args, c.expected); }

  // The example transpose kernel's spec with `space` in place of its own.
  std::string spec_with_space(const std::string& name, const nlohmann::json& space) {
    nlohmann::json spec =
        nlohmann::json::parse(testing::read_file(kBadInputExample + "space.json"));
    spec["space"] = space;
    const fs::path path = dir_ / name;
    std::ofstream(path) << spec.dump(2);
    return "tune --template " + kBadInputExample + "transpose.cpp --space " + path.string() +
           " --entry 'example::transpose<{TILE},{STAGED}>' --shape M=40,N=72";
  }
};

// `--shape M=2147483648,N=2147483648` once wrapped `count * dtype_size` to a
// tiny buffer and segfaulted the tuner; an i32 scalar was narrowed.
TEST_F(BadInput, ShapesTooLargeAreUsageErrorsNamingTheDimension) {
  const Case cases[] = {
      {"tune --kernel gemm --backend cpu --shape M=2147483648,N=2147483648,K=8",
       {"M=2147483648, N=2147483648", "M*N*4 bytes for tensor 'C'", "overflows", "2^63-1"}},
      {"tune --kernel gemm_f32 --shape M=4294967296,N=4294967296,K=4294967296",
       {"M=4294967296, K=4294967296", "M*K*4 bytes for tensor 'A'", "overflows"}},
      // Fits 64 bits, not the kernel's `int m`.
      {"tune --kernel gemm_f32 --shape M=2147483648,N=8,K=8",
       {"M=2147483648", "argument 'M' (i32)", "-2147483648..2147483647"}},
      {"tune --kernel fused_add_rmsnorm --shape rows=8,hidden=3000000000",
       {"hidden=3000000000", "argument 'hidden' (i32)"}},
      // Fits every type, not any machine's memory (about 2 EiB).
      {"tune --kernel fused_add_rmsnorm --shape rows=500000000,hidden=500000000",
       {"rows=500000000, hidden=500000000", "the call's tensors need", "rows*hidden*4",
        "more than the cpu device's"}},
      {"tune --kernel gemm_f32 --shape M=99999999999999999999,N=8,K=8",
       {"M=99999999999999999999", "at most 2^63-1"}},
  };
  for (const auto& c : cases) expect_usage_error(c);
}

// The same through a user kernel's spec: scalars of every integer type.
TEST_F(BadInput, UserKernelScalarsOutsideTheirTypeAreUsageErrors) {
  nlohmann::json spec = nlohmann::json::parse(testing::read_file(kBadInputExample + "space.json"));
  spec["args"][2] = {{"name", "m"}, {"type", "u32"}, {"value", "M - 100"}};
  spec["args"][3] = {{"name", "n"}, {"type", "i32"}, {"value", "N * N"}};
  std::ofstream(dir_ / "scalars.json") << spec.dump(2);
  const std::string base = "tune --template " + kBadInputExample + "transpose.cpp --space " +
                           (dir_ / "scalars.json").string() +
                           " --entry 'example::transpose<{TILE},{STAGED}>' --shape ";
  expect_usage_error({base + "M=40,N=72", {"M=40", "argument 'm' (u32) = 'M - 100'", "-60"}});
  expect_usage_error(
      {base + "M=200,N=65536", {"N=65536", "argument 'n' (i32) = 'N * N'", "4294967296"}});
}

TEST_F(BadInput, ShapeTextsThatAreNotPositiveIntegersAreUsageErrors) {
  const Case cases[] = {
      {"tune --kernel gemm_f32 --shape M=0,N=8,K=8", {"M='0'", "not a positive integer"}},
      {"tune --kernel gemm_f32 --shape M=8,N=8,K=8,M=16", {"M is given twice"}},
      {"tune --kernel gemm_f32 --shape M=x,N=8,K=8", {"M='x'", "not a positive integer"}},
      {"tune --kernel gemm_f32 --shape M=,N=8,K=8", {"M=''", "not a positive integer"}},
      {"tune --kernel gemm_f32 --shape M=8.5,N=8,K=8", {"M='8.5'"}},
      {"tune --kernel gemm_f32 --shape M=8,,N=8,K=8", {"'' is not NAME=VALUE"}},
      {"tune --kernel gemm_f32 --shape M=8,N=8", {"--shape lacks K"}},
  };
  for (const auto& c : cases) expect_usage_error(c);
}

// Every numeric option of every subcommand is bounded like its KILN_*
// variable; "-1" never wraps into an unsigned field, "nan" never passes.
TEST_F(BadInput, OptionsOutOfRangeAreUsageErrorsNamingTheRange) {
  const Case cases[] = {
      {kSmallGemm + "--threads 100000", {"--threads", "100000", "between 0 and 1024"}},
      {kSmallGemm + "--threads -3", {"--threads", "-3", "between 0 and 1024"}},
      {kSmallGemm + "--threads 0x10", {"--threads", "not a whole decimal number"}},
      {kSmallGemm + "--max-configs -1", {"--max-configs", "-1", "between 0 and"}},
      {kSmallGemm + "--group-size 257", {"--group-size", "between 0 and 256"}},
      {kSmallGemm + "--group-size -1", {"--group-size", "between 0 and 256"}},
      {kSmallGemm + "--budget-s nan", {"--budget-s", "not a finite", "between 0 and"}},
      {kSmallGemm + "--budget-s inf", {"--budget-s", "not a finite"}},
      {kSmallGemm + "--budget-s -1", {"--budget-s", "between 0 and"}},
      {kSmallGemm + "--seed -1", {"--seed", "between 0 and 18446744073709551615"}},
      {kSmallGemm + "--seed 18446744073709551616", {"--seed", "out of range"}},
      {kSmallGemm + "--delay-us 1e9", {"--delay-us", "between 0 and 10000"}},
      {kSmallGemm + "--delay-us nan", {"--delay-us", "not a finite"}},
      {kSmallGemm + "--devices 5", {"--devices 5: this machine has 1 CPU device (0)"}},
      {kSmallGemm + "--devices 0,cpu:3", {"this machine has 1 CPU device (0)"}},
      {kSmallGemm + "--devices 0,0", {"--devices 0,0", "named twice"}},
      {"compile --kernel gemm_f16 --threads 100000", {"--threads", "between 0 and 1024"}},
      {"compile --kernel gemm_f16 --group-size -1", {"--group-size", "between 0 and 256"}},
      {"bench compile --threads 5000", {"--threads", "between 0 and 1024"}},
      {"bench compile --max-configs -1", {"--max-configs", "between 0 and"}},
      {"bench compile --rounds 0", {"--rounds", "between 1 and 100"}},
      {"bench tune --compile-threads 100000", {"--compile-threads", "between 1 and 1024"}},
      {"bench tune --bench-threads 0", {"--bench-threads", "between 1 and 1024"}},
      {"bench tune --bench-ms nan", {"--bench-ms", "not a finite"}},
      {"bench tune --rounds 0", {"--rounds", "between 1 and"}},
      {"bench tune --size 1000000", {"--size", "between 1 and 16384"}},
      {"bench tune --group-size 0", {"--group-size", "between 1 and 256"}},
      // A trace goes where it can be written.
      {kSmallGemm + "--trace /nonexistent-kiln-dir/t.json",
       {"cannot write the trace to /nonexistent-kiln-dir/t.json", "not a directory"}},
      {"cache prune --max-size -1", {"--max-size", "not a size"}},
      {"cache prune --max-size 12Q", {"--max-size", "not a size"}},
      // Names out of their set are usage errors too.
      {"compile --kernel nope", {"--kernel", "nope"}},
      {"compile --kernel gemm_f16 --arch sm_xx", {"--arch", "not a CUDA arch"}},
      {"bench compile --kernel nope", {"--kernel", "nope"}},
      {"bench compile --arch 90", {"--arch", "not a CUDA arch"}},
      // A target of the wrong kind fails once, as usage, not once per config.
      {"compile --kernel fused_add_rmsnorm --arch sm_80",
       {"--arch sm_80 is a CUDA target", "builds for the CPU"}},
      {"compile --kernel fused_add_rmsnorm --ptx", {"--ptx", "PTX is a CUDA format"}},
      {"bench tune --kernel nope", {"no shipped kernel 'nope'"}},
  };
  for (const auto& c : cases) expect_usage_error(c);
}

// A missing or unknown choice names what was given and what to give:
// CLI11 alone said "A subcommand is required" for `kiln bench bogus`, and
// `tune --space F` alone got the "not both" message.
TEST_F(BadInput, MissingOrUnknownChoicesNameTheFix) {
  const std::string export_to = "cache export " + (dir_ / "out.json").string();
  const Case cases[] = {
      {"bogus", {"kiln: unknown subcommand 'bogus'", "use one of", "tune"}},
      {"bench bogus", {"kiln bench: unknown subcommand 'bogus'", "gemm", "tune"}},
      {"cache remote bogus", {"kiln cache remote: unknown subcommand 'bogus'", "ls"}},
      {"tune --space s.json --shape M=8", {"--space and --entry", "add --template FILE"}},
      {"tune --shape M=8", {"nothing to tune", "--kernel NAME", "--template FILE"}},
      {"tune --kernel gemm_f32 --template t.cpp --shape M=8", {"not both"}},
      {"cache export ''", {"FILE", "the output file name is empty"}},
      {"cache export /", {"'/' is a directory"}},
      {"cache export /nonexistent-kiln-dir/out.json", {"/nonexistent-kiln-dir", "does not exist"}},
      {export_to + " --kernel gemm_f32_cpu",
       {"--kernel", "--format kernel-tuner", "exports every record"}},
  };
  for (const auto& c : cases) expect_usage_error(c);
  EXPECT_FALSE(fs::exists(dir_ / "out.json"));
}

// --arch native is the device's arch, resolved before NVRTC sees it: with
// no GPU a usage error saying so, never a failed compile per config.
TEST_F(BadInput, ArchNativeIsTheDevicesArch) {
  CliRun run = kiln("compile --kernel gemm_f16 --arch native --json");
  if (run.exit_code == 0) return;  // a machine with a GPU: it compiled for it
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("no CUDA device to take the arch from"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("'native' is not a CUDA arch"), std::string::npos) << run.err;
}

// A value in range is read as decimal: CLI11 alone read "010" as octal 8.
TEST_F(BadInput, NumbersInRangeAreReadAsDecimal) {
  CliRun run = kiln(kSmallGemm + "--threads 010 --group-size 02 --max-configs 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.json()["settings"]["threads"], 10);
  EXPECT_EQ(run.json()["settings"]["group_size"], 2);
}

// Each malformed variable is reported once per run, not once more by every
// worker process the run starts (they share its stderr).
TEST_F(BadInput, EnvironmentWarningsArePrintedOnce) {
  const fs::path err = dir_ / "stderr.txt";
  const std::string cmd = "env KILN_CACHE_DIR=" + (dir_ / "cache").string() +
                          " KILN_RANK= RANK= LOCAL_RANK= KILN_TUNING="
                          " KILN_COMPILE_THREADS=abc KILN_GROUP_SIZE=-1 KILN_PCH=maybe"
                          " KILN_CACHE_MAX_SIZE=huge " KILN_CLI_PATH " " +
                          kSmallGemm + "--max-configs 3 2>" + err.string();
  const auto ran = testing::run_command(cmd);
  ASSERT_EQ(ran.exit_code, 0) << testing::read_file(err);
  const std::string text = testing::read_file(err);
  for (const char* var :
       {"KILN_COMPILE_THREADS='abc' is not valid", "KILN_GROUP_SIZE='-1' is not valid",
        "KILN_PCH='maybe' is not valid", "KILN_CACHE_MAX_SIZE='huge' is not valid"}) {
    EXPECT_EQ(count(text, var), 1u) << var << "\n" << text;
  }
}

// A cache bound smaller than one artifact keeps nothing on disk: the run
// works and says so once, rather than compiling again every run unexplained.
TEST_F(BadInput, ACacheBoundBelowOneArtifactIsWarnedOnce) {
  const fs::path err = dir_ / "stderr.txt";
  const auto ran = testing::run_command("env KILN_CACHE_DIR=" + (dir_ / "cache").string() +
                                        " KILN_CACHE_MAX_SIZE=1K " KILN_CLI_PATH " " + kSmallGemm +
                                        "--max-configs 3 2>" + err.string());
  const std::string text = testing::read_file(err);
  ASSERT_EQ(ran.exit_code, 0) << text;
  EXPECT_EQ(count(text, "larger than the whole cache bound, KILN_CACHE_MAX_SIZE=1024"), 1u) << text;
  EXPECT_NE(text.find("raise KILN_CACHE_MAX_SIZE"), std::string::npos) << text;
}

// A space with nothing left in it is a usage error naming the spec file and
// the constraint, found before anything compiles (it was exit 1 with no
// file named, after the cache was set up).
TEST_F(BadInput, SpaceEmptiedByItsConstraintsIsAUsageErrorNamingTheSpec) {
  const nlohmann::json tile = {{"name", "TILE"}, {"values", {8, 16, 32}}};
  const nlohmann::json staged = {{"name", "STAGED"}, {"values", {false, true}}};
  const std::string alone = spec_with_space(
      "alone.json", {{"parameters", {tile, staged}}, {"constraints", {"TILE > 1000"}}});
  expect_usage_error({alone,
                      {(dir_ / "alone.json").string(), "space.constraints",
                       "constraint 'TILE > 1000' rejects every one of the 6"}});
  const std::string together = spec_with_space(
      "together.json",
      {{"parameters", {tile, staged}}, {"constraints", {"TILE < 16", "TILE > 16 && STAGED"}}});
  expect_usage_error({together,
                      {(dir_ / "together.json").string(),
                       "constraints 'TILE < 16', 'TILE > 16 && STAGED' together reject"}});
  const std::string none = spec_with_space("none.json", {{"parameters", nlohmann::json::array()}});
  expect_usage_error({none, {(dir_ / "none.json").string(), "space.parameters"}});
  const nlohmann::json no_values = {{"name", "TILE"}, {"values", nlohmann::json::array()}};
  const std::string empty =
      spec_with_space("empty_values.json", {{"parameters", {no_values, staged}}});
  expect_usage_error({empty, {(dir_ / "empty_values.json").string(), "'TILE'", "empty"}});
  // A constraint that cannot be evaluated (it reads the shape) says why.
  const std::string reads_shape = spec_with_space(
      "reads_shape.json", {{"parameters", {tile, staged}}, {"constraints", {"TILE <= M"}}});
  expect_usage_error(
      {reads_shape,
       {(dir_ / "reads_shape.json").string(), "'TILE <= M'", "unknown name 'M'", "early_prune"}});
}

}  // namespace
}  // namespace kiln
