// kiln_bench_cuda_launch [LAUNCHES]: host cost of one launch through
// kiln::Device::launch (KernelArgs built per launch, cuLaunchKernelEx)
// against a bare cuLaunchKernel with prebuilt parameters, on an empty
// kernel so that only the launch path is timed. Rounds alternate between
// the two; medians per launch. Prints why and exits 0 where there is no GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda/cuda_device.hpp"
#include "cuda/delay_kernel.hpp"
#include "kiln/backends/cuda.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::max(100, std::atoi(argv[1])) : 20000;
  auto opened = kiln::cuda::open_device(0);
  if (!opened) {
    std::printf("skipped: %s\n", opened.error().message.c_str());
    return 0;
  }
  auto& device = static_cast<kiln::cuda::CudaDevice&>(**opened);
  const auto& props = device.properties();
  auto cubin = kiln::cuda::compile_builtin_cubin(
      "extern \"C\" __global__ void kiln_empty(float* p, int n) { if (n < 0) p[0] = 0; }",
      "kiln_empty.cu", props.arch);
  if (!cubin) {
    std::fprintf(stderr, "%s\n", cubin.error().describe().c_str());
    return 1;
  }
  kiln::Artifact artifact;
  artifact.kernel = artifact.entry = artifact.lowered_name = "kiln_empty";
  artifact.format = kiln::BinaryFormat::kCubin;
  artifact.binary = std::make_shared<const std::string>(std::move(*cubin));
  auto kernel = device.load(artifact).value();
  auto buffer = device.allocate(256).value();
  auto stream = device.create_stream().value();

  CUfunction fn = device.raw_function(kernel);
  CUstream raw = device.raw_stream(&stream);
  float* p = buffer.as<float>();
  int n = 1;
  void* params[] = {&p, &n};
  kiln::LaunchConfig config;
  config.block = {32, 1, 1};
  config.stream = &stream;

  std::vector<double> kiln_us, bare_us;
  for (int round = 0; round < 7; ++round) {
    auto start = Clock::now();
    for (int i = 0; i < launches; ++i) {
      if (!device.launch(kernel, config, kiln::KernelArgs::of(p, n))) return 1;
    }
    (void)device.synchronize(&stream);
    kiln_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                      launches);
    start = Clock::now();
    for (int i = 0; i < launches; ++i) {
      if (device.api().LaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, raw, params, nullptr) !=
          CUDA_SUCCESS) {
        return 1;
      }
    }
    (void)device.synchronize(&stream);
    bare_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                      launches);
  }
  const double k = median(kiln_us), b = median(bare_us);
  std::printf("launch overhead on %s (%s), %d launches x 7 rounds, empty kernel\n",
              props.name.c_str(), props.arch.c_str(), launches);
  std::printf("  kiln::Device::launch   %.3f us/launch\n", k);
  std::printf("  bare cuLaunchKernel    %.3f us/launch\n", b);
  std::printf("  kiln / bare = %.3f (target <= 1.10)\n", k / b);
  return 0;
}
