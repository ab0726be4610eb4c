// compile_all() and the compile benchmark.
#include "kiln/compile/compile_run.hpp"

#include <chrono>
#include <mutex>

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

}  // namespace kiln
