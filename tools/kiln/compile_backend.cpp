#include "compile_backend.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kiln/compile/compile_worker.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/bench_worker.hpp"

namespace kiln::tool {

namespace {

// The worker program's command line for compiles of `kind`; an error naming
// where it looked and the fix when it is not found.
Result<std::vector<std::string>> worker_argv(bool pch, const std::string& kind) {
  auto exe = find_bench_worker();
  if (!exe.ok()) return exe.error();
  std::vector<std::string> argv = {*exe, "--compile", kind};
  if (!pch) argv.push_back("--no-pch");
  return argv;
}

const DeviceBackend& backend_or_throw(const std::string& kind) {
  auto backend = find_backend(kind);
  if (!backend.ok()) throw Error(backend.error());
  return **backend;
}

}  // namespace

Result<std::string> resolve_arch(const std::string& requested, const std::string& kind) {
  // A CUDA target for a CPU kernel compiled every config to a Clang error
  // each; it is a usage error, once.
  if (kind == "cpu" && !requested.empty() && requested != "host")
    return make_error(ErrorCode::kInvalidArgument,
                      "--arch " + requested +
                          " is a CUDA target, and this kernel builds for the CPU (arch host): "
                          "drop --arch, or name a CUDA kernel");
  // "native" is the device's arch, as KILN_ARCH=native: resolved here, not
  // handed to NVRTC, which knows no such target.
  if (!requested.empty() && requested != "native") return requested;
  auto backend = find_backend(kind);
  if (!backend.ok()) return backend.error();
  return (*backend)->default_arch();
}

std::shared_ptr<Compiler> make_backend_compiler(bool pch, bool processes, const std::string& kind) {
  // The benchmark's make_compiler hook returns a compiler, not a Result:
  // a missing worker program ends the benchmark with its message.
  if (processes) return std::make_shared<WorkerProcessCompiler>(worker_argv(pch, kind).value());
  Options options = Options::global();
  options.pch = options.pch && pch;
  return backend_or_throw(kind).make_compiler(options);
}

Result<CompilerFactory> compiler_factory(bool pch, bool processes, const std::string& kind) {
  if (processes) {
    auto argv = worker_argv(pch, kind);  // found once, before any worker starts
    if (!argv.ok()) return argv.error();
    return CompilerFactory(
        [argv = *argv](int) { return std::make_shared<WorkerProcessCompiler>(argv); });
  }
  auto backend = find_backend(kind);
  if (!backend.ok()) return backend.error();
  auto shared = make_backend_compiler(pch, false, kind);
  return CompilerFactory([shared](int) { return shared; });
}

int serve_worker(bool pch, const std::string& kind) {
  auto argv = worker_argv(pch, kind);
  if (!argv.ok()) {
    std::fprintf(stderr, "kiln compile-worker: %s\n", argv.error().message.c_str());
    return 127;
  }
  std::vector<char*> args;
  for (const auto& a : *argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The socket on stdin/stdout, the parent-death signal and the process
  // group all carry over to the worker program.
  ::execv(args[0], args.data());
  std::fprintf(stderr, "kiln compile-worker: cannot run %s: %s\n", args[0], std::strerror(errno));
  return 127;
}

}  // namespace kiln::tool
