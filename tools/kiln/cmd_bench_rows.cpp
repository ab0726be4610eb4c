// kiln bench rows [--threads 2] [--mib N] [--cols 4096] [--rounds R]
//   [--retune] [--json]
// Kiln's shipped CPU row kernels (fused_add_rmsnorm, softmax_f32), tuned at
// a size the last-level cache cannot hold (or taken from the tuning
// cache), against the machine's memory bandwidth measured in the same run
// (memory_bandwidth.hpp: the best of six STREAM-like patterns on the same
// threads), rounds interleaved, the order reversed every other round. Each
// kernel's GB/s counts the bytes its call must move (ShippedKernel::bytes),
// as the patterns count theirs. docs/benchmarks.md records its numbers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gemm_measure.hpp"
#include "kiln/kernels/tune_request.hpp"
#include "memory_bandwidth.hpp"
#include "option_checks.hpp"
#include "sample_stats.hpp"

namespace kiln::tool {
namespace {

struct RowsBenchArgs {
  int threads = 2;
  std::size_t mib = 0;  // 0: twice the last-level cache, 64 MiB to 1 GiB
  int cols = 4096;
  int rounds = 7;
  bool retune = false;
  bool json = false;
};

struct RowKernel {
  std::string name;
  std::string width;  // the dim that is a row's length: hidden or cols
  std::string shape;  // "rows=R,cols=C"
  TuneRun run;
  double tune_seconds = 0;
  double bytes = 0;  // what one call moves, ShippedKernel::bytes
  std::vector<double> seconds;
};

// Bytes of one [rows, cols] f32 tensor: `--mib`, else twice the last-level
// cache (so that the kernel's two tensors are four times it), at least
// 64 MiB (a cache the machine does not report) and at most 1 GiB (a VM that
// reports a huge L3 does not make the run take gigabytes more).
std::size_t tensor_bytes(const RowsBenchArgs& args) {
  if (args.mib > 0) return args.mib << 20;
  const std::size_t l3 = host_cpu_traits(args.threads).l3_bytes;
  return std::clamp<std::size_t>(2 * l3, std::size_t{64} << 20, std::size_t{1} << 30);
}

Result<RowKernel> tune_row_kernel(const std::string& name, const std::string& width,
                                  std::int64_t rows, const RowsBenchArgs& args) {
  RowKernel k{name, width, "", {}, 0, 0, {}};
  TuneRequest request;
  request.kernel = name;
  request.backend = "cpu";
  request.shape = "rows=" + std::to_string(rows) + "," + width + "=" + std::to_string(args.cols);
  request.cpu_threads = args.threads;
  request.isolation = Isolation::kThread;
  TuneOptions options;
  options.cache.retune = args.retune;
  options.environment = false;  // a benchmark runs its flags' settings
  const auto start = std::chrono::steady_clock::now();
  auto run = tune_request(request, options, Options::global());
  if (!run.ok()) return run.error();
  k.tune_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (run->result.source == ResultSource::kFailed || !run->result.kernel.valid()) {
    return make_error(ErrorCode::kInternal,
                      name + " at " + request.shape + " has no working config to compare");
  }
  k.bytes = run->job.bytes;
  k.shape = request.shape;
  k.run = std::move(*run);
  return k;
}

Status launch_once(RowKernel& k) {
  Device& device = *k.run.target.device;
  Status st = k.run.result.launch(device, k.run.job.kernel, k.run.call.args);
  return st.ok() ? device.synchronize() : st;
}

// `rounds` rounds of every pattern and every kernel, the order reversed
// every other round; each time is time_round's median (gemm_measure.hpp).
Status time_rows(int rounds, BandwidthProbes& probes, std::vector<RowKernel>& kernels,
                 std::vector<std::vector<double>>& probe_gbps) {
  const auto& names = BandwidthProbes::names();
  probe_gbps.assign(names.size(), {});
  Status failed = ok_status();
  std::vector<std::function<void()>> steps;
  for (std::size_t i = 0; i < names.size(); ++i) {
    steps.push_back([&, i] {
      double bytes = 0;
      const double s = time_round([&] { probes.run_seconds(names[i], bytes); });
      probe_gbps[i].push_back(bytes / s * 1e-9);
    });
  }
  for (RowKernel& k : kernels) {
    steps.push_back([&] {
      k.seconds.push_back(time_round([&] {
        if (Status st = launch_once(k); !st.ok() && failed.ok()) failed = st;
      }));
    });
  }
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 1) std::reverse(steps.begin(), steps.end());
    for (auto& step : steps) step();
    if (r % 2 == 1) std::reverse(steps.begin(), steps.end());
  }
  return failed;
}

