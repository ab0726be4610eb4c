// Offline tuning, part 1 of 2: the build or deployment step. It tunes the
// shipped CPU GEMM for every shape the application will call (shapes.hpp),
// then exports the winners as one tuning table file, the artifact an
// application ships. Part 2 (lookup.cpp) only reads that table.
//   usage: kiln_example_offline_tune [TABLE.json]
#include <cstdio>
#include <filesystem>

#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/kernels/shipped_kernels.hpp"
#include "shapes.hpp"

using namespace kiln;

int main(int argc, char** argv) {
  // The table path; the ctest tests use the default, in their build directory.
  const char* path = argc > 1 ? argv[1] : "offline_table.json";
  const std::filesystem::path table = path;

  // (1) The tuning target (compiler and device) and a scratch tuning file:
  // only this run's records go into the exported table.
  TuningTarget cpu = open_tuning_target("cpu").value();
  ArtifactCache artifacts(Options::global());
  const std::filesystem::path scratch = table.string() + ".work";
  std::filesystem::remove(scratch);
  TuningCache tunings = TuningCache::open_file(scratch, false);
  Autotuner tuner(cpu.backend, &artifacts, &tunings);

  // (2) Tune every shape on a real call (seeded inputs), a few configs each.
  const ShippedKernel& gemm = *find_shipped_kernel(example::kKernel);
  const TunableKernel kernel = gemm.kernel();
  TuneOptions options;
  options.search.max_configs = 6;
  for (const ShapeDims& shape : example::shapes()) {
    auto call = make_call(*cpu.device, gemm.args(DType::kF32), shape, 0);
    auto r = call.ok() ? tuner.tune(kernel, call->args, *cpu.device, options)
                       : Result<TuneResult>(call.error());
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", example::shape_text(shape).c_str(),
                   r.error().describe().c_str());
      return 1;
    }
    std::printf("%-22s -> %s (%s, %.2fx over the default)\n", example::shape_text(shape).c_str(),
                r->config.to_string().c_str(), kiln::source_name(r->source),
                r->speedup_over_default());
  }

  // (3) Save, then export the table to ship.
  if (auto saved = tunings.save(); !saved.ok()) {
    std::fprintf(stderr, "save: %s\n", saved.error().message.c_str());
    return 1;
  }
  auto exported = tunings.export_table(table);
  if (!exported.ok()) {
    std::fprintf(stderr, "export: %s\n", exported.error().message.c_str());
    return 1;
  }
  std::printf("exported %zu record(s) to %s\n", *exported, table.string().c_str());
  return *exported == example::shapes().size() ? 0 : 1;
}
