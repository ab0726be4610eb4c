#include "bench_tune_run.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/options.hpp"
#include "kiln/kernels/shipped_kernels.hpp"
#include "kiln/runtime/devices.hpp"
#include "kiln/runtime/toolchain.hpp"

extern char** environ;

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
  const std::optional<BackendKind> kind = parse_backend_kind(setup.backend);
  if (!kind) {
    return make_error(ErrorCode::kInvalidArgument,
                      "--backend " + setup.backend + ": choose cpu or cuda");
  }
  auto resolved = resolve_shipped_kernel(setup.kernel, kind, std::nullopt);
  if (!resolved.ok()) return resolved.error();
  const ShippedKernel& shipped = **resolved;
  auto target = open_tuning_target(*kind, current_toolchain());
  if (!target.ok()) return target.error();

  // (2) Counted compiles, one benchmark worker, and on the CPU a device
  // with the requested number of block runners (not one per core).
  auto counting = std::make_shared<CountingCompiler>(target->backend.compiler);
  Backend backend = target->backend;
  backend.compiler = counting;
  backend.compiler_factory = nullptr;  // every compile goes through the counter
  backend.bench.workers = 1;
  backend.bench.devices.clear();
  if (*kind == BackendKind::kCpu) {
    const int threads = setup.bench_threads;
    backend.bench.open_device = [threads](int) {
      return open_device(DeviceRef{DeviceKind::kCpu, 0}, threads);
    };
  }
  backend.bench.isolation = setup.isolation == "process" ? Isolation::kProcess
                            : setup.isolation == "auto"  ? Isolation::kAuto
                                                         : Isolation::kThread;

  // (3) A square problem: every dimension of the kernel set to --size.
  ShapeDims shape;
  for (const auto& d : shipped.dims) shape[d] = setup.size;
  if (shipped.check_shape) {
    if (std::string problem = shipped.check_shape(shape); !problem.empty()) {
      return make_error(ErrorCode::kInvalidArgument, "--size: " + shipped.name + ": " + problem);
    }
  }
  auto call = make_call(*target->device, shipped.args(shipped.dtypes.front()), shape, 7);
  if (!call.ok()) return call.error();

  TuneOptions to;
  to.pipeline.overlap = pipeline;
  to.pipeline.group_size = setup.group_size;
  to.pipeline.compile_threads = setup.compile_threads;
  to.search.max_configs = max_configs;
  to.measure.target_seconds = target_seconds;
  to.measure.max_reps = 100000;  // the kernel time per config is set by target_seconds alone
  to.pipeline.progress = false;
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

Result<ChildRun> run_child(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe(fds) != 0) {
    return make_error(ErrorCode::kIo, std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto start = Clock::now();
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return make_error(ErrorCode::kUnavailable,
                      "cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  ChildRun run;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      run.out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  run.seconds = since(start);
  return run;
}

std::filesystem::path fresh_temp_dir(const std::string& tag) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("kiln-bench-tune-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error(ErrorCode::kIo,
                "cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
  }
  return pattern;
}

}  // namespace kiln::tool
