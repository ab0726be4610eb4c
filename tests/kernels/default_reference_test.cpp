// The default config is just another config: it runs in a benchmark worker
// under the same deadline as every config, and when it cannot give a
// reference (it crashes, hangs, does not compile, or the early prune drops
// it) the largest group of agreeing configs does, so a fast wrong config
// still never wins. The report says which reference was used; with none,
// the winner is saved as unchecked and the report says so.
//
// Real `kiln tune` processes on the CPU backend, real faults (a null write,
// an endless loop, a static_assert), each run under `timeout` so that a
// regression hangs no test run.
#include "cli_runner.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::count_status;
using testing::read_file;
using DefaultReference = testing::CliTest;

// MODE 0: y = 2x (right). 1: a null write (SIGSEGV). 2: spins forever.
// 3: does not compile. 4: fast and wrong (writes y[0] only).
const char* kFaultyDefaultSource = R"(
#include "kiln/cpu_kernel.h"
namespace t {
template <int U, int MODE>
void ax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n) {
  static_assert(MODE != 3, "MODE 3 is deliberately broken");
  if (MODE == 1) static_cast<volatile float*>(ctx.shared)[0] = 1.0f;
  volatile int forever = 1;
  if (MODE == 2) {
    while (forever) {
    }
  }
  if (MODE == 4) {
    if (ctx.block_idx.x == 0) y[0] = 2.0f * x[0];
    return;
  }
  const int per = (n + static_cast<int>(ctx.grid_dim.x) - 1) / static_cast<int>(ctx.grid_dim.x);
  const int lo = static_cast<int>(ctx.block_idx.x) * per;
  const int hi = lo + per < n ? lo + per : n;
  for (int i = lo; i < hi; i += U) {
    for (int k = 0; k < U && i + k < hi; ++k) y[i + k] = 2.0f * x[i + k];
  }
}
}  // namespace t
)";

// The spec with `modes` allowed at U=1 (U=2 and U=4 always run MODE 0),
// `default_mode` as the default and the extra JSON members `extra`.
std::string spec(const std::string& modes, int default_mode, const std::string& extra = "") {
  return R"({
  "name": "faulty_default",
  "backend": "cpu",
  "space": {
    "parameters": [{"name": "U", "values": [1, 2, 4]}, {"name": "MODE", "values": [0, 1, 2, 3, 4]}],
    "constraints": ["U == 1 || MODE == 0", ")" +
         modes + R"("],
    "default": {"U": 1, "MODE": )" +
         std::to_string(default_mode) + R"(}
  },
  "launch": {"grid": [4]},
  "args": [{"name": "x", "dtype": "f32", "shape": ["N"]},
           {"name": "y", "dtype": "f32", "shape": ["N"], "role": "output"},
           {"name": "n", "type": "i32", "value": "N"}])" +
         extra + R"(
})";
}

class Faulty : public DefaultReference {
 protected:
  // `kiln tune` of the spec, killed after 240 s so a hang fails the test.
  CliRun tune(const std::string& spec_text, const std::string& flags = "",
              const std::string& env = "") {
    return tune_template(kFaultyDefaultSource, spec_text, "t::ax<{U},{MODE}>", "N=4096", env,
                         flags);
  }

  static const nlohmann::json* row(const nlohmann::json& r, int u, int mode) {
    for (const auto& c : r["configs"]) {
      if (c["config"]["U"] == u && c["config"]["MODE"] == mode) return &c;
    }
    return nullptr;
  }

  // The run survived a faulty default, the consensus of the three right
  // configs was the reference, and the fast wrong config was caught.
  void expect_consensus(const CliRun& run, const std::string& default_status) {
    ASSERT_EQ(run.exit_code, 0) << "stdout:\n" << run.out << "\nstderr:\n" << run.err;
    const nlohmann::json r = run.json();
    EXPECT_EQ(r["source"], "tuned");
    EXPECT_EQ(r["reference"], "consensus of 3 configs") << r.dump(2);
    EXPECT_NE(r["reference_detail"].get<std::string>().find("default config"), std::string::npos)
        << r["reference_detail"];
    EXPECT_EQ(r["reference_detail"].get<std::string>().find('\n'), std::string::npos)
        << "one line, not a compiler log: " << r["reference_detail"];
    const nlohmann::json* wrong = row(r, 1, 4);
    ASSERT_NE(wrong, nullptr) << r.dump(2);
    EXPECT_EQ((*wrong)["status"], "wrong_result") << wrong->dump();
    EXPECT_NE((*wrong)["reason"].get<std::string>().find("consensus of 3"), std::string::npos);
    ASSERT_TRUE(r["winner"].is_object()) << r.dump(2);
    EXPECT_EQ(r["winner"]["config"]["MODE"], 0);
    EXPECT_EQ(count_status(r, "ok"), 3u) << r.dump(2);
    EXPECT_EQ(count_status(r, default_status), 1u) << r.dump(2);
    EXPECT_TRUE(r["default"].is_null()) << "a failed default has no time to compare with";
    EXPECT_EQ(r["saved"], true);
  }
};

