// An interrupted `kiln tune` resumes (issue 57 §4), end to end: the real
// executable in a child process over a fresh cache directory, real Clang
// compiles on the CPU backend, killed (SIGKILL, SIGTERM) once some
// measurements are in its journal; the same command again measures only
// what is missing, says `resumed: N measured before`, and removes the
// journal when it finishes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli_runner.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using ResumeCli = testing::CliTest;

// Each call sleeps: configs land one by one, a few tenths of a second apart.
constexpr const char* kNapSource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
namespace t {
template <int V>
void nap(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  usleep(3000 + 100 * V);
  for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f;
}
}  // namespace t
)";

constexpr const char* kNapSpec = R"({
  "name": "resume_nap",
  "backend": "cpu",
  "space": {"parameters": [{"name": "V", "values": [1, 2, 3, 4, 5, 6, 7, 8]}],
            "default": {"V": 1}},
  "launch": {"grid": [1, 1, 1]},
  "args": [{"name": "x", "dtype": "f32", "shape": ["N"], "role": "input", "init": "random"},
           {"name": "y", "dtype": "f32", "shape": ["N"], "role": "output", "init": "zeros"},
           {"name": "n", "type": "i32", "value": "N"}],
  "reference": "default_config"
})";

constexpr std::size_t kConfigs = 8;

class Resume : public ResumeCli {
 protected:
  std::string args() const {
    return "tune --template " + (dir_ / "kernel.cpp").string() + " --space " +
           (dir_ / "kernel.json").string() +
           " --entry 't::nap<{V}>' --shape N=64 --search exhaustive --group-size 1";
  }

  // Lines in the journals of this test's cache.
  std::size_t journal_lines() const {
    std::size_t n = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir_ / "cache" / "tuning" / "journal", ec), end;
         !ec && it != end; it.increment(ec)) {
      std::ifstream in(it->path());
      for (std::string line; std::getline(in, line);) n += !line.empty();
    }
    return n;
  }

  // Starts `kiln tune`, waits until `lines` measurements are in its
  // journal, and ends it with `sig`. The lines then kept (0: it finished
  // or never got there within two minutes).
  std::size_t tune_killed(int sig, std::size_t lines) {
    std::ofstream(dir_ / "kernel.cpp") << kNapSource;
    std::ofstream(dir_ / "kernel.json") << kNapSpec;
    const std::string cmd = "exec env KILN_CACHE_DIR=" + (dir_ / "cache").string() +
                            " KILN_RANK= RANK= LOCAL_RANK= KILN_TUNING= KILN_RETUNE= " + cli_ +
                            " " + args() + " >/dev/null 2>" + (dir_ / "killed.txt").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    for (int i = 0; i < 1200 && journal_lines() < lines; ++i) {
      if (::waitpid(pid, &status, WNOHANG) == pid) return 0;  // it finished first
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid, sig);
    ::waitpid(pid, &status, 0);
    return journal_lines();
  }
};

TEST_F(Resume, AKilledTuneMeasuresOnlyWhatIsMissing) {
  const std::size_t kept = tune_killed(SIGKILL, 3);
  ASSERT_GE(kept, 3u) << testing::read_file(dir_ / "killed.txt");
  ASSERT_LT(kept, kConfigs) << "the run was not stopped early";
  CliRun again = kiln_with("timeout -k 5 240 ", args() + " --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const nlohmann::json r = again.json();
  const std::size_t resumed = r.at("stats").at("resumed").get<std::size_t>();
  EXPECT_GE(resumed, kept - 1) << "every kept config but the default (the reference)";
  EXPECT_LE(resumed, kept);
  EXPECT_EQ(r.at("configs").size(), kConfigs) << "the report lists the resumed configs too";
  EXPECT_EQ(testing::count_status(r, "ok"), kConfigs);
  // Built: the missing configs, and the winner again when it was resumed.
  const std::size_t built = r.at("stats").at("compiled").get<std::size_t>() +
                            r.at("stats").at("artifact_hits").get<std::size_t>();
  EXPECT_GE(built, kConfigs - resumed);
  EXPECT_LE(built, kConfigs - resumed + 1);
  EXPECT_EQ(journal_lines(), 0u) << "a finished run removes its journal";
}

TEST_F(Resume, ATerminatedTuneSaysWhatItResumed) {
  const std::size_t kept = tune_killed(SIGTERM, 2);
  ASSERT_GE(kept, 2u) << testing::read_file(dir_ / "killed.txt");
  ASSERT_LT(kept, kConfigs);
  CliRun again = kiln_with("timeout -k 5 240 ", args());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("resumed: "), std::string::npos) << again.out;
  EXPECT_NE(again.out.find(" measured before"), std::string::npos) << again.out;
  EXPECT_EQ(again.out.find("resumed: 0 "), std::string::npos) << again.out;
  EXPECT_EQ(journal_lines(), 0u);
  // Served from the cache now: nothing to resume, nothing said.
  CliRun served = kiln_with("timeout -k 5 240 ", args());
  ASSERT_EQ(served.exit_code, 0) << served.err;
  EXPECT_EQ(served.out.find("resumed: "), std::string::npos) << served.out;
}

TEST_F(Resume, CacheCommandsReadPastAJournalAndClearRemovesIt) {
  ASSERT_GE(tune_killed(SIGKILL, 1), 1u) << testing::read_file(dir_ / "killed.txt");
  EXPECT_EQ(kiln("cache ls").exit_code, 0);
  CliRun verify = kiln("cache verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  CliRun clear = kiln("cache clear");
  ASSERT_EQ(clear.exit_code, 0) << clear.err;
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "tuning" / "journal"))
      << "a cleared cache resumes nothing";
}

}  // namespace
}  // namespace kiln
