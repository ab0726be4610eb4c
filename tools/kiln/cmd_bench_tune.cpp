// kiln bench tune [--backend cpu] [--max-configs N] [--size N] [--group-size G]
//                 [--compile-threads T] [--bench-threads T] [--bench-ms MS] [--kernel K]
//                 [--isolation thread|process|auto] [--rounds R] [--json]
// The tuner benchmark, each run from a cold cache (a fresh temporary cache
// directory): the pipeline on against off (compile everything, then
// benchmark), the ideal max(compile time on the pool, benchmark time), and
// the warm start in a new process (this executable again, over the cache
// the pipelined run left) that must compile nothing. docs/benchmarks.md
// records its numbers.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "bench_tune_run.hpp"
#include "commands.hpp"
#include "kiln/process/worker_process.hpp"
#include "option_checks.hpp"
#include "sample_stats.hpp"

namespace kiln::tool {

namespace {

constexpr std::size_t kCalibrationConfigs = 6;

double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  return load;
}

// Seconds the pool spent per config it compiled.
double compile_per_config(const TuneRun& r) {
  const auto pooled = r.stats.compiled;
  return pooled ? r.stats.compile_seconds / static_cast<double>(pooled) : 0;
}

double bench_per_config(const TuneRun& r) {
  return r.stats.benchmarked ? r.stats.benchmark_seconds / static_cast<double>(r.stats.benchmarked)
                             : 0;
}

nlohmann::json target(const std::string& name, double value, const std::string& goal, bool met,
                      bool applies = true) {
  return {{"name", name}, {"value", value}, {"goal", goal}, {"met", met}, {"applies", applies}};
}

// The warm process: the same problem over the cache directory the cold run
// filled; prints its run as JSON.
int run_warm_child(const TuneBenchSetup& setup) {
  auto run = tune_problem(setup, setup.warm_child, true, setup.max_configs, 0.001);
  if (!run.ok()) {
    std::fprintf(stderr, "kiln bench tune (warm process): %s\n", run.error().describe().c_str());
    return 1;
  }
  std::cout << run->to_json().dump() << "\n";
  return 0;
}

Result<TuneRun> cold_run(const TuneBenchSetup& setup, bool pipeline, std::size_t configs,
                         double target_seconds, std::filesystem::path* keep_dir) {
  auto dir = fresh_temp_dir(pipeline ? "pipelined" : "serial");
  if (!dir.ok()) return dir.error();
  auto run = tune_problem(setup, *dir, pipeline, configs, target_seconds);
  if (keep_dir && keep_dir->empty() && run.ok()) {
    *keep_dir = *dir;
  } else {
    std::filesystem::remove_all(*dir);
  }
  return run;
}

void print_table(const nlohmann::json& report) {
  const auto& s = report["setup"];
  const auto& pc = report["per_config"];
  std::printf("kiln bench tune: %s, %zu configs, every dim %d, %s backend, %u cores (load %.1f)\n",
              report["kernel"].get<std::string>().c_str(), report["configs"].get<std::size_t>(),
              s["size"].get<int>(), s["backend"].get<std::string>().c_str(),
              s["cores"].get<unsigned>(), s["load_average"].get<double>());
  const std::string device =
      s["backend"] == "cpu" ? std::to_string(s["bench_threads"].get<int>()) + "-thread CPU device"
                            : "CUDA device";
  std::printf(
      "setup: %d compile thread(s), 1 benchmark worker (%s) on a %s, group size %zu, "
      "%.1f ms of kernel time per config\n",
      s["compile_threads"].get<int>(), s["isolation"].get<std::string>().c_str(), device.c_str(),
      s["group_size"].get<std::size_t>(), s["target_seconds"].get<double>() * 1e3);
  std::printf("per config: compile %.3f s, benchmark %.3f s (compile/benchmark %.2f%s)\n\n",
              pc["compile_seconds"].get<double>(), pc["benchmark_seconds"].get<double>(),
              pc["compile_over_benchmark"].get<double>(),
              pc["comparable"].get<bool>() ? ": comparable" : ": NOT comparable");
  std::printf("%-26s %9s %9s %10s %9s %9s %6s\n", "run", "pipeline", "compile", "benchmark",
              "overlap", "tune()", "calls");
  for (const auto& r : report["runs"]) {
    const auto& st = r["stats"];
    std::printf("%-26s %8.2fs %8.2fs %9.2fs %8.2fs %8.2fs %6zu\n",
                r["pipeline"].get<bool>() ? "pipelined" : "compile-then-benchmark",
                st["wall_seconds"].get<double>(), st["compile_seconds"].get<double>(),
                st["benchmark_seconds"].get<double>(), st["overlap_seconds"].get<double>(),
                r["tune_seconds"].get<double>(), r["compiler_calls"].get<std::size_t>());
  }
  const auto& w = report["warm"];
  std::printf("%-26s %9s %9s %10s %9s %8.4fs %6zu  (source %s, process %.3f s)\n",
              "warm, new process", "", "", "", "", w["tune_seconds"].get<double>(),
              w["compiler_calls"].get<std::size_t>(), w["source"].get<std::string>().c_str(),
              w["process_seconds"].get<double>());
  std::printf(
      "ideal max(compile, benchmark): %.2f s with the stage times of the pipelined run, "
      "%.2f s with each stage alone (compile-then-benchmark)\n\n",
      report["ideal_seconds"]["same_run"].get<double>(),
      report["ideal_seconds"]["stages_alone"].get<double>());
  std::printf("%-44s %10s %8s  %s\n", "target", "value", "goal", "result");
  for (const auto& t : report["targets"]) {
    std::printf("%-44s %10.2f %8s  %s\n", t["name"].get<std::string>().c_str(),
                t["value"].get<double>(), t["goal"].get<std::string>().c_str(),
                !t["applies"].get<bool>() ? "n/a (costs not comparable)"
                : t["met"].get<bool>()    ? "met"
                                          : "NOT met");
  }
  std::printf("%-44s %10.2f %8s  %s\n", "cold tune / warm process (whole process)",
              report["ratios"]["cold_over_warm_process"].get<double>(), "", "(information)");
}

// A failed step: said on stderr; the exit code. An unknown kernel or a
// --size it cannot take is bad input.
int fail(const char* what, const ErrorInfo& e) {
  std::fprintf(stderr, "kiln bench tune: %s: %s\n", what, e.describe().c_str());
  return e.code == ErrorCode::kInvalidArgument || e.code == ErrorCode::kNotFound ? 2 : 1;
}

// (1) Calibrate: a few configs compiled and measured alone (which also
// starts Clang and the JIT, so no measured run pays for that). A config's
// benchmark costs more than its kernel time (the checked run, loading,
// launches), so the kernel time is scaled by what the trial measured to
// make one config's benchmark cost about one config's compile. Sets
// `target_seconds`; returns 0 or the exit code.
int calibrate(const TuneBenchSetup& setup, double& target_seconds) {
  target_seconds = setup.bench_ms / 1e3;
  if (target_seconds > 0) {
    auto warmup = cold_run(setup, false, 2, 0.001, nullptr);
    return warmup.ok() ? 0 : fail("warm-up", warmup.error());
  }
  constexpr double kTrial = 0.05;
  auto calibration = cold_run(setup, false, kCalibrationConfigs, kTrial, nullptr);
  if (!calibration.ok()) return fail("calibration", calibration.error());
  const double c = compile_per_config(*calibration), b = bench_per_config(*calibration);
  target_seconds = b > 0 ? std::max(0.001, kTrial * c / b) : c;
  return 0;
}

// (2) Cold runs, the order alternating by round so drift in the machine's
// load favours neither; the first pipelined run's cache is kept in
// `warm_dir`. Returns 0 or the exit code.
int cold_runs(const TuneBenchSetup& setup, double target_seconds, std::vector<TuneRun>& runs,
              std::filesystem::path& warm_dir) {
  for (int round = 0; round < std::max(1, setup.rounds); ++round) {
    for (bool pipeline : {round % 2 == 0, round % 2 != 0}) {
      std::fprintf(stderr, "kiln bench tune: round %d, %s...\n", round + 1,
                   pipeline ? "pipelined" : "compile-then-benchmark");
      auto run = cold_run(setup, pipeline, setup.max_configs, target_seconds,
                          pipeline ? &warm_dir : nullptr);
      if (!run.ok()) return fail("cold run", run.error());
      runs.push_back(*run);
    }
  }
  return 0;
}

// (3) The warm start: this executable again, over the pipelined run's
// cache. Its run's JSON, with "process_seconds" added, goes to `warm`.
// Returns 0 or the exit code.
int warm_process(const TuneBenchSetup& setup, const std::filesystem::path& warm_dir,
                 nlohmann::json& warm) {
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "bench",
                                   "tune",
                                   "--warm-child",
                                   warm_dir.string(),
                                   "--kernel",
                                   setup.kernel,
                                   "--backend",
                                   setup.backend,
                                   "--size",
                                   std::to_string(setup.size),
                                   "--max-configs",
                                   std::to_string(setup.max_configs),
                                   "--bench-threads",
                                   std::to_string(setup.bench_threads)};
  auto child = run_child(argv);
  if (!child.ok()) return fail("warm process", child.error());
  warm = nlohmann::json::parse(child->out, nullptr, false);
  if (child->status != 0 || warm.is_discarded()) {
    std::fprintf(stderr, "kiln bench tune: the warm process failed (status %d): %s\n",
                 child->status, child->out.c_str());
    return 1;
  }
  warm["process_seconds"] = child->seconds;
  return 0;
}

