#include "compile_backend.hpp"

#include <unistd.h>

#include <climits>

#include "compile/compile_worker.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

namespace {

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "kiln";
  return std::string(buf, static_cast<std::size_t>(n));
}

const DeviceBackend& backend_or_throw(DeviceKind kind) {
  auto backend = find_backend(kind);
  if (!backend.ok()) throw Error(backend.error());
  return **backend;
}

}  // namespace

Result<std::string> resolve_arch(const std::string& requested, DeviceKind kind) {
  if (!requested.empty()) return requested;
  auto backend = find_backend(kind);
  if (!backend.ok()) return backend.error();
  return (*backend)->default_arch();
}

std::shared_ptr<Compiler> make_backend_compiler(bool pch, bool processes, DeviceKind kind) {
  if (processes) {
    std::vector<std::string> argv = {self_path(), "compile-worker", "--backend",
                                     device_kind_name(kind)};
    if (!pch) argv.push_back("--no-pch");
    return std::make_shared<WorkerProcessCompiler>(std::move(argv));
  }
  Options options = Options::global();
  options.pch = options.pch && pch;
  return backend_or_throw(kind).make_compiler(options);
}

CompilerFactory compiler_factory(bool pch, bool processes, DeviceKind kind) {
  if (processes) return [pch, kind](int) { return make_backend_compiler(pch, true, kind); };
  auto shared = make_backend_compiler(pch, false, kind);
  return [shared](int) { return shared; };
}

int serve_worker(bool pch, DeviceKind kind) {
  // The `kiln compile --processes` that started this worker has printed the
  // environment's problems on the stderr this process shares.
  Options::problems_reported_by_parent();
  auto compiler = make_backend_compiler(pch, false, kind);
  // The socket is stdin and stdout; anything printed by mistake must not
  // corrupt the frames, so stdout goes to stderr from here on.
  ::dup2(2, 1);
  return serve_compile_worker(*compiler, 0);
}

}  // namespace kiln::tool
