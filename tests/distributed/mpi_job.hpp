// Runs `kiln tune --distributed` as a real MPI job of N ranks, each rank's
// --json line collected; a deadline turns a hang into a failure.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deadline_run.hpp"
#include "kiln/distributed/collective.hpp"
#include "run_command.hpp"
#include "skip.hpp"

namespace kiln::testing {

inline bool have_mpirun() {
  return run_command("command -v mpirun >/dev/null 2>&1 && echo yes").out == "yes\n";
}

#define KILN_REQUIRE_MPI()                                                                     \
  do {                                                                                         \
    if (!::kiln::mpi_built()) KILN_SKIP(Skip::kMpi) << "Kiln was built without MPI";           \
    if (!::kiln::testing::have_mpirun())                                                       \
      KILN_SKIP(Skip::kMpi) << "mpirun is not installed (scripts/setup.sh installs Open MPI)"; \
  } while (0)

// The environment of every MPI job. Under ASan, leak checking is off for the
// ranks: Open MPI allocates in components it unloads before exit, so those
// allocations reach LeakSanitizer with no module to name or suppress; the
// rest of ASan stays on, and the strategies' own code is leak-checked in
// process (collective_test.cpp).
inline constexpr const char* kMpiEnv = "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\"";

class MpiJob {
 public:
  MpiJob() {
    char dir[] = "/tmp/kiln-mpi-XXXXXX";
    dir_ = ::mkdtemp(dir);
  }
  ~MpiJob() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::filesystem::path& dir() const { return dir_; }

  // `mpirun -np ranks` of `command` (a shell line run by every rank; $KILN
  // is the kiln executable); stdout of rank r goes to dir()/out.<r>.
  DeadlineRun run(int ranks, const std::string& command) {
    // Each rank's stdout to a file of its own: mpirun would interleave them.
    std::ofstream(dir_ / "rank.sh")
        << "KILN=" KILN_CLI_PATH "\nexec >" << dir_.string() << "/out.$OMPI_COMM_WORLD_RANK\n"
        << command << "\n";
    return run_with_deadline(
        "env KILN_CACHE_DIR=" + (dir_ / "cache").string() +
            " KILN_RANK= RANK= LOCAL_RANK= " + std::string(kMpiEnv) +
            " OMPI_ALLOW_RUN_AS_ROOT=1"
            " OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1"
            " mpirun --oversubscribe -np " +
            std::to_string(ranks) + " sh " + (dir_ / "rank.sh").string(),
        std::chrono::seconds(180));
  }
  // Every rank's report (its stdout, when JSON), ordered by rank.
  std::vector<nlohmann::json> rank_reports() const {
    std::vector<nlohmann::json> reports;
    for (int r = 0; r < 64; ++r) {
      std::ifstream in(dir_ / ("out." + std::to_string(r)));
      if (!in) break;
      nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
      if (j.is_object() && j.contains("rank")) reports.push_back(j);
    }
    std::sort(reports.begin(), reports.end(),
              [](const auto& a, const auto& b) { return a["rank"] < b["rank"]; });
    return reports;
  }
  // The records in rank `r`'s tuning file.
  nlohmann::json saved_records(int r) const {
    std::ifstream in(dir_ / "cache" / "tuning" / ("tuning.rank" + std::to_string(r) + ".json"));
    nlohmann::json file = nlohmann::json::parse(in, nullptr, false);
    return file.is_object() ? file["records"] : nlohmann::json();
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace kiln::testing
