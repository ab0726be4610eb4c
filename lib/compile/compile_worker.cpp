// Worker-process compiler: the parent side (WorkerProcessCompiler) and the
// child side (serve_compile_worker). See kiln/compile_worker.hpp for the
// wire format.
#include "kiln/compile_worker.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "kiln/log.hpp"

extern char** environ;

namespace kiln {

namespace {

// ---- framing ---------------------------------------------------------------

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
  std::uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) header[i] = static_cast<unsigned char>(n >> (8 * i));
  return write_all(fd, reinterpret_cast<const char*>(header), 8) &&
         write_all(fd, bytes.data(), bytes.size());
}

bool read_frame(int fd, std::string* out) {
  unsigned char header[8];
  if (!read_all(fd, reinterpret_cast<char*>(header), 8)) return false;
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(header[i]) << (8 * i);
  if (n > (std::uint64_t{1} << 32)) return false;  // garbage, not a message
  out->resize(n);
  return read_all(fd, out->data(), n);
}

bool send_message(int fd, const nlohmann::json& json, std::string_view raw = {}) {
  return write_frame(fd, json.dump()) && write_frame(fd, raw);
}

bool receive_message(int fd, nlohmann::json* json, std::string* raw) {
  std::string text;
  if (!read_frame(fd, &text) || !read_frame(fd, raw)) return false;
  *json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return !json->is_discarded();
}

// ---- values on the wire ----------------------------------------------------

nlohmann::json error_to_json(const ErrorInfo& e) {
  return {{"code", static_cast<int>(e.code)}, {"message", e.message}, {"details", e.details}};
}

ErrorInfo error_from_json(const nlohmann::json& j) {
  ErrorInfo e;
  e.code = static_cast<ErrorCode>(j.value("code", static_cast<int>(ErrorCode::kInternal)));
  e.message = j.value("message", std::string("(no message)"));
  if (j.contains("details")) e.details = j["details"].get<std::map<std::string, std::string>>();
  return e;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

}  // namespace

// ---- parent side -----------------------------------------------------------

WorkerProcessCompiler::WorkerProcessCompiler(std::vector<std::string> argv)
    : argv_(std::move(argv)) {
  if (argv_.empty()) {
    throw Error(
        ErrorCode::kInvalidArgument,
        "WorkerProcessCompiler needs a command, e.g. {\"/usr/bin/kiln\", \"compile-worker\"}");
  }
}

WorkerProcessCompiler::~WorkerProcessCompiler() {
  std::lock_guard lock(mutex_);
  stop_child();
}

