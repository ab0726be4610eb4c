// Tuning over a faulty cache directory (issue 9): read-only, full, and with
// corrupted and truncated entries. Each case runs kiln_fault_tuner as its own
// process (the faults are mounts and limits private to it) and checks that
// tuning finished, the healthy configs were measured, the winner is right,
// the failures carry their reasons and the cache holds nothing corrupt.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TunerRun {
  int status = -1;
  json out;
  std::string text;
};

TunerRun run_tuner(const fs::path& cache, const std::string& fs_mode) {
  std::string cmd = std::string(KILN_FAULT_TUNER) + " --cache " + cache.string() + " --fs " +
                    fs_mode + " 2>" + (cache.parent_path() / "stderr.txt").string();
  kiln::testing::CommandRun ran = kiln::testing::run_command(cmd);
  TunerRun run;
  run.status = ran.exit_code;
  run.text = std::move(ran.out);
  run.out = json::parse(run.text, nullptr, false);
  return run;
}

fs::path fresh(const std::string& name) {
  auto root = fs::temp_directory_path() / ("kiln_faults_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "cache");
  return root;
}

// Outcomes by config text, e.g. {"MODE=0,UNROLL=1": "ok"}.
std::map<std::string, std::string> outcomes(const json& out) {
  std::map<std::string, std::string> m;
  for (const auto& e : out["measurements"]) m[e["config"]] = e["outcome"];
  return m;
}

// What every case must show: a finished run, every healthy config measured,
// the broken and the wrong ones failed with their reasons, a right winner
// and its real call right, and no corrupt file in the cache.
void expect_healthy_outcome(const TunerRun& run) {
  ASSERT_EQ(run.status, 0) << run.text;
  ASSERT_FALSE(run.out.is_discarded()) << run.text;
  EXPECT_EQ(run.out["winner"]["MODE"], 0) << run.out.dump(2);
  EXPECT_TRUE(run.out["result_right"].get<bool>());
  if (run.out["source"] == "tuned") {
    auto o = outcomes(run.out);
    ASSERT_EQ(o.size(), 9u) << run.out.dump(2);
    for (const char* u : {"1", "2", "8"}) {
      std::string suffix = std::string(",UNROLL=") + u;
      EXPECT_EQ(o["MODE=0" + suffix], "ok") << run.out.dump(2);
      EXPECT_EQ(o["MODE=1" + suffix], "wrong_result");
      EXPECT_EQ(o["MODE=2" + suffix], "compile_failed");
    }
    for (const auto& m : run.out["measurements"]) {
      if (m["outcome"] != "ok") {
        EXPECT_FALSE(m["reason"].get<std::string>().empty()) << m.dump();
      }
      if (m["outcome"] == "compile_failed") {
        EXPECT_NE(m["reason"].get<std::string>().find("never compiles"), std::string::npos);
      }
    }
  }
  EXPECT_TRUE(run.out["cache_after"]["broken_artifacts"].empty()) << run.out.dump(2);
  EXPECT_EQ(run.out["cache_after"]["temporary_files"], 0) << run.out.dump(2);
  for (const auto& f : run.out["cache_after"]["tuning_files"])
    EXPECT_EQ(f.value("problem", ""), "") << f.dump();
}

TEST(FaultCache, ReadOnlyDirectoryTunesAndWritesNothing) {
  fs::path root = fresh("readonly");
  TunerRun empty = run_tuner(root / "cache", "readonly");
  expect_healthy_outcome(empty);
  EXPECT_EQ(empty.out["source"], "tuned");
  EXPECT_EQ(empty.out["cache_after"]["artifact_entries"], 0);
  EXPECT_EQ(empty.out["cache_after"]["tuning_records"], 0);

  // A warm cache made read-only still serves: nothing compiled, nothing written.
  TunerRun warm = run_tuner(root / "cache", "normal");
  expect_healthy_outcome(warm);
  std::size_t entries = warm.out["cache_after"]["artifact_entries"];
  TunerRun served = run_tuner(root / "cache", "readonly");
  expect_healthy_outcome(served);
  EXPECT_EQ(served.out["source"], "disk") << served.out.dump(2);
  EXPECT_EQ(served.out["cache_after"]["artifact_entries"], entries);
  fs::remove_all(root);
}

TEST(FaultCache, FullFileSystemTunesAndLeavesNoTornEntry) {
  fs::path root = fresh("full");
  TunerRun run = run_tuner(root / "cache", "full");
  expect_healthy_outcome(run);
  EXPECT_EQ(run.out["source"], "tuned");
  // The disk could not take everything: fewer entries than healthy configs
  // compiled, and each one that is there is whole (checked above).
  EXPECT_LT(run.out["cache_after"]["artifact_entries"].get<int>(), 6) << run.out.dump(2);
  fs::remove_all(root);
}

void truncate_half(const fs::path& p) {
  fs::resize_file(p, fs::file_size(p) / 2);
}

void flip_byte(const fs::path& p, std::size_t at) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(c ^ 0x40));
}

TEST(FaultCache, CorruptedAndTruncatedEntriesAreRebuilt) {
  fs::path root = fresh("corrupt");
  TunerRun first = run_tuner(root / "cache", "normal");
  expect_healthy_outcome(first);

  // Damage every artifact entry in turn (truncate, flip a byte in the
  // payload, flip one in the header) and cut the tuning file in half.
  int damaged = 0;
  for (const auto& e : fs::recursive_directory_iterator(root / "cache")) {
    if (!e.is_regular_file()) continue;
    const fs::path& p = e.path();
    if (p.extension() == ".kiln") {
      switch (damaged++ % 3) {
        case 0:
          truncate_half(p);
          break;
        case 1:
          flip_byte(p, fs::file_size(p) - 10);
          break;
        default:
          flip_byte(p, 20);
          break;
      }
    } else if (p.extension() == ".json") {
      truncate_half(p);
    }
  }
  ASSERT_GE(damaged, 3);

  TunerRun second = run_tuner(root / "cache", "normal");
  expect_healthy_outcome(second);
  EXPECT_EQ(second.out["source"], "tuned") << "a cut tuning file must not be served";
  EXPECT_GE(second.out["artifact_stats"]["corrupt_discarded"].get<int>(), 3) << second.out.dump(2);

  // The third run is warm again: the damage was replaced by whole files.
  TunerRun third = run_tuner(root / "cache", "normal");
  expect_healthy_outcome(third);
  EXPECT_EQ(third.out["source"], "disk") << third.out.dump(2);
  fs::remove_all(root);
}

}  // namespace
