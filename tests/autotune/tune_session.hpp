// Shared by the CPU tuning tests: one process's worth of Kiln over a fresh
// cache directory (removed at the end): both caches, a one-thread CPU device
// and an Autotuner whose benchmark workers open one-thread CPU devices.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::testing {

// A path of this process's own under the temporary directory, emptied.
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("kiln_autotune_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

inline Options options_for(const std::filesystem::path& dir) {
  Options o = Options::global();
  o.cache_dir = dir;
  return o;
}

inline Backend cpu_backend(Isolation isolation = Isolation::kAuto) {
  Backend b;
  b.bench.isolation = isolation;
  b.compiler = std::shared_ptr<Compiler>(cpu::make_compiler());
  b.toolchain = current_toolchain("cpu");
  b.arch = "host";
  b.format = BinaryFormat::kCpuObject;
  b.bench.open_device = [](int) { return cpu::open_device(1); };
  b.bench.workers = 1;
  return b;
}

// A kernel of one block writing the output "y": template `entry` of
// `source`, tuned over `space`.
inline TunableKernel one_block_kernel(std::string name, std::string source, std::string entry,
                                      ConfigSpace space) {
  TunableKernel k;
  k.tmpl.name = std::move(name);
  k.tmpl.source = std::move(source);
  k.tmpl.entry = std::move(entry);
  k.tmpl.space = std::move(space);
  k.launch = [](const Config&, const ArgList&) { return LaunchGeometry{}; };
  k.outputs = {"y"};
  return k;
}

struct Session {
  std::filesystem::path dir;
  Options opts;
  ArtifactCache artifacts;
  TuningCache tunings;
  Result<std::unique_ptr<Device>> device;
  Autotuner tuner;

  explicit Session(const std::string& name, Isolation isolation = Isolation::kAuto)
      : dir(fresh_dir(name)),
        opts(options_for(dir)),
        artifacts(opts),
        tunings(opts),
        device(cpu::open_device(1)),
        tuner(cpu_backend(isolation), &artifacts, &tunings) {
    std::filesystem::create_directories(dir);
  }
  ~Session() { std::filesystem::remove_all(dir); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  auto parts() { return std::tie(dir, artifacts, tunings, device, tuner); }
};

}  // namespace kiln::testing