nlohmann::json kernel_json(const RowKernel& k, double best_gbps) {
  const double gbps = k.bytes / median(k.seconds) * 1e-9;
  return {{"kernel", k.name},
          {"shape", k.shape},
          {"bytes_per_call", k.bytes},
          {"median_ms", median(k.seconds) * 1e3},
          {"gbps", gbps},
          {"fraction_of_bandwidth", best_gbps > 0 ? gbps / best_gbps : 0.0},
          {"config", k.run.result.config.to_json()},
          {"source", source_name(k.run.result.source)},
          {"configs_measured", k.run.result.measurements.size()},
          {"tune_seconds", k.tune_seconds}};
}

void print_rows_report(const nlohmann::json& report) {
  const auto& bw = report["bandwidth"];
  std::printf("memory bandwidth, %d threads, arrays of %.0f MiB (GB/s):", bw["threads"].get<int>(),
              bw["array_bytes"].get<double>() / (1 << 20));
  for (const auto& [name, gbps] : bw["probes"].items())
    std::printf(" %s %.1f", name.c_str(), gbps.get<double>());
  std::printf("; best %s %.1f\n", bw["best"].get<std::string>().c_str(), bw["gbps"].get<double>());
  for (const auto& k : report["kernels"]) {
    std::printf("%-18s %s: %6.2f ms  %5.1f GB/s  %.2f of the best  (%s, %s)\n",
                k["kernel"].get<std::string>().c_str(), k["shape"].get<std::string>().c_str(),
                k["median_ms"].get<double>(), k["gbps"].get<double>(),
                k["fraction_of_bandwidth"].get<double>(), k["config"].dump().c_str(),
                k["source"].get<std::string>().c_str());
  }
}

int run_bench_rows(const RowsBenchArgs& args) {
  const std::size_t bytes = tensor_bytes(args);
  const std::int64_t rows =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(bytes / (4 * std::size_t(args.cols))));
  std::vector<RowKernel> kernels;
  for (const auto& [name, width] :
       {std::pair<std::string, std::string>{"fused_add_rmsnorm", "hidden"},
        {"softmax_f32", "cols"}}) {
    auto k = tune_row_kernel(name, width, rows, args);
    if (!k.ok()) {
      std::fprintf(stderr, "kiln bench rows: %s: %s\n", name.c_str(), k.error().describe().c_str());
      return 1;
    }
    kernels.push_back(std::move(*k));
  }
  BandwidthProbes probes(bytes / sizeof(float), args.threads);
  std::vector<std::vector<double>> probe_gbps;
  if (Status st = time_rows(args.rounds, probes, kernels, probe_gbps); !st.ok()) {
    std::fprintf(stderr, "kiln bench rows: a timed run failed: %s\n",
                 st.error().describe().c_str());
    return 1;
  }
  nlohmann::json report = {
      {"threads", args.threads},
      {"rounds", args.rounds},
      {"device", host_cpu_traits(args.threads).summary()},
      {"bandwidth", bandwidth_json(BandwidthProbes::names(), probe_gbps, args.threads, bytes)},
      {"kernels", nlohmann::json::array()}};
  for (const RowKernel& k : kernels)
    report["kernels"].push_back(kernel_json(k, report["bandwidth"]["gbps"].get<double>()));
  if (args.json)
    std::cout << report.dump(2) << "\n";
  else
    print_rows_report(report);
  return 0;
}

}  // namespace

void add_bench_rows_command(CLI::App& bench, int& exit_code) {
  auto a = std::make_shared<RowsBenchArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "rows",
      "Kiln's tuned CPU row kernels (fused_add_rmsnorm, softmax_f32) against the machine's "
      "measured memory bandwidth, interleaved");
  cmd->add_option("--threads", a->threads, "Threads of kernels and bandwidth patterns (default 2)")
      ->transform(integer_in(1, kMaxThreads));
  cmd->add_option("--mib", a->mib,
                  "MiB of each tensor (default: twice the last-level cache, 64 to 1024)")
      ->transform(integer_in(1, 65536));
  cmd->add_option("--cols", a->cols, "Row length: hidden and cols (default 4096)")
      ->transform(integer_in(1, 1 << 24));
  cmd->add_option("--rounds", a->rounds, "Interleaved timing rounds (default 7)")
      ->transform(integer_in(1, kMaxRounds));
  cmd->add_flag("--retune", a->retune, "Tune even when the tuning cache has a winner");
  cmd->add_flag("--json", a->json, "Print one JSON document");
  cmd->callback([a, &exit_code] { exit_code = run_bench_rows(*a); });
}

}  // namespace kiln::tool
