// kiln_cpu_object_runner OBJECT SYMBOL BM BN: loads a gemm_f32 object file
// compiled by an earlier process into a fresh CPU device (a fresh LLJIT),
// runs it on a ragged problem and checks it against the reference. Prints
// "ok <load_ms>" and exits 0, or prints why and exits 1. Used by
// cpu_backend_test (a real second process, as a warm run is).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cpu_test_util.hpp"
#include "kiln/cpu.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s OBJECT SYMBOL BM BN\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const int bm = std::atoi(argv[3]), bn = std::atoi(argv[4]);
  auto device = kiln::cpu::open_device(2);
  if (!device) {
    std::printf("no device: %s\n", device.error().describe().c_str());
    return 1;
  }
  kiln::Artifact artifact;
  artifact.entry = "gemm_f32 (from disk)";
  artifact.lowered_name = argv[2];
  artifact.format = kiln::BinaryFormat::kCpuObject;
  artifact.binary = std::make_shared<const std::string>(bytes.str());
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
