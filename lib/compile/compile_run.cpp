// compile_all() and the compile benchmark.
#include "kiln/compile/compile_run.hpp"

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>

#include "kiln/compile/templates.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

CompileRun compile_all(const KernelTemplate& kernel,
                       const std::vector<Specialization>& specializations,
                       const CompileRunSettings& settings) {
  if (!settings.factory) {
    throw Error(ErrorCode::kInvalidArgument, "compile_all: CompileRunSettings::factory is empty");
  }
  const int workers = resolve_workers(settings.workers);
  auto units = group(kernel, specializations,
                     GroupOptions{settings.group_size, settings.arch, settings.format, workers});
  CompileRun run;
  PoolOptions pool_options{workers, settings.context};
  const auto start = std::chrono::steady_clock::now();
  {
    CompilePool pool(settings.factory, pool_options);
    pool.submit_all(std::move(units));
    while (auto done = pool.next()) {
      if (run.units.empty()) {
        run.first_result_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      if (settings.on_unit) settings.on_unit(done->result);
      run.programs += done->result.programs;
      run.ok += done->result.ok_count();
      run.failed += done->result.entries.size() - done->result.ok_count();
      run.units.push_back(std::move(done->result));
    }
  }
  run.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

std::vector<BenchVariant> compile_bench_variants(int cores, bool processes, bool sweep) {
  const std::size_t g = resolve_group_size(0);
  std::vector<BenchVariant> v = {
      {"naive", 1, 1, false, false},    {"threads", 1, cores, false, false},
      {"grouping", g, 1, false, false}, {"pch", 1, 1, true, false},
      {"kiln", g, cores, true, false},
  };
  if (processes) {
    v.push_back({"threads+processes", 1, cores, false, true});
    v.push_back({"kiln+processes", g, cores, true, true});
  }
  if (sweep) {
    for (std::size_t size : {2, 4, 16}) {
      if (size == g) continue;
      v.push_back({"kiln G=" + std::to_string(size), size, cores, true, false});
    }
    v.push_back({"grouping+threads", g, cores, false, false});
    v.push_back({"grouping+pch", g, 1, true, false});
  }
  return v;
}

nlohmann::json run_compile_bench(const CompileBenchSettings& settings) {
  if (!settings.make_compiler) {
    throw Error(ErrorCode::kInvalidArgument, "run_compile_bench: make_compiler is empty");
  }
  nlohmann::json report = {{"arch", settings.arch}, {"kernels", nlohmann::json::object()}};
  for (const auto& name : settings.kernels) {
    const KernelTemplate& kernel = shipped_template(name);
    std::vector<Specialization> specs = kernel.specialize_all();
    if (settings.max_configs > 0 && specs.size() > settings.max_configs) {
      specs.resize(settings.max_configs);
    }
    nlohmann::json kj = {{"configs", specs.size()}, {"variants", nlohmann::json::array()}};
    double naive = 0;
    for (const BenchVariant& v : settings.variants) {
      CompileRunSettings rs;
      rs.arch = settings.arch;
      rs.group_size = v.group_size;
      rs.workers = v.workers;
      rs.context = settings.context;
      // A shared thread-safe compiler for thread workers; one worker process
      // per worker otherwise. Made fresh per variant: no PCH carried over.
      if (v.processes) {
        rs.factory = [&](int) { return settings.make_compiler(v.pch, true); };
      } else {
        auto shared = settings.make_compiler(v.pch, false);
        rs.factory = [shared](int) { return shared; };
      }
      CompileRun run = compile_all(kernel, specs, rs);
      if (v.name == "naive") naive = run.wall_seconds;
      nlohmann::json vj = {
          {"name", v.name},
          {"group_size", v.group_size},
          {"workers", v.workers},
          {"pch", v.pch},
          {"processes", v.processes},
          {"wall_seconds", run.wall_seconds},
          {"first_result_seconds", run.first_result_seconds},
          {"seconds_per_config", run.wall_seconds / static_cast<double>(specs.size())},
          {"ok", run.ok},
          {"failed", run.failed},
          {"programs", run.programs}};
      if (naive > 0) vj["speedup_vs_naive"] = naive / run.wall_seconds;
      if (settings.progress) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "%-16s %-20s G=%-3zu workers=%-2d pch=%d  %7.2f s  %5.2fx  first %5.2f s",
                      name.c_str(), v.name.c_str(), v.group_size, v.workers, v.pch ? 1 : 0,
                      run.wall_seconds, naive > 0 ? naive / run.wall_seconds : 0.0,
                      run.first_result_seconds);
        settings.progress(line);
      }
      kj["variants"].push_back(std::move(vj));
    }
    for (const auto& vj : kj["variants"]) {
      if (vj["name"] == "kiln" && vj.contains("speedup_vs_naive")) {
        kj["naive_over_kiln"] = vj["speedup_vs_naive"];
      }
    }
    report["kernels"][name] = std::move(kj);
  }
  return report;
}

}  // namespace kiln
