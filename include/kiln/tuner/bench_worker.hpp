// Benchmark worker processes: crash isolation for tuning. Benchmarking is a
// set of operations of the one worker program (tools/worker/).
//
// With BenchPlacement::isolation at kProcess (or kAuto where it can), each
// benchmark worker of a tuning run is a child process running the
// `kiln-bench-worker` executable, one per device. The tuner sends it the
// call once (arguments copied to the host, the reference outputs, the
// in-place lists, the timing options) and then one compiled config at a
// time; the worker replicates the arguments into its own device memory,
// loads and measures each config, and answers with its Measurement. A
// config that kills its worker (a segfault on the CPU, a CUDA fault that
// poisons the context) or runs past its deadline (the tuner kills it) is
// recorded as failed with the reason, a fresh worker takes the slot, and
// tuning goes on. See docs/reliability.md.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kiln/compile/compile_pool.hpp"
#include "kiln/device/device.hpp"
#include "kiln/process/worker_server.hpp"

namespace kiln {

// Opens the device a worker measures on: `ref`, and on the CPU `threads`
// block runners (0: one per core).
using WorkerDeviceOpener =
    std::function<Result<std::unique_ptr<Device>>(const DeviceRef& ref, int threads)>;

// The worker's side: `server` answers the benchmark operations (call,
// measure, release; tuner/bench_call.hpp) on the device `open` gives. After
// reporting that its device became unusable the worker exits with status 3,
// so that the tuner replaces it.
void add_bench_handlers(worker::WorkerServer& server, WorkerDeviceOpener open);

// The worker executable a tuner starts, the first that exists of:
// `configured` (BenchPlacement::worker_path) when not empty; KILN_WORKER
// (Options::bench_worker); the build tree's; the installed one
// (<prefix>/libexec/kiln/kiln-bench-worker); kiln-bench-worker beside the
// running executable. An error value naming every place tried otherwise.
Result<std::string> find_bench_worker(const std::string& configured = "");

// Compilers in worker processes, one per compile pool worker (for
// Backend::compiler_factory): each runs `kiln-bench-worker --compile
// <backend>` ("cpu" or "cuda") and is killed when its compile passes its
// deadline or is cancelled, so the pool never waits on a hung compile
// (ptxas, a runaway constexpr). An error value when no worker is found.
Result<CompilerFactory> process_compilers(const std::string& backend,
                                          const std::string& configured = "");

}  // namespace kiln
