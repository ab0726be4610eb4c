// Worker processes for the compile pool: the compile operations of the
// worker program (tools/worker/, `kiln-bench-worker --compile BACKEND`).
//
// Measured with NVRTC 13.0: its front end runs under a process-wide lock, so
// compile threads overlap only NVVM and PTX translation. Front ends overlap
// across processes. A WorkerProcessCompiler is a Compiler that forwards each
// program to a child process serving the compile handlers over a socket;
// give each pool worker its own (CompilePool with a factory) and the pool's
// threads become N parallel compiler processes. A cancelled compile kills its
// child (a fresh one starts on the next compile), so cancellation works even
// where the backend has no flow callback. A child that dies is reported as
// that program's error, never as a crash of the caller.
//
// The messages are operations of the one worker protocol
// (process/worker_protocol.hpp): CompileRequest answers with the program's
// metadata and its binary as the raw bytes, BlameRequest with indices.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "kiln/process/worker_process.hpp"
#include "kiln/process/worker_server.hpp"

namespace kiln {

// kCompile: one program; the answer is encode_program's.
struct CompileRequest {
  static constexpr worker::Op kOp = "compile";
  CompileUnit unit;
  [[nodiscard]] worker::Payload encode() const;
  [[nodiscard]] static Result<CompileRequest> decode(worker::Payload payload);
};
[[nodiscard]] worker::Payload encode_program(const CompiledProgram& program);
// `unit` fills what an older reply leaves out (format, arch).
[[nodiscard]] Result<CompiledProgram> decode_program(worker::Payload payload,
                                                     const CompileUnit& unit);

// kBlame: the specializations a compiler log blames; the answer holds
// "indices".
struct BlameRequest {
  static constexpr worker::Op kOp = "blame";
  CompileUnit unit;
  std::string log;
  [[nodiscard]] worker::Payload encode() const;
  [[nodiscard]] static Result<BlameRequest> decode(worker::Payload payload);
};

// The worker's side: `server` answers compile and blame requests with
// `compiler` (which must outlive it), and its hello names the compiler.
void add_compile_handlers(worker::WorkerServer& server, Compiler& compiler);

class WorkerProcessCompiler final : public Compiler {
 public:
  // How long a starting child has to answer the hello (LLVM or NVRTC start).
  static constexpr int kHelloSeconds = 60;

  // `argv` starts a worker: argv[0] an executable path, e.g.
  // {".../kiln-bench-worker", "--compile", "cuda"}. The child is started on
  // first use.
  explicit WorkerProcessCompiler(std::vector<std::string> argv);
  ~WorkerProcessCompiler() override;  // closes the socket, reaps the child
  WorkerProcessCompiler(const WorkerProcessCompiler&) = delete;
  WorkerProcessCompiler& operator=(const WorkerProcessCompiler&) = delete;

  // The child's compiler's name, version and code options (from its hello;
  // the child is started to learn them). "absent" when it cannot start.
  std::string name() const override;
  std::string version() const override;
  std::vector<std::string> code_options() const override;

  // One program at a time per instance (calls from several threads queue).
  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) override;
  std::vector<std::size_t> blame(const CompileUnit& unit, const std::string& log) const override;

  // Starts the child now (when it is not running) and checks its hello: an
  // error naming the program when it is not a compile worker of this wire.
  [[nodiscard]] Status start() const;

  // The running child's pid, or -1.
  pid_t child_pid() const;
  // Children started so far (a cancel or a crash costs one).
  int starts() const;

 private:
  struct Hello {
    std::string name = "absent", version = "absent";
    std::vector<std::string> code_options;
  };
  // Both require mutex_ held.
  Status ensure_started() const;
  void stop_child() const;

  std::vector<std::string> argv_;
  mutable std::mutex mutex_;
  mutable WorkerProcess child_;
  mutable int starts_ = 0;
  mutable Hello hello_;
  mutable bool have_hello_ = false;
};

}  // namespace kiln