TEST_F(Faulty, ASegfaultingDefaultIsRecordedAndTheConsensusChecks) {
  expect_consensus(tune(spec("MODE != 2 && MODE != 3", 1)), "crashed");
}

TEST_F(Faulty, ADefaultThatDoesNotCompileStillLeavesTheCheckOn) {
  expect_consensus(tune(spec("MODE != 1 && MODE != 2", 3)), "compile_failed");
}

TEST_F(Faulty, AHangingDefaultIsAbandonedAtItsDeadline) {
  expect_consensus(tune(spec("MODE != 1 && MODE != 3", 2)), "timeout");
}

TEST_F(Faulty, AnEarlyPrunedDefaultIsNotMeasured) {
  // The prune drops the default (MODE 1) for this problem: not measured,
  // the consensus checks, and the heuristic fallback is a kept config.
  CliRun run = tune(spec("MODE != 2 && MODE != 3", 1, R"(,
  "early_prune": ["MODE != 1"])"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const nlohmann::json r = run.json();
  EXPECT_EQ(row(r, 1, 1), nullptr) << "a pruned default is not measured: " << r.dump(2);
  EXPECT_EQ(r["reference"], "consensus of 3 configs");
  EXPECT_NE(r["reference_detail"].get<std::string>().find("early prune"), std::string::npos);
  EXPECT_EQ(r["winner"]["config"]["MODE"], 0);

  // Without tuning (and nothing cached), the answer is the first config
  // the prune keeps.
  fs::remove_all(dir_ / "cache");
  CliRun off = tune(spec("MODE != 2 && MODE != 3", 1, R"(,
  "early_prune": ["MODE != 1"])"),
                    "", "KILN_TUNING=0");
  ASSERT_EQ(off.exit_code, 0) << off.out << off.err;
  EXPECT_EQ(off.json()["winner"]["config"], nlohmann::json({{"MODE", 0}, {"U", 1}})) << off.out;
}

TEST_F(Faulty, WithNoReferenceTheWinnerIsSavedUncheckedAndSaysSo) {
  // The default does not compile and the two configs left disagree: no
  // group stands out, so nothing is claimed.
  CliRun run = tune(spec("U == 1 && (MODE == 0 || MODE == 3 || MODE == 4)", 3));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const nlohmann::json r = run.json();
  EXPECT_EQ(r["reference"], "none") << r.dump(2);
  EXPECT_NE(r["reference_detail"].get<std::string>().find("no group"), std::string::npos)
      << r["reference_detail"];
  EXPECT_EQ(count_status(r, "wrong_result"), 0u) << "nothing to say they are wrong";
  EXPECT_NE(run.err.find("saved unchecked"), std::string::npos) << run.err;
  const std::string saved = read_file(dir_ / "cache" / "tuning" / "tuning.json");
  EXPECT_NE(saved.find("\"reference\": \"none\""), std::string::npos) << saved;

  // The text report says it too.
  CliRun text = tune(spec("U == 1 && (MODE == 0 || MODE == 3 || MODE == 4)", 3), "--retune");
  ASSERT_EQ(text.exit_code, 0) << text.err;
}

TEST_F(Faulty, ARunInWhichEveryConfigFailedIsNeverSaved) {
  CliRun run = tune(spec("U == 1 && (MODE == 1 || MODE == 3)", 3));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const nlohmann::json r = run.json();
  EXPECT_TRUE(r["winner"].is_null());
  EXPECT_EQ(count_status(r, "ok"), 0u);
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "tuning" / "tuning.json"))
      << read_file(dir_ / "cache" / "tuning" / "tuning.json");
}

