// A child process spoken to over a socket: what Kiln's worker processes
// (benchmark workers, kiln/bench_worker.hpp) are built on.
//
// The child is started with posix_spawn (an exec, never a bare fork of a
// multi-threaded parent: CUDA and LLVM do not survive one), its end of a
// socketpair as its stdin and stdout. Messages, both directions: a JSON
// frame then one raw-bytes frame; a frame is [u64 little-endian length]
// [bytes]. The same framing as the compile worker (kiln/compile_worker.hpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/error.hpp"

namespace kiln {

namespace wire {
// False when the peer closed or the socket failed (never SIGPIPE).
bool send(int fd, const nlohmann::json& json, std::string_view raw = {});
// False on a closed socket, a malformed frame or JSON that does not parse.
bool receive(int fd, nlohmann::json* json, std::string* raw);
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
  // Waits until a reply is readable or `deadline` passes: kTimeout when the
  // deadline passed first (the child still runs: kill() it or wait more);
  // kUnavailable when the child closed its socket, with how it ended (reaped:
  // "killed by signal SIGSEGV ...") in the message and in details["exit"].
  Result<std::pair<nlohmann::json, std::string>> receive(Clock::time_point deadline);

  // SIGKILL, then waitpid. Returns the status in words ("" when none ran).
  std::string kill();
  // After the child closed its socket: waits (up to a second) for it to
  // exit on its own, so that its real end (the signal) is what is reported,
  // then kills it. Returns how it ended.
  std::string reap_closed();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace kiln
