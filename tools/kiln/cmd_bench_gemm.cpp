// kiln bench gemm [--sizes 512,1024,2048] [--threads 2] [--search S]
//   [--max-configs N] [--rounds R] [--retune] [--json]
// Kiln's tuned CPU gemm_f32 against OpenBLAS's cblas_sgemm, in one run: for
// each size, tune (or take the tuning cache's winner), then time both on the
// same 64-byte aligned A, B and C, on the same number of threads, rounds
// interleaved (the order alternating), medians compared. docs/benchmarks.md
// records its numbers.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kiln/kernels/tune_request.hpp"
#include "kiln/tuner/search.hpp"
#include "kiln/tuner/search_plan.hpp"
#include "openblas.hpp"
#include "option_checks.hpp"
#include "sample_stats.hpp"

namespace kiln::tool {
namespace {

using Clock = std::chrono::steady_clock;

struct GemmBenchArgs {
  std::string sizes = "512,1024,2048";
  int threads = 2;
  std::string search{kAutoSearch};  // the plan (kiln/tuner/search_plan.hpp): hybrid, 3%
  std::size_t max_configs = 0;      // 0: the plan's budget
  int rounds = 11;
  bool retune = false;
  bool json = false;
};

// Every comma-separated item a size, digits only: getline dropped an empty
// last item (512, ran as 512) and strtol took a leading space or sign (" 8",
// "+8") that it refused after the number; a size named twice ran twice.
Result<std::vector<int>> parse_sizes(const std::string& text) {
  const std::string example = " (e.g. --sizes 512,1024,2048)";
  if (text.empty())
    return make_error(ErrorCode::kInvalidArgument, "--sizes is empty: give M=N=K sizes" + example);
  std::vector<int> out;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma - start);
    const bool digits = !item.empty() && item.size() <= 18 &&
                        item.find_first_not_of("0123456789") == std::string::npos;
    const long v = digits ? std::stol(item) : 0;
    if (v < 1 || v > kMaxBenchSize) {
      return make_error(ErrorCode::kInvalidArgument, "--sizes: '" + item +
                                                         "' is not a size from 1 to " +
                                                         std::to_string(kMaxBenchSize) + example);
    }
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) != out.end())
      return make_error(ErrorCode::kInvalidArgument, "--sizes: " + item + " is given twice in '" +
                                                         text + "': name each size once");
    out.push_back(static_cast<int>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The median seconds of one run of `body` over a round of >= 0.2 s (the
// median, as the tuner reports: a run the machine's other work preempted
// does not count against either side).
// NOTES: OpenBLAS's threads spin for a while after a call (about 0.1 s,
// OPENBLAS_THREAD_TIMEOUT) and would take a core from whatever runs next;
// so each round starts after a pause that lets both sides' threads go idle,
// with one untimed call that wakes its own.
template <class Body>
double time_round(Body&& body) {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  body();
  std::vector<double> runs;
  const auto start = Clock::now();
  do {
    const auto t0 = Clock::now();
    body();
    runs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  } while (std::chrono::duration<double>(Clock::now() - start).count() < 0.2);
  return median(std::move(runs));
}

Result<nlohmann::json> bench_size(int size, const GemmBenchArgs& args, const OpenBlas& blas) {
  TuneRequest request;
  request.kernel = "gemm_f32";
  request.backend = "cpu";
  request.shape =
      "M=" + std::to_string(size) + ",N=" + std::to_string(size) + ",K=" + std::to_string(size);
  request.cpu_threads = args.threads;
  request.isolation = Isolation::kThread;
  TuneOptions options;
  options.search.strategy = args.search;
  options.search.max_configs = args.max_configs;
  options.cache.retune = args.retune;
  const auto tune_start = Clock::now();
  auto run = tune_request(request, options, Options::global());
  if (!run.ok()) return run.error();
  const double tune_seconds = std::chrono::duration<double>(Clock::now() - tune_start).count();
  if (run->result.source == ResultSource::kFailed || !run->result.kernel.valid()) {
    return make_error(ErrorCode::kInternal,
                      "gemm_f32 at " + std::to_string(size) + " has no working config to compare");
  }

  Device& device = *run->target.device;
  const ArgList& call = run->call.args;
  const auto* a = static_cast<const float*>(find_arg(call, "A").data);
  const auto* b = static_cast<const float*>(find_arg(call, "B").data);
  auto* c = static_cast<float*>(find_arg(call, "C").data);
  const std::size_t elems = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);

  auto kiln_run = [&] {
    Status st = run->result.launch(device, run->job.kernel, call);
    if (st.ok()) st = device.synchronize();
    return st;
  };
  auto blas_run = [&] { blas.gemm(a, b, c, size, size, size); };

  // Both write C: each result checked against the other before timing.
  blas_run();
  std::vector<float> want(c, c + elems);
  if (Status st = kiln_run(); !st.ok()) return st.error();
  double worst = 0;
  for (std::size_t i = 0; i < elems; ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(c[i] - want[i])));

  std::vector<double> kiln_s, blas_s;
  Status failed = ok_status();
  for (int r = 0; r < args.rounds; ++r) {
    auto kiln_round = [&] {
      kiln_s.push_back(time_round([&] {
        if (Status st = kiln_run(); !st.ok() && failed.ok()) failed = st;
      }));
    };
    auto blas_round = [&] { blas_s.push_back(time_round(blas_run)); };
    if (r % 2 == 0) {
      kiln_round();
      blas_round();
    } else {
      blas_round();
      kiln_round();
    }
  }
  if (!failed.ok()) return failed.error();
  const double flops = 2.0 * size * static_cast<double>(size) * size;
  const double kiln_gflops = flops / median(kiln_s) * 1e-9;
  const double blas_gflops = flops / median(blas_s) * 1e-9;
  nlohmann::json out = {{"size", size},
                        {"kiln_gflops", kiln_gflops},
                        {"openblas_gflops", blas_gflops},
                        {"ratio", kiln_gflops / blas_gflops},
                        {"kiln_median_ms", median(kiln_s) * 1e3},
                        {"openblas_median_ms", median(blas_s) * 1e3},
                        {"max_abs_diff", worst},
                        {"config", run->result.config.to_json()},
                        {"source", source_name(run->result.source)},
                        {"configs_measured", run->result.measurements.size()},
                        {"space_size", run->job.kernel.tmpl.space.size()},
                        {"tune_seconds", tune_seconds}};
  return out;
}

