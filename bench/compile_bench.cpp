// The compile benchmark (issue 3), as a small main: the shipped GEMM's
// configs, CUBIN for sm_90a, compiled by each variant side by side in one run
// (naive, threads only, grouping only, PCH only, everything together, worker
// processes), on the plain template and its CCCL-heavy twin. Prints a table
// on stderr and the JSON report on stdout. `kiln bench compile` runs the same
// code.
//
//   kiln_bench_compile [--arch sm_90a] [--max-configs N] [--threads N] [--rounds N] [--sweep]
//
// (1) parse the few flags; (2) run_compile_bench does the rest, its
// worker-process compilers running Kiln's worker program
// (kiln-bench-worker --compile cuda).
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/backends/nvrtc.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/compile/compile_run.hpp"
#include "kiln/compile/compile_worker.hpp"
#include "kiln/tuner/bench_worker.hpp"

namespace {

std::shared_ptr<kiln::Compiler> make(bool pch, bool processes) {
  if (processes) {
    std::vector<std::string> argv = {kiln::find_bench_worker().value(), "--compile", "cuda"};
    if (!pch) argv.push_back("--no-pch");
    return std::make_shared<kiln::WorkerProcessCompiler>(std::move(argv));
  }
  auto settings = kiln::cuda::NvrtcSettings::from_options(kiln::Options::global());
  settings.pch = pch;
  return kiln::cuda::make_compiler(std::move(settings));
}

}  // namespace

int main(int argc, char** argv) {
  // (1) flags
  kiln::CompileBenchSettings s;
  s.kernels = {"gemm_f16", "gemm_f16_cccl"};
  int threads = 0;
  bool sweep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--arch") {
      s.arch = value();
    } else if (a == "--max-configs") {
      s.max_configs = std::stoul(value());
    } else if (a == "--threads") {
      threads = std::stoi(value());
    } else if (a == "--rounds") {
      s.rounds = std::stoi(value());
    } else if (a == "--sweep") {
      sweep = true;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  // (2) the benchmark, its worker processes found where the tuner finds them
  const int cores = kiln::resolve_workers(threads);
  s.variants = kiln::compile_bench_variants(cores, /*processes=*/true, sweep);
  s.context = {kiln::current_toolchain("cuda"), kiln::CacheEnvRegistry::global().snapshot()};
  s.make_compiler = make;
  s.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  nlohmann::json report = kiln::run_compile_bench(s);
  report["cores"] = cores;
  report["toolchain"] = kiln::current_toolchain("cuda").to_json();
  std::cout << report.dump(2) << "\n";
  return 0;
}
