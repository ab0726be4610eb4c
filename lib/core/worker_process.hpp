// A child process spoken to over a socket: what Kiln's worker processes
// (benchmark workers, kiln/bench_worker.hpp) are built on.
//
// The child is forked and at once exec'd (a fork of a multi-threaded
// parent that goes on running would not survive CUDA or LLVM), its end of a
// socketpair as its stdin and stdout. It never outlives this process: it
// gets SIGKILL when this process dies, however it dies (PR_SET_PDEATHSIG,
// from a spawner thread that lives as long as the process), and leads a
// process group of its own that every kill reaches. Messages, both directions: a JSON
// frame then one raw-bytes frame; a frame is [u64 little-endian length]
// [bytes]. The same framing as the compile worker (kiln/compile_worker.hpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {

namespace wire {
// False when the peer closed or the socket failed (never SIGPIPE).
bool send(int fd, const nlohmann::json& json, std::string_view raw = {});
// False on a closed socket, a malformed frame or JSON that does not parse.
bool receive(int fd, nlohmann::json* json, std::string* raw);
// The same, giving up when `deadline` passes before the whole message came
// (the stream may then be mid-message: end the peer).
enum class Received { kOk, kClosed, kTimeout };
Received receive(int fd, nlohmann::json* json, std::string* raw,
                 std::chrono::steady_clock::time_point deadline);
}  // namespace wire

// "killed by signal SIGSEGV (Segmentation fault)", "exited with status 3":
// a waitpid status in words.
std::string describe_exit_status(int status);

class WorkerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  WorkerProcess() = default;
  // Starts argv[0] with argv; an error value when it cannot be started.
  static Result<WorkerProcess> spawn(const std::vector<std::string>& argv);

  WorkerProcess(WorkerProcess&& other) noexcept;
  WorkerProcess& operator=(WorkerProcess&& other) noexcept;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess();  // kill()

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int fd() const { return fd_; }

  bool send(const nlohmann::json& json, std::string_view raw = {}) const;
  // Waits until a whole reply came or `deadline` passes: kTimeout when the
  // deadline passed first (the child still runs, perhaps mid-message: kill() it);
  // kUnavailable when the child closed its socket, with how it ended (reaped:
  // "killed by signal SIGSEGV ...") in the message and in details["exit"].
  Result<std::pair<nlohmann::json, std::string>> receive(Clock::time_point deadline);

  // SIGKILL to the child's process group, then waitpid. Returns the status
  // in words ("" when none ran).
  std::string kill();
  // After the child closed its socket: waits (up to a second) for it to
  // exit on its own, so that its real end (the signal) is what is reported,
  // then kills it (and what is left of its group). Returns how it ended.
  std::string reap_closed();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

// Sends `sig` to the process group of every worker this process started and
// has not reaped. Async-signal-safe: for a signal handler that must not
// leave workers behind.
void signal_worker_groups(int sig) noexcept;

// For programs, not libraries (a library leaves signals to its program):
// SIGTERM, SIGINT, SIGHUP and SIGQUIT kill every worker group, then end the
// program by the same signal with its default action, so that its exit
// status stays true; SIGTSTP stops the workers with the program and SIGCONT
// resumes them. A signal ignored at the call stays ignored. Without this,
// workers still die with the program (PR_SET_PDEATHSIG), but what they
// started may not.
void install_worker_signal_handlers();

}  // namespace kiln
