#include "bench_tune_run.hpp"

#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "kiln/backends/devices.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/options.hpp"
#include "kiln/kernels/shipped_kernels.hpp"

namespace kiln::tool {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

nlohmann::json TuneRun::to_json() const {
  return {{"pipeline", pipeline},
          {"kernel", kernel},
          {"tune_seconds", tune_seconds},
          {"compiler_calls", compiler_calls},
          {"source", source},
          {"best", best},
          {"configs", configs},
          {"stats", stats.to_json()}};
}

Result<TuneRun> tune_problem(const TuneBenchSetup& setup, const std::filesystem::path& cache_dir,
                             bool pipeline, std::size_t max_configs, double target_seconds) {
  // (1) The shipped kernel (a name, or a family resolved by backend) and
  // the backend it runs on, from the registry `kiln tune` uses.
  const std::optional<std::string> kind = parse_backend_name(setup.backend);
  if (!kind) {
    return make_error(ErrorCode::kInvalidArgument,
                      "--backend " + setup.backend + ": choose cpu or cuda");
  }
  auto resolved = resolve_shipped_kernel(setup.kernel, kind, std::nullopt);
  if (!resolved.ok()) return resolved.error();
  const ShippedKernel& shipped = **resolved;
  auto target = open_tuning_target(*kind, current_toolchain(*kind));
  if (!target.ok()) return target.error();

  // (2) Counted compiles, one benchmark worker, and on the CPU a device
  // with the requested number of block runners (not one per core).
  auto counting = std::make_shared<CountingCompiler>(target->backend.compiler);
  Backend backend = target->backend;
  backend.compiler = counting;
  backend.compiler_factory = nullptr;  // every compile goes through the counter
  backend.bench.workers = 1;
  backend.bench.devices.clear();
  if (*kind == "cpu") {
    const int threads = setup.bench_threads;
    backend.bench.open_device = [threads](int) {
      return open_device(DeviceRef{"cpu", 0}, threads);
    };
  }
  backend.bench.isolation = setup.isolation == "process" ? Isolation::kProcess
                            : setup.isolation == "auto"  ? Isolation::kAuto
                                                         : Isolation::kThread;

  // (3) A square problem: every dimension of the kernel set to --size.
  ShapeDims shape;
  for (const auto& d : shipped.dims) shape[d] = setup.size;
  if (shipped.check_shape) {
    if (Status fits = shipped.check_shape(shape); !fits.ok()) {
      return make_error(ErrorCode::kInvalidArgument,
                        "--size: " + shipped.name + ": " + fits.error().message);
    }
  }
  auto call = make_call(*target->device, shipped.args(shipped.dtypes.front()), shape, 7);
  if (!call.ok()) return call.error();

  TuneOptions to;
  to.pipeline.overlap = pipeline;
  to.pipeline.group_size = setup.group_size;
  to.pipeline.compile_threads = setup.compile_threads;
  to.search.strategy = "exhaustive";  // one pipelined run of the first max_configs
  to.search.max_configs = max_configs;
  // The pipeline alone, as its ideal counts it (compile and benchmark
  // stages): finalists' re-measurement is measured by bench/tuning_memory.sh.
  to.search.finalists = 0;
  to.measure.target_seconds = target_seconds;
  to.measure.max_reps = 100000;  // the kernel time per config is set by target_seconds alone
  to.pipeline.progress = false;
  to.environment = false;  // the setting measured, whatever KILN_SEARCH or KILN_BUDGET_S say
  if (shipped.tolerance) to.check.tolerance = shipped.tolerance(shape);

  Options opts = Options::global();
  opts.cache_dir = cache_dir;
  ArtifactCache artifacts(opts);
  TuningCache tunings(opts);
  Autotuner tuner(backend, &artifacts, &tunings);
  auto start = Clock::now();
  auto r = tuner.tune(shipped.kernel(), call->args, *target->device, to);
  TuneRun run;
  run.tune_seconds = since(start);
  if (!r.ok()) return r.error();
  run.pipeline = pipeline;
  run.kernel = shipped.name;
  run.compiler_calls = counting->calls();
  run.source = source_name(r->source);
  run.best = r->config.to_string();
  run.configs = r->measurements.size();
  run.stats = r->stats;
  return run;
}

Result<std::filesystem::path> fresh_temp_dir(const std::string& tag) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("kiln-bench-tune-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return make_error(ErrorCode::kIo, "cannot create a temporary directory " + pattern + ": " +
                                          std::strerror(errno) + ": set TMPDIR to a writable one");
  }
  return std::filesystem::path(pattern);
}

}  // namespace kiln::tool
