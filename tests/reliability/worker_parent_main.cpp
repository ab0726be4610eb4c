// kiln_worker_parent WORKER ARGS...: starts WORKER through kiln::WorkerProcess
// from a thread that then exits (as a benchmark thread does before its
// worker idles in the pool), prints the worker's pid once that thread is
// gone, and keeps the worker until it is killed itself. The lifetime test
// checks that the worker outlives the thread but not this process.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <thread>

#include "kiln/process/worker_process.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kiln_worker_parent WORKER ARGS...\n");
    return 2;
  }
  std::optional<kiln::WorkerProcess> worker;
  std::thread([&] {
    auto started = kiln::WorkerProcess::spawn({argv + 1, argv + argc});
    if (started.ok()) worker = std::move(*started);
  }).join();
  if (!worker) return 1;
  std::printf("%d\n", static_cast<int>(worker->pid()));
  std::fflush(stdout);
  for (;;) ::pause();
}
