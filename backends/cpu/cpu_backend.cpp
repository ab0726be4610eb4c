// The CPU backend behind DeviceBackend: Clang compiles and LLD links shared
// objects, the light half (runtime/) loads and runs them on the host, one
// device whose block runners are the host's threads.
#include "cpu_backend.hpp"

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "llvm_info.hpp"

namespace kiln::cpu {

namespace {

class CpuBackend final : public DeviceBackend {
 public:
  const char* name() const override { return "cpu"; }
  // Clang and LLVM are linked in: the backend is usable wherever it runs.
  std::string unavailable_reason() const override { return {}; }
  std::string compiler_version() const override { return "llvm " + probe_llvm().version; }
  std::unique_ptr<Compiler> make_compiler(const Options&) const override {
    return cpu::make_compiler();
  }
  // Clang in this process cannot be interrupted at a compile deadline.
  bool compiles_in_workers() const override { return true; }
  // Shared objects: what a later process loads with no LLVM.
  BinaryFormat binary_format() const override { return BinaryFormat::kCpuSharedObject; }
  Result<int> device_count() const override { return 1; }
  // The index only tells CPU devices apart (several benchmark workers on
  // the one host): every index opens the host.
  Result<std::unique_ptr<Device>> open_device(int, int cpu_threads) const override {
    return cpu::open_device(cpu_threads);
  }
  // Objects are compiled for the host the JIT runs on, whatever it is
  // called: host CPU and features enter the compile options instead.
  std::string arch_of(const Device&) const override { return "host"; }
  Result<std::string> default_arch() const override { return std::string("host"); }
  void report(ToolchainReport& r) const override {
    r.llvm = probe_llvm();
    if (auto device = cpu::open_device(); device.ok()) {
      const DeviceProperties& p = (*device)->properties();
      r.cpu = CpuDeviceStatus{true, p.name, p.arch, p.sm_count, p.l2_bytes, ""};
    } else {
      r.cpu.reason = device.error().message;
    }
  }
  // One block runner takes kChunk elements: a CPU kernel has no threads in
  // a block.
  BackendProbe probe() const override {
    BackendProbe p;
    p.source = R"(#include "kiln/cpu_kernel.h"
void kiln_probe(const kiln::cpu::BlockContext& ctx, float* x, long n) {
  const long first = static_cast<long>(ctx.block_idx.x) * 64;
  for (long i = first; i < first + 64 && i < n; ++i) x[i] += 1.0f;
}
)";
    p.broken = "void kiln_probe(float* x, long n) { x[n] = undeclared_name; }\n";
    return p;
  }
};

}  // namespace

Result<std::unique_ptr<Device>> open_device(int threads) {
  return open_host_device(threads, &linked_toolchain);
}

std::string host_arch() {
  return linked_host_cpu().name;
}

const DeviceBackend& backend() {
  static const CpuBackend instance;
  return instance;
}

}  // namespace kiln::cpu
