// Compiling every config of a template through the pool, and the compile
// benchmark built on it (`kiln compile`, `kiln bench compile`, bench/).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/compile/compile_pool.hpp"
#include "kiln/compile/kernel.hpp"

namespace kiln {

struct CompileRunSettings {
  std::string arch;  // required
  BinaryFormat format = BinaryFormat::kCubin;
  std::size_t group_size = 0;  // 0: resolve_group_size(0)
  int workers = 0;             // 0: resolve_workers(0)
  CompilerFactory factory;     // one compiler per worker (or one shared)
  CompileContext context;
  // Called as each unit lands (on a pool thread), e.g. to print progress.
  std::function<void(const UnitResult&)> on_unit;
};

struct CompileRun {
  std::vector<UnitResult> units;    // in completion order
  double wall_seconds = 0;          // from the first submit to the last result
  double first_result_seconds = 0;  // from the first submit to the first unit's result
  std::size_t ok = 0;
  std::size_t failed = 0;
  std::size_t programs = 0;  // compiler invocations, retries included
};

// Groups `specializations` and compiles them on a fresh pool.
CompileRun compile_all(const KernelTemplate& kernel,
                       const std::vector<Specialization>& specializations,
                       const CompileRunSettings& settings);

// One way of compiling, measured.
struct BenchVariant {
  std::string name;  // "naive", "threads", "grouping", "pch", "kiln", ...
  std::size_t group_size = 1;
  int workers = 1;
  bool pch = false;
  bool processes = false;  // worker processes instead of threads
};

// The variants the issue asks for, side by side: naive (G=1, one worker, no
// PCH), threads only, grouping only, PCH only, and everything together
// (Kiln's defaults, threads); `processes` adds everything with worker
// processes; `sweep` adds group sizes 2..16 with everything else on.
std::vector<BenchVariant> compile_bench_variants(int cores, bool processes, bool sweep);

struct CompileBenchSettings {
  std::string arch = "sm_90a";
  std::vector<std::string> kernels;  // template names; each one is a "weight"
  std::size_t max_configs = 0;       // 0: every config of the space
  std::vector<BenchVariant> variants;
  CompileContext context;
  // A fresh compiler for one worker of one variant (cold state: a new
  // compiler has no PCH). `processes` asks for a worker-process compiler.
  std::function<std::shared_ptr<Compiler>(bool pch, bool processes)> make_compiler;
  std::function<void(const std::string& line)> progress;  // optional
};

// Runs every variant on every kernel, in one process, one after another,
// and returns the JSON report: per kernel, per variant wall seconds, ok and
// failed counts, and speedup = naive wall / variant wall (the "naive" variant
// must come first for speedups to be filled).
nlohmann::json run_compile_bench(const CompileBenchSettings& settings);

}  // namespace kiln
