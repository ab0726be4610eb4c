// Worker-process compiler: the parent side (WorkerProcessCompiler) and the
// child side (serve_compile_worker). See kiln/compile_worker.hpp for the
// wire format.
#include "compile/compile_worker.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>

#include "kiln/core/log.hpp"

namespace kiln {

namespace {

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
  // Closing the socket ends a healthy child; a busy one is killed (its
  // compile is abandoned).
  child_.kill();
}

Result<bool> WorkerProcessCompiler::ensure_started() const {
  if (child_.running()) return true;
  stop_child();
  auto spawned = WorkerProcess::spawn(argv_);
  if (!spawned.ok()) {
    return make_error(ErrorCode::kUnavailable,
                      "cannot start compile worker: " + spawned.error().message,
                      {{"fix", "give WorkerProcessCompiler the path of a kiln executable"}});
  }
  child_ = std::move(*spawned);
  ++starts_;
  // A deadline, and an answer only a compile worker gives: a program that
  // is not one (KILN_WORKER=/bin/cat echoes the hello back) must fail here,
  // not hang or fail every compile.
  const auto deadline = WorkerProcess::Clock::now() + std::chrono::seconds(kHelloSeconds);
  auto answer = child_.send({{"op", "hello"}, {"wire", kWireVersion}})
                    ? child_.receive(deadline)
                    : Result<std::pair<nlohmann::json, std::string>>(
                          make_error(ErrorCode::kUnavailable, "it closed its socket"));
  bool is_worker = answer.ok() && answer->first.is_object() && !answer->first.contains("op") &&
                   answer->first.contains("wire") && answer->first["wire"] == kWireVersion;
  if (is_worker) {
    try {
      const nlohmann::json& reply = answer->first;
      hello_.name = reply.at("name").get<std::string>();
      hello_.version = reply.value("version", std::string("absent"));
      hello_.code_options = reply.value("code_options", std::vector<std::string>{});
    } catch (const nlohmann::json::exception&) {
      is_worker = false;
    }
  }
  if (!is_worker) {
    const std::string how = answer.ok() ? "it answered something else" : answer.error().message;
    stop_child();
    return make_error(ErrorCode::kUnavailable,
                      "compile worker '" + argv_[0] +
                          "' did not answer the hello (wrong program, or another wire "
                          "version): " +
                          how);
  }
  have_hello_ = true;
  return true;
}

Result<bool> WorkerProcessCompiler::start() const {
  std::lock_guard lock(mutex_);
  return ensure_started();
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
  return child_.pid();
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
  const pid_t child = child_.pid();
  if (!child_.send({{"op", "compile"}, {"unit", unit.to_json()}})) {
    stop_child();
    return make_error(ErrorCode::kCompileFailed,
                      "compile worker " + std::to_string(child) + " closed its socket",
                      {{"log", ""}});
  }
  // Wait for the reply, watching the token; a cancel kills the child.
  for (;;) {
    pollfd p{child_.fd(), POLLIN, 0};
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
  if (!wire::receive(child_.fd(), &reply, &raw)) {
    // The child died mid-compile (a compiler crash on this program): an error
    // of this program, which failure isolation can split like any other.
    const std::string how = child_.reap_closed();
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
  if (!child_.send({{"op", "blame"}, {"unit", unit.to_json()}, {"log", log}}) ||
      !wire::receive(child_.fd(), &reply, &raw)) {
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
    if (!wire::receive(fd, &request, &raw)) return 0;  // parent closed: done
    const std::string op = request.value("op", std::string());
    bool sent = false;
    if (op == "hello") {
      sent = wire::send(fd, {{"wire", WorkerProcessCompiler::kWireVersion},
                             {"name", compiler.name()},
                             {"version", compiler.version()},
                             {"code_options", compiler.code_options()}});
    } else if (op == "compile" || op == "blame") {
      CompileUnit unit;
      try {
        unit = CompileUnit::from_json(request.at("unit"));
      } catch (const std::exception& e) {
        sent = wire::send(
            fd, {{"ok", false},
                 {"error", error_to_json(make_error(ErrorCode::kInternal,
                                                    std::string("bad request: ") + e.what()))}});
        if (!sent) return 1;
        continue;
      }
      if (op == "blame") {
        sent = wire::send(fd, {{"indices", compiler.blame(unit, request.value("log", ""))}});
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
          sent = wire::send(fd, {{"ok", true}, {"program", pj}},
                            program->binary ? std::string_view(*program->binary) : "");
        } else {
          sent = wire::send(fd, {{"ok", false}, {"error", error_to_json(program.error())}});
        }
      }
    } else {
      sent = wire::send(fd, {{"ok", false},
                             {"error", error_to_json(make_error(ErrorCode::kInternal,
                                                                "unknown request '" + op + "'"))}});
    }
    if (!sent) return 1;
  }
}

}  // namespace kiln
