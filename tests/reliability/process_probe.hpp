// What the worker-lifetime tests need to watch real processes: start a
// program directly (so that its pid is the program's, not a shell's), read
// /proc to find its children and how they are, and tell whether a process
// seen before is gone (exited, a zombie, or its pid now someone else's).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace kiln::test {

struct ProcInfo {
  pid_t pid = -1, ppid = -1, pgid = -1;
  char state = '?';                  // R, S, D, T, Z, X
  unsigned long long start = 0;      // start time in clock ticks since boot
  unsigned long long cpu_ticks = 0;  // user + system
  std::string cmdline;               // arguments joined by spaces
};

inline std::optional<ProcInfo> read_proc(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return std::nullopt;
  // The command name is in parentheses and may hold spaces: fields follow the last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream f(stat.substr(close + 2));
  ProcInfo p;
  p.pid = pid;
  std::string skip;
  unsigned long long utime = 0, stime = 0;
  f >> p.state >> p.ppid >> p.pgid;
  for (int field = 6; field <= 13; ++field) f >> skip;  // session .. cmajflt
  f >> utime >> stime;
  for (int field = 16; field <= 21; ++field) f >> skip;  // cutime .. itrealvalue
  f >> p.start;
  if (!f) return std::nullopt;
  p.cpu_ticks = utime + stime;
  std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
  std::string arg;
  while (std::getline(cmd, arg, '\0')) p.cmdline += (p.cmdline.empty() ? "" : " ") + arg;
  return p;
}

inline std::vector<ProcInfo> all_processes() {
  std::vector<ProcInfo> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto p = read_proc(static_cast<pid_t>(std::stol(name)))) out.push_back(*p);
  }
  return out;
}

inline std::vector<ProcInfo> children_of(pid_t parent) {
  std::vector<ProcInfo> out;
  for (const auto& p : all_processes()) {
    if (p.ppid == parent) out.push_back(p);
  }
  return out;
}

// The process seen as `seen` no longer runs: no such pid, a zombie, or the
// pid reused by another process.
inline bool gone(const ProcInfo& seen) {
  auto now = read_proc(seen.pid);
  return !now || now->state == 'Z' || now->state == 'X' || now->start != seen.start;
}

// Processes still running in the process group of a worker seen before
// (what the worker started, too).
inline std::vector<ProcInfo> alive_in_group(pid_t pgid) {
  std::vector<ProcInfo> out;
  for (const auto& p : all_processes()) {
    if (p.pgid == pgid && p.state != 'Z' && p.state != 'X') out.push_back(p);
  }
  return out;
}

// Polls `done` every 50 ms until it holds or `seconds` pass.
template <class F>
bool eventually(double seconds, F done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// Starts `argv` with this environment plus `env` ("NAME=value"), stdout and
// stderr to files, default SIGTERM/SIGINT handling and no signal blocked
// (whatever the test runner left).
inline pid_t start_program(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const std::filesystem::path& out,
                           const std::filesystem::path& err) {
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    bool replaced = false;
    for (const auto& mine : env) {
      replaced = replaced || v.substr(0, v.find('=') + 1) == mine.substr(0, mine.find('=') + 1);
    }
    if (!replaced) vars.push_back(v);
  }
  vars.insert(vars.end(), env.begin(), env.end());
  std::vector<char*> envp, args;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  // NOTES: a process group of its own, whose parent (this test) is in
  // another group of the same session: never an orphaned group, in which
  // the kernel discards SIGTSTP (ctest may run this test as a session
  // leader, which orphans the test's own group).
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

}  // namespace kiln::test
