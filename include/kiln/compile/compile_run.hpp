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

// The variants side by side: naive (G=1, one worker, no PCH), threads
// only, grouping only, PCH only, and everything together in threads
// ("kiln") and in worker processes ("kiln+processes", how a tuning run
// compiles CUDA); `processes` adds threads+processes; `sweep` adds group
// sizes 2..16 with everything else on.
std::vector<BenchVariant> compile_bench_variants(int cores, bool processes, bool sweep);

struct CompileBenchSettings {
  std::string arch = "sm_90a";
  std::vector<std::string> kernels;  // template names; each one is a "weight"
  std::size_t max_configs = 0;       // 0: every config of the space
  std::vector<BenchVariant> variants;
  // Each round runs every variant once, the order rotated by one per round
  // (none is always first, after a cold start, or last); a variant's time
  // is its median over the rounds.
  int rounds = 1;
  CompileContext context;
  // A fresh compiler for one worker of one variant (cold state: a new
  // compiler has no PCH). `processes` asks for a worker-process compiler.
  std::function<std::shared_ptr<Compiler>(bool pch, bool processes)> make_compiler;
  std::function<void(const std::string& line)> progress;  // optional
};

// Runs every variant on every kernel, in one process, and returns the JSON
// report: per kernel, per variant median wall seconds, each round's, ok and
// failed counts, speedup = naive wall / variant wall, and the floor those
// same runs imply (compile_floor) with each variant's fraction of it.
nlohmann::json run_compile_bench(const CompileBenchSettings& settings);

// The least time any way of compiling `configs` configs on `workers`
// workers can take, from two measured ways: naive (one program per config:
// configs x (F + B)) and grouping on one worker (`programs` programs:
// programs x F + configs x B), F being a program's front end (parsing,
// headers) and B one config's back end (NVVM, ptxas). One front end must
// run before anything else; the back ends at best share the workers
// evenly: F + configs x B / workers. Null JSON when the two runs do not
// separate F from B (grouping not faster than naive, or B <= 0).
nlohmann::json compile_floor(double naive_seconds, double grouping_seconds, std::size_t configs,
                             std::size_t programs, int workers);

}  // namespace kiln
