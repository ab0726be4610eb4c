// `kiln tune` over a cache whose files were replaced by odd ones (issue
// 14): the tuning file a FIFO with no writer, artifact entries FIFOs (with
// no writer, and with one that never closes) and a terabyte sparse file.
// These used to block the tuner forever in open() or read(); now each is
// refused (a miss, with a warning naming the path and the fix) and the run
// tunes as if the cache were empty. Real kiln processes, real FIFOs, a
// generous deadline that kills a hung run so the test fails, not hangs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deadline_run.hpp"
#include "odd_files.hpp"

namespace {

namespace fs = std::filesystem;

struct Tune {
  fs::path dir;
  kiln::testing::DeadlineRun run(const std::string& args) const {
    return kiln::testing::run_with_deadline(
        "env KILN_CACHE_DIR=" + (dir / "cache").string() +
        " KILN_RANK= RANK= LOCAL_RANK= KILN_TUNING= " KILN_CLI_PATH
        " tune --kernel gemm_f32 --shape M=48,N=40,K=24 --max-configs 3 " +
        args);
  }
};

TEST(FaultOddFiles, KilnTuneOverFifosAndHugeFilesTunesInsteadOfHanging) {
  Tune t{fs::temp_directory_path() / ("kiln_faults_odd_" + std::to_string(::getpid()))};
  fs::remove_all(t.dir);
  fs::create_directories(t.dir);
  kiln::testing::DeadlineRun cold = t.run("--json");
  ASSERT_FALSE(cold.timed_out) << cold.err;
  ASSERT_EQ(cold.exit_code, 0) << cold.err;

  std::vector<fs::path> entries;
  fs::path tuning_file;
  for (const auto& e : fs::recursive_directory_iterator(t.dir / "cache")) {
    if (e.path().extension() == ".kiln") entries.push_back(e.path());
    if (e.path().filename() == "tuning.json") tuning_file = e.path();
  }
  ASSERT_GE(entries.size(), 3u);
  ASSERT_FALSE(tuning_file.empty());
  // No writer: a blocking open of it waits for one forever.
  ASSERT_TRUE(kiln::testing::plant_fifo(tuning_file));
  ASSERT_TRUE(kiln::testing::plant_fifo(entries[0]));
  ASSERT_TRUE(kiln::testing::plant_fifo(entries[1]));
  kiln::testing::FifoWriter entry_writer(entries[1]);
  ASSERT_TRUE(entry_writer.ok());
  ASSERT_TRUE(kiln::testing::plant_sparse(entries[2], kiln::testing::kOneTiB));

  kiln::testing::DeadlineRun warm = t.run("--json");
  ASSERT_FALSE(warm.timed_out) << "kiln tune hung on a FIFO or a huge file\n" << warm.err;
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  nlohmann::json r = nlohmann::json::parse(warm.out, nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << warm.out;
  EXPECT_EQ(r["source"], "tuned") << "a refused tuning file is a miss";
  EXPECT_NE(warm.err.find(tuning_file.string() + ": it is a FIFO, not a regular file; remove it"),
            std::string::npos)
      << warm.err;
  EXPECT_TRUE(kiln::testing::is_fifo(tuning_file)) << "never written through or replaced";
  fs::remove_all(t.dir);
}

}  // namespace