// (4) The cold runs' ratios, per round then the median over rounds. Two
// ideals: the pipelined run's own stage times (how well it overlapped what
// it had to do) and the stages measured alone in the paired
// compile-then-benchmark run (which also charges what running both at once
// cost: on 2 cores they compete with each other and the machine).
struct ColdRatios {
  double own_ideal = 0, ideal = 0;      // seconds, medians
  double over_own = 0, over_ideal = 0;  // pipelined wall / each ideal
  double speedup = 0;                   // compile-then-benchmark wall / pipelined wall
  double cold_tune = 0;                 // the pipelined runs' tune() seconds
  double compile_per_config = 0, bench_per_config = 0;  // of the serial runs
};

ColdRatios cold_ratios(const std::vector<TuneRun>& runs) {
  std::vector<double> pipelined_wall, serial_wall, own_ideal, ideal, over_own, over_ideal, speedup,
      cold_tune, cpc, bpc;
  for (const auto& r : runs) {
    if (r.pipeline) {
      pipelined_wall.push_back(r.stats.wall_seconds);
      own_ideal.push_back(std::max(r.stats.compile_seconds, r.stats.benchmark_seconds));
      cold_tune.push_back(r.tune_seconds);
    } else {
      serial_wall.push_back(r.stats.wall_seconds);
      ideal.push_back(std::max(r.stats.compile_seconds, r.stats.benchmark_seconds));
      cpc.push_back(compile_per_config(r));
      bpc.push_back(bench_per_config(r));
    }
  }
  for (std::size_t i = 0; i < pipelined_wall.size(); ++i) {
    over_own.push_back(pipelined_wall[i] / own_ideal[i]);
    over_ideal.push_back(pipelined_wall[i] / ideal[i]);
    speedup.push_back(serial_wall[i] / pipelined_wall[i]);
  }
  return {median(own_ideal), median(ideal),     median(over_own), median(over_ideal),
          median(speedup),   median(cold_tune), median(cpc),      median(bpc)};
}

