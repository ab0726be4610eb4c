// The `kiln cache` CLI tests' fixture: a cache directory the library
// populated (three artifact entries, one tuning file with two records) and
// the real executable run over it, its --json output parsed.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cache_test_util.hpp"
#include "deadline_run.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "run_command.hpp"

namespace kiln::testing {

using CliRun = CommandRun;

// Runs `kiln cache ARGS` with the environment prefix `env` (stdout only).
inline CliRun kiln_cache(const std::string& env, const std::string& args) {
  return run_command(env + " " KILN_CLI_PATH " cache " + args + " 2>/dev/null");
}

class CacheCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = "env KILN_CACHE_DIR=" + dir_.path().string() + " KILN_RANK= RANK= LOCAL_RANK=";
    ArtifactCache artifacts(options_for(dir_.path()));
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(artifacts.store(test_key(i), test_artifact(i, 20'000)).ok());
      entries_.push_back(artifacts.entry_path(test_key(i)));
    }
    TuningCache tuning(options_for(dir_.path()));
    tuning.put(test_record("gemm", 1, 1.0));
    tuning.put(test_record("gemm", 2, 2.0));
    ASSERT_TRUE(tuning.save().ok());
    entry0_ = entries_[0];
    tuning_file_ = tuning.write_path();
  }

  TempDir dir_;
  std::string env_;
  std::vector<std::filesystem::path> entries_;
  std::filesystem::path entry0_;
  std::filesystem::path tuning_file_;

 public:
  // `kiln cache ARGS` (stdout and stderr apart) within the deadline;
  // `in_child` runs in the child before exec.
  DeadlineRun kiln_within_deadline(const std::string& args, const std::string& env_extra = "",
                                   const std::function<bool()>& in_child = {}) const {
    return run_with_deadline(env_ + " " + env_extra + " " KILN_CLI_PATH " cache " + args,
                             std::chrono::seconds(60), in_child);
  }
};

}  // namespace kiln::testing
