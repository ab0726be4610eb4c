// Shared by the cache tests and kiln_cache_worker: a private temporary
// directory, Options pointing at it, and deterministic artifacts and tuning
// records, so a reader in one process can check what a writer in another
// produced byte for byte.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/checked_read.hpp"
#include "kiln/cache/tuning_record.hpp"
#include "kiln/core/options.hpp"

namespace kiln::testing {

// mkdtemp directory (mode 0700), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-cache-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A whole file, through the caches' own checked reader.
inline Result<std::string> read_test_file(const std::filesystem::path& path) {
  return cache::read_checked_file(path, {"a test file", 1ull << 30, cache::PathOwner::kUser});
}

inline Options options_for(const std::filesystem::path& dir, std::uint64_t max_bytes = 1ull << 30) {
  Options o = Options::from_env(Environment().set("KILN_CACHE_DIR", dir.string()));
  o.cache_max_bytes = max_bytes;
  return o;
}

// The artifact key of test entry `index` (any stable distinct hash will do).
inline Hash128 test_key(int index) {
  return hash128("kiln-test-artifact-" + std::to_string(index));
}

// Test entry `index`: `size` pseudo-random bytes seeded by the index.
inline CachedArtifact test_artifact(int index, std::size_t size) {
  CachedArtifact a;
  a.binary.resize(size);
  std::mt19937_64 rng(static_cast<std::uint64_t>(index) * 7919 + 1);
  for (std::size_t i = 0; i < size; i += 8) {
    std::uint64_t word = rng();
    for (std::size_t b = 0; b < 8 && i + b < size; ++b)
      a.binary[i + b] = static_cast<char>(word >> (8 * b));
  }
  a.meta = {{"format", "cubin"}, {"arch", "sm_90a"}, {"index", index}, {"size", size}};
  return a;
}

// Sizes spanning several write chunks (256 KiB), so concurrent writers
// overlap for real.
inline std::size_t test_size(int index) {
  return 64 * 1024 + static_cast<std::size_t>(index % 7) * 97 * 1024;
}

inline TuningIdentity test_identity() {
  TuningIdentity id;
  id.definition = hash128("test kernel definition");
  id.device = {"sm_90a", "Test GPU", 9, 0};
  id.toolchain = {"0.1.0", "codegen-test", "cuda", "nvrtc 13.0"};
  id.env.values = {{"KILN_ARCH", std::nullopt}, {"KILN_NVRTC_FLAGS", std::string("-lineinfo")}};
  return id;
}

inline TuningRecord test_record(const std::string& kernel, std::int64_t m, double time_ms,
                                const TuningIdentity& identity = test_identity()) {
  TuningRecord r;
  r.problem = ProblemKey(kernel);
  r.problem.scalar("M", m);
  r.definition = identity.definition;
  r.device = identity.device;
  r.toolchain = identity.toolchain;
  r.env = identity.env;
  r.best = Config{{"BM", std::int64_t{64}}, {"BN", std::int64_t{128}}, {"STAGES", std::int64_t{3}}};
  r.best_time_ms = time_ms;
  r.measured = {
      {r.best, time_ms, true, ""},
      {Config{{"BM", std::int64_t{128}}, {"BN", std::int64_t{128}}, {"STAGES", std::int64_t{4}}},
       time_ms * 2, false, "too much shared memory"}};
  r.created = "2026-11-21T00:00:00Z";
  return r;
}

}  // namespace kiln::testing
