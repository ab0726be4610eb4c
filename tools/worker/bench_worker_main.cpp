// kiln-bench-worker: Kiln's one worker program. It serves the operations of
// the worker protocol (process/worker_protocol.hpp) over its stdin/stdout:
//   kiln-bench-worker            benchmarking (tuner/bench_worker.hpp)
//   kiln-bench-worker --compile cpu|cuda [--no-pch]
//                                benchmarking, and compiling with that
//                                backend's compiler (compile/compile_worker.hpp),
//                                so that a compile that never finishes can be
//                                killed at its deadline; --no-pch turns NVRTC's
//                                precompiled headers off (as KILN_PCH=0)
// Kiln starts it with its end of a socket as stdin and stdout; nothing else
// runs it.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kiln/backends/devices.hpp"
#include "kiln/compile/compile_worker.hpp"
#include "kiln/core/options.hpp"
#include "kiln/device/backend.hpp"
#include "kiln/tuner/bench_worker.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "kiln-bench-worker: started by Kiln's autotuner to measure (or, with --compile "
               "cpu|cuda, compile) configs in a separate process; it is not run by hand\n");
  return 2;
}

// Out of memory, the kernel's OOM killer should end a worker, whose config
// is then recorded as crashed, and never the tuner that started it: the
// worker offers itself first (raising one's own score needs no privilege).
// KILN_WORKER_MEMORY caps the worker's data memory, so that a config that
// allocates without end gets a failed allocation here long before the
// machine swaps. Neither failing stops the worker: it says so and serves.
void limit_memory() {
  if (const int adj = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); adj >= 0) {
    if (::write(adj, "1000", 4) != 4)
      std::fprintf(stderr, "kiln-bench-worker: cannot raise its oom_score_adj: %s\n",
                   std::strerror(errno));
    ::close(adj);
  }
  const std::uint64_t cap = kiln::Options::global().worker_memory_bytes;
  if (cap == 0) return;
  const rlimit limit{static_cast<rlim_t>(cap), static_cast<rlim_t>(cap)};
  if (::setrlimit(RLIMIT_DATA, &limit) != 0)
    std::fprintf(stderr, "kiln-bench-worker: cannot apply KILN_WORKER_MEMORY=%llu bytes: %s\n",
                 static_cast<unsigned long long>(cap), std::strerror(errno));
}

std::unique_ptr<kiln::Compiler> backend_compiler(const char* name) {
  auto backend = kiln::find_backend(name);
  return backend.ok() ? (*backend)->make_compiler() : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (::isatty(0)) return usage();
  // The tuner that started this process has printed the environment's
  // problems on the stderr this process shares.
  kiln::Options::problems_reported_by_parent();
  std::unique_ptr<kiln::Compiler> compiler;
  if (argc == 4 && std::strcmp(argv[3], "--no-pch") == 0) {
    // Before anything reads the options (they are read once).
    ::setenv("KILN_PCH", "0", 1);
    --argc;
  }
  if (argc == 3 && std::strcmp(argv[1], "--compile") == 0) {
    compiler = backend_compiler(argv[2]);
    if (!compiler) {
      std::fprintf(stderr, "kiln-bench-worker: no '%s' compiler in this build\n", argv[2]);
      return 2;
    }
  } else if (argc != 1) {
    return usage();
  }
  limit_memory();  // after KILN_PCH is set: it reads the options
  // The socket is stdin and stdout: anything printed by mistake (a kernel's
  // printf) must not corrupt the frames, so stdout goes to stderr.
  const int fd = ::dup(0);
  ::dup2(2, 1);
  if (const int null = ::open("/dev/null", O_RDONLY); null >= 0) ::dup2(null, 0);
  kiln::worker::WorkerServer server;
  if (compiler) kiln::add_compile_handlers(server, *compiler);
  kiln::add_bench_handlers(server, [](const kiln::DeviceRef& ref, int threads) {
    return kiln::open_device(ref, threads);
  });
  return server.serve(fd);
}
