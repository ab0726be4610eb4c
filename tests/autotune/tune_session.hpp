// One process's worth of Kiln for the CPU tuning tests: a fresh cache
// directory (removed at the end), both caches, a one-thread CPU device and
// an Autotuner whose benchmark workers open one-thread CPU devices.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "kiln/artifact_cache.hpp"
#include "kiln/cpu.hpp"
#include "kiln/options.hpp"
#include "kiln/toolchain.hpp"
#include "kiln/tuner.hpp"
#include "kiln/tuning_cache.hpp"

namespace kiln::testing {

inline std::filesystem::path fresh_cache_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("kiln_tune_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline Options options_for(const std::filesystem::path& dir) {
  Options o = Options::global();
  o.cache_dir = dir;
  return o;
}

inline Backend cpu_test_backend() {
  Backend b;
  b.compiler = std::shared_ptr<Compiler>(cpu::make_compiler());
  b.toolchain = current_toolchain();
  b.arch = "host";
  b.format = BinaryFormat::kCpuObject;
  b.open_device = [](int) { return cpu::open_device(1); };
  b.bench_workers = 1;
  return b;
}

struct TuneSession {
  std::filesystem::path dir;
  Options opts;
  ArtifactCache artifacts;
  TuningCache tunings;
  std::unique_ptr<Device> device;
  Autotuner tuner;

  explicit TuneSession(const std::string& name)
      : dir(fresh_cache_dir(name)),
        opts(options_for(dir)),
        artifacts(opts),
        tunings(opts),
        device(cpu::open_device(1).value()),
        tuner(cpu_test_backend(), &artifacts, &tunings) {}
  ~TuneSession() { std::filesystem::remove_all(dir); }
  TuneSession(const TuneSession&) = delete;
  TuneSession& operator=(const TuneSession&) = delete;
};

}  // namespace kiln::testing
