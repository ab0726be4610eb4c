// A tuning request from text to a TuneResult: resolve, open the target,
// build the call, tune. Each failure names its step (details["step"]) so a
// caller can tell bad input from a missing device or a failed run.
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/kernels/tune_request.hpp"

namespace kiln {

namespace {

ErrorInfo at_step(ErrorInfo error, const char* step) {
  error.details["step"] = step;
  return error;
}

// A target that cannot open: what is missing, and the fix (the CPU version
// of a shipped CUDA kernel, or the spec's backend).
ErrorInfo target_error(const TuneJob& job, const ErrorInfo& error) {
  std::string fix;
  if (!job.cpu_alternative.empty())
    fix = " (--backend cpu --kernel " + job.cpu_alternative + ")";
  else if (job.user && job.backend == "cuda")
    fix = " (for a CPU version of the kernel, set \"backend\": \"cpu\" in its spec)";
  ErrorInfo out = error;
  out.message = job.name + " needs a " + (job.backend == "cuda" ? "CUDA" : "CPU") +
                " device: " + error.message + fix;
  return at_step(std::move(out), "target");
}

}  // namespace

Result<TuneRun> tune_request(const TuneRequest& request, TuneOptions options,
                             const Options& caches) {
  auto job = resolve_tune_request(request);
  if (!job.ok()) return at_step(job.error(), "request");
  auto target = open_tuning_target(job->backend, current_toolchain(job->backend), job->devices,
                                   request.cpu_threads);
  if (!target.ok()) return target_error(*job, target.error());
  auto call = make_call(*target->device, job->args, job->shape, request.seed);
  if (!call.ok()) {
    ErrorInfo e = call.error();
    e.message = "cannot set up the call: " + e.message;
    return at_step(std::move(e), "call");
  }
  target->backend.bench.isolation = request.isolation;
  options.check.reference = job->reference;
  options.check.reference_fn = job->reference_fn;
  options.check.tolerance = job->tolerance;

  TuneRun run{std::move(*job), std::move(*target), std::move(*call), TuneResult{}};
  TuningCache tunings(caches);
  ArtifactCache artifacts(caches);
  Autotuner tuner(run.target.backend, &artifacts, &tunings);
  Result<TuneResult> result = [&]() -> Result<TuneResult> {
    try {
      return tuner.tune(run.job.kernel, run.call.args, *run.target.device, options);
    } catch (const Error& e) {
      return e.info();  // a benchmark worker that is missing or broken
    }
  }();
  if (!result.ok()) return at_step(result.error(), "tune");
  run.result = std::move(*result);
  return run;
}

}  // namespace kiln