void WorkerProcessCompiler::stop_child() const {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ > 0) {
    // Closing the socket ends a healthy child; a busy one is killed (its
    // compile is abandoned).
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

Result<bool> WorkerProcessCompiler::ensure_started() const {
  if (pid_ > 0 && fd_ >= 0) return true;
  stop_child();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return make_error(
        ErrorCode::kUnavailable,
        std::string("cannot create a socket for a compile worker: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The child's end becomes its stdin and stdout (dup2 clears CLOEXEC).
  posix_spawn_file_actions_adddup2(&actions, fds[1], 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::vector<char*> args;
  for (const auto& a : argv_) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv_[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return make_error(ErrorCode::kUnavailable,
                      "cannot start compile worker '" + argv_[0] + "': " + std::strerror(rc),
                      {{"fix", "give WorkerProcessCompiler the path of a kiln executable"}});
  }
  pid_ = pid;
  fd_ = fds[0];
  ++starts_;
  nlohmann::json reply;
  std::string raw;
  if (!send_message(fd_, {{"op", "hello"}, {"wire", kWireVersion}}) ||
      !receive_message(fd_, &reply, &raw) || reply.value("wire", 0) != kWireVersion) {
    stop_child();
    return make_error(ErrorCode::kUnavailable, "compile worker '" + argv_[0] +
                                                   "' did not answer the hello (wrong program, " +
                                                   "or another wire version)");
  }
  hello_.name = reply.value("name", std::string("absent"));
  hello_.version = reply.value("version", std::string("absent"));
  hello_.code_options = reply.value("code_options", std::vector<std::string>{});
  have_hello_ = true;
  return true;
}

std::string WorkerProcessCompiler::name() const {
  std::lock_guard lock(mutex_);
  if (!have_hello_) (void)ensure_started();
  return hello_.name;
}

std::string WorkerProcessCompiler::version() const {
  std::lock_guard lock(mutex_);
  if (!have_hello_) (void)ensure_started();
  return hello_.version;
}

std::vector<std::string> WorkerProcessCompiler::code_options() const {
  std::lock_guard lock(mutex_);
  if (!have_hello_) (void)ensure_started();
  return hello_.code_options;
}

pid_t WorkerProcessCompiler::child_pid() const {
  std::lock_guard lock(mutex_);
  return pid_;
}

int WorkerProcessCompiler::starts() const {
  std::lock_guard lock(mutex_);
  return starts_;
}

Result<CompiledProgram> WorkerProcessCompiler::compile(const CompileUnit& unit,
                                                       const CancelToken& cancel) {
  std::lock_guard lock(mutex_);
  if (cancel.cancelled()) {
    return make_error(ErrorCode::kCancelled, "compile of " + unit.describe() + " was cancelled");
  }
  auto started = ensure_started();
  if (!started.ok()) return started.error();
  const pid_t child = pid_;
  if (!send_message(fd_, {{"op", "compile"}, {"unit", unit.to_json()}})) {
    stop_child();
    return make_error(ErrorCode::kCompileFailed,
                      "compile worker " + std::to_string(child) + " closed its socket",
                      {{"log", ""}});
  }
  // Wait for the reply, watching the token; a cancel kills the child.
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 20);
    if (ready > 0) break;
    if (ready < 0 && errno != EINTR) break;
    if (cancel.cancelled()) {
      stop_child();
      return make_error(ErrorCode::kCancelled, "compile of " + unit.describe() +
                                                   " was cancelled while running (worker " +
                                                   std::to_string(child) + " killed)");
    }
  }
  nlohmann::json reply;
  std::string raw;
  if (!receive_message(fd_, &reply, &raw)) {
    // The child died mid-compile (a compiler crash on this program): an error
    // of this program, which failure isolation can split like any other.
    int status = 0;
    std::string how = "closed its socket";
    if (::waitpid(pid_, &status, 0) == pid_) {
      how = describe_status(status);
      pid_ = -1;
    }
    stop_child();
    return make_error(ErrorCode::kCompileFailed,
                      "compile worker " + std::to_string(child) + " " + how + " while compiling " +
                          unit.describe(),
                      {{"log", "compile worker " + how}});
  }
  if (!reply.value("ok", false))
    return error_from_json(reply.value("error", nlohmann::json::object()));
  const auto& pj = reply["program"];
  CompiledProgram program;
  program.format = parse_binary_format(pj.value("format", std::string())).value_or(unit.format);
  program.arch = pj.value("arch", unit.arch);
  program.lowered_names = pj.value("lowered_names", std::vector<std::string>{});
  program.log = pj.value("log", std::string());
  program.options = pj.value("options", std::vector<std::string>{});
  program.seconds = pj.value("seconds", 0.0);
  program.binary = std::make_shared<const std::string>(std::move(raw));
  return program;
}

std::vector<std::size_t> WorkerProcessCompiler::blame(const CompileUnit& unit,
                                                      const std::string& log) const {
  std::lock_guard lock(mutex_);
  if (!ensure_started().ok()) return {};
  nlohmann::json reply;
  std::string raw;
  if (!send_message(fd_, {{"op", "blame"}, {"unit", unit.to_json()}, {"log", log}}) ||
      !receive_message(fd_, &reply, &raw)) {
    stop_child();
    return {};  // the engine falls back to splitting
  }
  return reply.value("indices", std::vector<std::size_t>{});
}

// ---- child side ------------------------------------------------------------

int serve_compile_worker(Compiler& compiler, int fd) {
  for (;;) {
    nlohmann::json request;
    std::string raw;
    if (!receive_message(fd, &request, &raw)) return 0;  // parent closed: done
    const std::string op = request.value("op", std::string());
    bool sent = false;
    if (op == "hello") {
      sent = send_message(fd, {{"wire", WorkerProcessCompiler::kWireVersion},
                               {"name", compiler.name()},
                               {"version", compiler.version()},
                               {"code_options", compiler.code_options()}});
    } else if (op == "compile" || op == "blame") {
      CompileUnit unit;
      try {
        unit = CompileUnit::from_json(request.at("unit"));
      } catch (const std::exception& e) {
        sent = send_message(
            fd, {{"ok", false},
                 {"error", error_to_json(make_error(ErrorCode::kInternal,
                                                    std::string("bad request: ") + e.what()))}});
        if (!sent) return 1;
        continue;
      }
      if (op == "blame") {
        sent = send_message(fd, {{"indices", compiler.blame(unit, request.value("log", ""))}});
      } else {
        // Cancellation reaches a worker as SIGKILL from the parent.
        auto program = compiler.compile(unit, CancelToken());
        if (program.ok()) {
          nlohmann::json pj = {{"format", binary_format_name(program->format)},
                               {"arch", program->arch},
                               {"lowered_names", program->lowered_names},
                               {"log", program->log},
                               {"options", program->options},
                               {"seconds", program->seconds}};
          sent = send_message(fd, {{"ok", true}, {"program", pj}},
                              program->binary ? std::string_view(*program->binary) : "");
        } else {
          sent = send_message(fd, {{"ok", false}, {"error", error_to_json(program.error())}});
        }
      }
    } else {
      sent = send_message(
          fd, {{"ok", false},
               {"error",
                error_to_json(make_error(ErrorCode::kInternal, "unknown request '" + op + "'"))}});
    }
    if (!sent) return 1;
  }
}

}  // namespace kiln
