#include "compile_backend.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "compile/compile_worker.hpp"
#include "kiln/core/options.hpp"
#include "tuner/bench_worker.hpp"
#if KILN_BACKEND_CUDA
#include "kiln/runtime/nvrtc.hpp"
#endif

namespace kiln::tool {

namespace {

// The worker program's command line for NVRTC compiles; an error naming
// where it looked and the fix when it is not found.
Result<std::vector<std::string>> worker_argv(bool pch) {
  auto exe = find_bench_worker();
  if (!exe.ok()) return exe.error();
  std::vector<std::string> argv = {*exe, "--compile", "cuda"};
  if (!pch) argv.push_back("--no-pch");
  return argv;
}

[[noreturn]] [[maybe_unused]] void no_cuda() {
  throw Error(ErrorCode::kUnavailable,
              "this kiln was built without the CUDA backend: rebuild with KILN_WITH_CUDA=ON");
}

}  // namespace

Result<std::string> resolve_arch(const std::string& requested) {
  if (!requested.empty()) return requested;
#if KILN_BACKEND_CUDA
  return cuda::default_arch();
#else
  return make_error(ErrorCode::kUnavailable, "the CUDA backend is not built");
#endif
}

std::shared_ptr<Compiler> make_backend_compiler(bool pch, bool processes) {
  // The benchmark's make_compiler hook returns a compiler, not a Result:
  // a missing worker program ends the benchmark with its message.
  if (processes) return std::make_shared<WorkerProcessCompiler>(worker_argv(pch).value());
#if KILN_BACKEND_CUDA
  auto settings = cuda::NvrtcSettings::from_options(Options::global());
  settings.pch = pch;
  return cuda::make_compiler(std::move(settings));
#else
  (void)pch;
  no_cuda();
#endif
}

Result<CompilerFactory> compiler_factory(bool pch, bool processes) {
  if (processes) {
    auto argv = worker_argv(pch);  // found once, before any worker starts
    if (!argv.ok()) return argv.error();
    return CompilerFactory(
        [argv = *argv](int) { return std::make_shared<WorkerProcessCompiler>(argv); });
  }
  auto shared = make_backend_compiler(pch, false);
  return CompilerFactory([shared](int) { return shared; });
}

int serve_worker(bool pch) {
  auto argv = worker_argv(pch);
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
