// A choose_one decision made in one process is served in the next: real
// processes (fork/exec of kiln_framework_worker) sharing one tuning file.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../cache/process_util.hpp"
#include "framework_test_util.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

int run_worker(const std::vector<std::string>& args) {
  return testing::wait_exit(testing::spawn(args));
}

std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(Persistence, ADecisionSurvivesIntoTheNextProcess) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  auto dir = testing::fresh_dir("persist");
  std::string cache = (dir / "tactics.json").string();
  ASSERT_EQ(run_worker({KILN_FRAMEWORK_WORKER, cache, "tune", (dir / "first").string()}), 0);
  std::istringstream first(read_line(dir / "first"));
  std::string source, runner;
  int tactic = -9;
  first >> source >> runner >> tactic;
  EXPECT_EQ(source, "tuned");
  EXPECT_TRUE(runner == "worker_a@1" || runner == "worker_b@1") << runner;
  EXPECT_GE(tactic, 0);

  // The second process does not tune: it is served the first one's choice.
  ASSERT_EQ(run_worker({KILN_FRAMEWORK_WORKER, cache, "serve", (dir / "second").string()}), 0);
  EXPECT_EQ(read_line(dir / "second"), "disk " + runner + " " + std::to_string(tactic));
  // Without the file, the same process would fall back.
  ASSERT_EQ(run_worker({KILN_FRAMEWORK_WORKER, (dir / "none.json").string(), "serve",
                        (dir / "third").string()}),
            0);
  EXPECT_EQ(read_line(dir / "third"), "fallback worker_a@1 -1");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln
