// `kiln cache` end to end: the real executable, run on a cache directory
// the library populated, its --json output parsed and checked.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_fixture.hpp"

namespace kiln {
namespace {

using testing::kiln_cache;
using testing::options_for;
using testing::TempDir;
using CliRun = testing::CliRun;
using CacheCli = testing::CacheCliTest;

TEST_F(CacheCli, PathStatsAndLs) {
  CliRun path = kiln_cache(env_, "path --json");
  ASSERT_EQ(path.exit_code, 0);
  EXPECT_EQ(path.json()["cache_dir"], dir_.path().string());
  EXPECT_EQ(kiln_cache(env_, "path").out, dir_.path().string() + "\n");

  CliRun stats = kiln_cache(env_, "stats --json");
  ASSERT_EQ(stats.exit_code, 0) << stats.out;
  EXPECT_EQ(stats.json()["artifacts"]["entries"], 3);
  EXPECT_EQ(stats.json()["artifacts"]["status"]["state"], "ready");
  EXPECT_EQ(stats.json()["tuning"]["records"], 2);

  CliRun ls = kiln_cache(env_, "ls --json");
  ASSERT_EQ(ls.exit_code, 0);
  ASSERT_EQ(ls.json()["artifacts"].size(), 3u);
  EXPECT_EQ(ls.json()["artifacts"][0]["meta"]["format"], "cubin");
  ASSERT_EQ(ls.json()["tuning_records"].size(), 2u);
  EXPECT_EQ(ls.json()["tuning_records"][0]["kernel"], "gemm");
  CliRun text = kiln_cache(env_, "ls");
  EXPECT_NE(text.out.find("gemm|#M=int:1"), std::string::npos) << text.out;
}

TEST_F(CacheCli, VerifyReportsAndRemovesBrokenEntries) {
  EXPECT_EQ(kiln_cache(env_, "verify").exit_code, 0);
  std::filesystem::resize_file(entry0_, 100);
  CliRun broken = kiln_cache(env_, "verify --json");
  EXPECT_EQ(broken.exit_code, 1);
  ASSERT_EQ(broken.json()["broken"].size(), 1u);
  EXPECT_EQ(broken.json()["broken"][0]["path"], entry0_.string());
  EXPECT_TRUE(std::filesystem::exists(entry0_)) << "verify without --remove removed";
  EXPECT_EQ(kiln_cache(env_, "verify --remove").exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(entry0_));
  CliRun after = kiln_cache(env_, "verify --json");
  EXPECT_EQ(after.exit_code, 0);
  EXPECT_EQ(after.json()["entries"], 2);
}

TEST_F(CacheCli, PruneToASize) {
  CliRun pruned = kiln_cache(env_, "prune --max-size 30000 --json");
  ASSERT_EQ(pruned.exit_code, 0) << pruned.out;
  EXPECT_EQ(pruned.json()["entries"], 1);
  EXPECT_LE(pruned.json()["bytes"].get<std::uint64_t>(), 30000u);
  EXPECT_EQ(kiln_cache(env_, "prune --max-size 0").exit_code, 0);
  EXPECT_EQ(kiln_cache(env_, "stats --json").json()["artifacts"]["entries"], 0);
  EXPECT_EQ(kiln_cache(env_, "prune --max-size lots").exit_code, 2) << "a malformed size is usage";
  EXPECT_EQ(kiln_cache(env_, "prune").exit_code, 2) << "--max-size is required";
}

TEST_F(CacheCli, ExportClearImportRoundTrip) {
  TempDir out;
  const auto table = out.path() / "table.json";
  CliRun exported = kiln_cache(env_, "export " + table.string() + " --json");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  EXPECT_EQ(exported.json()["exported_records"], 2);

  CliRun cleared = kiln_cache(env_, "clear --json");
  ASSERT_EQ(cleared.exit_code, 0);
  EXPECT_EQ(cleared.json()["removed_entries"], 3);
  EXPECT_EQ(cleared.json()["removed_tuning_files"], 1);
  EXPECT_EQ(kiln_cache(env_, "stats --json").json()["tuning"]["records"], 0);

  CliRun imported = kiln_cache(env_, "import " + table.string() + " --json");
  ASSERT_EQ(imported.exit_code, 0) << imported.out;
  EXPECT_EQ(imported.json()["imported_records"], 2);
  TuningCache reread(options_for(dir_.path()));
  EXPECT_TRUE(
      reread.lookup(ProblemKey("gemm").scalar("M", std::int64_t{2}), testing::test_identity()));

  std::ofstream(out.path() / "junk.json") << "{not json";
  EXPECT_EQ(kiln_cache(env_, "import " + (out.path() / "junk.json").string()).exit_code, 1);
}

// The newest record's measurements as a Kernel Tuner cache file, which
// `kiln-lab bench search --recorded` reads back.
TEST_F(CacheCli, ExportsAKernelTunerCacheFileThatReplays) {
  TempDir out;
  const auto file = out.path() / "kt.json";
  CliRun exported =
      kiln_cache(env_, "export --format kernel-tuner --kernel gemm " + file.string() + " --json");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  EXPECT_EQ(exported.json()["exported_configs"], 2);
  std::ifstream in(file);
  const nlohmann::json kt = nlohmann::json::parse(in);
  EXPECT_EQ(kt["tune_params_keys"], (nlohmann::json{"BM", "BN", "STAGES"}));
  EXPECT_EQ(kt["cache"]["128,128,4"]["time"], "RuntimeFailedConfig");
  CliRun replay = testing::run_command(KILN_LAB_PATH " bench search --recorded " + file.string() +
                                       " --seeds 2 --max-configs 2 --json 2>/dev/null");
  ASSERT_EQ(replay.exit_code, 0) << replay.out;
  EXPECT_EQ(replay.json()[0]["configs"], 2);
  CliRun none =
      kiln_cache(env_, "export --format kernel-tuner --kernel absent " + file.string() + " --json");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.out.find("no tuning record of kernel absent"), std::string::npos) << none.out;
  // The kiln table is plain JSON: a .gz name for it is refused (gunzip
  // refused the file, and import a gzip'd one).
  CliRun kiln_gz = testing::run_command(env_ + " " KILN_CLI_PATH " cache export " +
                                        (out.path() / "table.json.gz").string() + " 2>&1");
  EXPECT_EQ(kiln_gz.exit_code, 2) << kiln_gz.out;
  EXPECT_NE(kiln_gz.out.find("names a gzip file, but the kiln format is plain JSON"),
            std::string::npos)
      << kiln_gz.out;
  EXPECT_FALSE(std::filesystem::exists(out.path() / "table.json.gz"));
  // An empty --kernel was taken as none (the newest record of any kernel).
  CliRun empty = testing::run_command(
      env_ + " " KILN_CLI_PATH " cache export --format kernel-tuner --kernel '' " + file.string() +
      " 2>&1");
  EXPECT_EQ(empty.exit_code, 2) << empty.out;
  EXPECT_NE(empty.out.find("--kernel: the kernel name is empty"), std::string::npos) << empty.out;

