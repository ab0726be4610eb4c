// The registration list: the backends this build has. The only place that
// switches on which backends were compiled in (KILN_HAVE_BACKEND_*, set by
// backends/CMakeLists.txt); everything else asks backends() or
// find_backend() by name. A new backend is a folder under backends/
// implementing DeviceBackend (kiln/device/backend.hpp) plus one line in
// registered() below (and its rebuild fix in kMissing, when a build may
// lack it). An application's backend registers at run time instead
// (register_backend).
#include "kiln/device/backend.hpp"

#include <algorithm>
#include <mutex>

#include "kiln/core/error.hpp"
#if KILN_HAVE_BACKEND_CPU
#include "cpu/cpu_backend.hpp"
#endif
#if KILN_HAVE_BACKEND_CUDA
#include "cuda/cuda_backend.hpp"
#endif
#if KILN_CPU_PLUGIN
#include "kiln/backends/cpu_plugin.hpp"
#endif
#if KILN_HAVE_BACKEND_REPLAY
#include "kiln/backends/replay.hpp"
#endif

namespace kiln {

namespace {

// How to get each backend a build may lack, for the error that says so.
struct Missing {
  const char* name;
  const char* fix;
};
constexpr Missing kMissing[] = {
    {"cpu", "rebuild with KILN_WITH_LLVM=ON (needs LLVM/Clang 19)"},
    {"cuda", "rebuild with KILN_WITH_CUDA=ON (needs the CUDA toolkit)"},
    {"replay", "build Kiln itself (the Python package has no replay)"},
};

// The list, built-in ones first; nodes never move, nothing is removed.
std::vector<const DeviceBackend*>& registered() {
  static std::vector<const DeviceBackend*> list = {
#if KILN_HAVE_BACKEND_CPU
    &cpu::backend(),
#endif
#if KILN_CPU_PLUGIN
    &internal::cpu_plugin_backend(),
#endif
#if KILN_HAVE_BACKEND_CUDA
    &cuda::backend(),
#endif
#if KILN_HAVE_BACKEND_REPLAY
    &replay::backend(),
#endif
  };
  return list;
}

std::mutex& list_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string names_built() {
  std::string known;
  for (const DeviceBackend* b : backends())
    known += (known.empty() ? "" : ", ") + std::string(b->name());
  return known;
}

}  // namespace

std::vector<const DeviceBackend*> backends() {
  std::lock_guard<std::mutex> lock(list_mutex());
  return registered();
}

void register_backend(const DeviceBackend& backend) {
  const std::string name = backend.name();
  const bool well_formed = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || c == '_';
  });
  if (!well_formed) {
    throw Error(ErrorCode::kInvalidArgument,
                "register_backend: '" + name +
                    "' is not a backend name: use lower-case letters and '_' (it is written "
                    "in --devices lists as NAME:INDEX)");
  }
  std::lock_guard<std::mutex> lock(list_mutex());
  for (const DeviceBackend* b : registered()) {
    if (b->name() == name) {
      throw Error(ErrorCode::kInvalidArgument,
                  "register_backend: a backend named '" + name +
                      "' is registered already: give yours a name of its own");
    }
  }
  registered().push_back(&backend);
}

Result<const DeviceBackend*> find_backend(std::string_view name) {
  for (const DeviceBackend* b : backends()) {
    if (b->name() == name) return b;
  }
  for (const Missing& m : kMissing) {
    if (m.name == name) {
      return make_error(ErrorCode::kUnavailable,
                        "the " + std::string(name) + " backend is not built: " + m.fix);
    }
  }
  return make_error(ErrorCode::kInvalidArgument, "no backend '" + std::string(name) +
                                                     "' (this build has: " + names_built() + ")");
}

bool is_backend_name(std::string_view name) {
  if (find_backend(name).ok()) return true;
  for (const Missing& m : kMissing) {
    if (m.name == name) return true;
  }
  return false;
}

}  // namespace kiln
