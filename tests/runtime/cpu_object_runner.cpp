// kiln_cpu_object_runner OBJECT SYMBOL BM BN
// kiln_cpu_object_runner cache CACHE_DIR KEY BM BN
// Loads a gemm_f32 object compiled by an earlier process (from a file, or
// from the artifact cache by key) into a fresh CPU device (a fresh LLJIT),
// runs it on a ragged problem and checks it against the reference. There is
// no compiler in this process. Prints "ok <load_ms>" and exits 0, or prints
// why and exits 1. Used by the runtime tests as a real second process, as a
// warm run is.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cpu_test_util.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/cache/artifact_store.hpp"

int main(int argc, char** argv) {
  const bool from_cache = argc == 6 && std::string(argv[1]) == "cache";
  if (argc != 5 && !from_cache) {
    std::fprintf(stderr, "usage: %s OBJECT SYMBOL BM BN | cache DIR KEY BM BN\n", argv[0]);
    return 2;
  }
  const int bm = std::atoi(argv[argc - 2]), bn = std::atoi(argv[argc - 1]);
  auto device = kiln::cpu::open_device(2);
  if (!device) {
    std::printf("no device: %s\n", device.error().describe().c_str());
    return 1;
  }
  kiln::Artifact artifact;
  if (from_cache) {
    auto options = kiln::Options::from_env(kiln::Environment().set("KILN_CACHE_DIR", argv[2]));
    kiln::ArtifactCache cache(options);
    auto key = kiln::Hash128::from_hex(argv[3]);
    auto hit = key ? kiln::lookup_artifact(cache, *key) : std::nullopt;
    if (!hit) {
      std::printf("cache miss for %s in %s\n", argv[3], argv[2]);
      return 1;
    }
    artifact = std::move(*hit);
  } else {
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    artifact.entry = "gemm_f32 (from disk)";
    artifact.lowered_name = argv[2];
    artifact.format = kiln::BinaryFormat::kCpuObject;
    artifact.binary = std::make_shared<const std::string>(bytes.str());
    if (artifact.binary->empty()) {
      std::printf("cannot read an object from %s\n", argv[1]);
      return 1;
    }
  }
  auto start = std::chrono::steady_clock::now();
  auto kernel = (*device)->load(artifact);
  double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!kernel) {
    std::printf("load failed: %s\n", kernel.error().describe().c_str());
    return 1;
  }
  const int m = 37, n = 29, k = 21;
  auto a = kiln::test::ramp(m * k, 0.2f, 0.0f);
  auto b = kiln::test::ramp(k * n, 0.3f, 0.5f);
  std::vector<float> c(m * n, -1.0f);
  kiln::LaunchConfig config;
  config.grid = {static_cast<unsigned>((n + bn - 1) / bn), static_cast<unsigned>((m + bm - 1) / bm),
                 1};
  auto s = (*device)->launch(
      *kernel, config,
      kiln::KernelArgs::of(static_cast<const float*>(a.data()), static_cast<const float*>(b.data()),
                           c.data(), m, n, k));
  if (!s) {
    std::printf("launch failed: %s\n", s.error().describe().c_str());
    return 1;
  }
  double ratio = kiln::test::tolerance_ratio(c, kiln::test::reference_gemm(a, b, m, n, k));
  if (!(ratio <= 1.0)) {
    std::printf("wrong result: tolerance ratio %g\n", ratio);
    return 1;
  }
  std::printf("ok %.3f\n", load_ms);
  return 0;
}
