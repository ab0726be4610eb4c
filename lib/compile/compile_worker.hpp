// Worker processes for the compile pool.
//
// Measured with NVRTC 13.0: its front end runs under a process-wide lock, so
// compile threads overlap only NVVM and PTX translation. Front ends overlap
// across processes. A WorkerProcessCompiler is a Compiler that forwards each
// program to a child process running serve_compile_worker() over a socket;
// give each pool worker its own (CompilePool with a factory) and the pool's
// threads become N parallel compiler processes. A cancelled compile kills its
// child (a fresh one starts on the next compile), so cancellation works even
// where the backend has no flow callback. A child that dies is reported as
// that program's error, never as a crash of the caller.
//
// Wire format, both directions: kiln/worker_process.hpp's messages (a JSON
// frame, then one raw-bytes frame); the source travels inside the JSON, a
// binary in the raw frame. kWireVersion must be bumped on any change.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/worker_process.hpp"
#include "kiln/compile/compile.hpp"

namespace kiln {

class WorkerProcessCompiler final : public Compiler {
 public:
  static constexpr int kWireVersion = 1;
  // How long a starting child has to answer the hello (LLVM or NVRTC start).
  static constexpr int kHelloSeconds = 60;

  // `argv` starts a worker: argv[0] an executable path, e.g.
  // {"/usr/bin/kiln", "compile-worker"}. The child is started on first use.
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
  Result<bool> start() const;

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
  Result<bool> ensure_started() const;
  void stop_child() const;

  std::vector<std::string> argv_;
  mutable std::mutex mutex_;
  mutable WorkerProcess child_;
  mutable int starts_ = 0;
  mutable Hello hello_;
  mutable bool have_hello_ = false;
};

// The child's side: answers requests read from `fd` with `compiler` until the
// peer closes the socket. Returns the process exit status to use (0 on a
// clean end).
int serve_compile_worker(Compiler& compiler, int fd);

}  // namespace kiln
