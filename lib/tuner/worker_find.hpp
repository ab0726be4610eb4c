// Which benchmark worker a tuning run starts, checked before the run
// starts: a worker the user named (BenchPlacement::worker_path, KILN_WORKER) that is
// missing or is not a Kiln worker is an error naming the setting and the
// fix, never a silent loss of crash isolation. The public half,
// find_bench_worker and process_compilers, is in kiln/tuner/tuner.hpp.
#pragma once

#include <string>

#include "kiln/core/error.hpp"

namespace kiln::internal {

// Whether the worker path was named by the user: `configured`
// (BenchPlacement::worker_path) or KILN_WORKER.
bool worker_configured(const std::string& configured);

// find_bench_worker, then a worker of it must start and answer its hello
// within `timeout_s` (the worker then waits idle for the run). Errors say
// where the path came from and the fix, e.g. "KILN_WORKER='/bin/true' is not
// a working benchmark worker ('/bin/true' did not answer the hello: ...):
// point KILN_WORKER at kiln-bench-worker (...), unset it, or benchmark in
// threads (...)".
Result<std::string> choose_bench_worker(const std::string& configured, double timeout_s);

}  // namespace kiln::internal
