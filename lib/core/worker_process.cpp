// A child process over a socketpair; see kiln/worker_process.hpp.
#include "core/worker_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "worker_spawner.hpp"

namespace kiln {

namespace wire {

namespace {

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    // MSG_NOSIGNAL: a dead peer is an error value here, not a SIGPIPE.
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// No deadline: wait as long as it takes.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

// Waits until `fd` has bytes (or its peer closed) or the deadline passes.
Received wait_readable(int fd, const Deadline& deadline) {
  if (!deadline) return Received::kOk;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        *deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Received::kTimeout;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
    if (ready > 0 || (ready < 0 && errno != EINTR)) return Received::kOk;
  }
}

Received read_all(int fd, char* data, std::size_t size, const Deadline& deadline) {
  while (size > 0) {
    if (Received r = wait_readable(fd, deadline); r != Received::kOk) return r;
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Received::kClosed;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return Received::kOk;
}

bool write_frame(int fd, std::string_view bytes) {
  unsigned char header[8];
  const std::uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) header[i] = static_cast<unsigned char>(n >> (8 * i));
  return write_all(fd, reinterpret_cast<const char*>(header), 8) &&
         write_all(fd, bytes.data(), bytes.size());
}

Received read_frame(int fd, std::string* out, const Deadline& deadline) {
  unsigned char header[8];
  if (Received r = read_all(fd, reinterpret_cast<char*>(header), 8, deadline); r != Received::kOk)
    return r;
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(header[i]) << (8 * i);
  if (n > (std::uint64_t{1} << 36)) return Received::kClosed;  // garbage, not a message
  // Grown as the bytes arrive: a peer that is not a Kiln worker may announce
  // any length, and only what it really sends is held.
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  out->clear();
  while (out->size() < n) {
    const std::size_t have = out->size();
    const std::size_t more = static_cast<std::size_t>(std::min<std::uint64_t>(n - have, kChunk));
    out->resize(have + more);
    if (Received r = read_all(fd, out->data() + have, more, deadline); r != Received::kOk) return r;
  }
  return Received::kOk;
}

Received receive_by(int fd, nlohmann::json* json, std::string* raw, const Deadline& deadline) {
  std::string text;
  Received r = read_frame(fd, &text, deadline);
  if (r == Received::kOk) r = read_frame(fd, raw, deadline);
  if (r != Received::kOk) return r;
  *json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return json->is_discarded() ? Received::kClosed : Received::kOk;
}

}  // namespace

bool send(int fd, const nlohmann::json& json, std::string_view raw) {
  return write_frame(fd, json.dump()) && write_frame(fd, raw);
}

bool receive(int fd, nlohmann::json* json, std::string* raw) {
  return receive_by(fd, json, raw, std::nullopt) == Received::kOk;
}

Received receive(int fd, nlohmann::json* json, std::string* raw,
                 std::chrono::steady_clock::time_point deadline) {
  return receive_by(fd, json, raw, deadline);
}

}  // namespace wire

std::string describe_exit_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = ::sigabbrev_np(sig);
    const char* text = ::strsignal(sig);
    return "killed by signal " + (abbrev ? "SIG" + std::string(abbrev) : std::to_string(sig)) +
           (text ? " (" + std::string(text) + ")" : "");
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

Result<WorkerProcess> WorkerProcess::spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "WorkerProcess::spawn needs an executable in argv[0]");
  }
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return make_error(ErrorCode::kUnavailable,
                      std::string("cannot create a socket for a worker: ") + std::strerror(errno));
  }
  // The child's end becomes its stdin and stdout (internal/worker_spawner.hpp).
  const internal::SpawnResult started = internal::spawn_worker(argv, fds[1]);
  ::close(fds[1]);
  if (started.pid < 0) {
    ::close(fds[0]);
    const std::string step = started.step == std::string("exec") ? "" : started.step;
    return make_error(ErrorCode::kUnavailable,
                      "cannot start worker '" + argv[0] + "': " + std::strerror(started.error) +
                          (step.empty() ? "" : " (" + step + ")"),
                      {{"executable", argv[0]}});
  }
  WorkerProcess p;
  p.pid_ = started.pid;
  p.fd_ = fds[0];
  return p;
}

WorkerProcess::WorkerProcess(WorkerProcess&& other) noexcept {
  *this = std::move(other);
}

WorkerProcess& WorkerProcess::operator=(WorkerProcess&& other) noexcept {
  if (this != &other) {
    kill();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

WorkerProcess::~WorkerProcess() {
  kill();
}

bool WorkerProcess::send(const nlohmann::json& json, std::string_view raw) const {
  return fd_ >= 0 && wire::send(fd_, json, raw);
}

std::string WorkerProcess::kill() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::string how;
  if (pid_ > 0) {
    // Off the live groups before the reap, which frees the id for reuse.
    internal::forget_worker(pid_);
    ::kill(-pid_, SIGKILL);  // the worker and anything it started
    ::kill(pid_, SIGKILL);
    int status = 0;
    pid_t got;
    while ((got = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (got == pid_) how = describe_exit_status(status);
  }
  pid_ = -1;
  return how;
}

std::string WorkerProcess::reap_closed() {
  // A closed socket means the child is exiting; give it a moment to finish
  // dying on its own so its real status (the signal) is what gets reported.
  for (int i = 0; i < 200; ++i) {
    siginfo_t info{};
    // WNOWAIT: seen, not reaped, so that its group id is not free yet.
    const int rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && info.si_pid == pid_) {
      internal::forget_worker(pid_);
      ::kill(-pid_, SIGKILL);  // whatever it started and left behind
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
      ::close(fd_);
      fd_ = -1;
      return describe_exit_status(status);
    }
    if (rc < 0 && errno != EINTR) break;
    ::usleep(5000);
  }
  const std::string how = kill();
  return "closed its socket and was " + (how.empty() ? std::string("reaped") : how);
}

Result<std::pair<nlohmann::json, std::string>> WorkerProcess::receive(Clock::time_point deadline) {
  if (fd_ < 0) return make_error(ErrorCode::kUnavailable, "the worker is not running");
  const pid_t who = pid_;
  std::pair<nlohmann::json, std::string> reply;
  const wire::Received got = wire::receive(fd_, &reply.first, &reply.second, deadline);
  if (got == wire::Received::kOk) return reply;
  if (got == wire::Received::kTimeout) {
    return make_error(ErrorCode::kTimeout,
                      "worker " + std::to_string(who) + " did not answer before its deadline");
  }
  const std::string how = reap_closed();
  return make_error(ErrorCode::kUnavailable, "worker " + std::to_string(who) + " " + how,
                    {{"exit", how}, {"pid", std::to_string(who)}});
}

}  // namespace kiln
