// The class behind "nothing Kiln remembers outlives its truth", end to end:
// one edit of a header the kernel reads on disk, and every kind of state a
// tuning leaves (its record, its compiled artifacts, its remembered
// failures, the winners a warm start would seed from) stops answering for
// the edited kernel; put the header back and the state of the original
// answers again, so the state is keyed by what decided it, not dropped.
// Real `kiln` processes over a fresh cache, real Clang compiles.
#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"

namespace kiln {
namespace {

using testing::CliRun;
using RememberedStateCli = testing::CliTest;

const std::string kExampleDir = std::string(KILN_SOURCE_DIR) + "/examples/user_kernel/";

// The example's transpose, whose staged variant of one tile size, named by
// the header inc/broken.h, does not compile.
void write_kernel(const std::filesystem::path& dir) {
  std::string source = testing::read_file(kExampleDir + "transpose.cpp");
  const std::string body = "  if (STAGED) {";
  const auto at = source.find(body);
  ASSERT_NE(at, std::string::npos) << "the example changed: update this test";
  source.insert(at, "  static_assert(!(TILE == BROKEN_TILE && STAGED), \"broken tile\");\n");
  std::ofstream(dir / "transpose.cpp") << "#include \"broken.h\"\n" << source;
  nlohmann::json spec = nlohmann::json::parse(testing::read_file(kExampleDir + "space.json"));
  spec["include_dirs"] = {"inc"};
  std::ofstream(dir / "space.json") << spec.dump(1);
  std::filesystem::create_directories(dir / "inc");
}

void set_broken_tile(const std::filesystem::path& dir, int tile) {
  std::ofstream(dir / "inc" / "broken.h") << "#define BROKEN_TILE " << tile << "\n";
}

const nlohmann::json* row(const nlohmann::json& report, int tile, bool staged) {
  for (const auto& r : report["configs"])
    if (r["config"]["TILE"] == tile && r["config"]["STAGED"] == staged) return &r;
  return nullptr;
}

TEST_F(RememberedStateCli, AHeaderEditRetiresEveryKindOfRememberedStateAndItsReturnRestoresIt) {
  write_kernel(dir_);
  set_broken_tile(dir_, 32);
  const std::string tune = "tune --template " + (dir_ / "transpose.cpp").string() + " --space " +
                           (dir_ / "space.json").string() +
                           " --entry 'example::transpose<{TILE},{STAGED}>' --json";
  // (1) Tuned at two shapes: records, artifacts and the failure of TILE 32
  // staged are remembered.
  CliRun first = kiln(tune + " --shape M=40,N=72");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_NE(row(first.json(), 32, true), nullptr);
  EXPECT_EQ((*row(first.json(), 32, true))["status"], "compile_failed");
  ASSERT_EQ(kiln(tune + " --shape M=48,N=80").exit_code, 0);

  // (2) The header changes what fails. For the edited kernel no record
  // answers, no artifact is reused, the old failure is not applied (TILE 32
  // staged is measured, and compiles), the new one is found, and no
  // winner of the old kernel seeds a warm start.
  set_broken_tile(dir_, 64);
  CliRun edited = kiln(tune + " --shape M=40,N=72");
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  const nlohmann::json e = edited.json();
  EXPECT_EQ(e["source"], "tuned") << "a record of the old header was served";
  EXPECT_EQ(e["stats"]["artifact_hits"], 0) << "an artifact of the old header was reused";
  EXPECT_EQ(e["stats"]["skipped_failed_before"], 0) << "the old failure was applied";
  ASSERT_NE(row(e, 32, true), nullptr);
  EXPECT_EQ((*row(e, 32, true))["status"], "ok");
  ASSERT_NE(row(e, 64, true), nullptr);
  EXPECT_EQ((*row(e, 64, true))["status"], "compile_failed");
  EXPECT_EQ(e["stats"]["warm_started"], 0) << "a winner of the old kernel seeded the search";

  // (3) The header as it was: the original kernel's state answers again.
  set_broken_tile(dir_, 32);
  CliRun back = kiln(tune + " --shape M=40,N=72");
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.json()["source"], "disk");
  CliRun retune = kiln(tune + " --shape M=40,N=72 --retune");
  ASSERT_EQ(retune.exit_code, 0) << retune.err;
  const nlohmann::json r = retune.json();
  EXPECT_GT(r["stats"]["artifact_hits"].get<int>(), 0) << "its artifacts are still there";
  EXPECT_EQ((*row(r, 32, true))["status"], "compile_failed");
  // A new shape of the original kernel starts from its neighbours' winners.
  CliRun near = kiln(tune + " --shape M=44,N=76");
  ASSERT_EQ(near.exit_code, 0) << near.err;
  EXPECT_GT(near.json()["stats"]["warm_started"].get<int>(), 0);
  EXPECT_EQ(near.json()["stats"]["skipped_failed_before"], 0)
      << "failures belong to their own problem, not a neighbour's";
  CliRun verify = kiln("cache verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

}  // namespace
}  // namespace kiln
