// A child process over a socketpair; see kiln/worker_process.hpp.
#include "kiln/worker_process.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

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

bool read_all(int fd, char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_frame(int fd, std::string_view bytes) {
  unsigned char header[8];
  const std::uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) header[i] = static_cast<unsigned char>(n >> (8 * i));
  return write_all(fd, reinterpret_cast<const char*>(header), 8) &&
         write_all(fd, bytes.data(), bytes.size());
}

bool read_frame(int fd, std::string* out) {
  unsigned char header[8];
  if (!read_all(fd, reinterpret_cast<char*>(header), 8)) return false;
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(header[i]) << (8 * i);
  if (n > (std::uint64_t{1} << 36)) return false;  // garbage, not a message
  out->resize(n);
  return read_all(fd, out->data(), n);
}

}  // namespace

bool send(int fd, const nlohmann::json& json, std::string_view raw) {
  return write_frame(fd, json.dump()) && write_frame(fd, raw);
}

bool receive(int fd, nlohmann::json* json, std::string* raw) {
  std::string text;
  if (!read_frame(fd, &text) || !read_frame(fd, raw)) return false;
  *json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return !json->is_discarded();
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
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The child's end becomes its stdin and stdout (dup2 clears CLOEXEC).
  posix_spawn_file_actions_adddup2(&actions, fds[1], 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return make_error(ErrorCode::kUnavailable,
                      "cannot start worker '" + argv[0] + "': " + std::strerror(rc),
                      {{"executable", argv[0]}});
  }
  WorkerProcess p;
  p.pid_ = pid;
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
  int status = 0;
  for (int i = 0; i < 200; ++i) {
    const pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      pid_ = -1;
      ::close(fd_);
      fd_ = -1;
      return describe_exit_status(status);
    }
    if (got < 0 && errno != EINTR) break;
    ::usleep(5000);
  }
  const std::string how = kill();
  return "closed its socket and was " + (how.empty() ? std::string("reaped") : how);
}

Result<std::pair<nlohmann::json, std::string>> WorkerProcess::receive(Clock::time_point deadline) {
  if (fd_ < 0) return make_error(ErrorCode::kUnavailable, "the worker is not running");
  const pid_t who = pid_;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return make_error(ErrorCode::kTimeout,
                        "worker " + std::to_string(who) + " did not answer before its deadline");
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) break;
  }
  std::pair<nlohmann::json, std::string> reply;
  if (wire::receive(fd_, &reply.first, &reply.second)) return reply;
  const std::string how = reap_closed();
  return make_error(ErrorCode::kUnavailable, "worker " + std::to_string(who) + " " + how,
                    {{"exit", how}, {"pid", std::to_string(who)}});
}

}  // namespace kiln
