// A benchmark worker named by KILN_WORKER that is missing or is not a Kiln
// worker stops `kiln tune` with an error that names the variable and the
// fix, and nothing is saved; with --isolation thread the same run tunes.
// Before, a missing worker silently dropped crash isolation and a wrong
// program failed every config (and the default was saved as tuned).
#include <sys/stat.h>

#include "reliability_util.hpp"
#include "run_command.hpp"

namespace kiln {
namespace {

using namespace kiln::test;
namespace fs = std::filesystem;

class WorkerEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { fs::remove_all(dir_); }

  struct Run {
    int exit_code = -1;
    std::string err;
  };

  // `kiln tune` on the user-kernel example with KILN_WORKER=`worker`.
  Run tune(const std::string& worker, const std::string& extra = "") const {
    const std::string example = KILN_SOURCE_DIR "/examples/user_kernel/";
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = "env KILN_CACHE_DIR=" + (dir_ / "cache").string() +
                            " KILN_TUNING= KILN_RANK= RANK= LOCAL_RANK= KILN_WORKER='" + worker +
                            "' " KILN_CLI_PATH " tune --template " + example +
                            "transpose.cpp --space " + example +
                            "space.json --entry 'example::transpose<{TILE},{STAGED}>' "
                            "--shape M=16,N=24 --max-configs 2 " +
                            extra + " 2>" + err.string();
    auto ran = kiln::testing::run_command(cmd);
    return {ran.exit_code, read_text(err)};
  }

  // Records in the tuning cache, as a fresh reader sees them.
  std::size_t tuning_records() const {
    Options o = Options::global();
    o.cache_dir = dir_ / "cache";
    return TuningCache(o).records().size();
  }

  void expect_refused(const std::string& worker) {
    SCOPED_TRACE("KILN_WORKER=" + worker);
    Run run = tune(worker);
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("KILN_WORKER='" + worker + "'"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("--isolation thread"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("kiln-bench-worker"), std::string::npos) << run.err;
    EXPECT_EQ(tuning_records(), 0u) << "a refused run saved a tuning record";

    Run threads = tune(worker, "--isolation thread");
    EXPECT_EQ(threads.exit_code, 0) << threads.err;
    EXPECT_EQ(tuning_records(), 1u);
    fs::remove_all(dir_ / "cache");
  }

  fs::path dir_;
};

TEST_F(WorkerEnv, AMissingWorkerIsAnErrorNamingKilnWorker) {
  expect_refused((dir_ / "nonexistent" / "kiln-bench-worker").string());
  expect_refused(dir_.string());  // a directory is not an executable file
}

TEST_F(WorkerEnv, AProgramThatExitsAtOnceIsAnErrorNamingKilnWorker) {
  expect_refused("/bin/true");
}

TEST_F(WorkerEnv, AProgramThatEchoesTheHelloIsAnErrorNamingKilnWorker) {
  expect_refused("/bin/cat");
}

TEST_F(WorkerEnv, AScriptThatPrintsGarbageIsAnErrorNamingKilnWorker) {
  const fs::path script = dir_ / "junk.sh";
  std::ofstream(script) << "#!/bin/sh\necho 'this is not a kiln worker'\n";
  fs::permissions(script, fs::perms::owner_all);
  expect_refused(script.string());
}

TEST_F(WorkerEnv, AutoIsolationAlsoRefusesAWorkerTheUserNamed) {
  Run run = tune("/bin/true", "--isolation auto");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("KILN_WORKER='/bin/true'"), std::string::npos) << run.err;
  EXPECT_EQ(tuning_records(), 0u);
}

}  // namespace
}  // namespace kiln
