// kiln-bench-worker: one benchmark worker process (kiln/bench_worker.hpp).
// A tuning run starts it with its end of a socket as stdin and stdout and
// sends it the call, then one config at a time; nothing else runs it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "kiln/bench_worker.hpp"
#include "kiln/devices.hpp"

int main(int argc, char**) {
  if (argc > 1 || ::isatty(0)) {
    std::fprintf(stderr,
                 "kiln-bench-worker: started by Kiln's autotuner to measure configs in a "
                 "separate process; it takes no arguments and is not run by hand\n");
    return 2;
  }
  // The socket is stdin and stdout: anything printed by mistake (a kernel's
  // printf) must not corrupt the frames, so stdout goes to stderr.
  const int fd = ::dup(0);
  ::dup2(2, 1);
  if (const int null = ::open("/dev/null", O_RDONLY); null >= 0) ::dup2(null, 0);
  return kiln::serve_bench_worker(
      fd, [](const kiln::DeviceRef& ref, int threads) { return kiln::open_device(ref, threads); });
}
