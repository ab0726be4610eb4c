// kiln compile --kernel NAME [--arch ARCH] [--group-size G] [--threads N]
//              [--no-pch] [--ptx] [--processes] [--json]
// Compiles every config of a shipped kernel (CPU or CUDA) or template
// through the compile pool with its backend's compiler, prints one line per
// config (ok/failed, time, size) and totals, and stores each artifact in
// the artifact cache (KILN_CACHE_DIR) under the key a tuning run looks up:
// a CI job can fill a cache ahead of use. Exit 1 when any config failed.
//
// kiln compile-worker [--backend B] [--no-pch]: (hidden) a worker process of
// the compile pool, serving programs on stdin/stdout (include/kiln/compile/compile_worker.hpp).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "compile_backend.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/artifact_store.hpp"
#include "kiln/compile/compile_run.hpp"
#include "kiln/compile/compile_worker.hpp"
#include "kiln/compile/templates.hpp"
#include "kiln/kernels/shipped_kernels.hpp"
#include "option_checks.hpp"

namespace kiln::tool {

namespace {

struct CompileArgs {
  std::string kernel;
  std::string arch;
  std::size_t group_size = 0;
  int threads = 0;
  bool no_pch = false;
  bool ptx = false;
  bool processes = false;
  bool json = false;
};

std::string size_text(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  return buf;
}

// Every name `--kernel` takes: the shipped kernels (as `kiln tune` knows
// them), then the templates only `kiln compile` and `kiln bench` use.
std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& k : shipped_kernels()) names.push_back(k.name);
  for (const auto& n : shipped_template_names()) {
    if (!find_shipped_kernel(n)) names.push_back(n);
  }
  return names;
}

// A shipped kernel's template exactly as tuning specializes it (so the keys
// agree), with the backend it runs on; a bare template is CUDA's.
std::pair<KernelTemplate, std::string> resolve_kernel(const std::string& name) {
  if (const ShippedKernel* k = find_shipped_kernel(name)) return {k->kernel().tmpl, k->backend};
  return {shipped_template(name), "cuda"};
}

// Stores what compiled under the keys a tuning run looks up; returns how
// many were stored.
std::size_t store_all(const CompileRun& run) {
  ArtifactCache cache(Options::global());
  std::size_t stored = 0;
  for (const auto& unit : run.units) {
    for (const auto& e : unit.entries) {
      if (!e.ok()) continue;
      if (auto s = store_artifact(cache, *e); s.ok()) {
        ++stored;
      } else {
        std::fprintf(stderr, "kiln compile: not stored: %s\n", s.error().describe().c_str());
      }
    }
  }
  return stored;
}

// The run's settings: arch, format, grouping, workers and compiler; a
// usage error (the arch, backend or --ptx) is the error, said as is.
Result<CompileRunSettings> compile_settings(const CompileArgs& args, std::string kind, bool pch) {
  auto arch = resolve_arch(args.arch, kind);
  if (!arch.ok()) return arch.error();
  auto backend = find_backend(kind);
  if (!backend.ok()) return backend.error();
  if (args.ptx && kind != "cuda")
    return make_error(ErrorCode::kInvalidArgument,
                      "--ptx: " + args.kernel +
                          " builds for the CPU, and PTX is a CUDA format: drop --ptx, or name a "
                          "CUDA kernel");
  CompileRunSettings settings;
  settings.arch = *arch;
  settings.format = args.ptx ? BinaryFormat::kPtx : (*backend)->binary_format();
  settings.group_size = resolve_group_size(args.group_size);
  settings.workers = resolve_workers(args.threads);
  settings.context = {current_toolchain(kind), CacheEnvRegistry::global().snapshot()};
  auto factory = compiler_factory(pch, args.processes, kind);
  if (!factory.ok()) return factory.error();
  settings.factory = std::move(*factory);
  return settings;
}

// Text output: one line per config as its program lands (`print` keeps
// the compile workers' lines whole).
void print_each_unit(CompileRunSettings& settings, std::mutex& print) {
  settings.on_unit = [&print](const UnitResult& unit) {
    std::lock_guard lock(print);
    for (std::size_t i = 0; i < unit.entries.size(); ++i) {
      const auto& s = unit.unit.specializations[i];
      const auto& e = unit.entries[i];
      if (e.ok()) {
        std::printf("ok      %-40s %6.2f s  %10s  (program of %zu)\n", s.config.to_string().c_str(),
                    e->compile_seconds, size_text(e->binary->size()).c_str(), e->group_size);
      } else {
        std::printf("FAILED  %-40s %s\n", s.config.to_string().c_str(), e.error().message.c_str());
      }
    }
    std::fflush(stdout);
  };
}

