// kiln bench compile [--arch ARCH] [--kernel NAME]... [--max-configs N]
//                    [--rounds N] [--processes] [--sweep] [--json]
// The compile benchmark: every variant (naive, threads, grouping, PCH, all
// together in threads and in processes, ...) on every kernel, side by side
// in interleaved rounds, each from a cold compiler, and the floor the same
// runs imply. docs/benchmarks.md records its numbers.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.hpp"
#include "compile_backend.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/compile/compile_run.hpp"
#include "kiln/compile/templates.hpp"
#include "option_checks.hpp"

namespace kiln::tool {

namespace {

struct BenchArgs {
  std::string arch = "sm_90a";
  std::vector<std::string> kernels = {"gemm_f16", "gemm_f16_cccl"};
  std::size_t max_configs = 0;
  int cores = 0;
  int rounds = 1;
  bool processes = false;
  bool sweep = false;
  bool json = false;
};

void print_kernel(const std::string& kernel, const nlohmann::json& kj) {
  std::printf("%s (%d configs):\n", kernel.c_str(), kj["configs"].get<int>());
  for (const auto& v : kj["variants"]) {
    std::printf("  %-20s %8.2f s  %6.3f s/config  %5.2fx", v["name"].get<std::string>().c_str(),
                v["wall_seconds"].get<double>(), v["seconds_per_config"].get<double>(),
                v.value("speedup_vs_naive", 0.0));
    if (v.contains("fraction_of_floor")) {
      std::printf("  %4.2f of the floor", v["fraction_of_floor"].get<double>());
    }
    std::printf("\n");
  }
  const auto& floor = kj["floor"];
  if (floor.is_object()) {
    std::printf(
        "  %-20s %8.2f s  %18s %5.2fx  (one front end %.3f s + %d x %.3f s back end / %d)\n",
        "floor", floor["seconds"].get<double>(), "", floor["speedup_vs_naive"].get<double>(),
        floor["front_end_seconds"].get<double>(), kj["configs"].get<int>(),
        floor["back_end_seconds_per_config"].get<double>(), floor["workers"].get<int>());
  } else {
    std::printf("  floor: not measurable (grouping was not faster than naive)\n");
  }
  if (kj.contains("processes_over_threads")) {
    std::printf("  kiln+processes / kiln: %.3f\n", kj["processes_over_threads"].get<double>());
  }
}

int run_bench_compile(const BenchArgs& args) {
  Result<std::string> arch = resolve_arch(args.arch, "cuda");
  if (!arch) {
    std::fprintf(stderr, "kiln bench compile: %s\n", arch.error().message.c_str());
    return 2;
  }
  CompileBenchSettings s;
  s.arch = *arch;
  s.kernels = args.kernels;
  s.max_configs = args.max_configs;
  s.rounds = args.rounds;
  const int cores = resolve_workers(args.cores);
  s.variants = compile_bench_variants(cores, args.processes, args.sweep);
  s.context = {current_toolchain("cuda"), CacheEnvRegistry::global().snapshot()};
  s.make_compiler = [](bool pch, bool processes) { return make_backend_compiler(pch, processes); };
  s.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  nlohmann::json report = run_compile_bench(s);
  report["cores"] = cores;
  report["toolchain"] = current_toolchain("cuda").to_json();
  if (args.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    for (const auto& [kernel, kj] : report["kernels"].items()) print_kernel(kernel, kj);
  }
  int failed = 0;
  for (const auto& [kernel, kj] : report["kernels"].items()) {
    for (const auto& v : kj["variants"]) failed += v["failed"].get<int>();
  }
  // The table's times are of failed compiles too: say so, not only by exit.
  if (failed)
    std::fprintf(stderr,
                 "kiln bench compile: %d compile(s) failed, so the times above are not of "
                 "working compiles; `kiln compile --kernel K --arch %s` shows why\n",
                 failed, s.arch.c_str());
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks of Kiln's own machinery");
  bench->require_subcommand(1);
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = bench->add_subcommand(
      "compile", "Compile benchmark: naive vs threads vs grouping vs PCH vs all together");
  cmd->add_option("--arch", args->arch, "Target arch (default sm_90a)")->check(cuda_arch());
  cmd->add_option("--kernel", args->kernels,
                  "Templates to measure, one per header weight (default gemm_f16 gemm_f16_cccl)")
      ->check(CLI::IsMember(shipped_template_names()));
  cmd->add_option("--max-configs", args->max_configs, "Use only the first N configs (0: all)")
      ->transform(integer_in(0, kMaxConfigs, "0: all"));
  cmd->add_option("--threads", args->cores, "Workers of the parallel variants (default: cores)")
      ->transform(integer_in(0, kMaxThreads, "0: one per core"));
  cmd->add_option("--rounds", args->rounds,
                  "Rounds of every variant, the order rotated each round; times are medians "
                  "(default 1)")
      ->transform(integer_in(1, 100, "rounds"));
  cmd->add_flag("--processes", args->processes,
                "Also measure threads+processes (kiln+processes is always measured)");
  cmd->add_flag("--sweep", args->sweep, "Also measure group sizes 2, 4, 16 and pairs of features");
  cmd->add_flag("--json", args->json, "Print the JSON report");
  cmd->callback([args, &exit_code] { exit_code = run_bench_compile(*args); });
  add_bench_tune_command(*bench, exit_code);
  add_bench_gemm_command(*bench, exit_code);
  add_bench_rows_command(*bench, exit_code);
}

}  // namespace kiln::tool
