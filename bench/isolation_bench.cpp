// kiln_bench_isolation [ROUNDS]: what crash isolation costs. The same tuning
// run (the shipped CPU GEMM, 8 configs whose artifacts are cached, so no
// compile is timed) benchmarked in threads and in worker processes, side by
// side, alternating, ROUNDS times (default 5):
//   thread          benchmark threads in this process (Isolation::kThread)
//   process, cold   the first process run: starts the worker (exec, LLVM,
//                   device) before it measures
//   process, warm   later runs: the idle worker is reused, the call is sent
// Medians over the rounds, and the fastest round of each (less sensitive
// to a loaded machine). Two timing budgets per config: the default (50 ms of repetitions) and a
// short one (2 ms) where fixed per-config costs weigh the most.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/process/worker_process.hpp"
#include "kiln/tuner/bench_worker.hpp"
#include "kiln/tuner/tuner.hpp"
#include "tuner/bench_call.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace kiln;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

TunableKernel gemm(int m, int n) {
  TunableKernel k;
  k.tmpl = cpu::gemm_f32_tiled_template();
  k.launch = [m, n](const Config& c, const ArgList&) {
    LaunchGeometry g;
    g.grid = cpu::gemm_f32_tiled_grid(c, m, n);
    return g;
  };
  k.outputs = {"C"};
  return k;
}

struct Run {
  double seconds = 0;
  std::size_t benchmarked = 0;
};

Run tune_once(const TunableKernel& k, const ArgList& args, Device& device, ArtifactCache& cache,
              Isolation iso, double target_seconds) {
  Backend b;
  b.compiler = std::shared_ptr<Compiler>(cpu::make_compiler());
  b.toolchain = current_toolchain("cpu");
  b.arch = "host";
  b.format = BinaryFormat::kCpuObject;
  b.bench.isolation = iso;
  Autotuner tuner(b, &cache, nullptr);  // no tuning cache: every call tunes
  TuneOptions to;
  to.search.strategy = "exhaustive";  // the same 8 configs every call
  to.search.max_configs = 8;
  to.measure.target_seconds = target_seconds;
  to.pipeline.progress = false;
  auto start = Clock::now();
  auto r = tuner.tune(k, args, device, to);
  Run run;
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (r.ok()) run.benchmarked = r->stats.benchmarked;
  return run;
}

// Starting a worker process up to its first answer (exec, dynamic linking
// of LLVM, the hello round trip), without opening its device.
double worker_start_seconds() {
  auto exe = find_bench_worker();
  if (!exe.ok()) return -1;
  auto start = Clock::now();
  auto p = WorkerProcess::start({*exe}, Clock::now() + std::chrono::seconds(30),
                                internal::MeasureRequest::kOp);
  if (!p.ok()) return -1;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const int m = 256, n = 256, kk = 256;
  auto dir = std::filesystem::temp_directory_path() / "kiln_bench_isolation";
  std::filesystem::remove_all(dir);
  Options opts = Options::global();
  opts.cache_dir = dir;
  ArtifactCache cache(opts);
  auto device = cpu::open_device(1);
  if (!device.ok()) {
    std::fprintf(stderr, "no CPU device: %s\n", device.error().describe().c_str());
    return 1;
  }
  std::vector<float> a(m * kk, 1.0f), b(kk * n, 0.5f), c(m * n, 0.0f);
  ArgList args = {Arg::of_tensor("A", a.data(), TensorArg::contiguous(DType::kF32, {m, kk})),
                  Arg::of_tensor("B", b.data(), TensorArg::contiguous(DType::kF32, {kk, n})),
                  Arg::of_tensor("C", c.data(), TensorArg::contiguous(DType::kF32, {m, n})),
                  Arg::of_scalar("M", m),
                  Arg::of_scalar("N", n),
                  Arg::of_scalar("K", kk)};
  TunableKernel k = gemm(m, n);
  // Compile every config once, so the timed runs only load and measure.
  (void)tune_once(k, args, **device, cache, Isolation::kThread, 0.001);

  std::printf(
      "kiln_bench_isolation: GEMM %dx%dx%d fp32, 8 configs (artifacts cached), "
      "1 CPU thread, %d rounds\n",
      m, n, kk, rounds);
  std::vector<double> starts;
  for (int i = 0; i < 5; ++i) starts.push_back(worker_start_seconds());
  std::printf("worker process start (spawn to first answer), median of 5: %.1f ms\n",
              median(starts) * 1e3);
  std::printf("%-16s %12s %12s %12s %9s %9s\n", "budget/config", "thread s", "process cold",
              "process warm", "cold/thr", "warm/thr");
  for (double target : {0.05, 0.002}) {
    std::vector<double> thread, warm;
    double cold = 0;
    std::size_t measured = 0;
    for (int i = 0; i < rounds; ++i) {
      Run t = tune_once(k, args, **device, cache, Isolation::kThread, target);
      Run p = tune_once(k, args, **device, cache, Isolation::kProcess, target);
      thread.push_back(t.seconds);
      if (target == 0.05 && i == 0) {
        cold = p.seconds;  // the very first process run started the worker
      } else {
        warm.push_back(p.seconds);
      }
      measured = std::min(t.benchmarked, p.benchmarked);
    }
    const double t = median(thread), w = median(warm);
    const double t_min = *std::min_element(thread.begin(), thread.end());
    const double w_min = *std::min_element(warm.begin(), warm.end());
    char label[32];
    std::snprintf(label, sizeof label, "%.0f ms", target * 1e3);
    if (cold > 0) {
      std::printf("%-16s %12.3f %12.3f %12.3f %9.2f %9.2f\n", label, t, cold, w, cold / t, w / t);
    } else {
      std::printf("%-16s %12.3f %12s %12.3f %9s %9.2f\n", label, t, "-", w, "-", w / t);
    }
    std::printf("%-16s %12.3f %12s %12.3f %9s %9.2f   (fastest round of each)\n", "", t_min, "",
                w_min, "", w_min / t_min);
    if (measured < 8) std::printf("  (only %zu configs measured ok)\n", measured);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