int run_bench_gemm(const GemmBenchArgs& args) {
  auto sizes = parse_sizes(args.sizes);
  if (!sizes.ok()) {
    std::fprintf(stderr, "kiln bench gemm: %s\n", sizes.error().message.c_str());
    return 2;
  }
  auto blas = open_openblas();
  if (!blas.ok()) {
    std::fprintf(stderr, "kiln bench gemm: %s\n", blas.error().message.c_str());
    return 3;
  }
  blas->use_threads(args.threads);
  const DeviceTraits host = host_cpu_traits(args.threads);
  // More threads than the machine runs at once is allowed (it measures
  // oversubscription) but said, since the summary counts them as cores.
  const unsigned hardware = std::thread::hardware_concurrency();
  if (hardware > 0 && static_cast<unsigned>(args.threads) > hardware)
    std::fprintf(stderr,
                 "kiln bench gemm: --threads %d is more than the %u hardware threads this machine "
                 "has: both sides are oversubscribed, and the numbers measure that\n",
                 args.threads, hardware);
  nlohmann::json report = {{"threads", args.threads},
                           {"hardware_threads", hardware},
                           {"search", args.search},
                           {"max_configs", args.max_configs},
                           {"rounds", args.rounds},
                           {"device", host.summary()},
                           {"openblas",
                            {{"library", blas->library},
                             {"core", blas->core},
                             {"coretype_env", blas->coretype},
                             {"config", blas->config}}},
                           {"sizes", nlohmann::json::array()}};
  if (!args.json) {
    std::printf("kiln gemm_f32 vs OpenBLAS cblas_sgemm (%s), %d threads, %s\n", blas->core.c_str(),
                args.threads, host.summary().c_str());
    std::printf("%6s %12s %12s %7s %9s %8s  %s\n", "size", "kiln GF/s", "openblas", "ratio",
                "measured", "tune s", "config");
  }
  int status = 0;
  for (int size : *sizes) {
    auto row = bench_size(size, args, *blas);
    if (!row.ok()) {
      std::fprintf(stderr, "kiln bench gemm: size %d: %s\n", size, row.error().describe().c_str());
      status = 1;
      continue;
    }
    if (!args.json) {
      const nlohmann::json& r = *row;
      std::printf("%6d %12.1f %12.1f %7.2f %4zu/%-4zu %8.1f  %s\n", size,
                  r["kiln_gflops"].get<double>(), r["openblas_gflops"].get<double>(),
                  r["ratio"].get<double>(), r["configs_measured"].get<std::size_t>(),
                  r["space_size"].get<std::size_t>(), r["tune_seconds"].get<double>(),
                  Config::from_json(r["config"]).to_string().c_str());
      std::fflush(stdout);
    }
    report["sizes"].push_back(std::move(*row));
  }
  if (args.json) std::cout << report.dump(2) << "\n";
  return status;
}

}  // namespace

void add_bench_gemm_command(CLI::App& bench, int& exit_code) {
  auto a = std::make_shared<GemmBenchArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "gemm", "Kiln's tuned CPU gemm_f32 against OpenBLAS's cblas_sgemm, interleaved");
  cmd->add_option("--sizes", a->sizes, "M=N=K sizes, comma separated (default 512,1024,2048)");
  cmd->add_option("--threads", a->threads, "Threads of both (default 2)")
      ->transform(integer_in(1, kMaxThreads));
  cmd->add_option("--search", a->search,
                  "Search strategy of the tuning (default auto: kiln tune's default plan)")
      ->check(search_name(/*with_list=*/false));
  cmd->add_option("--max-configs", a->max_configs,
                  "Configs the tuning may measure (default: the plan's, 3% of the space)")
      ->transform(integer_in(0, kMaxConfigs, "0: the plan's budget"));
  cmd->add_option("--rounds", a->rounds, "Interleaved timing rounds per side (default 11)")
      ->transform(integer_in(1, kMaxRounds));
  cmd->add_flag("--retune", a->retune, "Tune even when the tuning cache has a winner");
  cmd->add_flag("--json", a->json, "Print one JSON document");
  cmd->callback([a, &exit_code] { exit_code = run_bench_gemm(*a); });
}

}  // namespace kiln::tool
