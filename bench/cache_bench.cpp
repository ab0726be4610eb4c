// kiln_bench_cache [REPS]: what the caches save, side by side in one run.
//   (1) a warm artifact lookup from the in-memory layer
//   (2) a warm artifact lookup from disk (page cache warm; memory layer off):
//       open, fstat, read, checksum, parse the metadata
//   (3) loading a cached CUBIN: the first lookup of a fresh cache object,
//       as a new process does
//   (4) recompiling that CUBIN with NVRTC (sm_90a) from the same source
//   (5) a tuning-cache lookup (in memory, after the files were read)
// Reported as medians and as ratios; one JSON object on stdout.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cuda/nvrtc_api.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// A small real kernel: a shared-memory tiled SGEMM, templated on its tile.
constexpr const char* kSource = R"(
template <int BM, int BN, int BK>
__global__ void sgemm(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float as[BM][BK];
  __shared__ float bs[BK][BN];
  int row = blockIdx.y * BM + threadIdx.y, col = blockIdx.x * BN + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < k; t += BK) {
    for (int i = threadIdx.x; i < BK; i += blockDim.x)
      as[threadIdx.y][i] = (row < m && t + i < k) ? a[row * k + t + i] : 0.f;
    for (int i = threadIdx.y; i < BK; i += blockDim.y)
      bs[i][threadIdx.x] = (col < n && t + i < k) ? b[(t + i) * n + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < BK; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}
)";
constexpr const char* kEntry = "sgemm<16, 16, 32>";

struct Compiled {
  std::string cubin;
  std::string lowered;
};

// One NVRTC compile to CUBIN for sm_90a; exits with the log on failure.
Compiled compile(const kiln::cuda::NvrtcApi& api) {
  nvrtcProgram prog = nullptr;
  api.CreateProgram(&prog, kSource, "sgemm.cu", 0, nullptr, nullptr);
  api.AddNameExpression(prog, kEntry);
  const char* opts[] = {"--gpu-architecture=sm_90a", "-std=c++17", "-default-device"};
  nvrtcResult r = api.CompileProgram(prog, 3, opts);
  if (r != NVRTC_SUCCESS) {
    std::size_t n = 0;
    api.GetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    api.GetProgramLog(prog, log.data());
    std::fprintf(stderr, "NVRTC failed: %s\n%s\n", api.GetErrorString(r), log.c_str());
    std::exit(1);
  }
  Compiled out;
  std::size_t size = 0;
  api.GetCUBINSize(prog, &size);
  out.cubin.resize(size);
  api.GetCUBIN(prog, out.cubin.data());
  const char* lowered = nullptr;
  api.GetLoweredName(prog, kEntry, &lowered);
  out.lowered = lowered ? lowered : "";
  api.DestroyProgram(&prog);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const auto& nvrtc = kiln::cuda::nvrtc();
  if (!nvrtc.ok()) {
    std::fprintf(stderr, "%s\n", nvrtc.error().describe().c_str());
    return 1;
  }
  const kiln::cuda::NvrtcApi& api = **nvrtc;

  char pattern[] = "/tmp/kiln-bench-cache-XXXXXX";
  if (!::mkdtemp(pattern)) return 1;
  const std::filesystem::path dir = pattern;
  kiln::Options options = kiln::Options::from_env(kiln::Environment().set("KILN_CACHE_DIR", dir));

  // (4) recompiling, timed first so the CUBIN for the cache comes from it.
  std::vector<double> compile_ns;
  Compiled compiled;
  for (int i = 0; i < reps; ++i) {
    auto start = Clock::now();
    compiled = compile(api);
    compile_ns.push_back(ns_since(start));
  }
  const kiln::Hash128 key = kiln::hash128(std::string(kSource) + kEntry + "sm_90a");
  {
    kiln::ArtifactCache writer(options);
    kiln::CachedArtifact a;
    a.binary = compiled.cubin;
    a.meta = {{"format", "cubin"},
              {"arch", "sm_90a"},
              {"lowered_name", compiled.lowered},
              {"options", {"--gpu-architecture=sm_90a", "-std=c++17", "-default-device"}}};
    if (!writer.store(key, std::move(a)).ok()) return 1;
  }

  // (1) memory: many lookups of one key, per lookup.
  kiln::ArtifactCache warm(options);
  if (!warm.lookup(key)) return 1;
  const int memory_iters = 200000;
  std::vector<double> memory_ns;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    for (int i = 0; i < memory_iters; ++i) {
      if (!warm.lookup(key)) return 1;
    }
    memory_ns.push_back(ns_since(start) / memory_iters);
  }

  // (2) disk: the memory layer off, every lookup reads and checks the file.
  kiln::Options no_memory = options;
  no_memory.cache_memory_bytes = 0;
  kiln::ArtifactCache disk(no_memory);
  const int disk_iters = 2000;
  std::vector<double> disk_ns;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    for (int i = 0; i < disk_iters; ++i) {
      if (!disk.lookup(key)) return 1;
    }
    disk_ns.push_back(ns_since(start) / disk_iters);
  }

  // (3) a fresh cache object per load: what a new process pays.
  std::vector<double> cold_ns;
  for (int r = 0; r < reps * 20; ++r) {
    auto start = Clock::now();
    kiln::ArtifactCache fresh(options);
    auto hit = fresh.lookup(key);
    cold_ns.push_back(ns_since(start));
    if (!hit || hit->binary != compiled.cubin) return 1;
  }

  // (5) tuning lookup in memory.
  kiln::TuningCache tuning(options);
  kiln::TuningRecord record;
  record.problem = kiln::ProblemKey("sgemm").scalar("M", std::int64_t{4096});
  record.device = {"sm_90a", "bench GPU", 9, 0};
  record.best = kiln::Config{{"BM", std::int64_t{16}}};
  record.best_time_ms = 0.1;
  tuning.put(record);
  if (!tuning.save().ok()) return 1;
  kiln::TuningCache tuning_reader(options);
  const kiln::TuningIdentity identity = record.identity();
  const int tuning_iters = 20000;
  std::vector<double> tuning_ns;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    for (int i = 0; i < tuning_iters; ++i) {
      if (!tuning_reader.lookup(record.problem, identity)) return 1;
    }
    tuning_ns.push_back(ns_since(start) / tuning_iters);
  }
  std::filesystem::remove_all(dir);

  const double mem = median(memory_ns), dsk = median(disk_ns), cold = median(cold_ns),
               comp = median(compile_ns), tun = median(tuning_ns);
  std::printf(
      "{\n  \"cubin_bytes\": %zu,\n  \"reps\": %d,\n"
      "  \"memory_lookup_ns\": %.1f,\n  \"disk_lookup_ns\": %.1f,\n"
      "  \"cached_cubin_load_fresh_cache_ns\": %.1f,\n  \"nvrtc_compile_ns\": %.1f,\n"
      "  \"tuning_lookup_ns\": %.1f,\n"
      "  \"ratio_disk_over_memory\": %.1f,\n  \"ratio_compile_over_disk_load\": %.1f,\n"
      "  \"ratio_compile_over_fresh_load\": %.1f,\n  \"ratio_compile_over_memory\": %.0f\n}\n",
      compiled.cubin.size(), reps, mem, dsk, cold, comp, tun, dsk / mem, comp / dsk, comp / cold,
      comp / mem);
  return 0;
}
