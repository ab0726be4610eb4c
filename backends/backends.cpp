// The registration list: the backends this build has. The only place that
// switches on which backends were compiled in (KILN_HAVE_*, set by
// backends/CMakeLists.txt); everything else asks backends() or
// find_backend(). A new backend is a folder under backends/ implementing
// DeviceBackend (kiln/device/backend.hpp) plus one line in each list below.
#include "kiln/device/backend.hpp"

#include "kiln/core/error.hpp"
#if KILN_HAVE_LLVM
#include "cpu/cpu_backend.hpp"
#endif
#if KILN_HAVE_CUDA
#include "cuda/cuda_backend.hpp"
#endif
#if KILN_CPU_PLUGIN
#include "kiln/backends/cpu_plugin.hpp"
#endif

namespace kiln {

namespace {

// How to get each backend a build may lack, for the error that says so.
struct Missing {
  DeviceKind kind;
  const char* fix;
};
constexpr Missing kMissing[] = {
    {DeviceKind::kCpu, "rebuild with KILN_WITH_LLVM=ON (needs LLVM/Clang 19)"},
    {DeviceKind::kCuda, "rebuild with KILN_WITH_CUDA=ON (needs the CUDA toolkit)"},
};

}  // namespace

const std::vector<const DeviceBackend*>& backends() {
  static const std::vector<const DeviceBackend*> list = {
#if KILN_HAVE_LLVM
    &cpu::backend(),
#endif
#if KILN_CPU_PLUGIN
    &internal::cpu_plugin_backend(),
#endif
#if KILN_HAVE_CUDA
    &cuda::backend(),
#endif
  };
  return list;
}

Result<const DeviceBackend*> find_backend(DeviceKind kind) {
  for (const DeviceBackend* b : backends()) {
    if (b->kind() == kind) return b;
  }
  std::string message = std::string("the ") + device_kind_name(kind) + " backend is not built";
  for (const Missing& m : kMissing) {
    if (m.kind == kind) message += std::string(": ") + m.fix;
  }
  return make_error(ErrorCode::kUnavailable, message);
}

Result<const DeviceBackend*> find_backend(std::string_view name) {
  if (auto kind = parse_device_kind(name)) return find_backend(*kind);
  std::string known;
  for (const DeviceBackend* b : backends())
    known += (known.empty() ? "" : ", ") + std::string(b->name());
  return make_error(ErrorCode::kInvalidArgument,
                    "no backend '" + std::string(name) + "' (this build has: " + known + ")");
}

}  // namespace kiln
