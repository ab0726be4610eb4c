// A child process over a socketpair; see include/kiln/process/worker_process.hpp.
#include "kiln/process/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "kiln/process/worker_spawner.hpp"

namespace kiln {

namespace wire {

namespace {

[[nodiscard]] bool write_all(int fd, const char* data, std::size_t size) {
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

// The most descriptors one message brings; more are closed by the kernel
// (MSG_CTRUNC) and the message is refused.
constexpr std::size_t kMaxFds = 8;

// Sends the first bytes of a message with `fds` attached, so that they
// arrive with the message they belong to.
[[nodiscard]] bool send_with_fds(int fd, const char* data, std::size_t size,
                                 const std::vector<int>& fds, std::size_t* sent) {
  if (fds.size() > kMaxFds) return false;
  iovec io{const_cast<char*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  for (;;) {
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    *sent = static_cast<std::size_t>(n);
    return true;
  }
}

// Where received descriptors go: kept for the message, or closed.
struct FdSink {
  std::vector<worker::SharedFd>* keep = nullptr;
  bool truncated = false;
};

// recv() that also takes the descriptors attached to these bytes.
ssize_t receive_some(int fd, char* data, std::size_t size, FdSink* sink) {
  iovec io{data, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  if (msg.msg_flags & MSG_CTRUNC) sink->truncated = true;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int got = -1;
      std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
      auto owned = std::make_shared<const worker::OwnedFd>(got);  // closed unless kept
      if (sink->keep) sink->keep->push_back(std::move(owned));
    }
  }
  return n;
}

// No deadline: wait as long as it takes.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;
using Stop = std::function<bool()>;

// Waits until `fd` has bytes (or its peer closed), the deadline passes or
// `stop` says to give up.
Received wait_readable(int fd, const Deadline& deadline, const Stop& stop) {
  if (!deadline) return Received::kOk;
  for (;;) {
    if (stop && stop()) return Received::kStopped;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        *deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Received::kTimeout;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 20)));
    if (ready > 0 || (ready < 0 && errno != EINTR)) return Received::kOk;
  }
}

Received read_all(int fd, char* data, std::size_t size, const Deadline& deadline, const Stop& stop,
                  FdSink* sink) {
  while (size > 0) {
    if (Received r = wait_readable(fd, deadline, stop); r != Received::kOk) return r;
    const ssize_t n = receive_some(fd, data, size, sink);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Received::kClosed;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return Received::kOk;
}

[[nodiscard]] bool write_frame(int fd, std::string_view bytes) {
  unsigned char header[8];
  const std::uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) header[i] = static_cast<unsigned char>(n >> (8 * i));
  return write_all(fd, reinterpret_cast<const char*>(header), 8) &&
         write_all(fd, bytes.data(), bytes.size());
}

Received read_frame(int fd, std::string* out, const Deadline& deadline, const Stop& stop,
                    FdSink* sink) {
  unsigned char header[8];
  if (Received r = read_all(fd, reinterpret_cast<char*>(header), 8, deadline, stop, sink);
      r != Received::kOk)
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
    if (Received r = read_all(fd, out->data() + have, more, deadline, stop, sink);
        r != Received::kOk)
      return r;
  }
  return Received::kOk;
}

Received receive_by(int fd, nlohmann::json* json, std::string* raw, const Deadline& deadline,
                    const Stop& stop, std::vector<worker::SharedFd>* fds) {
  std::string text;
  FdSink sink{fds, false};
  if (fds) fds->clear();
  Received r = read_frame(fd, &text, deadline, stop, &sink);
  if (r == Received::kOk) r = read_frame(fd, raw, deadline, stop, &sink);
  if (r != Received::kOk) return r;
  if (sink.truncated) return Received::kClosed;  // more descriptors than any message has
  *json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return json->is_discarded() ? Received::kClosed : Received::kOk;
}

}  // namespace

Status send(int fd, const nlohmann::json& json, std::string_view raw, const std::vector<int>& fds) {
  const std::string text = json.dump();
  bool sent = true;
  if (fds.empty()) {
    sent = write_frame(fd, text);
  } else {
    // The descriptors ride on the header's bytes; the rest follows as usual.
    unsigned char header[8];
    for (int i = 0; i < 8; ++i) header[i] = static_cast<unsigned char>(text.size() >> (8 * i));
    std::size_t first = 0;
    sent = send_with_fds(fd, reinterpret_cast<const char*>(header), 8, fds, &first) &&
           write_all(fd, reinterpret_cast<const char*>(header) + first, 8 - first) &&
           write_all(fd, text.data(), text.size());
  }
  if (sent && write_frame(fd, raw)) return ok_status();
  return make_error(ErrorCode::kIo,
                    std::string("the worker socket closed: ") + std::strerror(errno));
}

Received receive(int fd, nlohmann::json* json, std::string* raw,
                 std::vector<worker::SharedFd>* fds) {
  return receive_by(fd, json, raw, std::nullopt, {}, fds);
}

