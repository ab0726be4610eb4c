// See kiln/backends/cpu_plugin.hpp. The plugin is found as kiln/core/plugin.hpp
// says: $KILN_CPU_BACKEND_PLUGIN, else next to the shared library (or
// executable) holding this code (the Python package installs libkiln.so, the
// plugin and the worker side by side), this build's, the installed one.
//
// The proxy serves what a run from the cache needs with the backend's light
// half (cpu/runtime/, linked into the program): the device (loading the
// stored shared objects with dlopen), the toolchain fingerprint and the
// compiler's key options. Only a compile, an old relocatable object (the
// JIT), `kiln info`'s report and the host CPU's name before any process
// has remembered it load the plugin, and LLVM with it.
#include "kiln/backends/cpu_plugin.hpp"

#include <atomic>
#include <mutex>
#include <string>

#include "cpu/runtime/cpu_runtime.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/plugin.hpp"

namespace kiln::internal {

namespace {

struct Loaded {
  const DeviceBackend* backend = nullptr;
  std::string error;  // why it is absent, with the fix
};

std::atomic<bool> g_loaded{false};

const Loaded& load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    Result<void*> entry =
        load_plugin(Plugin::kCpuBackend, reinterpret_cast<const void*>(&cpu_plugin_backend));
    if (!entry) {
      loaded.error = entry.error().message;
      return;
    }
    using Entry = const DeviceBackend* (*)();
    loaded.backend = reinterpret_cast<Entry>(*entry)();
    g_loaded.store(true);
  });
  return loaded;
}

// The heavy half, loaded now if it is not yet (cpu::ToolchainSource).
Result<const cpu::CpuToolchain*> plugin_toolchain() {
  const Loaded& l = load();
  if (!l.backend) return make_error(ErrorCode::kUnavailable, l.error);
  if (const cpu::CpuToolchain* t = cpu::provided_toolchain()) return t;
  return make_error(ErrorCode::kUnavailable,
                    "the CPU backend plugin loaded but did not hand over its toolchain: it is "
                    "of another Kiln build; rebuild the kiln_cpu_plugin target");
}

// The CPU compiler whose name, version and key options need no LLVM: a run
// served from the cache computes its keys and compiles nothing. The real
// compiler (the plugin's) is made on the first compile.
class LazyCpuCompiler final : public Compiler {
 public:
  explicit LazyCpuCompiler(const Options& options) : options_(options) {}
  std::string name() const override { return cpu::kCompilerName; }
  std::string version() const override { return cpu::llvm_version(); }
  std::vector<std::string> code_options() const override {
    auto host = cpu::host_cpu(&plugin_toolchain);
    // Without the plugin nothing compiles: these keys then match nothing.
    if (!host) return {"host-cpu-unavailable: " + host.error().message};
    return cpu::clang_code_options(*host, cpu::cpu_flag_options());
  }
  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) override {
    auto compiler = real_compiler();
    if (!compiler) return compiler.error();
    return (*compiler)->compile(unit, cancel);
  }
  std::vector<std::size_t> blame(const CompileUnit& unit, const std::string& log) const override {
    auto compiler = real_compiler();
    return compiler ? (*compiler)->blame(unit, log) : std::vector<std::size_t>{};
  }

 private:
  Result<Compiler*> real_compiler() const {
    std::call_once(once_, [this] {
      const Loaded& l = load();
      if (l.backend) real_ = l.backend->make_compiler(options_);
    });
    if (!real_) return make_error(ErrorCode::kUnavailable, load().error);
    return real_.get();
  }
  Options options_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<Compiler> real_;
};

class CpuPluginBackend final : public DeviceBackend {
 public:
  const char* name() const override { return "cpu"; }
  std::string unavailable_reason() const override {
    const Loaded& l = load();
    return l.backend ? l.backend->unavailable_reason() : l.error;
  }
  // The real backend's "llvm " + LLVM_VERSION_STRING, baked in by the build
  // that built the plugin: the fingerprint of every CPU key.
  std::string compiler_version() const override {
    return std::string("llvm ") + cpu::llvm_version();
  }
  std::unique_ptr<Compiler> make_compiler(const Options& options) const override {
    return std::make_unique<LazyCpuCompiler>(options);
  }
  bool compiles_in_workers() const override { return true; }  // Clang, as the real one
  BinaryFormat binary_format() const override { return BinaryFormat::kCpuSharedObject; }
  // The real backend's answers (cpu_backend.cpp), without loading it.
  Result<int> device_count() const override { return 1; }
  Result<std::unique_ptr<Device>> open_device(int, int cpu_threads) const override {
    return cpu::open_host_device(cpu_threads, &plugin_toolchain);
  }
  std::string arch_of(const Device&) const override { return "host"; }
  Result<std::string> default_arch() const override { return std::string("host"); }
  void report(ToolchainReport& report) const override {
    const Loaded& l = load();
    if (l.backend) {
      l.backend->report(report);
    } else {
      report.llvm.built = true;
      report.llvm.available = false;
      report.llvm.reason = l.error;
    }
  }
  // The plugin's own kernels; none while it cannot be loaded (nothing runs).
  BackendProbe probe() const override {
    const Loaded& l = load();
    return l.backend ? l.backend->probe() : BackendProbe{};
  }
};

}  // namespace

const DeviceBackend& cpu_plugin_backend() {
  static const CpuPluginBackend proxy;
  return proxy;
}

bool cpu_plugin_loaded() {
  return g_loaded.load();
}

}  // namespace kiln::internal