// Every config's result, as the JSON report lists it.
nlohmann::json configs_json(const CompileRun& run) {
  nlohmann::json configs = nlohmann::json::array();
  for (const auto& unit : run.units) {
    for (std::size_t i = 0; i < unit.entries.size(); ++i) {
      const auto& e = unit.entries[i];
      nlohmann::json c = {{"config", unit.unit.specializations[i].config.to_json()},
                          {"ok", e.ok()}};
      if (e.ok()) {
        c["seconds"] = e->compile_seconds;
        c["bytes"] = e->binary->size();
        c["group_size"] = e->group_size;
        c["lowered_name"] = e->lowered_name;
        c["key"] = e->key.hex();
      } else {
        c["error"] = e.error().message;
        c["details"] = e.error().details;
      }
      configs.push_back(std::move(c));
    }
  }
  return configs;
}

int run_compile(const CompileArgs& args) {
  const auto [kernel, kind] = resolve_kernel(args.kernel);
  const bool pch = !args.no_pch && Options::global().pch;
  Result<CompileRunSettings> made = compile_settings(args, kind, pch);
  if (!made.ok()) {
    std::fprintf(stderr, "kiln compile: %s\n", made.error().message.c_str());
    return 2;
  }
  CompileRunSettings& settings = *made;
  std::mutex print;
  if (!args.json) {
    std::printf("Compiling %zu configs of %s for %s (%s): group size %zu, %d %s, PCH %s\n",
                kernel.space.size(), kernel.name.c_str(), settings.arch.c_str(),
                binary_format_name(settings.format), settings.group_size, settings.workers,
                args.processes ? "worker processes" : "threads", pch ? "on" : "off");
    print_each_unit(settings, print);
  }
  CompileRun run = compile_all(kernel, kernel.specialize_all(), settings);
  const std::size_t stored = store_all(run);
  if (args.json) {
    nlohmann::json out = {{"kernel", kernel.name},
                          {"arch", settings.arch},
                          {"format", binary_format_name(settings.format)},
                          {"group_size", settings.group_size},
                          {"workers", settings.workers},
                          {"processes", args.processes},
                          {"pch", pch},
                          {"wall_seconds", run.wall_seconds},
                          {"programs", run.programs},
                          {"ok", run.ok},
                          {"failed", run.failed},
                          {"stored", stored},
                          {"cache_dir", Options::global().cache_dir.string()},
                          {"configs", configs_json(run)}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("%zu ok, %zu failed, %zu programs, %.2f s wall (%.3f s a config)\n", run.ok,
                run.failed, run.programs, run.wall_seconds,
                run.wall_seconds / static_cast<double>(run.ok + run.failed));
    std::printf("stored %zu artifacts in %s\n", stored,
                Options::global().cache_dir.string().c_str());
  }
  return run.failed == 0 ? 0 : 1;
}

}  // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "Compile every config of a shipped kernel into the artifact cache (KILN_CACHE_DIR)");
  std::string names;
  for (const auto& n : kernel_names()) names += (names.empty() ? "" : ", ") + n;
  cmd->add_option("--kernel", args->kernel, "Kernel to compile: " + names)
      ->required()
      ->check(CLI::IsMember(kernel_names()));
  cmd->add_option("--arch", args->arch,
                  "Target arch, e.g. sm_90a (default: the backend's: host on the CPU; KILN_ARCH, "
                  "else the GPU's, for CUDA)")
      ->check(cuda_arch());
  cmd->add_option("--group-size", args->group_size,
                  "Configs per NVRTC program (default: KILN_GROUP_SIZE, else 8)")
      ->transform(integer_in(0, kMaxGroupSize, "0: KILN_GROUP_SIZE, else 8"));
  cmd->add_option("--threads", args->threads,
                  "Compile workers (default: KILN_COMPILE_THREADS, else one per core)")
      ->transform(integer_in(0, kMaxThreads, "0: KILN_COMPILE_THREADS, else one per core"));
  cmd->add_flag("--no-pch", args->no_pch,
                "Turn NVRTC precompiled headers off (KILN_PCH=0 does too)");
  cmd->add_flag("--ptx", args->ptx, "Emit PTX instead of CUBIN");
  cmd->add_flag("--processes", args->processes, "Compile in worker processes instead of threads");
  cmd->add_flag("--json", args->json, "Print one JSON report");
  cmd->callback([args, &exit_code] { exit_code = run_compile(*args); });

  auto no_pch = std::make_shared<bool>(false);
  auto backend = std::make_shared<std::string>("cuda");
  CLI::App* worker = app.add_subcommand("compile-worker", "");  // empty: hidden from help
  worker->group("");
  worker->add_flag("--no-pch", *no_pch, "Turn NVRTC precompiled headers off");
  worker->add_option("--backend", *backend, "The backend whose compiler to serve");
  worker->callback([no_pch, backend, &exit_code] { exit_code = serve_worker(!*no_pch, *backend); });
}

}  // namespace kiln::tool
