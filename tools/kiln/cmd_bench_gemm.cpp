// kiln bench gemm [--sizes 512,1024,2048,16x4096x4096] [--threads 2] [--blas PATH]
//   [--search S] [--max-configs N] [--rounds R] [--retune] [--json]
// Kiln's tuned CPU gemm_f32 against the fastest correct BLAS on the
// machine, in one run: each BLAS library found (blas_baselines.hpp) runs
// in a worker process of its own at its native kernel; for each size, tune
// (or take the tuning cache's winner), check every side's C against a
// double-precision reference, then time Kiln and every library on the same
// number of threads, rounds interleaved (the order alternating), medians
// compared, each also as a fraction of the fp32 FMA peak measured at the
// start (fma_peak.hpp). docs/benchmarks.md records its numbers.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_gemm_text.hpp"
#include "blas_baselines.hpp"
#include "commands.hpp"
#include "fma_peak.hpp"
#include "gemm_measure.hpp"
#include "gemm_shape.hpp"
#include "kiln/kernels/tune_request.hpp"
#include "kiln/search/search.hpp"
#include "kiln/search/search_plan.hpp"
#include "option_checks.hpp"
#include "sample_stats.hpp"

namespace kiln::tool {
namespace {

using Clock = std::chrono::steady_clock;

struct GemmBenchArgs {
  std::string sizes = "512,1024,2048";
  int threads = 2;
  std::string search{kAutoSearch};  // the plan (kiln/search/search_plan.hpp): hybrid, 3%
  std::size_t max_configs = 0;      // 0: the plan's budget
  int rounds = 11;
  bool retune = false;
  bool json = false;
  std::string blas;  // --blas: the one library to compare with ("" finds them all)
};

// One side of a size's comparison: a BLAS run's check and round times.
struct BlasSide {
  BlasBaseline* run = nullptr;
  GemmCheck check;
  std::vector<double> seconds;
  std::string failed;  // why it has no figure at this size ("" when it has one)
};

nlohmann::json peak_fraction(double gflops, const FmaPeak& peak) {
  return peak.gflops > 0 ? nlohmann::json(gflops / peak.gflops) : nlohmann::json();
}

// Checks each run at `size` (a wrong or dead one takes no further part).
std::vector<BlasSide> check_sides(const GemmShape& shape, BlasBaselines& blas) {
  std::vector<BlasSide> sides;
  for (BlasBaseline& run : blas.runs) {
    BlasSide side{&run, {}, {}, ""};
    auto check = run.worker.check(shape);
    if (!check.ok()) {
      side.failed = check.error().message;
    } else {
      side.check = *check;
      if (!check->correct) {
        side.failed = "wrong result: C differs from the reference by up to " +
                      std::to_string(check->max_abs_err) + " (" +
                      std::to_string(check->max_rel_err) + " of the products' magnitude)";
      }
    }
    sides.push_back(std::move(side));
  }
  return sides;
}

nlohmann::json side_json(const BlasSide& side, double flops, double kiln_gflops,
                         const FmaPeak& peak) {
  nlohmann::json out = {{"id", side.run->id},
                        {"name", side.run->name()},
                        {"kernel", side.run->kernel()},
                        {"eligible", side.run->eligible},
                        {"max_abs_err", side.check.max_abs_err},
                        {"max_rel_err", side.check.max_rel_err},
                        {"correct", side.failed.empty()}};
  if (!side.failed.empty()) {
    out["failed"] = side.failed;
    return out;
  }
  const double gflops = flops / median(side.seconds) * 1e-9;
  out["gflops"] = gflops;
  out["peak_fraction"] = peak_fraction(gflops, peak);
  out["ratio"] = kiln_gflops / gflops;
  out["median_ms"] = median(side.seconds) * 1e3;
  return out;
}

// gemm_f32 tuned on the CPU for `shape`, in threads (the BLAS workers are
// the processes here); `seconds` gets the tuning's wall time.
Result<TuneRun> tune_gemm(const GemmShape& shape, const GemmBenchArgs& args, double& seconds) {
  TuneRequest request;
  request.kernel = "gemm_f32";
  request.backend = "cpu";
  request.shape = shape.dims();
  request.cpu_threads = args.threads;
  request.isolation = Isolation::kThread;
  TuneOptions options;
  options.search.strategy = args.search;
  options.search.max_configs = args.max_configs;
  options.cache.retune = args.retune;
  options.environment = false;  // a benchmark runs its flags' settings, not KILN_SEARCH's
  const auto tune_start = Clock::now();
  auto run = tune_request(request, options, Options::global());
  if (!run.ok()) return run.error();
  seconds = std::chrono::duration<double>(Clock::now() - tune_start).count();
  if (run->result.source == ResultSource::kFailed || !run->result.kernel.valid()) {
    return make_error(ErrorCode::kInternal,
                      "gemm_f32 at " + shape.label() + " has no working config to compare");
  }
  return run;
}

// `rounds` rounds, Kiln's run and every side's in turn, the order reversed
// every other round so neither side always runs warm; Kiln's times go to
// `kiln_s`, each side's to its own. The first failed Kiln launch is the
// error; a side that fails keeps why and is not timed again.
Status time_rounds(int rounds, const GemmShape& shape, const std::function<Status()>& kiln_run,
                   std::vector<BlasSide>& sides, std::vector<double>& kiln_s) {
  Status failed = ok_status();
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::function<void()>> order;
    order.push_back([&] {
      kiln_s.push_back(time_round([&] {
        if (Status st = kiln_run(); !st.ok() && failed.ok()) failed = st;
      }));
    });
    for (BlasSide& side : sides) {
      order.push_back([&side, &shape] {
        if (!side.failed.empty()) return;
        auto seconds = side.run->worker.round(shape);
        if (seconds.ok())
          side.seconds.push_back(*seconds);
        else
          side.failed = seconds.error().message;
      });
    }
    if (r % 2 == 1) std::reverse(order.begin(), order.end());
    for (auto& step : order) step();
  }
  return failed;
}

// Every side's row under "blas", and the headline: the fastest correct run
// that is not a forced lesser kernel.
void add_blas_rows(nlohmann::json& out, const std::vector<BlasSide>& sides, double flops,
                   double kiln_gflops, const FmaPeak& peak) {
  std::size_t best = sides.size();
  for (std::size_t i = 0; i < sides.size(); ++i) {
    out["blas"].push_back(side_json(sides[i], flops, kiln_gflops, peak));
    const nlohmann::json& row = out["blas"][i];
    if (row.contains("gflops") && sides[i].run->eligible &&
        (best == sides.size() ||
         row["gflops"].get<double>() > out["blas"][best]["gflops"].get<double>()))
      best = i;
  }
  if (best < sides.size()) {
    const nlohmann::json chosen = out["blas"][best];
    out["baseline"] = chosen["id"];
    out["baseline_name"] = chosen["name"];
    out["baseline_kernel"] = chosen["kernel"];
    out["baseline_gflops"] = chosen["gflops"];
    out["baseline_peak_fraction"] = chosen["peak_fraction"];
    out["ratio"] = chosen["ratio"];
  }
}

Result<nlohmann::json> bench_size(const GemmShape& shape, const GemmBenchArgs& args,
                                  BlasBaselines& blas, const FmaPeak& peak) {
  double tune_seconds = 0;
  auto run = tune_gemm(shape, args, tune_seconds);
  if (!run.ok()) return run.error();
  Device& device = *run->target.device;
  const ArgList& call = run->call.args;
  const auto* a = static_cast<const float*>(find_arg(call, "A").data);
  const auto* b = static_cast<const float*>(find_arg(call, "B").data);
  const auto* c = static_cast<const float*>(find_arg(call, "C").data);
  std::function<Status()> kiln_run = [&] {
    Status st = run->result.launch(device, run->job.kernel, call);
    if (st.ok()) st = device.synchronize();
    return st;
  };

  // Every side checked against the reference before any is timed.
  if (Status st = kiln_run(); !st.ok()) return st.error();
  const GemmCheck kiln_check = check_gemm(a, b, c, shape.m, shape.n, shape.k);
  std::vector<BlasSide> sides = check_sides(shape, blas);
  std::vector<double> kiln_s;
  if (Status failed = time_rounds(args.rounds, shape, kiln_run, sides, kiln_s); !failed.ok())
    return failed.error();

  const double flops = shape.flops();
  const double kiln_gflops = flops / median(kiln_s) * 1e-9;
  // "size" stays the M=N=K number it always was, for a square problem.
  nlohmann::json out = {{"shape", shape.label()},
                        {"m", shape.m},
                        {"n", shape.n},
                        {"k", shape.k},
                        {"kiln_gflops", kiln_gflops},
                        {"kiln_peak_fraction", peak_fraction(kiln_gflops, peak)},
                        {"kiln_median_ms", median(kiln_s) * 1e3},
                        {"kiln_max_abs_err", kiln_check.max_abs_err},
                        {"kiln_max_rel_err", kiln_check.max_rel_err},
                        {"kiln_correct", kiln_check.correct},
                        {"baseline", nullptr},
                        {"blas", nlohmann::json::array()},
                        {"config", run->result.config.to_json()},
                        {"source", source_name(run->result.source)},
                        {"configs_measured", run->result.measurements.size()},
                        {"space_size", run->job.kernel.tmpl.space.size()},
                        {"tune_seconds", tune_seconds}};
  if (shape.square()) out["size"] = shape.m;
  add_blas_rows(out, sides, flops, kiln_gflops, peak);
  return out;
}

int run_bench_gemm(const GemmBenchArgs& args) {
  auto sizes = parse_gemm_shapes(args.sizes);
  if (!sizes.ok()) {
    std::fprintf(stderr, "kiln bench gemm: %s\n", sizes.error().message.c_str());
    return 2;
  }
  std::vector<BlasCandidate> candidates;
  if (args.blas.empty()) {
    candidates = find_blas_candidates();
  } else if (args.blas.find('/') != std::string::npos && !std::filesystem::exists(args.blas)) {
    std::fprintf(stderr,
                 "kiln bench gemm: --blas %s: no such file: name a BLAS library (a path, or a "
                 "name the loader finds: libopenblas.so.0, libblis.so.4, libmkl_rt.so.2)\n",
                 args.blas.c_str());
    return 2;
  } else {
    candidates.push_back({"", {args.blas}, ""});
  }
  BlasBaselines blas = start_blas_baselines(candidates, args.threads);
  const bool any_eligible = std::any_of(blas.runs.begin(), blas.runs.end(),
                                        [](const BlasBaseline& run) { return run.eligible; });
  if (!any_eligible) {
    std::string why;
    for (const auto& missing : blas.unavailable)
      why +=
          "\n  " + missing["label"].get<std::string>() + ": " + missing["why"].get<std::string>();
    std::fprintf(stderr, "kiln bench gemm: no BLAS library to compare with:%s\n%s\n", why.c_str(),
                 args.blas.empty()
                     ? "install one (Debian: apt-get install libopenblas-dev) or name one with "
                       "--blas PATH"
                     : "--blas names a BLAS library: OpenBLAS, BLIS or MKL");
    return 3;
  }
  const DeviceTraits host = host_cpu_traits(args.threads);
  // More threads than the machine runs at once is allowed (it measures
  // oversubscription) but said, since the summary counts them as cores.
  const unsigned hardware = std::thread::hardware_concurrency();
  if (hardware > 0 && static_cast<unsigned>(args.threads) > hardware)
    std::fprintf(stderr,
                 "kiln bench gemm: --threads %d is more than the %u hardware threads this machine "
                 "has: both sides are oversubscribed, and the numbers measure that\n",
                 args.threads, hardware);
  const FmaPeak peak = measure_fma_peak(args.threads);
  nlohmann::json report = {
      {"threads", args.threads},
      {"hardware_threads", hardware},
      {"search", args.search},
      {"max_configs", args.max_configs},
      {"rounds", args.rounds},
      {"device", host.summary()},
      {"fma_peak", {{"gflops", peak.gflops}, {"isa", peak.isa}, {"threads", peak.threads}}},
      {"blas", nlohmann::json::array()},
      {"blas_unavailable", blas.unavailable},
      {"sizes", nlohmann::json::array()}};
  for (const BlasBaseline& run : blas.runs) report["blas"].push_back(run.to_json());
  if (!args.json) print_gemm_bench_header(host.summary(), peak, blas);
  int status = 0;
  for (const GemmShape& shape : *sizes) {
    auto row = bench_size(shape, args, blas, peak);
    if (!row.ok()) {
      std::fprintf(stderr, "kiln bench gemm: size %s: %s\n", shape.label().c_str(),
                   row.error().describe().c_str());
      status = 1;
      continue;
    }
    if ((*row)["baseline"].is_null() || !(*row)["kiln_correct"].get<bool>()) status = 1;
    if (!args.json) print_gemm_bench_size(*row);
    report["sizes"].push_back(std::move(*row));
  }
  if (args.json) std::cout << report.dump(2) << "\n";
  return status;
}

}  // namespace

void add_bench_gemm_command(CLI::App& bench, int& exit_code) {
  auto a = std::make_shared<GemmBenchArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "gemm", "Kiln's tuned CPU gemm_f32 against the fastest BLAS here, interleaved");
  cmd->add_option("--sizes", a->sizes,
                  "M=N=K sizes or MxNxK shapes, comma separated (default 512,1024,2048; e.g. "
                  "16x4096x4096 for a skinny GEMM)");
  cmd->add_option("--threads", a->threads, "Threads of every side (default 2)")
      ->transform(integer_in(1, kMaxThreads));
  cmd->add_option("--blas", a->blas,
                  "The one BLAS library to compare with, a path or a library name (default: "
                  "every OpenBLAS, BLIS and MKL found, numpy's included)");
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
  add_blas_worker_command(bench, exit_code);
}

}  // namespace kiln::tool
