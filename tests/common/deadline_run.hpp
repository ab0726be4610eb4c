// Runs a shell command line in a child process with a deadline: the way a
// test proves that something does not hang. The child runs in a process
// group of its own; when the deadline passes the whole group is SIGKILLed
// and the run says timed_out, so a hang fails the test instead of hanging
// it. The deadline is generous (a bound, not a timing assertion).
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

namespace kiln::testing {

struct DeadlineRun {
  int exit_code = -1;      // -1: it did not exit (killed, or could not start)
  bool timed_out = false;  // the deadline passed and the group was killed
  std::string out, err;    // everything it wrote to stdout and to stderr
};

// `in_child` (optional) runs in the child after fork, before exec (e.g. to
// enter a private mount namespace); the child exits 125 when it fails.
inline DeadlineRun run_with_deadline(const std::string& command,
                                     std::chrono::seconds deadline = std::chrono::seconds(60),
                                     const std::function<bool()>& in_child = {}) {
  DeadlineRun run;
  char out_path[] = "/tmp/kiln-deadline-out-XXXXXX";
  char err_path[] = "/tmp/kiln-deadline-err-XXXXXX";
  int out_fd = ::mkstemp(out_path);
  int err_fd = ::mkstemp(err_path);
  if (out_fd < 0 || err_fd < 0) return run;
  // Unwritten output of this process would be written twice (by the child too).
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    // Never return into the caller's code (a forked test runner would go on
    // running tests in the child): any exception ends the child here.
    bool ready = false;
    try {
      ready = !in_child || in_child();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "exception in the child: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "exception in the child\n");
    }
    if (!ready) ::_exit(125);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  if (pid > 0) {
    ::setpgid(pid, pid);  // also here: no race with the child's own call
    const auto until = std::chrono::steady_clock::now() + deadline;
    int status = 0;
    for (;;) {
      pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (std::chrono::steady_clock::now() > until) {
        run.timed_out = true;
        ::kill(-pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!run.timed_out && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
    // A child the command started and left behind must not outlive the test.
    ::kill(-pid, SIGKILL);
  }
  auto slurp = [](const char* path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    ::unlink(path);
    return text.str();
  };
  run.out = slurp(out_path);
  run.err = slurp(err_path);
  return run;
}

// Runs `body` in a forked child (its return value is the exit code) with the
// same deadline: for library calls that must not block, so a hang fails the
// test instead of hanging it. The child's stdout and stderr are captured.
inline DeadlineRun run_in_child_with_deadline(
    const std::function<int()>& body, std::chrono::seconds deadline = std::chrono::seconds(60)) {
  return run_with_deadline("exit 126", deadline, [&body] {
    const int code = body();
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
    return false;
  });
}

}  // namespace kiln::testing
