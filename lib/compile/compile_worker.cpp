// Worker-process compiler: the compile operations' messages, the parent
// side (WorkerProcessCompiler) and the worker's handlers. See
// compile/compile_worker.hpp.
#include "kiln/compile/compile_worker.hpp"

#include <chrono>
#include <nlohmann/json.hpp>

#include "kiln/core/log.hpp"

namespace kiln {

// ---- messages --------------------------------------------------------------

worker::Payload CompileRequest::encode() const {
  return {{{"unit", unit.to_json()}}, {}};
}

Result<CompileRequest> CompileRequest::decode(worker::Payload payload) {
  return worker::decoded("compile request", [&]() -> Result<CompileRequest> {
    return CompileRequest{CompileUnit::from_json(payload.fields.at("unit"))};
  });
}

worker::Payload encode_program(const CompiledProgram& program) {
  return {{{"format", binary_format_name(program.format)},
           {"arch", program.arch},
           {"lowered_names", program.lowered_names},
           {"log", program.log},
           {"options", program.options},
           {"seconds", program.seconds}},
          program.binary ? *program.binary : std::string()};
}

Result<CompiledProgram> decode_program(worker::Payload payload, const CompileUnit& unit) {
  return worker::decoded("compiled program", [&]() -> Result<CompiledProgram> {
    const auto& pj = payload.fields;
    CompiledProgram program;
    program.format = parse_binary_format(pj.value("format", std::string())).value_or(unit.format);
    program.arch = pj.value("arch", unit.arch);
    program.lowered_names = pj.at("lowered_names").get<std::vector<std::string>>();
    program.log = pj.value("log", std::string());
    program.options = pj.value("options", std::vector<std::string>{});
    program.seconds = pj.value("seconds", 0.0);
    program.binary = std::make_shared<const std::string>(std::move(payload.raw));
    return program;
  });
}

worker::Payload BlameRequest::encode() const {
  return {{{"unit", unit.to_json()}, {"log", log}}, {}};
}

Result<BlameRequest> BlameRequest::decode(worker::Payload payload) {
  return worker::decoded("blame request", [&]() -> Result<BlameRequest> {
    return BlameRequest{CompileUnit::from_json(payload.fields.at("unit")),
                        payload.fields.at("log").get<std::string>()};
  });
}

void add_compile_handlers(worker::WorkerServer& server, Compiler& compiler) {
  server.describe("compiler", {{"name", compiler.name()},
                               {"version", compiler.version()},
                               {"code_options", compiler.code_options()}});
  server.on<CompileRequest>([&compiler](CompileRequest r) -> worker::WorkerServer::Handled {
    // Cancellation reaches a worker as SIGKILL from the parent.
    auto program = compiler.compile(r.unit, CancelToken());
    if (!program.ok()) return program.error();
    return encode_program(*program);
  });
  server.on<BlameRequest>([&compiler](BlameRequest r) -> worker::WorkerServer::Handled {
    return worker::Payload{{{"indices", compiler.blame(r.unit, r.log)}}, {}};
  });
}

// ---- parent side -----------------------------------------------------------

WorkerProcessCompiler::WorkerProcessCompiler(std::vector<std::string> argv)
    : argv_(std::move(argv)) {
  if (argv_.empty()) {
    throw Error(
        ErrorCode::kInvalidArgument,
        "WorkerProcessCompiler needs a command, e.g. {\".../kiln-bench-worker\", \"--compile\", "
        "\"cuda\"}");
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

Status WorkerProcessCompiler::ensure_started() const {
  if (child_.running()) return ok_status();
  stop_child();
  const auto deadline = WorkerProcess::Clock::now() + std::chrono::seconds(kHelloSeconds);
  // A deadline, and the hello only a worker answers: a program that is not
  // one (KILN_WORKER=/bin/cat echoes the hello back) fails here, not at
  // every compile, and never hangs.
  auto started = WorkerProcess::start(argv_, deadline, CompileRequest::kOp);
  if (!started.ok()) {
    return make_error(ErrorCode::kUnavailable,
                      "cannot start compile worker: " + started.error().message,
                      {{"fix",
                        "give WorkerProcessCompiler the path of kiln-bench-worker with "
                        "--compile BACKEND"}});
  }
  ++starts_;
  child_ = std::move(started->process);
  const nlohmann::json about = started->hello.about.value("compiler", nlohmann::json::object());
  hello_.name = about.value("name", std::string("absent"));
  hello_.version = about.value("version", std::string("absent"));
  hello_.code_options = about.value("code_options", std::vector<std::string>{});
  have_hello_ = true;
  return ok_status();
}

Status WorkerProcessCompiler::start() const {
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
  // No deadline of its own: the token's deadline cancels it, which kills
  // the child.
  worker::Reply reply = child_.call(CompileRequest{unit}, WorkerProcess::Clock::time_point::max(),
                                    [&cancel] { return cancel.cancelled(); });
  if (!reply.answered) {
    stop_child();
    const ErrorInfo& why = reply.answer.error();
    if (why.code == ErrorCode::kCancelled) {
      return make_error(ErrorCode::kCancelled, "compile of " + unit.describe() +
                                                   " was cancelled while running (worker " +
                                                   std::to_string(child) + " killed)");
    }
    // The child died mid-compile (a compiler crash on this program): an
    // error of this program, which failure isolation can split like any
    // other.
    auto exit = why.details.find("exit");
    const std::string how = exit != why.details.end() ? exit->second : why.message;
    return make_error(ErrorCode::kCompileFailed,
                      "compile worker " + std::to_string(child) + " " + how + " while compiling " +
                          unit.describe(),
                      {{"log", "compile worker " + how}});
  }
  if (!reply.answer.ok()) return reply.answer.error();
  return decode_program(std::move(*reply.answer), unit);
}

std::vector<std::size_t> WorkerProcessCompiler::blame(const CompileUnit& unit,
                                                      const std::string& log) const {
  std::lock_guard lock(mutex_);
  if (!ensure_started().ok()) return {};
  worker::Reply reply =
      child_.call(BlameRequest{unit, log}, WorkerProcess::Clock::time_point::max());
  if (!reply.answered) stop_child();
  // Without indices the engine falls back to splitting.
  if (!reply.answer.ok()) return {};
  return reply.answer->fields.value("indices", std::vector<std::size_t>{});
}

}  // namespace kiln
