// Runs a test body in a forked child where new threads cannot start, as
// under a process or memory limit (`--threads 100000`, a container's pid
// cap): the child's address space is capped at what it maps now plus
// `slack` bytes, and new threads take 8 MiB stacks, so pthread_create
// fails with EAGAIN once the slack is used up and std::thread throws
// std::system_error. A real limit, enforced by the kernel; nothing is
// mocked. Sanitizer runtimes map shadow memory on demand, so the sanitizer
// builds skip these tests.
#pragma once

#include "sanitized.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>

namespace kiln::testing {

#if defined(KILN_TEST_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

inline constexpr std::size_t kChildStackBytes = std::size_t{8} << 20;

// The child's exit code from `body`, or 128 + the signal that ended it
// (std::terminate's abort: 134).
inline int in_thread_limited_child(std::size_t slack, const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    pthread_attr_t attr;
    ::pthread_attr_init(&attr);
    ::pthread_attr_setstacksize(&attr, kChildStackBytes);
    ::pthread_setattr_default_np(&attr);
    std::size_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) + slack;
    struct rlimit rl;
    ::getrlimit(RLIMIT_AS, &rl);
    rl.rlim_cur = limit;
    ::setrlimit(RLIMIT_AS, &rl);
    const int rc = body();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace kiln::testing
