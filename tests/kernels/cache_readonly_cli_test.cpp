// `kiln cache` commands that read must leave a missing cache missing; an
// export that could not read a tuning file says so and fails; a Kernel
// Tuner export is written atomically and replaces a symlink at its path
// instead of writing through it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

namespace kiln::testing {
namespace {

class CacheReadOnlyCli : public CliTest {};

TEST_F(CacheReadOnlyCli, LsAndVerifyOfAMissingCacheSaySoAndCreateNothing) {
  const fs::path cache = dir_ / "cache";  // KILN_CACHE_DIR of kiln(): absent
  ASSERT_FALSE(fs::exists(cache));
  for (const char* command : {"cache ls", "cache verify"}) {
    CliRun run = kiln(command);
    EXPECT_EQ(run.exit_code, 0) << command << ": " << run.err;
    EXPECT_NE(run.out.find("no cache at " + cache.string()), std::string::npos) << run.out;
    EXPECT_FALSE(fs::exists(cache)) << command << " created " << cache;
  }
  CliRun json = kiln("cache ls --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.json().at("exists"), false);
  EXPECT_TRUE(json.json().at("tuning_records").empty());
  EXPECT_FALSE(fs::exists(cache));
}

TEST_F(CacheReadOnlyCli, ExportFailsNamingATuningFileItCouldNotRead) {
  const fs::path tuning = dir_ / "cache" / "tuning" / "tuning.json";
  fs::create_directories(tuning.parent_path());
  std::ofstream(tuning) << "{not json";
  CliRun run = kiln("cache export " + (dir_ / "table.json").string());
  EXPECT_NE(run.exit_code, 0) << run.out;
  EXPECT_NE(run.err.find(tuning.string()), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("not exported"), std::string::npos) << run.err;
}

TEST_F(CacheReadOnlyCli, AKernelTunerExportReplacesASymlinkInsteadOfWritingThroughIt) {
  CliRun tuned =
      kiln("tune --kernel fused_add_rmsnorm --shape rows=8,hidden=40 --max-configs 2 --json");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const fs::path target = dir_ / "elsewhere.txt";
  std::ofstream(target) << "keep";
  const fs::path file = dir_ / "export.json";
  fs::create_symlink(target, file);
  CliRun exported = kiln("cache export --format kernel-tuner " + file.string());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(read_file(target), "keep");
  EXPECT_FALSE(fs::is_symlink(file));
  EXPECT_NE(read_file(file).find("\"cache\""), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary left behind
    EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << e.path();
}

}  // namespace
}  // namespace kiln::testing
