// A cache Kiln has just written or repaired verifies clean (issue 54). A
// grouped program is stored once under its content hash, so the same
// compile run again over a damaged program must put its bytes back rather
// than take the file by its name, and a warm `kiln tune` that discards its
// winner's damaged program must take the group's other entries with it.
// The real executable in child processes, real Clang compiles on the CPU
// backend, real NVRTC where CUDA is built (no device needed).
#include <algorithm>
#include <iterator>
#include <vector>

#include "cli_runner.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;

using testing::CliRun;

// Every program file under the cache, by path.
std::vector<fs::path> programs_in(const fs::path& cache) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(cache / "artifacts")) {
    if (e.is_regular_file() && e.path().extension() == ".prog") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One flipped byte in the payload, the size unchanged: the damage a file
// of the right name and length can carry.
void flip_payload_byte(const fs::path& path) {
  std::string bytes = bytes_of(path);
  ASSERT_GT(bytes.size(), 100u) << path;
  bytes[bytes.size() - 17] ^= 0x40;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// `kiln cache verify --json`: its exit code and what it calls broken.
struct Verified {
  int exit_code = -1;
  nlohmann::json report;
  std::string text() const { return report.dump(2); }
};

class CacheRepairCli : public testing::CliTest {
 protected:
  Verified verify() const {
    CliRun run = kiln("cache verify --json");
    Verified v;
    v.exit_code = run.exit_code;
    v.report = nlohmann::json::parse(run.out, nullptr, false);
    return v;
  }

  // `args` (a `kiln compile`), a flipped byte in one of its programs, the
  // same command again: the program's bytes are back and verify is clean.
  void compile_damage_compile(const std::string& args) {
    CliRun first = kiln(args);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const std::vector<fs::path> programs = programs_in(dir_ / "cache");
    ASSERT_FALSE(programs.empty());
    ASSERT_EQ(verify().exit_code, 0) << verify().text();
    const fs::path damaged = programs.front();
    const std::string good = bytes_of(damaged);
    flip_payload_byte(damaged);
    ASSERT_EQ(verify().exit_code, 1) << "the damage is not seen: the test checks nothing";

    CliRun again = kiln(args);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(programs_in(dir_ / "cache"), programs) << "the same compile made other programs";
    EXPECT_TRUE(bytes_of(damaged) == good) << "the damaged program was kept by its name";
    Verified after = verify();
    EXPECT_EQ(after.exit_code, 0) << after.text();
    EXPECT_EQ(after.report["broken_total"], 0) << after.text();
  }
};

TEST_F(CacheRepairCli, CompileAgainOverADamagedCpuProgramPutsItsBytesBack) {
  compile_damage_compile("compile --kernel fused_add_rmsnorm --group-size 4 --json");
}

TEST_F(CacheRepairCli, CompileAgainOverADamagedNvrtcProgramPutsItsBytesBack) {
  CliRun info = kiln("info --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  if (!info.json()["fingerprints"].contains("cuda"))
    KILN_SKIP(Skip::kCudaToolkit) << "built without CUDA: no NVRTC to compile gemm_f16 with";
  // One compile thread: NVRTC is not instrumented, and two threads inside
  // it read as a race under TSan (the repair is the same on any count).
  compile_damage_compile("compile --kernel gemm_f16 --arch sm_90a --threads 1 --json");
}

// The config a `kiln cache ls --json` entry was compiled for, and the
// program it names.
struct ListedEntry {
  nlohmann::json config;
  std::string program;
};

TEST_F(CacheRepairCli, AWarmTuneWhoseWinnersProgramIsDamagedLeavesVerifyClean) {
  const std::string tune =
      "tune --kernel fused_add_rmsnorm --shape rows=8,hidden=64 --group-size 4 --json";
  CliRun cold = kiln(tune);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  const nlohmann::json winner = cold.json()["winner"]["config"];

  // The winner's program, and how many entries name it (its group).
  CliRun ls = kiln("cache ls --json");
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const nlohmann::json listed = ls.json();
  std::vector<ListedEntry> entries;
  for (const auto& a : listed.at("artifacts"))
    entries.push_back({a["meta"]["config"], a.value("program", "")});
  std::string program;
  for (const auto& e : entries)
    if (e.config == winner) program = e.program;
  ASSERT_FALSE(program.empty()) << "no entry for the winner " << winner.dump() << "\n" << ls.out;
  std::size_t group = 0;
  for (const auto& e : entries) group += e.program == program;
  ASSERT_GT(group, 1u) << "the winner's program serves no other entry: the test checks nothing";
  flip_payload_byte(dir_ / "cache" / "artifacts" / program.substr(0, 2) / (program + ".prog"));

  // Served from disk, the winner rebuilt alone (one compile) and right.
  CliRun warm = kiln(tune);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  const nlohmann::json w = warm.json();
  EXPECT_EQ(w["source"], "disk") << warm.out;
  EXPECT_EQ(w["winner"]["config"], winner);
  EXPECT_EQ(w["stats"]["compiled"], 1) << w["stats"].dump();
  Verified after = verify();
  EXPECT_EQ(after.exit_code, 0) << after.text();
  EXPECT_EQ(after.report["broken_total"], 0) << after.text();

  // And warm again, with nothing to rebuild.
  CliRun again = kiln(tune);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json()["stats"]["compiled"], 0) << again.out;
  EXPECT_EQ(verify().exit_code, 0);
}

}  // namespace
}  // namespace kiln
