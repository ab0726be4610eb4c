// The spawner thread and the registry of live worker groups; see
// worker_spawner.hpp for why both exist.
#include "kiln/process/worker_spawner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "kiln/core/log.hpp"
#include "kiln/process/worker_process.hpp"

extern char** environ;

namespace kiln {

namespace internal {

namespace {

// ---- live worker groups ----------------------------------------------------
// Read from signal handlers: a fixed array of lock-free slots, no allocation
// and no lock. 0 is a free slot.
constexpr int kSlots = 1024;
std::atomic<pid_t> g_groups[kSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free);

[[nodiscard]] bool remember_worker(pid_t pid) {
  for (auto& slot : g_groups) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, pid)) return true;
  }
  return false;
}

// ---- the spawner thread ----------------------------------------------------

struct Request {
  std::vector<char*> argv;            // null-terminated
  int stdin_fd = -1, stdout_fd = -1;  // -1: inherited
  SpawnResult result;
  bool done = false;
};

// Makes `fd` the child's descriptor `target` (inheritable). Async-signal-safe.
[[nodiscard]] bool install_fd(int fd, int target) {
  if (fd == target) return ::fcntl(fd, F_SETFD, 0) == 0;  // dup2 would keep CLOEXEC
  return ::dup2(fd, target) == target;
}

// Between fork and exec the child of a multi-threaded parent may only make
// async-signal-safe calls: no allocation, no locks, no logging.
[[noreturn]] void run_child(const Request& r, pid_t parent, int report_fd) {
  // Dies with the spawner thread (that is, with the process); a parent that
  // died before this line is noticed by the check that follows.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
  ::setpgid(0, 0);
  int err = 0;
  if ((r.stdin_fd >= 0 && !install_fd(r.stdin_fd, 0)) ||
      (r.stdout_fd >= 0 && !install_fd(r.stdout_fd, 1))) {
    err = errno;
  } else {
    // The spawner blocks every signal; the worker starts with none blocked.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(r.argv[0], r.argv.data(), environ);
    err = errno;
  }
  // The report pipe closes on a successful exec; else it carries errno.
  while (::write(report_fd, &err, sizeof err) < 0 && errno == EINTR) {
  }
  ::_exit(127);
}

SpawnResult fork_exec(const Request& r) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return {-1, errno, "pipe"};
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) run_child(r, parent, report[1]);
  const int fork_errno = errno;
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return {-1, fork_errno, "fork"};
  }
  // Both sides set the group, so it is set before either goes on (this one
  // fails harmlessly once the child has exec'd).
  ::setpgid(pid, pid);
  if (!remember_worker(pid)) {
    log_once(LogLevel::kWarn, "worker-groups-full",
             "more than 1024 worker processes at once: the ones beyond that die with this "
             "process, but what they start may not");
  }
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n > 0) {
    forget_worker(pid);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return {-1, child_errno, "exec"};
  }
  return {pid, 0, ""};
}

class Spawner {
 public:
  static Spawner& instance() {
    // Never destroyed: its thread must live as long as the process, or the
    // children it forked would get their PR_SET_PDEATHSIG early.
    static Spawner* spawner = new Spawner;
    return *spawner;
  }

  SpawnResult run(Request& r) {
    std::unique_lock lock(mutex_);
    queue_.push_back(&r);
    wake_.notify_one();
    done_.wait(lock, [&] { return r.done; });
    return r.result;
  }

 private:
  Spawner() {
    std::thread([this] { loop(); }).detach();
  }

  [[noreturn]] void loop() {
    // Signals go to the other threads; a child starts from this mask.
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (;;) {
      Request* r;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return !queue_.empty(); });
        r = queue_.front();
        queue_.pop_front();
      }
      SpawnResult result = fork_exec(*r);
      std::lock_guard lock(mutex_);
      r->result = result;
      r->done = true;
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Request*> queue_;
};

}  // namespace

SpawnResult spawn_worker(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd) {
  Request r;
  for (const auto& a : argv) r.argv.push_back(const_cast<char*>(a.c_str()));
  r.argv.push_back(nullptr);
  r.stdin_fd = stdin_fd;
  r.stdout_fd = stdout_fd;
  return Spawner::instance().run(r);
}

void forget_worker(pid_t pid) noexcept {
  if (pid <= 0) return;
  for (auto& slot : g_groups) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace internal

void signal_worker_groups(int sig) noexcept {
  const int saved = errno;  // a signal handler must leave errno as it was
  for (auto& slot : internal::g_groups) {
    const pid_t pid = slot.load();
    if (pid <= 0) continue;
    ::kill(-pid, sig);  // the group: the worker and what it started
    ::kill(pid, sig);   // the worker, in case its group is not set yet
  }
  errno = saved;
}

}  // namespace kiln
