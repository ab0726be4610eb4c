// No worker outlives its tuner. A real `kiln tune` is killed while one of
// its workers cannot finish: a config that spins forever in the benchmark
// worker, one that forks a spinning child there, a compile that never ends
// in the compile worker. Afterwards no process of the tuner's is left: not
// its workers, not what they started. Before this was fixed, each of them
// went on spinning at 100% CPU, reparented to init.
#include <sys/wait.h>

#include <csignal>
#include <set>

#include "process_probe.hpp"
#include "reliability_util.hpp"

namespace kiln {
namespace {

using namespace kiln::test;
namespace fs = std::filesystem;

// MODE 1 spins; MODE 2 forks a child that spins, then spins; each announces
// the worker's pid (and the child's) in @DIR@ first. MODE 3 does not finish
// compiling: two billion constexpr steps (minutes).
const std::string kSource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int getpid(void);
extern "C" int fork(void);
extern "C" int rename(const char*, const char*);
extern "C" void* fopen(const char*, const char*);
extern "C" int fprintf(void*, const char*, ...);
extern "C" int fclose(void*);
namespace t {
inline void announce(const char* tmp, const char* path, int pid) {
  void* f = fopen(tmp, "w");
  if (!f) return;
  fprintf(f, "%d", pid);
  fclose(f);
  rename(tmp, path);
}
constexpr unsigned long runaway(unsigned long n) {
  unsigned long x = 0;
  for (unsigned long i = 0; i < n; ++i) x += i ^ (x >> 3);
  return x;
}
template <int MODE, int U>
void spin(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  if constexpr (MODE == 3) {
    constexpr unsigned long v = runaway(2000000000UL + U);  // dependent: per instance
    y[0] = static_cast<float>(v & 1);
  }
  volatile int forever = 1;
  if (MODE == 2) {
    const int child = fork();
    if (child == 0) {
      while (forever) {
      }
    }
    announce("@DIR@/child.pid.tmp", "@DIR@/child.pid", child);
  }
  if (MODE == 1 || MODE == 2) {
    announce("@DIR@/worker.pid.tmp", "@DIR@/worker.pid", getpid());
    while (forever) {
    }
  }
  for (int i = 0; i < n; ++i) y[i] = x[i];
}
}  // namespace t
)";

// Two configs (U = 1, 2) that do the same MODE.
std::string spec(int mode) {
  return R"({
  "name": "lifetime_mode)" +
         std::to_string(mode) + R"(",
  "backend": "cpu",
  "space": {"parameters": [{"name": "MODE", "values": [)" +
         std::to_string(mode) + R"(]}, {"name": "U", "values": [1, 2]}]},
  "launch": {"grid": [1]},
  "args": [{"name": "x", "dtype": "f32", "shape": ["N"]},
           {"name": "y", "dtype": "f32", "shape": ["N"], "role": "output"},
           {"name": "n", "type": "i32", "value": "N"}],
  "options": ["-fconstexpr-steps=2147483647"],
  "reference": "none"
})";
}

std::optional<pid_t> read_pid(const fs::path& file) {
  const std::string text = read_text(file);
  if (text.empty()) return std::nullopt;
  return static_cast<pid_t>(std::stol(text));
}

class WorkerLifetime : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  void TearDown() override {
    // Whatever the outcome, nothing this test started may go on spinning.
    for (const auto& p : seen_) {
      for (const auto& q : alive_in_group(p.pid)) {
        if (q.pid != ::getpid()) ::kill(q.pid, SIGKILL);
      }
      if (!gone(p)) ::kill(p.pid, SIGKILL);
    }
    if (tuner_ > 0) {
      ::kill(tuner_, SIGKILL);
      ::waitpid(tuner_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // Starts `kiln tune` on the MODE `mode` kernel, compiling in one worker.
  void start_tune(int mode) {
    std::ofstream(dir_ / "spin.cpp") << with_dir(kSource, dir_);
    std::ofstream(dir_ / "spin.json") << spec(mode);
    tuner_ = start_program({KILN_CLI_PATH, "tune", "--template", (dir_ / "spin.cpp").string(),
                            "--space", (dir_ / "spin.json").string(), "--entry",
                            "t::spin<{MODE},{U}>", "--shape", "N=64", "--threads", "1"},
                           {"KILN_CACHE_DIR=" + (dir_ / "cache").string(),
                            "KILN_TUNING=", "KILN_WORKER=", "KILN_RANK=", "RANK=", "LOCAL_RANK="},
                           dir_ / "stdout.txt", dir_ / "stderr.txt");
    ASSERT_GT(tuner_, 0);
  }

  bool tuner_running() const { return ::waitpid(tuner_, nullptr, WNOHANG) == 0; }

  // Remembers every child of the tuner now (its workers).
  void record_workers() {
    for (const auto& c : children_of(tuner_)) seen_.push_back(c);
  }

  bool seen(pid_t pid) const {
    for (const auto& p : seen_) {
      if (p.pid == pid) return true;
    }
    return false;
  }

  // Sends `sig` to the tuner and checks that it ended by that signal.
  void end_tuner(int sig) {
    ASSERT_EQ(::kill(tuner_, sig), 0);
    int status = 0;
    ASSERT_TRUE(eventually(30, [&] { return ::waitpid(tuner_, &status, WNOHANG) == tuner_; }))
        << "kiln tune did not end within 30 s of signal " << sig;
    tuner_ = -1;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig)
        << "kiln tune ended with status " << status << " after signal " << sig << "; stderr:\n"
        << read_text(dir_ / "stderr.txt");
  }

  // Every worker seen, and every process in one of their groups, is gone
  // within 30 s (a generous deadline: SIGKILL takes effect at once).
  void expect_no_worker_left() {
    const bool none = eventually(30, [&] {
      for (const auto& p : seen_) {
        if (!gone(p) || !alive_in_group(p.pid).empty()) return false;
      }
      return true;
    });
    if (none) return;
    std::string left;
    for (const auto& p : seen_) {
      for (const auto& q : alive_in_group(p.pid)) {
        left += "\n  " + std::to_string(q.pid) + " (" + q.state + ", parent " +
                std::to_string(q.ppid) + "): " + q.cmdline;
      }
    }
    ADD_FAILURE() << "worker processes outlived kiln tune:" << left;
  }

  // Waits until the benchmark worker runs a spinning config and returns its pid.
  pid_t wait_for_spinning_worker() {
    std::optional<pid_t> worker;
    EXPECT_TRUE(eventually(120, [&] {
      worker = read_pid(dir_ / "worker.pid");
      return worker || !tuner_running();
    }));
    if (!worker) {
      ADD_FAILURE() << "no config started spinning; stderr:\n" << read_text(dir_ / "stderr.txt");
      return -1;
    }
    return *worker;
  }

  // The benchmark worker spins in a config: `sig` ends the tuner and no
  // worker is left.
  void kill_while_benchmark_spins(int sig) {
    start_tune(1);
    const pid_t worker = wait_for_spinning_worker();
    ASSERT_GT(worker, 0);
    record_workers();
    ASSERT_TRUE(seen(worker)) << "the spinning config does not run in a child of kiln tune";
    end_tuner(sig);
    expect_no_worker_left();
  }

  fs::path dir_;
  pid_t tuner_ = -1;
  std::vector<ProcInfo> seen_;
};

TEST_F(WorkerLifetime, SigkillOfTheTunerEndsABenchmarkWorkerThatSpins) {
  kill_while_benchmark_spins(SIGKILL);
}

TEST_F(WorkerLifetime, SigtermOfTheTunerEndsABenchmarkWorkerThatSpins) {
  kill_while_benchmark_spins(SIGTERM);
}

TEST_F(WorkerLifetime, SigintOfTheTunerEndsABenchmarkWorkerThatSpins) {
  kill_while_benchmark_spins(SIGINT);
}

TEST_F(WorkerLifetime, SigtermOfTheTunerEndsWhatAWorkerStarted) {
  start_tune(2);
  const pid_t worker = wait_for_spinning_worker();
  ASSERT_GT(worker, 0);
  std::optional<pid_t> child;
  ASSERT_TRUE(eventually(30, [&] { return (child = read_pid(dir_ / "child.pid")).has_value(); }));
  record_workers();
  ASSERT_TRUE(seen(worker));
  auto grandchild = read_proc(*child);
  ASSERT_TRUE(grandchild.has_value()) << "the config's child is not running";
  EXPECT_EQ(grandchild->pgid, worker) << "the worker's child is not in the worker's group";
  seen_.push_back(*grandchild);
  end_tuner(SIGTERM);
  expect_no_worker_left();
}

TEST_F(WorkerLifetime, SigkillOfTheTunerEndsACompileWorkerThatNeverFinishes) {
  start_tune(3);
  // The compile worker is in the runaway once it has spent a few seconds of
  // CPU (starting and compiling anything else takes far less).
  const long ticks = ::sysconf(_SC_CLK_TCK);
  std::optional<ProcInfo> compiler;
  ASSERT_TRUE(eventually(120, [&] {
    for (const auto& c : children_of(tuner_)) {
      if (c.cmdline.find("--compile") != std::string::npos &&
          c.cpu_ticks >= static_cast<unsigned long long>(3 * ticks)) {
        compiler = c;
      }
    }
    return compiler || !tuner_running();
  }));
  ASSERT_TRUE(compiler.has_value()) << "no compile worker got busy; stderr:\n"
                                    << read_text(dir_ / "stderr.txt");
  record_workers();
  end_tuner(SIGKILL);
  expect_no_worker_left();
}

// PR_SET_PDEATHSIG fires when the thread that forked the child ends, and
// Kiln starts workers from threads that end before their workers do (an idle
// benchmark worker waits in a pool for the next run).
TEST_F(WorkerLifetime, AWorkerOutlivesTheThreadThatStartedItButNotItsProcess) {
  tuner_ = start_program({KILN_WORKER_PARENT_PATH, "/bin/sleep", "600"}, {}, dir_ / "stdout.txt",
                         dir_ / "stderr.txt");
  ASSERT_GT(tuner_, 0);
  std::optional<pid_t> worker;
  ASSERT_TRUE(eventually(30, [&] { return (worker = read_pid(dir_ / "stdout.txt")).has_value(); }))
      << read_text(dir_ / "stderr.txt");
  // Room for a death signal sent at the thread's exit to arrive.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto p = read_proc(*worker);
  ASSERT_TRUE(p && p->state != 'Z') << "the worker died with the thread that started it";
  EXPECT_EQ(p->ppid, tuner_);
  EXPECT_EQ(p->pgid, *worker) << "the worker does not lead a process group of its own";
  seen_.push_back(*p);
  end_tuner(SIGKILL);
  expect_no_worker_left();
}

TEST_F(WorkerLifetime, CtrlZStopsTheWorkersWithTheTunerAndSigcontResumesThem) {
  start_tune(1);
  const pid_t worker = wait_for_spinning_worker();
  ASSERT_GT(worker, 0);
  record_workers();
  auto state = [](pid_t pid) {
    auto p = read_proc(pid);
    return p ? p->state : '?';
  };
  ASSERT_EQ(::kill(tuner_, SIGTSTP), 0);
  EXPECT_TRUE(eventually(30, [&] { return state(worker) == 'T' && state(tuner_) == 'T'; }))
      << "worker " << state(worker) << ", tuner " << state(tuner_);
  ASSERT_EQ(::kill(tuner_, SIGCONT), 0);
  EXPECT_TRUE(eventually(30, [&] { return state(worker) == 'R' && state(tuner_) != 'T'; }))
      << "worker " << state(worker) << ", tuner " << state(tuner_);
  end_tuner(SIGKILL);
  expect_no_worker_left();
}

}  // namespace
}  // namespace kiln
