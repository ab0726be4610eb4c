// A tuning record is only served for the kernel it was measured for, and
// only as it was measured: the real `kiln` executable tunes a user kernel
// on the CPU backend, the test edits the kernel's files or the cache's
// tuning.json between runs, and checks where each run's answer came from
// ("tuned" or "disk") and what `kiln cache verify` says. No timings are
// asserted.
#include <functional>

#include "cli_runner.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::read_file;

const char* const kKeyedSource =
    R"cpp(#include "kiln/cpu_kernel.h"
          namespace t {
          template <int ITEMS>
          void scale(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n) {
            const int first = static_cast<int>(ctx.block_idx.x) * ITEMS;
            for (int k = 0; k < ITEMS; ++k)
              if (first + k < n) y[first + k] = 2.0f * x[first + k];
          }
          }  // namespace t
    )cpp";

nlohmann::json base_spec() {
  return nlohmann::json::parse(R"json({
    "name": "scale",
    "backend": "cpu",
    "space": {"parameters": [{"name": "ITEMS", "values": [4, 32]}], "default": {"ITEMS": 4}},
    "launch": {"grid": ["ceil_div(N, ITEMS)"]},
    "args": [{"name": "x", "dtype": "f32", "shape": ["N"]},
             {"name": "y", "dtype": "f32", "shape": ["N"], "role": "output"},
             {"name": "n", "type": "i32", "value": "N"}]
  })json");
}

// A user kernel as files in `dir`; write() writes them and gives the
// `kiln tune` arguments.
struct UserKernelFiles {
  fs::path dir;
  std::string source = kKeyedSource;
  nlohmann::json spec = base_spec();
  std::string entry = "t::scale<{ITEMS}>";

  std::string write() const {
    fs::create_directories(dir);
    std::ofstream(dir / "scale.cpp", std::ios::trunc) << source;
    std::ofstream(dir / "scale.json", std::ios::trunc) << spec.dump(2);
    return "tune --template " + (dir / "scale.cpp").string() + " --space " +
           (dir / "scale.json").string() + " --entry '" + entry + "' --shape N=4096 --json";
  }
};

const char* const kChanged = "the kernel changed since it was tuned";

class TuningKeyCli : public testing::CliTest {
 protected:
  // Where a `kiln tune --json` run's answer came from ("tuned", "disk").
  std::string source_of(const std::string& args, std::string* err = nullptr) const {
    CliRun run = kiln(args);
    if (err) *err = run.err;
    EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
    return run.exit_code == 0 ? run.json()["source"].get<std::string>() : "failed";
  }
};

// Each edit of the kernel, wherever it is (the template, the entry, the
// spec's launch rule, space, constraints, default, defines, options), makes
// the next run tune again instead of serving the old winner, with one line
// saying why; the edited kernel is warm on its next run, and going back to
// the original finds the original's record (they coexist).
TEST_F(TuningKeyCli, AnEditedKernelIsTunedAgainNotServedFromDisk) {
  const UserKernelFiles original{dir_ / "kernel"};
  ASSERT_EQ(source_of(original.write()), "tuned");
  ASSERT_EQ(source_of(original.write()), "disk") << "an unchanged kernel starts warm";

  using Edit = std::pair<const char*, std::function<void(UserKernelFiles&)>>;
  const std::vector<Edit> edits = {
      {"a comment in the template", [](UserKernelFiles& k) { k.source += "// faster now\n"; }},
      {"the entry", [](UserKernelFiles& k) { k.entry = "t::scale<({ITEMS})>"; }},
      {"the launch rule",
       [](UserKernelFiles& k) { k.spec["launch"]["grid"][0] = "(N + ITEMS - 1) / ITEMS"; }},
      {"a value added to the space",
       [](UserKernelFiles& k) { k.spec["space"]["parameters"][0]["values"].push_back(64); }},
      {"a constraint",
       [](UserKernelFiles& k) { k.spec["space"]["constraints"] = {"ITEMS <= 1024"}; }},
      {"the default", [](UserKernelFiles& k) { k.spec["space"]["default"]["ITEMS"] = 32; }},
      {"a define",
       [](UserKernelFiles& k) {
         k.spec["defines"] = {{"SCALE_UNUSED", "1"}};
       }},
      {"a compile option",
       [](UserKernelFiles& k) { k.spec["options"] = {"-DSCALE_OPTION_UNUSED=1"}; }},
  };
  for (const auto& [what, edit] : edits) {
    UserKernelFiles edited = original;
    edit(edited);
    std::string err;
    EXPECT_EQ(source_of(edited.write(), &err), "tuned") << what;
    EXPECT_NE(err.find(kChanged), std::string::npos) << what << "\n" << err;
    EXPECT_EQ(source_of(edited.write()), "disk") << what << ": the edited kernel is warm now";
  }
  EXPECT_EQ(source_of(original.write()), "disk") << "the original's record is still there";
}

