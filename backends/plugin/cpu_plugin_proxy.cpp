// See kiln/backends/cpu_plugin.hpp. The plugin is found as kiln/core/plugin.hpp
// says: $KILN_CPU_BACKEND_PLUGIN, else next to the shared library (or
// executable) holding this code (the Python package installs libkiln.so, the
// plugin and the worker side by side), this build's, the installed one.
#include "kiln/backends/cpu_plugin.hpp"

#include <atomic>
#include <mutex>
#include <string>

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

[[noreturn]] void throw_absent() {
  throw Error(ErrorCode::kUnavailable, load().error);
}

const DeviceBackend& real() {
  const Loaded& l = load();
  if (!l.backend) throw_absent();
  return *l.backend;
}

class CpuPluginBackend final : public DeviceBackend {
 public:
  const char* name() const override { return "cpu"; }
  std::string unavailable_reason() const override {
    const Loaded& l = load();
    return l.backend ? l.backend->unavailable_reason() : l.error;
  }
  std::string compiler_version() const override {
    const Loaded& l = load();
    return l.backend ? l.backend->compiler_version() : "absent";
  }
  std::unique_ptr<Compiler> make_compiler(const Options& options) const override {
    return real().make_compiler(options);
  }
  bool compiles_in_workers() const override { return true; }  // Clang, as the real one
  BinaryFormat binary_format() const override { return BinaryFormat::kCpuObject; }
  Result<int> device_count() const override {
    const Loaded& l = load();
    if (!l.backend) return make_error(ErrorCode::kUnavailable, l.error);
    return l.backend->device_count();
  }
  Result<std::unique_ptr<Device>> open_device(int index, int cpu_threads) const override {
    const Loaded& l = load();
    if (!l.backend) return make_error(ErrorCode::kUnavailable, l.error);
    return l.backend->open_device(index, cpu_threads);
  }
  std::string arch_of(const Device& device) const override { return real().arch_of(device); }
  Result<std::string> default_arch() const override {
    const Loaded& l = load();
    if (!l.backend) return make_error(ErrorCode::kUnavailable, l.error);
    return l.backend->default_arch();
  }
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
