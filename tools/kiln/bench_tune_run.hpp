// The pieces of `kiln bench tune`: the problem it tunes, one cold or warm
// tuning run of it against a cache directory (the warm process is this
// same executable again, started by kiln::run_child, process/worker_process.hpp).
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/tuner/tuner.hpp"

namespace kiln::tool {

struct TuneBenchSetup {
  std::string kernel = "gemm";  // a shipped kernel, or a family resolved by backend
  std::string backend = "cpu";
  std::size_t max_configs = 32;
  int size = 96;               // M = N = K
  std::size_t group_size = 1;  // 1: the first benchmark starts after one compile
  int compile_threads = 1;
  int bench_threads = 1;             // threads of the benchmark worker's CPU device
  std::string isolation = "thread";  // benchmark worker: "thread", "process" or "auto"
  double bench_ms = 0;               // kernel time per config; 0: about one config's compile time
  int rounds = 1;
  bool json = false;
  std::string warm_child;  // hidden: be the warm process over this cache directory
};

// Counts the programs handed to the compiler: a warm start must make none.
class CountingCompiler final : public Compiler {
 public:
  explicit CountingCompiler(std::shared_ptr<Compiler> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::string version() const override { return inner_->version(); }
  std::vector<std::string> code_options() const override { return inner_->code_options(); }
  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) override {
    ++calls_;
    return inner_->compile(unit, cancel);
  }
  std::vector<std::size_t> blame(const CompileUnit& unit, const std::string& log) const override {
    return inner_->blame(unit, log);
  }
  std::size_t calls() const { return calls_.load(); }

 private:
  std::shared_ptr<Compiler> inner_;
  std::atomic<std::size_t> calls_{0};
};

// One tune() call of the benchmark problem against `cache_dir`.
struct TuneRun {
  bool pipeline = true;
  std::string kernel;       // the shipped kernel tuned
  double tune_seconds = 0;  // the whole call: lookups, reference, pipeline, pick
  std::size_t compiler_calls = 0;
  std::string source;  // "tuned", "disk", ...
  std::string best;
  std::size_t configs = 0;
  KernelStats stats;
  nlohmann::json to_json() const;
};

// Tunes the problem once (a shipped kernel, kiln/kernels/shipped_kernels.hpp, every
// dimension set to setup.size); an error when the backend or its device is
// missing or the run fails as a whole. `target_seconds` sets the kernel
// time of each config.
Result<TuneRun> tune_problem(const TuneBenchSetup& setup, const std::filesystem::path& cache_dir,
                             bool pipeline, std::size_t max_configs, double target_seconds);

// A fresh, empty directory under the temporary directory.
Result<std::filesystem::path> fresh_temp_dir(const std::string& tag);

}  // namespace kiln::tool