// Two unrelated kernels with one name and the same arguments never serve
// each other's winner; each is warm on its own second run.
TEST_F(TuningKeyCli, TwoKernelsWithOneNameDoNotShareRecords) {
  UserKernelFiles a{dir_ / "a"}, b{dir_ / "b"};
  // An unrelated kernel that happens to share the name and the arguments.
  b.source.replace(b.source.find("2.0f"), 4, "3.0f");
  b.spec["space"]["default"]["ITEMS"] = 32;
  EXPECT_EQ(source_of(a.write()), "tuned");
  EXPECT_EQ(source_of(b.write()), "tuned") << "b is not served a's record";
  EXPECT_EQ(source_of(a.write()), "disk");
  EXPECT_EQ(source_of(b.write()), "disk");
}

// tuning.json edited by hand (the best config, a time, the measured list):
// the record is refused like a damaged one, `kiln cache verify` counts it
// broken (exit 1), and the next run tunes again and leaves a healthy file.
TEST_F(TuningKeyCli, AnEditedRecordIsRefusedAndTunedAgain) {
  const std::string args = UserKernelFiles{dir_ / "kernel"}.write();
  ASSERT_EQ(source_of(args), "tuned");
  const fs::path file = dir_ / "cache" / "tuning" / "tuning.json";
  using Edit = std::pair<const char*, std::function<void(nlohmann::json&)>>;
  const std::vector<Edit> edits = {
      {"the best config",
       [](nlohmann::json& r) {
         auto& items = r["best"]["config"]["ITEMS"];
         items = items == 4 ? 32 : 4;  // the other config of the space
       }},
      {"the best time", [](nlohmann::json& r) { r["best"]["time_ms"] = 1e-6; }},
      {"a measured time", [](nlohmann::json& r) { r["measured"][0]["time_ms"] = 1e-6; }},
      {"the measured list", [](nlohmann::json& r) { r["measured"].erase(0); }},
  };
  for (const auto& [what, edit] : edits) {
    nlohmann::json tuning = nlohmann::json::parse(read_file(file));
    ASSERT_EQ(tuning["records"].size(), 1u) << what;
    edit(tuning["records"][0]);
    std::ofstream(file, std::ios::trunc) << tuning.dump(1);  // keeps the file's mode 0600

    CliRun verify = kiln("cache verify --json");
    EXPECT_EQ(verify.exit_code, 1) << what << "\n" << verify.out << verify.err;
    nlohmann::json report = nlohmann::json::parse(verify.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << verify.out;
    EXPECT_EQ(report["broken_total"], 1) << what;
    EXPECT_NE(verify.out.find("checksum"), std::string::npos) << what << "\n" << verify.out;

    EXPECT_EQ(source_of(args), "tuned") << what << ": the edited record is not served";
    EXPECT_EQ(kiln("cache verify").exit_code, 0) << what << ": the new run left a healthy file";
    EXPECT_EQ(source_of(args), "disk") << what;
  }
}

// A table whose record was edited imports without that record, names it
// with why on stderr and exits 1; `cache verify --remove` says what it
// removed (artifact files) and what it leaves (the broken record, until a
// save rewrites the file), never "removed" for what is still there.
TEST_F(TuningKeyCli, AnImportOrVerifyNamesEachBrokenRecordAndWhatWasRemoved) {
  const std::string args = UserKernelFiles{dir_ / "kernel"}.write();
  ASSERT_EQ(source_of(args), "tuned");
  const fs::path table = dir_ / "table.json";
  ASSERT_EQ(kiln("cache export " + table.string()).exit_code, 0);
  nlohmann::json t = nlohmann::json::parse(read_file(table));
  ASSERT_EQ(t["records"].size(), 1u);
  t["records"][0]["best"]["time_ms"] = 1e-6;
  std::ofstream(table, std::ios::trunc) << t.dump(1);
  CliRun imported = kiln("cache import " + table.string());
  EXPECT_EQ(imported.exit_code, 1) << imported.out << imported.err;
  EXPECT_NE(imported.out.find("1 malformed records skipped"), std::string::npos) << imported.out;
  EXPECT_NE(imported.err.find("does not match its content"), std::string::npos) << imported.err;

  const fs::path file = dir_ / "cache" / "tuning" / "tuning.json";
  std::ofstream(file, std::ios::trunc) << t.dump(1);  // the cache's own file, edited
  CliRun verify = kiln("cache verify --remove");
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_NE(verify.out.find("0 artifact files removed; broken tuning records are dropped by the "
                            "next save"),
            std::string::npos)
      << verify.out;
  EXPECT_EQ(kiln("cache verify").exit_code, 1) << "the record is still there, as it said";
}

}  // namespace
}  // namespace kiln