  // FILE.gz is gzip'd, as named (plain JSON under that name was refused by
  // gunzip and Kernel Tuner), and replays the same.
  const auto gz = out.path() / "kt.json.gz";
  ASSERT_EQ(kiln_cache(env_, "export --format kernel-tuner --kernel gemm " + gz.string()).exit_code,
            0);
  std::ifstream gz_in(gz, std::ios::binary);
  std::string magic(2, '\0');
  gz_in.read(magic.data(), 2);
  EXPECT_EQ(magic, "\x1f\x8b") << "not gzip'd";
  CliRun gunzipped = testing::run_command("gunzip -c " + gz.string());
  ASSERT_EQ(gunzipped.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(gunzipped.out), kt);
  CliRun replay_gz = testing::run_command(KILN_LAB_PATH " bench search --recorded " + gz.string() +
                                          " --seeds 2 --max-configs 2 --json 2>/dev/null");
  ASSERT_EQ(replay_gz.exit_code, 0) << replay_gz.out;
  EXPECT_EQ(replay_gz.json()[0]["configs"], 2);
}

TEST_F(CacheCli, ReadOnlyRefusesToChangeAnything) {
  const std::string ro = env_ + " KILN_CACHE_READ_ONLY=1";
  EXPECT_EQ(kiln_cache(ro, "stats --json").json()["artifacts"]["status"]["state"], "read-only");
  EXPECT_EQ(kiln_cache(ro, "clear").exit_code, 1);
  EXPECT_EQ(kiln_cache(ro, "prune --max-size 0").exit_code, 1);
  TempDir out;
  const auto table = out.path() / "table.json";
  ASSERT_EQ(kiln_cache(ro, "export " + table.string()).exit_code, 0);
  EXPECT_EQ(kiln_cache(ro, "import " + table.string()).exit_code, 1);
  EXPECT_EQ(kiln_cache(env_, "stats --json").json()["artifacts"]["entries"], 3);
}

}  // namespace
}  // namespace kiln