nlohmann::json setup_json(const TuneBenchSetup& setup, double target_seconds) {
  return {{"backend", setup.backend},
          {"size", setup.size},
          {"compile_threads", setup.compile_threads},
          {"bench_workers", 1},
          {"bench_threads", setup.bench_threads},
          {"isolation", setup.isolation},
          {"group_size", setup.group_size},
          {"target_seconds", target_seconds},
          {"rounds", std::max(1, setup.rounds)},
          {"cores", std::thread::hardware_concurrency()},
          {"load_average", load_average()}};
}

// The report: the setup, every run, the warm process and the targets.
nlohmann::json bench_report(const TuneBenchSetup& setup, double target_seconds,
                            const std::vector<TuneRun>& runs, const nlohmann::json& warm) {
  const ColdRatios r = cold_ratios(runs);
  const double balance = r.bench_per_config > 0 ? r.compile_per_config / r.bench_per_config : 0;
  const bool comparable = balance >= 0.5 && balance <= 2.0;
  const double cold_over_warm = r.cold_tune / warm["tune_seconds"].get<double>();
  const auto warm_calls = warm["compiler_calls"].get<std::size_t>();
  const bool warm_ok = warm_calls == 0 && warm["source"] == "disk" &&
                       warm["stats"]["compiled"].get<std::uint64_t>() == 0;
  nlohmann::json report;
  report["benchmark"] = "tune";
  report["kernel"] = runs.front().kernel;
  report["configs"] = runs.front().configs;
  report["setup"] = setup_json(setup, target_seconds);
  report["per_config"] = {{"compile_seconds", r.compile_per_config},
                          {"benchmark_seconds", r.bench_per_config},
                          {"compile_over_benchmark", balance},
                          {"comparable", comparable}};
  report["runs"] = nlohmann::json::array();
  for (const auto& run : runs) report["runs"].push_back(run.to_json());
  report["warm"] = warm;
  report["ideal_seconds"] = {{"same_run", r.own_ideal}, {"stages_alone", r.ideal}};
  report["ratios"] = {
      {"pipelined_over_ideal_same_run", r.over_own},
      {"pipelined_over_ideal_stages_alone", r.over_ideal},
      {"serial_over_pipelined", r.speedup},
      {"cold_over_warm_tune", cold_over_warm},
      {"cold_over_warm_process", r.cold_tune / warm["process_seconds"].get<double>()}};
  report["targets"] = {
      target("pipelined / ideal (same run)", r.over_own, "<= 1.15", r.over_own <= 1.15),
      target("pipelined / ideal (stages alone)", r.over_ideal, "<= 1.15", r.over_ideal <= 1.15),
      target("compile-then-benchmark / pipelined", r.speedup, ">= 1.30", r.speedup >= 1.3,
             comparable),
      target("cold tune / warm tune (new process)", cold_over_warm, ">= 100",
             cold_over_warm >= 100),
      target("compiler calls in the warm process", static_cast<double>(warm_calls), "0", warm_ok)};
  report["warm_start_ok"] = warm_ok;
  return report;
}

