// The CUDA backend behind DeviceBackend: NVRTC compiles to CUBIN, the
// driver API loads and runs it; one device per GPU.
#include "cuda_backend.hpp"

#include "kiln/backends/cuda.hpp"
#include "kiln/backends/nvrtc.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/core/options.hpp"
#include "probe.hpp"

namespace kiln::cuda {

namespace {

class CudaBackend final : public DeviceBackend {
 public:
  const char* name() const override { return "cuda"; }
  std::string unavailable_reason() const override {
    auto count = device_count();
    return count.ok() ? std::string() : count.error().message;
  }
  std::string compiler_version() const override {
    ComponentStatus nvrtc = probe_nvrtc();
    return nvrtc.available ? "nvrtc " + nvrtc.version : "absent";
  }
  std::unique_ptr<Compiler> make_compiler(const Options& options) const override {
    return cuda::make_compiler(NvrtcSettings::from_options(options));
  }
  // NVRTC could stop at a deadline in process (its progress callback), but
  // a crash in NVRTC or ptxas would end the tuning run: in a worker process
  // it costs one group. Measured as fast as threads on the shipped kernels
  // (docs/benchmarks.md, "Compile engine": NVRTC's front ends serialise
  // under a process-wide lock, worker processes do not).
  bool compiles_in_workers() const override { return true; }
  BinaryFormat binary_format() const override { return BinaryFormat::kCubin; }
  Result<int> device_count() const override {
    auto count = cuda::device_count();
    if (!count.ok()) return count.error();
    if (*count == 0)
      return make_error(ErrorCode::kUnavailable, "the CUDA driver reports no device");
    return *count;
  }
  Result<std::unique_ptr<Device>> open_device(int index, int) const override {
    return cuda::open_device(index);
  }
  // The arch of the device that runs the benchmarks, unless KILN_ARCH says
  // otherwise (kiln/core/options.hpp).
  std::string arch_of(const Device& device) const override {
    return Options::global().arch.empty() ? device.properties().arch : Options::global().arch;
  }
  Result<std::string> default_arch() const override { return cuda::default_arch(); }
  void report(ToolchainReport& r) const override {
    r.nvrtc = probe_nvrtc();
    r.cuda = probe_driver();
  }
  BackendProbe probe() const override {
    BackendProbe p;
    p.source = R"(__global__ void kiln_probe(float* x, long n) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
)";
    p.broken = "__global__ void kiln_probe(float* x, long n) { x[n] = undeclared_name; }\n";
    p.offline_arch = "sm_80";
    return p;
  }
};

}  // namespace

const DeviceBackend& backend() {
  static const CudaBackend instance;
  return instance;
}

}  // namespace kiln::cuda
