// A child process spoken to over a socket: what Kiln's worker processes
// (compile and benchmark workers, one program: tools/worker/) and every
// other child Kiln starts (run_child) are built on.
//
// The child is forked and at once exec'd (a fork of a multi-threaded
// parent that goes on running would not survive CUDA or LLVM), its end of a
// socketpair as its stdin and stdout. It never outlives this process: it
// gets SIGKILL when this process dies, however it dies (PR_SET_PDEATHSIG,
// from a spawner thread that lives as long as the process), and leads a
// process group of its own that every kill reaches. Messages, both directions: a JSON
// frame then one raw-bytes frame; a frame is [u64 little-endian length]
// [bytes]. The operations that travel over it: process/worker_protocol.hpp.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/process/worker_protocol.hpp"

namespace kiln {

namespace wire {
// kIo naming the errno when the peer closed or the socket failed (never
// SIGPIPE). `fds` travel with the message's first bytes (SCM_RIGHTS; the
// caller keeps its own copies open).
[[nodiscard]] Status send(int fd, const nlohmann::json& json, std::string_view raw = {},
                          const std::vector<int>& fds = {});
// kClosed also for a malformed frame or JSON that does not parse. With a
// deadline: kTimeout when it passes before the whole message came, and
// kStopped when `stop` returns true (checked every 20 ms); the stream may
// then be mid-message: end the peer. Descriptors that came with the message
// go to `fds`, or are closed when it is null.
enum class Received { kOk, kClosed, kTimeout, kStopped };
[[nodiscard]] Received receive(int fd, nlohmann::json* json, std::string* raw,
                               std::vector<worker::SharedFd>* fds = nullptr);
[[nodiscard]] Received receive(int fd, nlohmann::json* json, std::string* raw,
                               std::chrono::steady_clock::time_point deadline,
                               const std::function<bool()>& stop = {},
                               std::vector<worker::SharedFd>* fds = nullptr);
}  // namespace wire

// "killed by signal SIGSEGV (Segmentation fault)", "exited with status 3":
// a waitpid status in words.
std::string describe_exit_status(int status);

class WorkerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  WorkerProcess() = default;
  // Starts argv[0] with argv; an error value when it cannot be started.
  [[nodiscard]] static Result<WorkerProcess> spawn(const std::vector<std::string>& argv);

  // Starts argv[0] and checks with the hello, before `deadline`, that it is
  // a Kiln worker of this wire that serves `needed`: kUnavailable in words
  // otherwise ("'/bin/true' did not answer the hello: ..."), the child gone.
  struct Started;
  [[nodiscard]] static Result<Started> start(const std::vector<std::string>& argv,
                                             Clock::time_point deadline, worker::Op needed);

  WorkerProcess(WorkerProcess&& other) noexcept;
  WorkerProcess& operator=(WorkerProcess&& other) noexcept;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess();  // kill()

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int fd() const { return fd_; }

  // One request and its answer (worker_protocol.hpp). worker::Reply::answered is
  // false when no answer came, and then `answer` says why: kTimeout when
  // `deadline` passed first (the child still runs, perhaps mid-message:
  // kill() it); kCancelled when `stop` returned true (checked every 20 ms;
  // the child is killed); kUnavailable when the child closed its socket,
  // with how it ended (reaped: "killed by signal SIGSEGV ...") in the
  // message and in details["exit"], and details["sent"] "no" when the
  // request never reached it; kCorrupt when it answered something that is
  // not a reply (the child is killed). Answered, `answer` is the
  // operation's own value or error.
  [[nodiscard]] worker::Reply call(worker::Op op, const worker::Payload& payload,
                                   Clock::time_point deadline,
                                   const std::function<bool()>& stop = {});
  template <class Message>
  [[nodiscard]] worker::Reply call(const Message& message, Clock::time_point deadline,
                                   const std::function<bool()>& stop = {}) {
    return call(Message::kOp, message.encode(), deadline, stop);
  }

  // SIGKILL to the child's process group, then waitpid. Returns the status
  // in words ("" when none ran).
  std::string kill();
  // After the child closed its socket: waits (up to a second) for it to
  // exit on its own, so that its real end (the signal) is what is reported,
  // then kills it (and what is left of its group). Returns how it ended.
  std::string reap_closed();

 private:
  [[nodiscard]] bool send(const worker::Frames& frames) const;

  pid_t pid_ = -1;
  int fd_ = -1;
};

struct WorkerProcess::Started {
  WorkerProcess process;
  worker::HelloReply hello;
};

// Runs `argv` (argv[0] a path) to its end through the same spawner as the
// workers (it dies with this process), its stdout captured, its stdin and
// stderr this process's: the exit status (waitpid's) and the wall time.
struct ChildRun {
  int status = 0;
  std::string out;
  double seconds = 0;
};
[[nodiscard]] Result<ChildRun> run_child(const std::vector<std::string>& argv);

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