int run_bench_tune(const TuneBenchSetup& setup) {
  if (!setup.warm_child.empty()) return run_warm_child(setup);
  double target_seconds = 0;
  if (int failed = calibrate(setup, target_seconds)) return failed;
  std::vector<TuneRun> runs;
  std::filesystem::path warm_dir;  // the first pipelined run's cache, removed on every way out
  struct RemoveOnExit {
    const std::filesystem::path& dir;
    ~RemoveOnExit() {
      std::error_code ec;
      if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
  } cleanup{warm_dir};
  if (int failed = cold_runs(setup, target_seconds, runs, warm_dir)) return failed;
  nlohmann::json warm;
  if (int failed = warm_process(setup, warm_dir, warm)) return failed;
  const nlohmann::json report = bench_report(setup, target_seconds, runs, warm);
  if (setup.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    print_table(report);
  }
  return report["warm_start_ok"].get<bool>() ? 0 : 1;
}

}  // namespace

void add_bench_tune_command(CLI::App& bench, int& exit_code) {
  auto setup = std::make_shared<TuneBenchSetup>();
  CLI::App* cmd = bench.add_subcommand(
      "tune",
      "Tuner benchmark: pipeline on vs off vs the ideal, and the warm start in a new "
      "process, from a cold cache");
  cmd->add_option("--kernel", setup->kernel,
                  "Shipped kernel, or family resolved by backend (default gemm: gemm_f32 on the "
                  "CPU, gemm_f16 on CUDA; `kiln kernels` lists them)");
  cmd->add_option("--backend", setup->backend, "Backend to measure: cpu (default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--max-configs", setup->max_configs, "Configs tuned (default 32)")
      ->transform(integer_in(1, kMaxConfigs));
  cmd->add_option("--size", setup->size, "M = N = K of the GEMM (default 96)")
      ->transform(integer_in(1, kMaxBenchSize));
  cmd->add_option("--group-size", setup->group_size, "Configs per compile unit (default 1)")
      ->transform(integer_in(1, kMaxGroupSize));
  cmd->add_option("--compile-threads", setup->compile_threads, "Compile pool threads (default 1)")
      ->transform(integer_in(1, kMaxThreads));
  cmd->add_option("--bench-threads", setup->bench_threads,
                  "Threads of the benchmark worker's CPU device (default 1)")
      ->transform(integer_in(1, kMaxThreads));
  cmd->add_option("--bench-ms", setup->bench_ms,
                  "Kernel time per config in ms (default: calibrated to about one config's "
                  "compile time)")
      ->check(number_in(0, kMaxBenchMs, "0: calibrated"));
  cmd->add_option("--rounds", setup->rounds, "Pipelined/serial pairs measured (default 1)")
      ->transform(integer_in(1, kMaxRounds));
  cmd->add_option("--isolation", setup->isolation,
                  "Benchmark worker: thread (default), process or auto")
      ->check(CLI::IsMember({"thread", "process", "auto"}));
  cmd->add_flag("--json", setup->json, "Print the JSON report");
  cmd->add_option("--warm-child", setup->warm_child)->group("");  // internal
  cmd->callback([setup, &exit_code] { exit_code = run_bench_tune(*setup); });
}

}  // namespace kiln::tool
