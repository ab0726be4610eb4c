#include "compile_backend.hpp"

#include <unistd.h>

#include <climits>

#include "compile/compile_worker.hpp"
#include "kiln/core/options.hpp"
#if KILN_BACKEND_CUDA
#include "kiln/runtime/nvrtc.hpp"
#endif

namespace kiln::tool {

namespace {

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "kiln";
  return std::string(buf, static_cast<std::size_t>(n));
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
  if (processes) {
    std::vector<std::string> argv = {self_path(), "compile-worker"};
    if (!pch) argv.push_back("--no-pch");
    return std::make_shared<WorkerProcessCompiler>(std::move(argv));
  }
#if KILN_BACKEND_CUDA
  auto settings = cuda::NvrtcSettings::from_options(Options::global());
  settings.pch = pch;
  return cuda::make_compiler(std::move(settings));
#else
  (void)pch;
  no_cuda();
#endif
}

CompilerFactory compiler_factory(bool pch, bool processes) {
  if (processes) return [pch](int) { return make_backend_compiler(pch, true); };
  auto shared = make_backend_compiler(pch, false);
  return [shared](int) { return shared; };
}

int serve_worker(bool pch) {
  // The `kiln compile --processes` that started this worker has printed the
  // environment's problems on the stderr this process shares.
  Options::problems_reported_by_parent();
#if KILN_BACKEND_CUDA
  // The socket is stdin and stdout; anything printed by mistake must not
  // corrupt the frames, so stdout goes to stderr from here on.
  ::dup2(2, 1);
  auto compiler = make_backend_compiler(pch, false);
  return serve_compile_worker(*compiler, 0);
#else
  (void)pch;
  no_cuda();
#endif
}

}  // namespace kiln::tool