Received receive(int fd, nlohmann::json* json, std::string* raw,
                 std::chrono::steady_clock::time_point deadline, const Stop& stop,
                 std::vector<worker::SharedFd>* fds) {
  return receive_by(fd, json, raw, deadline, stop, fds);
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
    return make_error(ErrorCode::kInvalidArgument,
                      "WorkerProcess::spawn needs an executable in argv[0]");
  }
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return make_error(ErrorCode::kUnavailable,
                      std::string("cannot create a socket for a worker: ") + std::strerror(errno));
  }
  // The child's end becomes its stdin and stdout (internal/worker_spawner.hpp).
  const internal::SpawnResult started = internal::spawn_worker(argv, fds[1], fds[1]);
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

bool WorkerProcess::send(const worker::Frames& frames) const {
  return fd_ >= 0 && wire::send(fd_, frames.json, frames.raw, frames.fds).ok();
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

worker::Reply WorkerProcess::call(worker::Op op, const worker::Payload& payload,
                                  Clock::time_point deadline, const std::function<bool()>& stop) {
  auto none = [](ErrorInfo why) { return worker::Reply{false, std::move(why)}; };
  if (fd_ < 0) return none(make_error(ErrorCode::kUnavailable, "the worker is not running"));
  const pid_t who = pid_;
  const worker::Frames request = worker::encode_request(op, payload);
  const bool sent = send(request);
  nlohmann::json json;
  std::string raw;
  // Unsent, the reply is not awaited: what is read is how the worker ended.
  const wire::Received got =
      sent ? wire::receive(fd_, &json, &raw, deadline, stop) : wire::Received::kClosed;
  if (got == wire::Received::kTimeout) {
    return none(make_error(ErrorCode::kTimeout, "worker " + std::to_string(who) +
                                                    " did not answer before its deadline"));
  }
  if (got == wire::Received::kStopped) {
    const std::string how = kill();
    return none(make_error(ErrorCode::kCancelled,
                           "the request to worker " + std::to_string(who) + " was cancelled",
                           {{"exit", how}, {"pid", std::to_string(who)}}));
  }
  if (got == wire::Received::kClosed) {
    const std::string how = reap_closed();
    return none(
        make_error(ErrorCode::kUnavailable, "worker " + std::to_string(who) + " " + how,
                   {{"exit", how}, {"pid", std::to_string(who)}, {"sent", sent ? "yes" : "no"}}));
  }
  worker::Reply reply{true, worker::Payload{}};
  if (Status read = worker::decode_answer(std::move(json), std::move(raw), &reply.answer);
      !read.ok()) {
    kill();
    return none(make_error(ErrorCode::kCorrupt,
                           "worker " + std::to_string(who) + " answered '" + std::string(op) +
                               "' with something else: " + read.error().message));
  }
  return reply;
}

Result<WorkerProcess::Started> WorkerProcess::start(const std::vector<std::string>& argv,
                                                    Clock::time_point deadline, worker::Op needed) {
  auto spawned = spawn(argv);
  if (!spawned.ok()) return spawned.error();
  Started s{std::move(*spawned), {}};
  const std::string exe = "'" + argv[0] + "'";
  // Only a worker answers with a reply of this wire (/bin/cat echoes the
  // request back, /bin/true closes the socket): the hello tells.
  worker::Reply reply = s.process.call(worker::Hello{}, deadline);
  if (!reply.answered) {
    s.process.kill();
    return make_error(ErrorCode::kUnavailable,
                      exe + " did not answer the hello: " + reply.answer.error().message);
  }
  auto hello = reply.answer.ok() ? worker::HelloReply::decode(std::move(*reply.answer))
                                 : Result<worker::HelloReply>(reply.answer.error());
  if (!hello.ok() || hello->wire != worker::kWireVersion) {
    s.process.kill();
    const std::string why = hello.ok() ? "it speaks wire version " + std::to_string(hello->wire)
                                       : hello.error().message;
    return make_error(ErrorCode::kUnavailable,
                      exe + " answered the hello, but not as a worker of this Kiln (wire version " +
                          std::to_string(worker::kWireVersion) + "): " + why);
  }
  if (!hello->serves(needed)) {
    s.process.kill();
    return make_error(ErrorCode::kUnavailable, exe + " is a Kiln worker that does not serve '" +
                                                   std::string(needed) +
                                                   "' (started without the flag for it)");
  }
  s.hello = std::move(*hello);
  return s;
}

Result<ChildRun> run_child(const std::vector<std::string>& argv) {
  if (argv.empty()) return make_error(ErrorCode::kInvalidArgument, "run_child needs argv[0]");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return make_error(ErrorCode::kIo, std::string("pipe: ") + std::strerror(errno));
  }
  const auto start = std::chrono::steady_clock::now();
  const internal::SpawnResult started = internal::spawn_worker(argv, -1, fds[1]);
  ::close(fds[1]);
  if (started.pid < 0) {
    ::close(fds[0]);
    return make_error(ErrorCode::kUnavailable,
                      "cannot start " + argv[0] + ": " + std::strerror(started.error));
  }
  ChildRun run;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      run.out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  internal::forget_worker(started.pid);
  while (::waitpid(started.pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace kiln
