// How worker processes start, so that none outlives the process that
// started it (docs/reliability.md, "No worker outlives its tuner"):
//
// - Each child asks the kernel for SIGKILL when its parent dies
//   (PR_SET_PDEATHSIG) before it runs anything, and checks that the parent
//   did not die first. That covers every way the parent can end, SIGKILL
//   included.
// - PR_SET_PDEATHSIG fires when the *thread* that forked the child exits,
//   not the process. Kiln starts workers from short-lived threads (benchmark
//   workers, compile pool threads) and keeps idle workers for later runs, so
//   every fork happens on one spawner thread that lives as long as the
//   process.
// - Each child leads a process group of its own, so that a kill reaches
//   whatever it started, and is registered while it lives, so that a signal
//   handler can kill every group (signal_worker_groups, include/kiln/process/worker_process.hpp).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kiln::internal {

struct SpawnResult {
  pid_t pid = -1;
  int error = 0;          // errno of the step that failed
  const char* step = "";  // "fork", "exec", ... when it failed
};

// Starts argv[0] (a path, not searched in PATH) with argv and this
// process's environment, `stdin_fd` as its stdin and `stdout_fd` as its
// stdout (-1: this process's). The child is registered as a live worker
// group until forget_worker(pid). Every child Kiln starts comes from here.
SpawnResult spawn_worker(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd);

// Takes `pid` off the live groups; call it before reaping the child, so that
// a signal handler never kills a group whose id was reused.
void forget_worker(pid_t pid) noexcept;

}  // namespace kiln::internal
