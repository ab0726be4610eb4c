// See py_runtime.hpp.
#include "py_runtime.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include "kiln/backends/cpu_plugin.hpp"
#include "kiln/core/options.hpp"
#include "kiln/device/backend.hpp"
#include "py_gil.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

std::mutex g_mutex;
std::map<std::string, std::shared_ptr<Runtime>>* g_runtimes = nullptr;

// In a forked child the parent's runtimes are unusable (their block
// runners, compile pools and worker pipes were threads and children of the
// parent) and unsafe to destroy: leak them, start empty.
std::atomic<std::uint64_t> g_generation{0};

void after_fork_in_child() {
  g_generation.fetch_add(1);
  new (&g_mutex) std::mutex();
  g_runtimes = nullptr;  // the parent's map is leaked on purpose
  released_reset_in_child();
}

std::map<std::string, std::shared_ptr<Runtime>>& runtimes() {
  if (!g_runtimes) g_runtimes = new std::map<std::string, std::shared_ptr<Runtime>>();
  return *g_runtimes;
}

}  // namespace

std::uint64_t fork_generation() {
  return g_generation.load(std::memory_order_relaxed);
}

std::string parse_backend(const std::string& name) {
  if (name == "auto") {
    return cuda_device_count().ok() ? "cuda" : "cpu";
  }
  if (auto kind = parse_backend_name(name)) return *kind;
  throw Error(ErrorCode::kInvalidArgument,
              "backend='" + name + "' is not a backend: use \"cpu\", \"cuda\" or \"auto\"");
}

std::shared_ptr<Runtime> runtime(std::string kind) {
  std::lock_guard lock(g_mutex);
  auto& map = runtimes();
  if (auto it = map.find(kind); it != map.end()) return it->second;
  auto rt = std::make_shared<Runtime>();
  auto target = open_tuning_target(kind);
  if (!target.ok()) throw Error(target.error());
  rt->target = std::move(*target);
  rt->artifacts = std::make_unique<ArtifactCache>(Options::global());
  rt->tunings = std::make_unique<TuningCache>(Options::global());
  rt->tuner =
      std::make_unique<Autotuner>(rt->target.backend, rt->artifacts.get(), rt->tunings.get());
  map.emplace(kind, rt);
  return rt;
}

nb::object exception_of(const ErrorInfo& info) {
  nb::object from_native = nb::module_::import_("kiln.errors").attr("_from_native");
  nb::dict details;
  for (const auto& [k, v] : info.details) details[k.c_str()] = v;
  return from_native(error_code_name(info.code), info.message, details);
}

void set_error(const ErrorInfo& info) {
  nb::object exc = exception_of(info);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

void raise(const ErrorInfo& info) {
  set_error(info);
  throw nb::python_error();
}

void register_runtime(nb::module_& m) {
  static std::once_flag once;
  std::call_once(once, [] {
    ::pthread_atfork(nullptr, nullptr, after_fork_in_child);
    end_early_at_exit();
  });
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      set_error(e.info());
    }
  });
  m.def(
      "_cpu_backend_loaded", [] { return internal::cpu_plugin_loaded(); },
      "Whether the CPU backend (and with it LLVM) is loaded in this process.");
  m.def(
      "_backend_available",
      [](const std::string& name) {
        auto b = find_backend(name);
        if (!b.ok()) return b.error().message;
        GilRelease release;
        return (*b)->unavailable_reason();
      },
      "Empty when the backend can compile and run here; else why not.");
}

}  // namespace kiln::py