TEST_F(Faulty, SavedIsSaidOnlyWhenTheRecordWasWritten) {
  const std::string healthy = spec("MODE == 0", 0);
  CliRun ro = tune(healthy, "", "KILN_CACHE_READ_ONLY=1");
  ASSERT_EQ(ro.exit_code, 0) << ro.out << ro.err;
  EXPECT_EQ(ro.json()["saved"], false);
  EXPECT_NE(ro.json()["not_saved_reason"].get<std::string>().find("read-only"), std::string::npos)
      << ro.out;
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "tuning" / "tuning.json"));

  CliRun saved = tune(healthy);
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  EXPECT_EQ(saved.json()["saved"], true);
  EXPECT_EQ(saved.json()["reference"], "default");
  EXPECT_TRUE(fs::exists(dir_ / "cache" / "tuning" / "tuning.json"));
}

// Statistics tell the truth: a warm run that has to rebuild its winner's
// artifact counts the compile, and a retune whose every artifact is cached
// compiles nothing.
TEST_F(Faulty, CompilesAreCountedWhereTheyHappen) {
  const std::string healthy = spec("MODE == 0", 0);
  CliRun cold = tune(healthy);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(cold.json()["stats"]["compiled"], 3);
  EXPECT_EQ(cold.json()["stats"]["artifact_hits"], 0);

  CliRun retune = tune(healthy, "--retune");
  ASSERT_EQ(retune.exit_code, 0) << retune.err;
  EXPECT_EQ(retune.json()["source"], "tuned");
  EXPECT_EQ(retune.json()["stats"]["compiled"], 0) << retune.out;
  EXPECT_EQ(retune.json()["stats"]["artifact_hits"], 3);

  // Every artifact gone, the tuning record kept: served from disk, and the
  // winner's artifact is rebuilt (one compile, counted).
  for (const auto& e : fs::directory_iterator(dir_ / "cache")) {
    if (e.path().filename().string().rfind("tuning", 0) != 0) fs::remove_all(e.path());
  }
  CliRun warm = tune(healthy);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_EQ(warm.json()["source"], "disk");
  EXPECT_EQ(warm.json()["stats"]["compiled"], 1) << warm.out;
  EXPECT_EQ(warm.json()["stats"]["artifact_hits"], 0);
}

// 4 x 2 x 10^18 configs: the default (the first valid one) is found without
// enumerating, and a random search of 4 finishes like any small run.
TEST_F(DefaultReference, AHugeSpaceIsNeverEnumerated) {
  std::string params = R"({"name": "A", "values": [1, 2, 3, 4]}, {"name": "B", "values": [0, 1]})";
  for (int i = 0; i < 18; ++i) {
    params += R"(, {"name": "P)" + std::to_string(i) + R"(", "values": [0,1,2,3,4,5,6,7,8,9]})";
  }
  std::ofstream(dir_ / "huge.cpp") << R"(
#include "kiln/cpu_kernel.h"
template <int A>
void fill(const kiln::cpu::BlockContext& ctx, float* y, int n) {
  if (ctx.block_idx.x == 0)
    for (int i = 0; i < n; ++i) y[i] = static_cast<float>(i % 7);
}
)";
  std::ofstream(dir_ / "huge.json") << R"({"backend": "cpu", "space": {"parameters": [)" + params +
                                           R"(]}, "launch": {"grid": [1]},
    "args": [{"name": "y", "dtype": "f32", "shape": ["N"], "role": "output"},
             {"name": "n", "type": "i32", "value": "N"}]})";
  const std::string cmd = "timeout -k 5 120 env KILN_CACHE_DIR=" + (dir_ / "cache").string() +
                          " " KILN_CLI_PATH " tune --template " + (dir_ / "huge.cpp").string() +
                          " --space " + (dir_ / "huge.json").string() +
                          " --entry 'fill<{A}>' --shape N=64 --search random --max-configs 4 "
                          "--json 2>" +
                          (dir_ / "stderr.txt").string();
  testing::CommandRun ran = testing::run_command(cmd);
  ASSERT_EQ(ran.exit_code, 0) << ran.out << read_file(dir_ / "stderr.txt");
  const nlohmann::json r = ran.json();
  EXPECT_EQ(r["configs"].size(), 4u);
  EXPECT_EQ(r["reference"], "default");
}

}  // namespace
}  // namespace kiln
