#include "bench_tune_run.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "kiln/artifact_cache.hpp"
#include "kiln/error.hpp"
#include "kiln/options.hpp"
#include "kiln/toolchain.hpp"
#include "kiln/tuning_cache.hpp"
#if defined(KILN_BACKEND_CPU)
#include "kiln/cpu.hpp"
#endif

extern char** environ;

namespace kiln::tool {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// C = A * B, fp32, square, with inputs that make every config's rounding
// the same (small integers: exact sums), so correctness checks compare
// exactly what they should.
struct GemmCall {
  std::vector<float> a, b, c;
  ArgList args;
  explicit GemmCall(int n) : a(std::size_t(n) * n), b(std::size_t(n) * n), c(std::size_t(n) * n) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> small(-3, 3);
    for (auto& x : a) x = static_cast<float>(small(rng));
    for (auto& x : b) x = static_cast<float>(small(rng));
    args = {Arg::of_tensor("A", a.data(), TensorArg::contiguous(DType::kF32, {n, n})),
            Arg::of_tensor("B", b.data(), TensorArg::contiguous(DType::kF32, {n, n})),
            Arg::of_tensor("C", c.data(), TensorArg::contiguous(DType::kF32, {n, n})),
            Arg::of_scalar("M", n),
            Arg::of_scalar("N", n),
            Arg::of_scalar("K", n)};
  }
};

}  // namespace

nlohmann::json TuneRun::to_json() const {
  return {{"pipeline", pipeline},
          {"tune_seconds", tune_seconds},
          {"compiler_calls", compiler_calls},
          {"source", source},
          {"best", best},
          {"configs", configs},
          {"stats", stats.to_json()}};
}

std::string bench_kernel_name(const TuneBenchSetup& setup) {
  return setup.backend == "cpu" ? "gemm_f32_cpu" : "";
}

Result<TuneRun> tune_problem(const TuneBenchSetup& setup, const std::filesystem::path& cache_dir,
                             bool pipeline, std::size_t max_configs, double target_seconds) {
  if (setup.backend != "cpu") {
    return make_error(ErrorCode::kUnavailable,
                      "kiln bench tune measures the CPU backend only so far (--backend cpu); "
                      "the CUDA variant is not written yet");
  }
#if defined(KILN_BACKEND_CPU)
  Options opts = Options::global();
  opts.cache_dir = cache_dir;
  ArtifactCache artifacts(opts);
  TuningCache tunings(opts);
  auto counting =
      std::make_shared<CountingCompiler>(std::shared_ptr<Compiler>(cpu::make_compiler()));
  Backend backend;
  backend.compiler = counting;
  backend.toolchain = current_toolchain();
  backend.arch = "host";
  backend.format = BinaryFormat::kCpuObject;
  const int bench_threads = setup.bench_threads;
  backend.open_device = [bench_threads](int) { return cpu::open_device(bench_threads); };
  backend.bench_workers = 1;
  backend.isolation = setup.isolation == "process" ? Isolation::kProcess
                      : setup.isolation == "auto"  ? Isolation::kAuto
                                                   : Isolation::kThread;
  auto home = cpu::open_device(1);
  if (!home.ok()) return home.error();

  TunableKernel kernel;
  kernel.tmpl = cpu::gemm_f32_template();
  kernel.launch = [](const Config& config, const ArgList& args) {
    LaunchGeometry g;
    g.grid = cpu::gemm_f32_grid(config, std::get<std::int32_t>(find_arg(args, "M").scalar),
                                std::get<std::int32_t>(find_arg(args, "N").scalar));
    return g;
  };
  kernel.outputs = {"C"};
  GemmCall call(setup.size);

  TuneOptions to;
  to.pipeline = pipeline;
  to.group_size = setup.group_size;
  to.compile_threads = setup.compile_threads;
  to.max_configs = max_configs;
  to.target_seconds = target_seconds;
  to.max_reps = 100000;  // the kernel time per config is set by target_seconds alone
  to.progress = false;

  Autotuner tuner(backend, &artifacts, &tunings);
  auto start = Clock::now();
  auto r = tuner.tune(kernel, call.args, **home, to);
  TuneRun run;
  run.tune_seconds = since(start);
  if (!r.ok()) return r.error();
  run.pipeline = pipeline;
  run.compiler_calls = counting->calls();
  run.source = r->source;
  run.best = r->config.to_string();
  run.configs = r->measurements.size();
  run.stats = r->stats;
  return run;
#else
  (void)cache_dir, (void)pipeline, (void)max_configs, (void)target_seconds;
  return make_error(ErrorCode::kUnavailable,
                    "the CPU backend is not built (configured with KILN_WITH_LLVM=OFF)");
#endif
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
