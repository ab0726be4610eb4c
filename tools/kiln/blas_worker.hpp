// One BLAS library in a process of its own, for `kiln bench gemm`'s
// baselines. `kiln bench blas-worker` (hidden) sets the variables that
// force a kernel as its run asks, opens the library, says which kernel it
// runs (the hello), then answers check and round requests for one shape at
// a time over its stdin/stdout socket (process/worker_process.hpp's frames).
// A process each because a library reads its kernel variable once, when it
// loads: a user's OPENBLAS_CORETYPE and the native kernel cannot share one,
// and a forced kernel the CPU cannot run (SIGILL) ends only its own run.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "gemm_measure.hpp"
#include "gemm_shape.hpp"
#include "kiln/core/error.hpp"
#include "kiln/process/worker_process.hpp"

namespace kiln::tool {

enum class BlasRun {
  kNative,       // kernel variables unset; OPENBLAS_CORETYPE set from the CPU's vector unit
  kEnvironment,  // the environment kiln was given, a forcing variable included
};

class BlasWorker {
 public:
  // Starts the worker for `library` (a path or a name the loader searches)
  // and reads its hello: kUnavailable with the library's reason (it does
  // not open, it is no BLAS) or how the worker ended.
  [[nodiscard]] static Result<BlasWorker> start(const std::string& library, BlasRun run,
                                                int threads);

  // {"flavor", "library", "version", "kernel", "config", "int64",
  //  "variable", "value" (null when unset), "set_by" ("kiln", "environment", "")}
  const nlohmann::json& hello() const { return hello_; }

  // Runs its sgemm once at `shape` on its own inputs and checks C.
  [[nodiscard]] Result<GemmCheck> check(const GemmShape& shape);
  // One timing round at `shape` (gemm_measure.hpp): the median seconds.
  [[nodiscard]] Result<double> round(const GemmShape& shape);

 private:
  [[nodiscard]] Result<nlohmann::json> ask(const nlohmann::json& request);

  WorkerProcess process_;
  nlohmann::json hello_;
  std::string library_;
};

// Registers the hidden `kiln bench blas-worker --library L --threads N
// [--native]` on `bench`.
void add_blas_worker_command(CLI::App& bench, int& exit_code);

}  // namespace kiln::tool
