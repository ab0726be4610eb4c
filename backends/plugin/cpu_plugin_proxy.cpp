// See cpu_plugin_proxy.hpp. The plugin is found at $KILN_CPU_BACKEND_PLUGIN,
// else next to the shared library (or executable) holding this code: the
// Python package installs libkiln.so, the plugin and the worker side by side.
#include "kiln/backends/cpu_plugin.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "kiln/backends/toolchain.hpp"
#include "kiln/core/error.hpp"

namespace kiln::internal {

namespace {

constexpr const char* kPluginFile = "libkiln_cpu_backend.so";
constexpr const char* kFix =
    "reinstall the kiln package (pip install .), or point KILN_CPU_BACKEND_PLUGIN at a "
    "libkiln_cpu_backend.so of this build";

std::string plugin_path() {
  if (const char* env = std::getenv("KILN_CPU_BACKEND_PLUGIN"); env && *env) return env;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&cpu_plugin_backend), &info) && info.dli_fname) {
    return (std::filesystem::path(info.dli_fname).parent_path() / kPluginFile).string();
  }
  return kPluginFile;  // the loader's own search
}

struct Loaded {
  const DeviceBackend* backend = nullptr;
  std::string error;  // why it is absent, with the fix
};

std::atomic<bool> g_loaded{false};

const Loaded& load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = plugin_path();
    // RTLD_NODELETE: the backend's objects (compilers, devices) outlive any
    // handle; the plugin stays until the process ends.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) {
      const char* why = ::dlerror();
      loaded.error = "cannot load the CPU backend plugin " + path + " (" +
                     (why ? why : "unknown error") + "): " + kFix;
      return;
    }
    using Entry = const DeviceBackend* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, "kiln_cpu_backend_plugin"));
    if (!entry) {
      loaded.error = "the CPU backend plugin " + path +
                     " has no kiln_cpu_backend_plugin entry (not a Kiln plugin): " + kFix;
      return;
    }
    loaded.backend = entry();
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
